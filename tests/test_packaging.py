"""Both ends of what ``pyproject.toml`` allows are testable (issue 28): tox's ``py-min`` pins exactly
the lowest versions declared, and ``.ci/run`` installs what a new user gets into a fresh virtualenv."""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _lower_bounds() -> dict[str, str]:
    """``{name: lowest version}`` of every ``>=`` requirement of the package and its test extra
    that applies on this Python (names normalised as pip does)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds: dict[str, str] = {}
    for line in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        lows = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lows) == 1, f"{line}: one lower bound expected"
        bounds[re.sub(r"[-_.]+", "-", req.name).lower()] = lows[0]
    return bounds


def _py_min_pins() -> dict[str, str]:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    pins: dict[str, str] = {}
    for line in tox["testenv:py-min"]["deps"].split():
        name, _, version = line.partition("==")
        assert version, f"py-min pins every dependency with ==, not {line!r}"
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_py_min_pins_the_declared_lower_bounds() -> None:
    bounds, pins = _lower_bounds(), _py_min_pins()
    assert set(pins) == set(bounds)
    for name, low in bounds.items():
        # "pyyaml>=6" is met by the release 6.0: compare as versions, not strings
        assert Version(pins[name]) == Version(low), (name, pins[name], low)


def test_ci_installs_into_a_fresh_virtualenv_and_prints_the_versions() -> None:
    """CI tests what a new user installs: a virtualenv made anew in the checkout on every run, the
    package installed into it with the newest versions allowed, its versions printed first."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"rm -rf \"?\$venv\"?", script) and re.search(r"-m venv \"?\$venv\"?", script)
    assert 'pip install --quiet -e ".[test]"' in script
    for name in ("pytest", "pytest-xdist", "pluggy", "gitpython", "scipy", "uv"):
        assert name in script.split("README command 2", 1)[0], name
    commands = [line for line in script.split("README command 2", 1)[1].splitlines()[1:]
                if line.strip() and not line.lstrip().startswith("#")]
    assert commands == ["python -m pytest -n 2", "python -m pytest -n 2 -m slow"]
