"""The runner task's containers start as the user and environment their task definition gives
them: replayed here as a uid with no passwd entry, as the vLLM sidecar runs.

The sidecar runs as uid 1000 (terraform/modules/runners/task_environment.json, which the task
definition reads and terraform/tests/runners.tftest.hcl holds it to), and that uid has no
passwd entry in the vLLM image. Importing vLLM 0.20.1 reaches ``getpass.getuser()``:
``vllm/__init__.py`` line 14 imports ``vllm.env_override``, whose line 560 (under torch >= 2.10,
< 2.12; vLLM 0.20.1's wheel requires torch==2.11.0) imports ``torch._dynamo.convert_frame``,
and torch's ``torch/_inductor/runtime/cache_dir_utils.py:default_cache_dir()`` calls
``getpass.getuser()`` (the traceback in vllm-project/vllm issue 44548, torch 2.11.0). Without
``USER``/``LOGNAME`` that falls through to ``pwd.getpwuid()`` and raises. The full import of
the real vLLM as such a uid is ``make vllm-user-replay`` (a venv of several GB: not in CI).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import sys

import pytest

from tests.terraform_support import ROOT

MODULE = ROOT / "terraform" / "modules" / "runners"
TASK = json.loads((MODULE / "task_environment.json").read_text())

# torch's default_cache_dir(), as torch/_inductor/runtime/cache_dir_utils.py writes it, and the
# makedirs its cache_dir() does after it.
TORCH_CACHE_DIR = (
    "import getpass, os, re, tempfile\n"
    "name = re.sub(r'[\\\\/:*?\"<>|]', '_', getpass.getuser())\n"
    "path = os.path.join(tempfile.gettempdir(), 'torchinductor_' + name)\n"
    "os.makedirs(path, exist_ok=True)\n"
    "print(getpass.getuser(), path)\n"
)


def _sidecar_environment() -> dict[str, str]:
    """The sidecar's environment as the task definition builds it (main.tf, ``vllm_env``)
    with the module's defaults: task_environment.json plus HOME."""
    variables = (MODULE / "variables.tf").read_text()
    home = re.search(
        r'variable "vllm_cache_container_path" \{.*?default\s+=\s+"([^"]+)"', variables, re.S
    )
    assert home is not None
    return {**TASK["vllm_environment"], "HOME": home.group(1)}


def _uid_without_passwd_entry() -> int:
    """The task's uid where this machine has no passwd entry for it, else the next uid that
    has none: what matters to getpass is that the entry is missing."""
    uid = int(TASK["user"])
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


def _as_uid_without_passwd(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("replaying another uid needs root and setpriv (util-linux) on this machine")
    uid = str(_uid_without_passwd_entry())
    as_uid = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    as_uid += ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items())]
    # The code needs only the standard library: any Python that uid may execute (a venv's
    # interpreter can live under a home it cannot enter).
    candidates = dict.fromkeys([sys.executable, "/usr/bin/python3", shutil.which("python3")])
    runnable = []
    for python in filter(None, candidates):
        if subprocess.run([*as_uid, python, "-c", ""], capture_output=True).returncode == 0:
            runnable.append(python)
    if not runnable:
        pytest.skip(f"no Python on this machine that uid {uid} may execute")
    return subprocess.run(
        [*as_uid, runnable[0], "-I", "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_without_a_user_name_getuser_fails_as_such_a_uid() -> None:
    """The replay reaches the failure the sidecar met: HOME alone, as the task used to set."""
    result = _as_uid_without_passwd({"HOME": "/cache"}, TORCH_CACHE_DIR)
    assert result.returncode != 0
    # KeyError up to Python 3.12 (the vLLM image's), OSError from 3.13.
    assert re.search(r"getpwuid\(\): uid not found|No username set", result.stderr), result.stderr


def test_the_sidecar_environment_names_a_user_for_torch() -> None:
    result = _as_uid_without_passwd(_sidecar_environment(), TORCH_CACHE_DIR)
    assert result.returncode == 0, result.stderr
    name, cache_dir = result.stdout.split()
    assert name == TASK["vllm_environment"]["USER"] == TASK["vllm_environment"]["LOGNAME"]
    assert cache_dir.endswith(f"torchinductor_{name}")
    shutil.rmtree(cache_dir, ignore_errors=True)


def test_the_runner_image_has_a_passwd_entry_for_the_task_uid() -> None:
    """The runner container runs as the same uid, which its image creates (with a home), so
    getpass finds its name there and needs no USER."""
    dockerfile = (ROOT / "docker" / "runner.Dockerfile").read_text()
    created = re.search(r"useradd --uid (\d+) --gid (\d+) --create-home", dockerfile)
    assert created is not None and created.groups() == (TASK["user"], TASK["user"])
    assert f"USER {TASK['user']}:{TASK['user']}" in dockerfile
