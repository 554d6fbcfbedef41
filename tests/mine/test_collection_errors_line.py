"""The mine's summary names a collection error that several candidates share even when they are not most
of the verified ones (nu25 on hynek/stamina: its 11 commits before 2024 set pytest-asyncio's
``asyncio_mode``, which today's test group does not install, so pytest stops with "Unknown config option"
at the parent and at the commit; 11 of 27 is no majority, so no ``Hint:`` line and the summary said only
"reference fails 11")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.redgreen import classify_runs
from pytest_homefield.mine.summary import collection_errors_line, setup_hint
from pytest_homefield.settings_table import spelled_for
from pytest_homefield.sandbox.testrun import run_tests


def _record(tmp_path: Path, name: str) -> dict[str, object]:
    proj = tmp_path / name
    (proj / "tests").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--strict-config"\n'
                                         'asyncio_mode = "auto"\n')
    (proj / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    runs = [run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_x.py"], out_dir=tmp_path / f"out-{name}-{k}",
                      sandbox="none", timeout_s=60) for k in range(2)]
    v = classify_runs(runs[:1], runs[1:])
    return {"reason": v.reason, "detail": v.detail}


def test_a_shared_collection_error_of_a_minority_gets_its_line(tmp_path: Path) -> None:
    one = _record(tmp_path, "c")  # its pytest runs, at parent and commit; three candidates broken alike
    assert one["reason"] == "reference_fails" and "Unknown config option: asyncio_mode" in str(one["detail"])
    broken = [dict(one) for _ in range(3)]
    verified = broken + [{"reason": None, "detail": "FAIL_TO_PASS 1"}] * 5
    assert setup_hint(verified) is None  # 3 of 8: no hint
    line = collection_errors_line(verified)
    assert line is not None and line.startswith(
        "Collection errors: 3 candidates could not collect their tests at the parent nor at the commit, 3 of them "
        "for \"the test command exited with status 4 before any test ran: ERROR: Unknown config option: "
        "asyncio_mode\": older commits may need a pytest plugin"), line
    assert collection_errors_line(broken[:1] + verified[3:]) is None  # one candidate: its own detail says it
    assert setup_hint(broken) is not None and collection_errors_line(broken) is None  # most: the Hint: line


def test_paths_before_the_message_do_not_split_the_count() -> None:
    def rec(path: str) -> dict[str, str]:
        why = "ImportError: cannot import name 'x' from 'pkg' (src/pkg/__init__.py)"
        return {"reason": "reference_fails",
                "detail": f"collection errors at the parent and at the commit: {path} ({why})"}
    verified = [rec("tests/test_a.py"), rec("tests/test_b.py")] + [{"reason": None}] * 3
    line = collection_errors_line(verified)
    assert line is not None and ("2 of them for \"ImportError: cannot import name 'x' from 'pkg' "
                                 "(src/pkg/__init__.py)\"") in line, line


@pytest.mark.slow
def test_a_missing_module_is_named_not_the_records(tmp_path: Path) -> None:
    """nu35 on jaraco/inflect: a detail ending in "; the environment lacks module(s): M" (a real run whose
    test module imports what is not installed) quoted "see the verification records", and two different
    missing modules were counted as one error."""
    def rec(module: str) -> dict[str, object]:
        proj = tmp_path / module
        (proj / "tests").mkdir(parents=True)
        (proj / "tests" / "test_x.py").write_text(f"import {module}\n\n\ndef test_x():\n    pass\n")
        runs = [run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_x.py"],
                          out_dir=tmp_path / f"out-{module}-{k}", sandbox="none", timeout_s=60) for k in range(2)]
        v = classify_runs(runs[:1], runs[1:])
        return {"reason": v.reason, "detail": v.detail}

    a, b = rec("no_such_module_nu35a"), rec("no_such_module_nu35b")
    assert a["reason"] == "reference_fails"
    assert str(a["detail"]).endswith("; the environment lacks module(s): no_such_module_nu35a"), a
    kept = [{"reason": None}] * 4
    line = collection_errors_line([a, dict(a), b] + kept)
    assert line is not None and ("3 candidates could not collect their tests at the parent nor at the commit, 2 of "
                                 "them for \"ModuleNotFoundError: No module named 'no_such_module_nu35a'\"") in line
    hint = setup_hint([a, dict(a)])
    assert hint is not None and "(ModuleNotFoundError: No module named 'no_such_module_nu35a')" in hint, hint


def test_a_filter_naming_a_class_this_pytest_lacks_gets_the_override_not_setup_cmd(tmp_path: Path) -> None:
    """nub58 on dgilland/pydash: 5 candidates of 2023-24 filter ``pytest.PytestRemovedIn8Warning``; the line sent
    the user to a plugin, package or setup_cmd, none of which brings the class back; ``-o filterwarnings=``
    does (one of them mined so was kept)."""
    proj = tmp_path / "p"
    (proj / "tests").mkdir(parents=True)
    (proj / "setup.cfg").write_text("[tool:pytest]\nfilterwarnings =\n    ignore::pytest.PytestRemovedIn8Warning\n")
    (proj / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    runs = [run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_x.py"], out_dir=tmp_path / f"out-{k}",
                      sandbox="none", timeout_s=60) for k in range(2)]
    v = classify_runs(runs[:1], runs[1:])
    broken = [{"reason": v.reason, "detail": v.detail}] * 2
    line = collection_errors_line(broken + [{"reason": None}] * 3)
    assert line is not None and line.endswith(
        "their filterwarnings entry ignore::pytest.PytestRemovedIn8Warning names pytest.PytestRemovedIn8Warning, "
        "which the pytest installed here lacks; test_cmd: \"python -m pytest -o filterwarnings=\" in .homefield.yml "
        "runs their tests without their warning filters (a test that needs one fails alike at parent and commit and "
        "is left out), then mine again (a changed environment is verified again)."), line
    hint = setup_hint(broken)
    assert hint is not None and "; test_cmd: \"python -m pytest -o filterwarnings=\" in .homefield.yml" in hint, hint
    assert "PytestRemovedIn8Warning')). their filterwarnings entry" in hint, hint


def test_a_pytest_attribute_this_pytest_lacks_gets_since_not_setup_cmd(tmp_path: Path) -> None:
    """usr64 on jazzband/prettytable: 31 of 53 candidates before 2024-02 call ``pytest.lazy_fixture`` (the plugin
    pytest-lazy-fixture, which pytest 8 broke); the hint sent the user to setup_cmd, which cannot bring it back."""
    proj = tmp_path / "p"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_x.py").write_text("import pytest\n\n@pytest.mark.parametrize('v', [pytest.lazy_fixture('f')])"
                                              "\ndef test_x(v):\n    pass\n")
    runs = [run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_x.py"], out_dir=tmp_path / f"out-{k}",
                      sandbox="none", timeout_s=60) for k in range(2)]
    v = classify_runs(runs[:1], runs[1:])
    broken = [{"reason": v.reason, "detail": v.detail}] * 2
    hint = setup_hint(broken)
    assert hint is not None and "pytest.lazy_fixture is no attribute of the pytest installed here" in hint, hint
    assert "git log -1 -S 'pytest.lazy_fixture'" in hint and "setup_cmd in .homefield.yml" not in hint, hint
    line = collection_errors_line(broken + [{"reason": None}] * 3)
    assert line is not None and "mine with --homefield-since a later date" in line, line  # pytest --homefield-mine's
    with spelled_for("cli"):  # ux65: the option as the front end in use spells it
        assert "mine with --since a later date" in (collection_errors_line(broken + [{"reason": None}] * 3) or "")


def _broken_run(tmp_path: Path, name: str, test: str, init: str | None = None) -> dict[str, object]:
    """The verification record of a real candidate whose ``tests/test_x.py`` (``test``) cannot be collected at the
    parent nor at the commit; ``init``: the ``src/prettytable/__init__.py`` it imports, if any."""
    proj = tmp_path / name
    (proj / "tests").mkdir(parents=True)
    if init is not None:
        (proj / "src" / "prettytable").mkdir(parents=True)
        (proj / "src" / "prettytable" / "__init__.py").write_text(init)
    (proj / "tests" / "test_x.py").write_text(test)
    runs = [run_tests(proj, f"{sys.executable} -m pytest -p no:cacheprovider", ["tests/test_x.py"],
                      out_dir=tmp_path / f"out-{name}-{k}", sandbox="none", timeout_s=60) for k in range(2)]
    v = classify_runs(runs[:1], runs[1:])
    return {"reason": v.reason, "detail": v.detail}


@pytest.mark.slow  # four real pytest runs: 4-9 s
def test_each_distinct_collection_error_is_named_with_its_count_and_advice(tmp_path: Path) -> None:
    """usr64 on jazzband/prettytable: a 7-minute mine's summary named only its first collection error (a missing
    ``prettytable._version``), the next 11-minute one ``pytest.lazy_fixture``. Both are named, most common first,
    each with its count and its own advice."""
    version = _broken_run(tmp_path, "v", "import sys\nsys.path.insert(0, 'src')\nimport prettytable\n\n\n"
                          "def test_x():\n    pass\n", init="from ._version import __version__\n")
    lazy = _broken_run(tmp_path, "l", "import pytest\n\n@pytest.mark.parametrize('v', [pytest.lazy_fixture('f')])\n"
                       "def test_x(v):\n    pass\n")
    assert "prettytable._version" in str(version["detail"]) and "lazy_fixture" in str(lazy["detail"]), (version, lazy)
    broken = [version] + [lazy] * 2  # the first error met is the rarer one
    hint = setup_hint(broken, locate=lambda module: f"src/{module.replace('.', '/')}.py")
    assert hint is not None and hint.startswith("Hint: 3 of 3 candidates could not collect their tests even at the "
                                                "commit: 2 of them for \""), hint
    lazy_at, version_at = hint.index("pytest.lazy_fixture is no attribute"), hint.index(". 1 for \"")
    assert lazy_at < version_at and "write a stub of it in .homefield.yml" in hint[version_at:], hint
    assert "src/prettytable/_version.py" in hint, hint
    line = collection_errors_line(broken + [{"reason": None}] * 4)
    assert line is not None and line.startswith("Collection errors: 3 candidates could not collect their tests at "
                                                "the parent nor at the commit, 2 of them for \""), line
    assert "mine with --homefield-since a later date" in line and ". 1 for \"" in line and "_version" in line, line


def test_past_three_errors_the_others_are_counted() -> None:
    def rec(i: int) -> dict[str, str]:
        return {"reason": "reference_fails", "detail": f"collection errors at the parent and at the commit: "
                                                       f"tests/test_x.py (ModuleNotFoundError: No module named 'm{i}')"}
    verified = [rec(i) for i in (1, 1, 1, 2, 2, 3, 4, 5)]
    hint = setup_hint(verified)
    assert hint is not None and hint.count(" for \"ModuleNotFoundError") == 3, hint
    assert hint.index("'m1'") < hint.index("'m2'") < hint.index("'m3'") and "'m4'" not in hint, hint
    assert hint.endswith(" 2 other candidates for 2 other errors (see the verification records)."), hint
