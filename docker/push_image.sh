#!/usr/bin/env bash
# Put an image into the deployment's ECR repositories and hand its tag to Terraform.
#
#   docker/push_image.sh runner [TAG]   build docker/runner.Dockerfile for linux/amd64, tag it TAG
#                                       (default: the git revision), push it, and write
#                                       terraform/runner-image.auto.tfvars.json
#   docker/push_image.sh vllm SOURCE    build docker/vllm.Dockerfile on SOURCE (e.g.
#                                       vllm/vllm-openai:v0.20.1) for linux/amd64, surya's OCR
#                                       weights baked in, push it to the <name>-vllm repository
#                                       as <SOURCE's tag>-<WEIGHTS_TAG>, and write
#                                       terraform/vllm-image.auto.tfvars.json
#
# `make runner-image` and `make vllm-image` run it. It needs the AWS CLI, Docker with buildx, and
# the repositories in the Terraform state (`make image-repositories` or a first `make deploy`).
# Tags are immutable: a tag that is already in the repository is not pushed again, only handed
# to Terraform. `latest` is never used. For a configuration of your own that calls terraform/ as
# a module (terraform/examples/*), run it with TF_DIR its directory and TF_MODULE its address of
# the module: `TF_DIR=terraform/examples/complete-vpc TF_MODULE=module.pagefleet
# docker/push_image.sh runner`.
set -euo pipefail

TF_DIR=${TF_DIR:-terraform}
TF_MODULE=${TF_MODULE:-}
TERRAFORM=${TF:-terraform}

die() {
  echo "push_image: $*" >&2
  exit 1
}

# The repository URL from the state (not from the outputs, which a targeted apply may not write).
repository_url() {
  local address="${TF_MODULE:+$TF_MODULE.}module.runners.aws_ecr_repository.$1[0]"
  "$TERRAFORM" -chdir="$TF_DIR" state show -no-color "$address" 2>/dev/null |
    sed -n 's/^ *repository_url *= *"\(.*\)"$/\1/p'
}

# Whether REPOSITORY already holds TAG.
pushed() {
  aws ecr describe-images --region "$region" --repository-name "$1" \
    --image-ids "imageTag=$2" >/dev/null 2>&1
}

kind=${1:-}
case "$kind" in
  runner) address=this ;;
  vllm) address=vllm ;;
  *) die "usage: $0 runner [TAG] | $0 vllm SOURCE_IMAGE" ;;
esac

url=$(repository_url "$address" || true)
[ -n "$url" ] || die "no $kind image repository in the Terraform state of $TF_DIR: run \`make image-repositories TF_VARS=...\` (or \`make deploy\`) first"
registry=${url%%/*}     # <account>.dkr.ecr.<region>.amazonaws.com
repository=${url#*/}    # <name> or <name>-vllm
region=${registry#*.dkr.ecr.}
region=${region%%.*}

aws ecr get-login-password --region "$region" |
  docker login --username AWS --password-stdin "$registry"

if [ "$kind" = runner ]; then
  tag=${2:-}
  if [ -z "$tag" ]; then
    # The tag names a commit, so the image must be that commit: nothing uncommitted outside
    # terraform/ (which the image does not hold).
    if [ -n "$(git status --porcelain -- . ':!terraform')" ]; then
      git status --short -- . ':!terraform' >&2
      die "uncommitted changes: commit them first (the image is tagged with the git revision), or set RUNNER_IMAGE_TAG"
    fi
    tag=$(git rev-parse --short=12 HEAD)
  fi
  [ "$(printf '%s' "$tag" | tr '[:upper:]' '[:lower:]')" != latest ] || die "\"latest\" is never used: the tags are immutable"
  if pushed "$repository" "$tag"; then
    echo "$url:$tag is already in the repository (tags are immutable): not built again"
  else
    # linux/amd64 whatever the build machine is (the GPU instances are x86_64); no provenance
    # attestation, so the tag is a plain image manifest.
    docker buildx build --platform linux/amd64 --provenance=false \
      -f docker/runner.Dockerfile -t "$url:$tag" --push .
  fi
  printf '{\n  "runner_image_tag": "%s"\n}\n' "$tag" >"$TF_DIR/runner-image.auto.tfvars.json"
  echo "runner_image_tag = \"$tag\" written to $TF_DIR/runner-image.auto.tfvars.json; \`make deploy\` uses it"
else
  source_image=${2:-}
  case "$source_image" in
    *:latest | "") die "give the vLLM image with a version tag, e.g. vllm/vllm-openai:v0.20.1" ;;
    *@*) die "give the vLLM image by tag, not digest: the mirror keeps the tag" ;;
    *:*) tag=${source_image##*:} ;;
    *) die "give the vLLM image with a version tag, e.g. vllm/vllm-openai:v0.20.1" ;;
  esac
  case "$tag" in */*) die "give the vLLM image with a version tag, e.g. vllm/vllm-openai:v0.20.1" ;; esac
  # The weights are surya-ocr-2's `main` at build time; a tag already pushed is kept (tags are
  # immutable), so a newer `main` needs a new WEIGHTS_TAG (`make vllm-image VLLM_WEIGHTS_TAG=...`).
  tag="$tag-${WEIGHTS_TAG:-surya-ocr-2}"
  if pushed "$repository" "$tag"; then
    echo "$url:$tag is already in the repository: not built again"
  else
    docker buildx build --platform linux/amd64 --provenance=false \
      -f docker/vllm.Dockerfile --build-arg "VLLM_IMAGE=$source_image" -t "$url:$tag" --push .
  fi
  # The image runs offline (HF_HUB_OFFLINE=1 in the task too): it holds the weights.
  printf '{\n  "vllm_image": "%s",\n  "vllm_image_has_weights": true\n}\n' "$url:$tag" \
    >"$TF_DIR/vllm-image.auto.tfvars.json"
  echo "vllm_image = \"$url:$tag\" (with the weights) written to $TF_DIR/vllm-image.auto.tfvars.json; \`make deploy\` uses it"
fi
