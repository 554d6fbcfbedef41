"""env_fingerprint / env_description / fingerprint_diff."""

from __future__ import annotations

import copy
import importlib.metadata
import os
import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.sandbox.fingerprint import env_description, env_fingerprint, fingerprint_diff, fingerprint_of

DESC: dict[str, Any] = {
    "python": "3.11.7",
    "implementation": "cpython",
    "platform": "linux-x86_64",
    "distributions": {"numpy": "1.26.4", "pytest": "9.0.1", "six": "1.16.0"},
}


def test_description_of_the_running_interpreter() -> None:
    desc = env_description()
    assert desc["python"] == platform.python_version()
    assert desc["implementation"] == sys.implementation.name
    assert desc["platform"].startswith(sys.platform)
    assert desc["distributions"]["pytest"] == importlib.metadata.version("pytest")
    assert desc["distributions"]["pytest-homefield"]  # normalised name of this package
    names = list(desc["distributions"])
    assert names == sorted(names)
    assert all(n == n.lower() and "_" not in n for n in names)


def test_fingerprint_is_stable_and_short() -> None:
    first = env_fingerprint()
    assert first == env_fingerprint() == env_fingerprint(sys.executable)
    assert len(first) == 16
    int(first, 16)


def test_exclude_drops_a_distribution() -> None:
    desc = env_description(exclude=["Pytest_Homefield"])
    assert "pytest-homefield" not in desc["distributions"]
    assert env_fingerprint(exclude=["pytest-homefield"]) != env_fingerprint()


def test_other_interpreter_runs_the_probe(tmp_path: Path) -> None:
    # a symlink to the running interpreter takes the subprocess path and must agree with in-process;
    # in a venv the link lives beside the venv's own python, so it still finds pyvenv.cfg
    link = Path(sys.executable).with_name(f"python-hf-probe-{os.getpid()}")
    try:
        os.symlink(sys.executable, link)
    except OSError:
        pytest.skip("cannot create a link beside the interpreter")
    try:
        assert env_description(str(link)) == env_description()
    finally:
        link.unlink()


def test_unusable_interpreter_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot describe"):
        env_description(str(tmp_path / "no-such-python"))
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(RuntimeError, match="exit 3"):
        env_description(str(fake))


def test_fingerprint_changes_when_a_distribution_differs() -> None:
    base = fingerprint_of(DESC)
    assert base == fingerprint_of(copy.deepcopy(DESC))
    upgraded = copy.deepcopy(DESC)
    upgraded["distributions"]["numpy"] = "2.0.1"
    added = copy.deepcopy(DESC)
    added["distributions"]["requests"] = "2.32.3"
    removed = copy.deepcopy(DESC)
    del removed["distributions"]["six"]
    newer_python = dict(DESC, python="3.11.9")
    fingerprints = {fingerprint_of(d) for d in (upgraded, added, removed, newer_python)}
    assert base not in fingerprints
    assert len(fingerprints) == 4


def test_fingerprint_ignores_name_spelling_order_and_platform() -> None:
    respelled = dict(
        DESC,
        platform="darwin-arm64",
        distributions={"Six": "1.16.0", "NumPy": "1.26.4", "pytest": "9.0.1"},
    )
    assert fingerprint_of(respelled) == fingerprint_of(DESC)


def test_diff_lines() -> None:
    new = {
        "python": "3.11.9",
        "implementation": "cpython",
        "platform": "linux-x86_64",
        "distributions": {"numpy": "2.0.1", "pytest": "9.0.1", "requests": "2.32"},
    }
    assert fingerprint_diff(DESC, new) == [
        "python 3.11.7 -> 3.11.9",
        "numpy 1.26.4 -> 2.0.1",
        "+ requests 2.32",
        "- six 1.16.0",
    ]
    assert fingerprint_diff(DESC, copy.deepcopy(DESC)) == []


def test_diff_normalises_names() -> None:
    new = copy.deepcopy(DESC)
    new["distributions"] = {"NumPy": "1.26.4", "pytest": "9.0.1", "six": "1.16.0"}
    assert fingerprint_diff(DESC, new) == []


def test_a_folder_put_on_sys_path_inside_site_packages_is_not_described(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """setuptools puts its vendored copies (``site-packages/setuptools/_vendor``, with their own
    ``*.dist-info``) on ``sys.path`` when it is imported: the running interpreter's description must not
    depend on that, or it differs from a fresh interpreter's (the same environment, another fingerprint).
    A real ``site-packages`` folder on the path is described."""
    site = tmp_path / "site-packages"
    for folder, name in ((site, "hf-installed"), (site / "tool" / "_vendor", "hf-vendored")):
        info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(site))
    before = env_description()
    assert before["distributions"]["hf-installed"] == "1.0"
    monkeypatch.syspath_prepend(str(site / "tool" / "_vendor"))
    assert env_description() == before
