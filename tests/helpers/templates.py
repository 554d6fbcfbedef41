"""The conftest templates of ``conftest_templates/`` loaded as modules, for the tests that call their
functions directly (each load is a fresh module)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

TEMPLATES = Path(__file__).resolve().parents[2] / "conftest_templates"


def load_template(name: str) -> ModuleType:
    """``conftest_templates/<name>`` (e.g. ``"venv_setup.py"``) as a new module."""
    spec = importlib.util.spec_from_file_location(f"template_{name[:-3]}", TEMPLATES / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
