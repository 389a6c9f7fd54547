# Terraform, checkov and the Lambda package. Included by the top-level Makefile.
#
#   make terraform-check   fmt -check, validate, terraform test (mocked provider, offline)
#   make checkov           static security checks (own venv: checkov pins an old boto3)
#   make lambda-package    build/lambda.zip for the splitter and completion functions
#   make deploy / destroy  the whole pipeline on AWS, with the credentials in your environment
#   make image-repositories  only the ECR repositories (and the key), before the first image push
#   make rehearse          apply to a moto server and convert the corpus's small documents from
#                          what the apply made, under its IAM policies (rehearsal/)
#
# Every target that runs the project's Python depends on $(STAMP), the top-level Makefile's
# "venv installed" marker, so each works from a fresh clone; run on its own (make -f) it is empty.

VENV ?= .venv
PY = $(VENV)/bin/python
TF ?= terraform
TF_DIR := terraform
TF_CLI_CONFIG := $(abspath $(TF_DIR)/.terraformrc)
TF_VARS ?=
CHECKOV_VENV ?= .venv-checkov
CHECKOV_VERSION := 3.3.30
LAMBDA_ZIP := build/lambda.zip

# State. Without TF_BACKEND_CONFIG the state is local (terraform/terraform.tfstate). With it
# (a file of S3 backend settings: bucket, key, region, use_lockfile; see terraform/README.md)
# `terraform-init` declares an S3 backend in terraform/backend_s3.tf (ignored by git) and
# initialises it with those settings; later inits reuse them, so the variable is needed again
# only to change them. Only the offline checks skip the backend (-backend=false).
TF_BACKEND_CONFIG ?=
TF_BACKEND_FILE := $(TF_DIR)/backend_s3.tf

# A local provider mirror (an unpacked filesystem_mirror) is looked for when the CLI config is
# written; none means the registry. Set TF_PLUGIN_MIRROR to choose one.
TF_PLUGIN_MIRROR ?=
FIND_MIRROR = find / -xdev -path '*/registry.terraform.io/hashicorp/aws/*/terraform-provider-aws*' -print -quit 2>/dev/null | sed 's%/registry.terraform.io/.*%%'

export TF_CLI_CONFIG_FILE := $(TF_CLI_CONFIG)
export TF_IN_AUTOMATION := 1

.PHONY: terraform-cli-config terraform-init terraform-init-offline terraform-backend \
	terraform-fmt terraform-check terraform-stack-json terraform-policies-json \
	terraform-providers-lock checkov \
	lambda-package deploy destroy image-repositories rehearse

$(TF_CLI_CONFIG): $(TF_DIR)/terraform.mk
	@mirror="$(TF_PLUGIN_MIRROR)"; [ -n "$$mirror" ] || mirror="$$($(FIND_MIRROR))"; \
	if [ -n "$$mirror" ]; then \
	  printf 'provider_installation {\n  filesystem_mirror {\n    path    = "%s"\n    include = ["registry.terraform.io/hashicorp/*"]\n  }\n  direct {\n    exclude = ["registry.terraform.io/hashicorp/*"]\n  }\n}\n' "$$mirror" >$@; \
	  echo "terraform: providers from the mirror $$mirror"; \
	else \
	  printf '# no local provider mirror found: providers come from the registry\n' >$@; \
	fi

terraform-cli-config: $(TF_CLI_CONFIG)

# The offline checks: providers only, no state backend.
terraform-init-offline: $(TF_CLI_CONFIG)
	cd $(TF_DIR) && $(TF) init -backend=false -input=false

terraform-backend:
ifneq ($(TF_BACKEND_CONFIG),)
	@test -f "$(TF_BACKEND_CONFIG)" || { echo "TF_BACKEND_CONFIG=$(TF_BACKEND_CONFIG): no such file" >&2; exit 2; }
	@printf '%s\n' '# Written by `make terraform-init TF_BACKEND_CONFIG=...` (terraform/terraform.mk): the' \
	  '# settings are in that file and in .terraform/, not here. Delete both to go back to local state.' \
	  'terraform {' '  backend "s3" {}' '}' >$(TF_BACKEND_FILE)
endif

# Deploy and destroy: providers and the state backend.
terraform-init: $(TF_CLI_CONFIG) terraform-backend
	cd $(TF_DIR) && $(TF) init -input=false $(if $(TF_BACKEND_CONFIG),-backend-config=$(abspath $(TF_BACKEND_CONFIG)))

terraform-stack-json: $(STAMP)
	$(PY) $(TF_DIR)/scripts/stack_json.py

# The IAM policies the tests' IAM double answers by (rehearsal/iam.py), from the modules' plans.
terraform-policies-json: $(STAMP) terraform-init-offline
	$(PY) $(TF_DIR)/scripts/policies_json.py

terraform-fmt:
	$(TF) fmt -recursive $(TF_DIR)

# Each example (terraform/examples/*) is a root of its own calling the module: validated, and
# its tests run, offline like the module's.
TF_EXAMPLES := $(patsubst %/main.tf,%,$(wildcard $(TF_DIR)/examples/*/main.tf))

terraform-check: $(STAMP) terraform-init-offline
	$(PY) $(TF_DIR)/scripts/stack_json.py --check
	$(TF) fmt -check -recursive $(TF_DIR)
	cd $(TF_DIR) && $(TF) validate
	cd $(TF_DIR) && $(TF) test
	@for example in $(TF_EXAMPLES); do \
	  echo "terraform: $$example"; \
	  (cd $$example && $(TF) init -backend=false -input=false >/dev/null && $(TF) validate && $(TF) test) || exit 1; \
	done

# Rewrites terraform/.terraform.lock.hcl for the platforms the mirror holds (the registry's
# zh: hashes of the other platforms, already in the file, are kept). With registry access,
# `terraform providers lock -platform=...` for each platform adds their h1: hashes too.
terraform-providers-lock: $(TF_CLI_CONFIG)
	@mirror="$(TF_PLUGIN_MIRROR)"; [ -n "$$mirror" ] || mirror="$$($(FIND_MIRROR))"; \
	platforms=$$(cd "$$mirror/registry.terraform.io/hashicorp/aws" && ls -d */*/ | cut -d/ -f2 | sort -u | sed 's/^/-platform=/'); \
	cd $(TF_DIR) && $(TF) providers lock -fs-mirror="$$mirror" $$platforms

$(CHECKOV_VENV)/bin/checkov:
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet checkov==$(CHECKOV_VERSION)

checkov: $(CHECKOV_VENV)/bin/checkov
	BC_SKIP_MAPPING=TRUE $(CHECKOV_VENV)/bin/checkov --directory $(TF_DIR) --framework terraform \
	  --skip-path '$(TF_DIR)/tests' --quiet --compact

lambda-package: $(STAMP)
	$(PY) docker/build_lambda_package.py --output $(LAMBDA_ZIP)

# Real AWS: credentials and region from the environment (AWS_PROFILE, ...); variables from
# TF_VARS='-var-file=prod.tfvars' and from terraform/*.auto.tfvars.json, which
# `make runner-image` and `make vllm-image` write (the image tags they pushed).
deploy: lambda-package terraform-init
	cd $(TF_DIR) && $(TF) apply -input=false $(TF_VARS)

destroy: terraform-init
	cd $(TF_DIR) && $(TF) destroy -input=false $(TF_VARS)

# The image repositories must exist before the first push, and the runner's task definition
# needs an image that exists: this applies only the repositories (and the KMS key they are
# encrypted with), the one place the walkthrough uses -target.
image-repositories: terraform-init
	cd $(TF_DIR) && $(TF) apply -input=false $(TF_VARS) \
	  -target='module.runners.aws_ecr_repository.this' -target='module.runners.aws_ecr_repository.vllm'

# The deployment rehearsed offline (rehearsal/__main__.py): the root module applied to a moto
# server, the corpus's small documents converted from what it made, compared with the embedded
# stack's output for the same documents. Output and run time under REHEARSE_OUT.
REHEARSE_CORPUS ?= ../shared/corpus
REHEARSE_OUT ?= bench/results/$(shell date -u +%Y-%m-%d)-rehearse

rehearse: $(STAMP) $(TF_CLI_CONFIG)
	$(PY) -m rehearsal --corpus $(REHEARSE_CORPUS) --out $(REHEARSE_OUT)
