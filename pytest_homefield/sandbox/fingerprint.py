"""The test environment a task was verified in: ``env_fingerprint`` (docs/contracts.md §6) and drift.

homefield v0.2 recorded no environment (reference §9.1), so a task that stopped reproducing could
not say why. Here a task carries ``env_fingerprint`` — the first 16 hex digits of a sha256 over the
interpreter (implementation and version) and the installed distributions as ``name==version``
(names normalised as in PEP 503, sorted) — and ``homefield verify`` can show what changed with
:func:`fingerprint_diff` of two :func:`env_description` results.

The description of an interpreter other than the running one comes from running
:data:`_PROBE` in it (``python -c``), so that interpreter needs only the standard library
(``importlib.metadata``, Python >= 3.8). The running interpreter executes the same code in-process
(compiled once at import), so both paths describe an environment identically.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["env_description", "env_fingerprint", "fingerprint_of", "fingerprint_diff", "other_python_note", "prefix_of",
           "python_of"]

# Runs in the described interpreter: keep it standard-library only and Python 3.8 compatible.
_PROBE = r'''
import importlib.metadata, os, platform, re, sys

def normalise(name):
    """PEP 503 name: Typing_Extensions -> typing-extensions."""
    return re.sub(r"[-_.]+", "-", name).lower()

def search_path():
    """sys.path less the folders inside an installed package (inside an entry named site-packages or
    dist-packages): the vendored copies setuptools puts on sys.path when it is imported, which a
    fresh interpreter does not have, so the description does not depend on what ran before."""
    full = [os.path.abspath(p or os.curdir) for p in sys.path]
    sites = [f.rstrip(os.sep) + os.sep for f in full if os.path.basename(f) in ("site-packages", "dist-packages")]
    return [p for p, f in zip(sys.path, full) if not any(f.startswith(site) for site in sites)]

def describe():
    dists = {}
    for dist in importlib.metadata.distributions(path=search_path()):
        name = dist.metadata["Name"]
        if name:  # first on sys.path wins, as for imports
            dists.setdefault(normalise(name), dist.version)
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": sys.platform + "-" + platform.machine(),
        "distributions": dict(sorted(dists.items())),
    }
'''
_PROBE_MAIN = "\nimport json\nprint(json.dumps(describe()))\n"


_PROBE_NAMESPACE: dict[str, Any] = {}
exec(compile(_PROBE, "<homefield-env-probe>", "exec"), _PROBE_NAMESPACE)
_normalise: Callable[[str], str] = _PROBE_NAMESPACE["normalise"]
_describe_here: Callable[[], dict[str, Any]] = _PROBE_NAMESPACE["describe"]


def env_description(python: str | None = None, *, exclude: Collection[str] = (),
                    services: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Describe the environment of ``python`` (an executable path; default: the running one).

    Shape: ``{"python": "3.11.9", "implementation": "cpython", "platform": "linux-x86_64",
    "distributions": {"numpy": "1.26.4", ...}}`` with PEP 503 names, sorted. ``exclude`` drops
    distributions by name, e.g. the project under test whose setuptools-scm version changes with
    every commit. ``services``: the ``services:`` entries the tests need
    (:meth:`~pytest_homefield.sandbox.services.ServiceSpec.to_dict`), kept under ``"services"`` (name →
    entry) when there are any. Raises ``RuntimeError`` if the other interpreter cannot run the probe
    (60 s limit).
    """
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        desc = _describe_here()
    else:
        try:
            proc = subprocess.run(
                [python, "-c", _PROBE + _PROBE_MAIN],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"cannot describe the environment of {python}: {exc}") from exc
        if proc.returncode != 0:
            raise RuntimeError(
                f"cannot describe the environment of {python} (exit {proc.returncode}): "
                f"{proc.stderr.strip()[-500:]}"
            )
        desc = json.loads(proc.stdout)
    if exclude:
        dropped = {_normalise(name) for name in exclude}
        desc["distributions"] = {k: v for k, v in desc["distributions"].items() if k not in dropped}
    if services:
        desc["services"] = {str(sv["name"]): dict(sv) for sv in services}
    return desc


def fingerprint_of(desc: dict[str, Any]) -> str:
    """The fingerprint of an :func:`env_description` result: sha256 (first 16 hex digits) of
    ``"<implementation> <python>\\n"`` followed by ``name==version`` lines, names normalised and
    sorted, then ``service <name> <entry as sorted JSON>`` lines for the services the tests need (none:
    the same fingerprint as before services existed). The platform is described but not hashed
    (docs/contracts.md §6: interpreter, distributions and services)."""
    dists = {_normalise(name): version for name, version in desc.get("distributions", {}).items()}
    lines = [f"{desc.get('implementation', 'cpython')} {desc['python']}"]
    lines += [f"{name}=={dists[name]}" for name in sorted(dists)]
    services = desc.get("services") or {}
    lines += [f"service {name} {json.dumps(services[name], sort_keys=True)}" for name in sorted(services)]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]


def env_fingerprint(python: str | None = None, *, exclude: Collection[str] = (),
                    services: Sequence[Mapping[str, Any]] = ()) -> str:
    """16 hex digits identifying the interpreter version and installed distributions of ``python``
    (default: the running interpreter) and the ``services`` the tests need; see :func:`fingerprint_of`
    and :func:`env_description`."""
    return fingerprint_of(env_description(python, exclude=exclude, services=services))


def fingerprint_diff(old_desc: dict[str, Any], new_desc: dict[str, Any]) -> list[str]:
    """What changed between two :func:`env_description` results, one human-readable line each:
    ``"python 3.11.4 -> 3.11.9"``, ``"platform linux-x86_64 -> darwin-arm64"``,
    ``"numpy 1.26.4 -> 2.0.1"``, ``"+ requests 2.32.3"``, ``"- six 1.16.0"``. Interpreter lines come
    first, then distributions by name. Empty when nothing differs."""
    lines: list[str] = []
    for key in ("implementation", "python", "platform"):
        old, new = old_desc.get(key), new_desc.get(key)
        if old != new:
            lines.append(f"{key} {old or '?'} -> {new or '?'}")
    old_d = {_normalise(k): v for k, v in old_desc.get("distributions", {}).items()}
    new_d = {_normalise(k): v for k, v in new_desc.get("distributions", {}).items()}
    for name in sorted(old_d.keys() | new_d.keys()):
        if name not in new_d:
            lines.append(f"- {name} {old_d[name]}")
        elif name not in old_d:
            lines.append(f"+ {name} {new_d[name]}")
        elif old_d[name] != new_d[name]:
            lines.append(f"{name} {old_d[name]} -> {new_d[name]}")
    old_s, new_s = old_desc.get("services") or {}, new_desc.get("services") or {}
    for name in sorted(old_s.keys() | new_s.keys()):
        if name not in new_s:
            lines.append(f"- service {name}")
        elif name not in old_s:
            lines.append(f"+ service {name}: {new_s[name].get('command')}")
        elif old_s[name] != new_s[name]:
            lines.append(f"service {name} changed: {old_s[name].get('command')} -> {new_s[name].get('command')}")
    return lines


def python_of(test_cmd: str) -> str | None:
    """The Python executable a test command runs (``python -m pytest`` -> the ``python`` on PATH), or
    ``None`` when the command is not a Python one."""
    try:
        first = shlex.split(test_cmd)[0]
    except (ValueError, IndexError):
        return None
    if "python" in Path(first).name:
        return shutil.which(first) or first
    return None


def prefix_of(python: str) -> str | None:
    """``sys.prefix`` of the interpreter ``python`` (a path, or a shim such as pyenv's that runs
    another), real path; ``None`` when it does not run or answer within 30 s."""
    try:
        proc = subprocess.run([python, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                              timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip().splitlines()
    return os.path.realpath(out[-1]) if proc.returncode == 0 and out else None


def other_python_note(test_cmd: str, *, env: str | None = None) -> str | None:
    """One header line when the tests run with another Python environment than homefield's own (nu35):
    ``'homefield: the tests run with /root/.pyenv/shims/python (the python on PATH; its environment
    /root/.pyenv/versions/3.11.7), not with /tmp/venv/bin/python, which runs homefield: activate that
    virtualenv (. /tmp/venv/bin/activate) or set test_cmd in .homefield.yml'``. A user who calls a
    virtualenv's ``homefield`` by its path without activating it had every test run with another
    interpreter, told only by a mine's ``Missing modules:`` line at its end, whose install hint then
    named that other interpreter. ``None`` when the environments are one (``sys.prefix`` of
    :func:`python_of` equals this process's, real paths), with ``--env uv`` (``env == "uv"``: each task's
    own environment), when the command is no Python one, or when that Python does not answer."""
    if env == "uv":
        return None
    python = python_of(test_cmd)
    if python is None:
        return None
    theirs = prefix_of(python)
    if theirs is None or theirs == os.path.realpath(sys.prefix):
        return None
    ours = sys.executable or "this interpreter"
    how = f"the {Path(python).name} on PATH; " if shlex.split(test_cmd)[0] == Path(python).name else ""
    activate = Path(sys.prefix) / "bin" / "activate"
    venv = (f"activate that virtualenv (. {activate}) or " if sys.prefix != sys.base_prefix and activate.is_file()
            else "")
    return (f"homefield: the tests run with {python} ({how}its environment {theirs}), not with {ours}, which runs "
            f"homefield: {venv}set test_cmd in .homefield.yml")
