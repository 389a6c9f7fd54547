"""docker/vllm.Dockerfile, the sidecar image with surya's OCR weights baked in, against what the
Terraform task definition makes the sidecar serve. No image is built here (no Docker engine):
the Dockerfile's build arguments and its Hugging Face cache layout are read and checked."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.terraform_support import ROOT, TF_DIR

DOCKERFILE = ROOT / "docker" / "vllm.Dockerfile"
RUNNERS = TF_DIR / "modules" / "runners"


def build_arg(name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE.read_text(), re.M)
    assert match, f"no default for ARG {name} in {DOCKERFILE}"
    return match.group(1)


def env(name: str) -> list[str]:
    """The values ``ENV name=...`` sets, in order."""
    return re.findall(rf"^ENV {name}=(\S+)$", DOCKERFILE.read_text(), re.M)


def local(name: str) -> str:
    match = re.search(rf'^  {name}\s+=\s+"([^"]+)"$', (RUNNERS / "main.tf").read_text(), re.M)
    assert match, f"no local {name} in the runners module"
    return match.group(1)


def sidecar_args() -> str:
    """The sidecar's `vllm serve` arguments as the runners module writes them."""
    main = (RUNNERS / "main.tf").read_text()
    match = re.search(
        r"^  vllm_args = concat\(\[\n(.*?)^  \], var\.vllm_extra_args\)$", main, re.S | re.M
    )
    assert match, "no vllm_args in the runners module"
    return match.group(1)


def variable_default(path: Path, name: str) -> str:
    match = re.search(rf'variable "{name}" \{{.*?default\s+=\s+"([^"]+)"', path.read_text(), re.S)
    assert match, f"no default for {name} in {path}"
    return match.group(1)


def test_the_image_bakes_the_model_and_revision_the_sidecar_serves() -> None:
    # vLLM is told to serve the baked repository under the name surya asks for.
    model = build_arg("SURYA_OCR_MODEL")
    assert model == local("vllm_model")
    args = sidecar_args()
    assert '"--model", local.vllm_model' in args
    assert '"--served-model-name", local.vllm_model' in args
    # No --revision: "If unspecified, will use the default version" (vLLM's ModelConfig.revision),
    # huggingface_hub's DEFAULT_REVISION "main" (constants.py:60 in 1.33.0), which is what the
    # image downloads and records under refs/.
    served = re.search(r'"--revision", "([^"]+)"', args)
    assert build_arg("SURYA_OCR_REVISION") == (served.group(1) if served else "main")
    # The image is built on the vLLM the deployment runs by default.
    assert build_arg("VLLM_IMAGE") == variable_default(TF_DIR / "variables.tf", "vllm_image")


def test_the_weights_are_outside_the_mounted_home_and_served_offline() -> None:
    """The task mounts an instance folder over the sidecar's HOME (vllm_cache_container_path),
    which would hide a cache under it; the image's last word is HF_HUB_OFFLINE=1."""
    (hub_cache,) = env("HF_HUB_CACHE")
    home = variable_default(RUNNERS / "variables.tf", "vllm_cache_container_path")
    assert not Path(hub_cache).is_relative_to(home)
    assert env("HF_HUB_OFFLINE") == ["1"]
    assert DOCKERFILE.read_text().rstrip().endswith("ENV HF_HUB_OFFLINE=1")


def test_the_build_checks_the_cache_folder_huggingface_hub_writes(tmp_path: Path) -> None:
    """The RUN step's `test -s` names ``<cache>/models--<org>--<name>/refs/<revision>``
    (huggingface_hub 1.33.0, file_download.py:747-755, repo_folder_name; refs written by
    _snapshot_download.py:420-431), with the shell the image runs RUN steps in."""
    check = re.search(r'test -s "(\$HF_HUB_CACHE/[^"]+)"', DOCKERFILE.read_text())
    assert check
    model, revision = build_arg("SURYA_OCR_MODEL"), build_arg("SURYA_OCR_REVISION")
    folder = tmp_path / ("models--" + model.replace("/", "--")) / "refs"
    folder.mkdir(parents=True)
    (folder / revision).write_text("0" * 40)
    env = {"HF_HUB_CACHE": str(tmp_path), "SURYA_OCR_MODEL": model, "SURYA_OCR_REVISION": revision}
    found = subprocess.run(["sh", "-c", f'test -s "{check.group(1)}"'], env=env, check=False)
    assert found.returncode == 0
    (folder / revision).unlink()
    missing = subprocess.run(["sh", "-c", f'test -s "{check.group(1)}"'], env=env, check=False)
    assert missing.returncode != 0


def test_the_deploy_docs_name_the_weights_licence() -> None:
    readme = (TF_DIR / "README.md").read_text()
    licence = readme[readme.index("**The weights' licence.**") :].split("\n- ", 1)[0]
    assert build_arg("SURYA_OCR_MODEL") in licence and "OpenRAIL-M" in licence
    assert "OpenRAIL-M" in DOCKERFILE.read_text()
