# Terraform, checkov and the Lambda package. Included by the top-level Makefile.
#
#   make terraform-check   fmt -check, validate, terraform test (mocked provider, offline)
#   make checkov           static security checks (own venv: checkov pins an old boto3)
#   make lambda-package    build/lambda.zip for the splitter and completion functions
#   make deploy / destroy  the whole pipeline on AWS, with the credentials in your environment

VENV ?= .venv
PY = $(VENV)/bin/python
TF ?= terraform
TF_DIR := terraform
TF_CLI_CONFIG := $(abspath $(TF_DIR)/.terraformrc)
TF_VARS ?=
CHECKOV_VENV ?= .venv-checkov
CHECKOV_VERSION := 3.3.30
LAMBDA_ZIP := build/lambda.zip

# A local provider mirror (an unpacked filesystem_mirror) is looked for when the CLI config is
# written; none means the registry. Set TF_PLUGIN_MIRROR to choose one.
TF_PLUGIN_MIRROR ?=
FIND_MIRROR = find / -xdev -path '*/registry.terraform.io/hashicorp/aws/*/terraform-provider-aws*' -print -quit 2>/dev/null | sed 's%/registry.terraform.io/.*%%'

export TF_CLI_CONFIG_FILE := $(TF_CLI_CONFIG)
export TF_IN_AUTOMATION := 1

.PHONY: terraform-cli-config terraform-init terraform-fmt terraform-check terraform-stack-json \
	checkov lambda-package deploy destroy

$(TF_CLI_CONFIG): $(TF_DIR)/terraform.mk
	@mirror="$(TF_PLUGIN_MIRROR)"; [ -n "$$mirror" ] || mirror="$$($(FIND_MIRROR))"; \
	if [ -n "$$mirror" ]; then \
	  printf 'provider_installation {\n  filesystem_mirror {\n    path    = "%s"\n    include = ["registry.terraform.io/hashicorp/*"]\n  }\n  direct {\n    exclude = ["registry.terraform.io/hashicorp/*"]\n  }\n}\n' "$$mirror" >$@; \
	  echo "terraform: providers from the mirror $$mirror"; \
	else \
	  printf '# no local provider mirror found: providers come from the registry\n' >$@; \
	fi

terraform-cli-config: $(TF_CLI_CONFIG)

terraform-init: $(TF_CLI_CONFIG)
	cd $(TF_DIR) && $(TF) init -backend=false -input=false

terraform-stack-json:
	$(PY) $(TF_DIR)/scripts/stack_json.py

terraform-fmt:
	$(TF) fmt -recursive $(TF_DIR)

terraform-check: terraform-init
	$(PY) $(TF_DIR)/scripts/stack_json.py --check
	$(TF) fmt -check -recursive $(TF_DIR)
	cd $(TF_DIR) && $(TF) validate
	cd $(TF_DIR) && $(TF) test

$(CHECKOV_VENV)/bin/checkov:
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet checkov==$(CHECKOV_VERSION)

checkov: $(CHECKOV_VENV)/bin/checkov
	BC_SKIP_MAPPING=TRUE $(CHECKOV_VENV)/bin/checkov --directory $(TF_DIR) --framework terraform \
	  --skip-path '$(TF_DIR)/tests' --quiet --compact

lambda-package:
	$(PY) docker/build_lambda_package.py --output $(LAMBDA_ZIP)

# Real AWS: credentials and region from the environment (AWS_PROFILE, ...). The first apply
# with create_runners needs vpc_id and subnet_ids, e.g. TF_VARS='-var-file=prod.tfvars'.
deploy: lambda-package terraform-init
	cd $(TF_DIR) && $(TF) apply -input=false $(TF_VARS)

destroy: terraform-init
	cd $(TF_DIR) && $(TF) destroy -input=false $(TF_VARS)
