"""Fixtures of the export's tests: a Python that imports the real swebench package (``-m clients`` tests)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def swebench_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python that imports swebench 5: this one, else a new uv environment (skip when it cannot be made)."""
    if importlib.util.find_spec("swebench") is not None:
        return sys.executable
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("swebench is not installed and uv is not there to install it")
    env_dir = tmp_path_factory.mktemp("swebench") / "venv"
    try:
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(env_dir)], check=True, capture_output=True,
                       timeout=120)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"), "swebench>=5,<6"],
                       check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"could not install swebench: {exc}")
    return str(env_dir / "bin" / "python")
