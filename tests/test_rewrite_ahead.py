"""tests/helpers/rewrite_ahead.py: the controller writes pytest's rewritten-assert pycs that the workers read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc
from helpers.rewrite_ahead import plugin_targets, rewrite_ahead, rewrite_targets


def test_targets_are_the_test_modules_conftests_and_package_modules(tmp_path: Path) -> None:
    for rel in ("tests/test_a.py", "tests/sub/conftest.py", "tests/helpers/util.py", "pkg/__init__.py",
                "pkg/sub/mod.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    got = [p.relative_to(tmp_path).as_posix() for p in rewrite_targets(tmp_path / "tests", tmp_path / "pkg")]
    assert got == ["pkg/__init__.py", "pkg/sub/mod.py", "tests/sub/conftest.py", "tests/test_a.py"]


def test_plugin_targets_are_the_modules_of_the_installed_plugins() -> None:
    got = {(p.parent.name, p.name) for p in plugin_targets(("xdist", "pytest_timeout", "homefield_absent_plugin"))}
    assert {("xdist", "plugin.py"), ("xdist", "remote.py"), ("scheduler", "load.py")} <= got
    assert any(name == "pytest_timeout.py" for _, name in got)


def test_the_pyc_is_the_one_the_import_hook_reads(lean_pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """In a controller that writes no bytecode: the pyc is written once, with rewritten asserts, and is
    current the next time (nothing to write); a worker (``workerinput``) writes none."""
    test = lean_pytester.path / "test_x.py"
    test.write_text("def test_x():\n    x = 1\n    assert x == 2\n")
    config = lean_pytester.parseconfigure()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert rewrite_ahead(config, [test]) == 1
    pyc = test.parent / "__pycache__" / ("test_x" + PYC_TAIL)
    code = _read_pyc(test, pyc)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match=r"assert 1 == 2"):  # rewritten: plain asserts say nothing
        namespace["test_x"]()  # type: ignore[operator]
    assert rewrite_ahead(config, [test]) == 0
    config.workerinput = {}  # type: ignore[attr-defined]
    pyc.unlink()
    assert rewrite_ahead(config, [test]) == 0 and not pyc.exists()
