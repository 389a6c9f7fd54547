"""`make runner-image` and `make vllm-image`: docker/push_image.sh against stand-ins for docker,
aws and terraform."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.terraform_support import ROOT, TF_DIR

# --- make runner-image / make vllm-image: docker/push_image.sh against stand-ins ---------------

REPO_URL = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/pf"
STUBS = {
    # `terraform state show` of the repository, as the real one prints it.
    "terraform": """#!/bin/sh
echo "terraform $*" >>"$STUB_LOG"
[ -n "$STUB_NO_STATE" ] && exit 1
case "$*" in *aws_ecr_repository.vllm*) suffix=-vllm ;; *) suffix= ;; esac
printf '# module.runners.aws_ecr_repository.this[0]:\nresource "aws_ecr_repository" "this" {\n'
printf '    repository_url       = "%s%s"\n}\n' "$STUB_REPO_URL" "$suffix"
""",
    "aws": """#!/bin/sh
echo "aws $*" >>"$STUB_LOG"
case "$*" in
  *get-login-password*) echo secret ;;
  *describe-images*) [ -n "$STUB_PUSHED" ] ;;
esac
""",
    "docker": """#!/bin/sh
echo "docker $*" >>"$STUB_LOG"
[ "$1" = login ] && cat >/dev/null
exit 0
""",
}


@pytest.fixture
def push_image(tmp_path: Path) -> Any:
    """Runs docker/push_image.sh with stand-ins for terraform, aws and docker; returns
    (result, log lines, the terraform dir)."""
    bin_dir, tf_dir = tmp_path / "bin", tmp_path / "terraform"
    bin_dir.mkdir()
    tf_dir.mkdir()
    for name, text in STUBS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "calls.log"

    def run(*args: str, cwd: Path = ROOT, **env: str) -> tuple[Any, list[str], Path]:
        log.write_text("")
        result = subprocess.run(
            ["bash", str(ROOT / "docker" / "push_image.sh"), *args],
            cwd=cwd,
            env={
                **os.environ,
                "PATH": f"{bin_dir}:{os.environ['PATH']}",
                "TF_DIR": str(tf_dir),
                "STUB_LOG": str(log),
                "STUB_REPO_URL": REPO_URL,
                **env,
            },
            capture_output=True,
            text=True,
            timeout=30,
        )
        return result, log.read_text().splitlines(), tf_dir

    return run


def test_runner_image_builds_for_amd64_pushes_the_tag_and_hands_it_to_terraform(
    push_image: Any,
) -> None:
    result, calls, tf_dir = push_image("runner", "0123456789ab")
    assert result.returncode == 0, result.stderr
    assert "aws ecr get-login-password --region eu-west-1" in calls
    registry = REPO_URL.split("/")[0]
    assert f"docker login --username AWS --password-stdin {registry}" in calls
    builds = [c for c in calls if c.startswith("docker buildx build")]
    assert builds == [
        f"docker buildx build --platform linux/amd64 --provenance=false "
        f"-f docker/runner.Dockerfile -t {REPO_URL}:0123456789ab --push ."
    ]
    written = json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text())
    assert written == {"runner_image_tag": "0123456789ab"}


def test_a_configuration_calling_the_module_finds_its_repository(push_image: Any) -> None:
    """terraform/examples/* call terraform/ as `module.pagefleet`: the repository is in their
    state under that address, and the tag goes to their own directory."""
    result, calls, tf_dir = push_image("runner", "0123456789ab", TF_MODULE="module.pagefleet")
    assert result.returncode == 0, result.stderr
    address = "module.pagefleet.module.runners.aws_ecr_repository.this[0]"
    assert f"terraform -chdir={tf_dir} state show -no-color {address}" in calls
    written = json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text())
    assert written == {"runner_image_tag": "0123456789ab"}


def test_runner_image_already_pushed_is_not_built_again(push_image: Any) -> None:
    result, calls, tf_dir = push_image("runner", "0123456789ab", STUB_PUSHED="1")
    assert result.returncode == 0, result.stderr
    assert not [c for c in calls if c.startswith("docker buildx")]
    assert "already in the repository" in result.stdout
    assert json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text())


def test_runner_image_refuses_latest_and_a_missing_repository(push_image: Any) -> None:
    result, _, tf_dir = push_image("runner", "latest")
    assert result.returncode != 0 and "never used" in result.stderr
    assert not (tf_dir / "runner-image.auto.tfvars.json").exists()
    result, _, _ = push_image("runner", "abc", STUB_NO_STATE="1")
    assert result.returncode != 0 and "make image-repositories" in result.stderr


def test_runner_image_tag_is_the_commit_and_needs_a_clean_tree(
    push_image: Any, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "a.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result, _, tf_dir = push_image("runner", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text()) == {
        "runner_image_tag": head
    }
    (repo / "a.py").write_text("x = 2\n")
    result, calls, _ = push_image("runner", cwd=repo)
    assert result.returncode != 0 and "uncommitted changes" in result.stderr
    assert not [c for c in calls if c.startswith("docker buildx")]


def test_vllm_image_is_built_with_the_weights_and_pushed_under_its_version(
    push_image: Any,
) -> None:
    result, calls, tf_dir = push_image("vllm", "vllm/vllm-openai:v0.20.1")
    assert result.returncode == 0, result.stderr
    tag = f"{REPO_URL}-vllm:v0.20.1-surya-ocr-2"
    assert [c for c in calls if c.startswith("docker") and "login" not in c] == [
        "docker buildx build --platform linux/amd64 --provenance=false -f docker/vllm.Dockerfile "
        f"--build-arg VLLM_IMAGE=vllm/vllm-openai:v0.20.1 -t {tag} --push ."
    ]
    assert json.loads((tf_dir / "vllm-image.auto.tfvars.json").read_text()) == {
        "vllm_image": tag,
        "vllm_image_has_weights": True,
    }
    result, calls, _ = push_image("vllm", "vllm/vllm-openai:v0.20.1", STUB_PUSHED="1")
    assert result.returncode == 0 and "not built again" in result.stdout
    assert not [c for c in calls if c.startswith("docker buildx")]
    result, _, _ = push_image("vllm", "vllm/vllm-openai:latest")
    assert result.returncode != 0 and "version tag" in result.stderr


def test_make_mirrors_the_vllm_image_terraform_defaults_to() -> None:
    made = re.search(r"^VLLM_IMAGE \?= (\S+)$", (ROOT / "docker" / "runner.mk").read_text(), re.M)
    default = re.search(
        r'variable "vllm_image" \{.*?default\s+=\s+"([^"]+)"',
        (TF_DIR / "variables.tf").read_text(),
        re.S,
    )
    assert made and default and made.group(1) == default.group(1)
