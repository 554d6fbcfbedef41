"""The mine's summary hint when most candidates cannot collect their tests even at the commit (nu19 on
tox-dev/platformdirs, a hatch-vcs project): the hint said only "generate or install what the tests
import with setup_cmd", and the README's example stub (``__version__`` alone) still failed there,
since ``platformdirs/__init__.py`` imports ``__version_tuple__`` too. For a version module a build
generates the hint now gives the ``setup_cmd`` line, with the module's file, that writes a stub with
every name setuptools-scm and hatch-vcs define."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import yaml

from pytest_homefield.mine.setup_help import module_file
from pytest_homefield.mine.summary import collection_errors_line, setup_hint
from pytest_homefield.sandbox.testrun import run_tests

_WHY = "No module named 'platformdirs.version'"


def _broken(n: int, why: str = _WHY) -> list[dict[str, str]]:
    return [{"reason": "reference_fails", "detail": f"collection errors at the parent and at the commit: "
                                                     f"tests/test_{i}.py (ModuleNotFoundError: {why})"}
            for i in range(n)]


def test_the_hint_gives_a_setup_cmd_that_writes_a_stub_the_package_imports(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "platformdirs").mkdir(parents=True)
    (repo / "src" / "platformdirs" / "__init__.py").write_text(
        "from .version import __version__\nfrom .version import __version_tuple__ as __version_info__\n")
    hint = setup_hint(_broken(11), locate=lambda module: module_file(repo, module))
    assert hint is not None and hint.startswith(
        f"Hint: 11 of 11 candidates could not collect their tests even at the commit (ModuleNotFoundError: {_WHY}). "
        "platformdirs.version is a file the build generates (hatch-vcs, setuptools-scm)"), hint
    line = hint.split("write a stub of it in .homefield.yml, ")[1].removesuffix(", then mine again.")
    cmd = yaml.safe_load(line)["setup_cmd"]  # the line as the user pastes it into .homefield.yml
    subprocess.run(["sh", "-c", cmd], cwd=repo, check=True)
    probe = subprocess.run([sys.executable, "-c", "import platformdirs as p; print(p.__version__, p.__version_info__)"],
                           cwd=repo / "src", capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "0.0.0 (0, 0, 0)"


def test_the_stub_passes_a_test_of_the_versions_shape(tmp_path: Path) -> None:
    """nu27 on prettytable (hatch-vcs): its ``test_version`` wants a digit first and last and two dots at
    least, as a build's version has. With the stub's ``"0"`` it failed at every commit: left out of the
    9 of 12 tasks whose test files hold it (``excluded 1``), and the one commit whose only red test it was
    dropped as "reference fails" naming it. The stub has a release's ``X.Y.Z`` shape, so the test passes in
    the snapshot."""
    proj = tmp_path / "prettytable"
    (proj / "src" / "prettytable").mkdir(parents=True)
    (proj / "src" / "prettytable" / "__init__.py").write_text("from ._version import __version__\n")
    (proj / "tests").mkdir()
    (proj / "tests" / "test_version.py").write_text(
        "import prettytable\n\n\ndef test_version():\n    assert isinstance(prettytable.__version__, str)\n"
        "    assert prettytable.__version__[0].isdigit()\n    assert prettytable.__version__.count('.') >= 2\n"
        "    assert prettytable.__version__[-1].isdigit()\n")
    hint = setup_hint(_broken(3, "No module named 'prettytable._version'"),
                      locate=lambda module: module_file(proj, module))
    assert hint is not None
    cmd = yaml.safe_load(hint.split("write a stub of it in .homefield.yml, ")[1].removesuffix(", then mine again."))
    subprocess.run(["sh", "-c", cmd["setup_cmd"]], cwd=proj, check=True)
    run = run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_version.py"],
                    out_dir=tmp_path / "out", sandbox="none", timeout_s=60)
    assert run.outcomes == {"tests/test_version.py::test_version": "passed"}, (run.outcomes, run.error)


def test_where_the_module_file_is_and_other_errors_keep_the_general_hint(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert module_file(tmp_path, "pkg._version") == "src/pkg/_version.py"
    (tmp_path / "flat").mkdir()
    assert module_file(tmp_path, "flat._version") == "flat/_version.py"
    general = setup_hint(_broken(3, "No module named 'yaml'"), locate=lambda module: module_file(tmp_path, module))
    assert general is not None and general.endswith(
        "generate or install what the tests import with setup_cmd in .homefield.yml (README: Python "
        "environments), then mine again.")
    assert setup_hint(_broken(1) + [{"reason": None}] * 3) is None  # most candidates fine: no hint


def test_a_commit_whose_own_test_configuration_was_left_out_gets_no_setup_hint() -> None:
    """nu38, pallets/click 777a89e232d5: its tests fail to collect at the commit because the commit runs leave out
    its ``pyproject.toml`` (the marker registration grading never carries): no environment fault, so no hint to
    fix the environment with ``setup_cmd`` (it had one, 1 of 2 candidates), nor a ``Collection errors:`` line."""
    held = {"reason": "reference_fails", "detail": (
        "collection errors at the parent and at the commit: tests/test_stream_lifecycle.py "
        "(pytest.PytestUnknownMarkWarning: Unknown pytest.mark.stress - is this a typo?); "
        "the commit runs left out its change to pyproject.toml: test "
        "configuration, which grading carries from no change, the reference fix's neither")}
    assert setup_hint([held, {"reason": None}]) is None
    assert collection_errors_line([held, dict(held), *[{"reason": None}] * 3]) is None
    assert setup_hint(_broken(1) + [{"reason": None}]) is not None  # the environment's: the hint stays


def test_a_warning_the_tests_raise_sends_the_user_to_pytest_not_to_setup_cmd() -> None:
    """nu40, dateutil/dateutil since 2019 under pytest 9.2: its ``setup.cfg`` has ``filterwarnings = error``, so
    pytest 9's ``PytestRemovedIn10Warning`` (a non-Collection iterable given to ``parametrize``) and, without
    pytest-cov, ``PytestUnknownMarkWarning`` for its ``no_cover`` mark stopped the collection of 13 of 14
    candidates. The hint sent the user to ``setup_cmd`` ("Snapshots hold the commit's tree only: generate or
    install what the tests import"): no file was missing, the pytest was too new. It names the warning and
    the pytest of this environment."""
    removed = _broken(11, "x")
    for record in removed:
        record["detail"] = record["detail"].replace(
            "(ModuleNotFoundError: x)",
            "(pytest.PytestRemovedIn10Warning: Passing a non-Collection iterable to parametrize is deprecated.)")
    hint = setup_hint(removed)
    assert hint is not None and "setup_cmd" not in hint, hint
    assert "pytest.PytestRemovedIn10Warning is a warning the tests' filterwarnings turn into an error" in hint
    assert f"than this one (pytest {version('pytest')})" in hint
    mark = [{"reason": "reference_fails", "detail": "collection errors at the parent and at the commit (the test "
             "command exited with status 3 before any test ran: INTERNALERROR> pytest.PytestUnknownMarkWarning: "
             "Unknown pytest.mark.no_cover - is this a typo?)"}] * 3
    hint = setup_hint(mark)
    assert hint is not None and "pytest.PytestUnknownMarkWarning is a warning" in hint and "setup_cmd" not in hint
    assert "setup_cmd" in str(setup_hint(_broken(3, "No module named 'yaml'")))  # a missing module: as before


def test_a_name_the_standard_library_no_longer_has_asks_for_an_older_python_not_setup_cmd(tmp_path: Path) -> None:
    """nu52 on grantjenks/python-sortedcontainers before 2018: 13 of 20 candidates' tests import ``Sequence`` from
    ``collections`` (gone since Python 3.10) at both commits, and the hint sent the user to ``setup_cmd``, which no
    file or package fixes. The detail is the one a real test run gives."""
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_old.py").write_text("from collections import Mapping\n\n\ndef test_x():\n    pass\n")
    run = run_tests(proj, f"{sys.executable} -m pytest -p no:homefield -p no:randomly", ["tests/test_old.py"],
                    out_dir=tmp_path / "out", sandbox="none", timeout_s=60)
    assert run.collection_error and run.collection_errors, (run.outcomes, run.error)
    message = next(iter(run.collection_errors.values()))
    broken = [{"reason": "reference_fails", "detail": f"collection errors at the parent and at the commit: "
                                                       f"tests/test_{i}.py ({message})"} for i in range(13)]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    hint = setup_hint(broken + [{"reason": None}] * 7)
    assert hint is not None and "setup_cmd" not in hint, hint
    assert (f"collections of Python {python}, which the tests ran with, has no Mapping: these commits were written "
            "for an older Python; mine them again in a virtualenv of the Python of their day") in hint, hint
    assert hint.endswith("or from a later --homefield-since."), hint  # as pytest --homefield-mine spells it (ux65)
    line = collection_errors_line(broken[:3] + [{"reason": None}] * 7)  # a few of them: the Collection errors line
    assert line is not None and "setup_cmd" not in line and f"collections of Python {python}" in line, line
    # keep66, usr46: "a later --since" named no date; with the candidates' dates, the day after the newest failing
    dated = [{**r, "id": f"c{i}"} for i, r in enumerate(broken)]
    dates = {f"c{i}": f"2018-{1 + i % 11:02d}-05T10:00:00+00:00" for i in range(13)} | {"c99": "2024-01-01"}
    hint = setup_hint(dated + [{"reason": None, "id": "c99"}] * 7, dates=dates)
    assert hint is not None and hint.endswith(
        "or from --homefield-since 2018-11-06 (the newest commit failing so is of 2018-11-05)."), hint
    line = collection_errors_line(dated[:3] + [{"reason": None}] * 7, dates=dates)
    assert line is not None and "--homefield-since 2018-03-06 (the newest commit failing so is of 2018-03-05)" in line
    general = setup_hint(_broken(3, "cannot import name 'x' from 'yaml' (/v/lib/python3.11/site-packages/yaml/x.py)"))
    assert general is not None and "setup_cmd in .homefield.yml" in general  # a package's module: as before


def test_an_attribute_the_standard_library_no_longer_has_asks_for_an_older_python_not_setup_cmd(
        tmp_path: Path) -> None:
    """usr46 on tkem/cachetools before 2018-11: 34 of 68 candidates' code reads ``collections.MutableMapping`` (gone
    since Python 3.10) at both commits, an ``AttributeError`` and not an import, and the hint sent the user to
    ``setup_cmd``. The detail is the one a real test run gives; a package's module missing an attribute is as before."""
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_old.py").write_text(
        "import collections\n\n\nclass Cache(collections.MutableMapping):\n    pass\n\n\ndef test_x():\n    pass\n")
    run = run_tests(proj, f"{sys.executable} -m pytest -p no:homefield -p no:randomly", ["tests/test_old.py"],
                    out_dir=tmp_path / "out", sandbox="none", timeout_s=60)
    assert run.collection_error and run.collection_errors, (run.outcomes, run.error)
    message = next(iter(run.collection_errors.values()))
    broken = [{"reason": "reference_fails", "detail": f"collection errors at the parent and at the commit: "
                                                       f"tests/test_{i}.py ({message})"} for i in range(34)]
    hint = setup_hint(broken + [{"reason": None}] * 34)
    assert hint is not None and "setup_cmd" not in hint, hint
    assert ("collections of the Python the tests ran with has no MutableMapping: these commits were written for an "
            "older Python; mine them again in a virtualenv of the Python of their day") in hint, hint
    package = setup_hint([
        {"reason": "reference_fails", "detail": "collection errors at the parent and at the commit: tests/test_x.py "
                   "(AttributeError: module 'yaml' has no attribute 'CLoader')"}] * 3)
    assert package is not None and "setup_cmd in .homefield.yml" in package, package  # not the standard library


def test_the_stub_s_setup_cmd_passes_at_a_commit_of_another_layout(tmp_path: Path) -> None:
    """usr64 on jazzband/prettytable: the hint's stub wrote ``src/prettytable/_version.py``, and at the commits
    before the ``src/`` layout (``prettytable.py`` at the top) ``sh`` failed ("Directory nonexistent"): 2 of 53
    candidates dropped as setup failed. It writes the stub where the folder is, and nothing elsewhere."""
    hint = setup_hint(_broken(3, "No module named 'prettytable._version'"), locate=lambda m: "src/prettytable/_version.py")
    assert hint is not None
    cmd = yaml.safe_load(hint.split("write a stub of it in .homefield.yml, ")[1].removesuffix(", then mine again."))
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "prettytable.py").write_text("__version__ = '1.0'\n")
    (new / "src" / "prettytable").mkdir(parents=True)
    for tree in (old, new):
        done = subprocess.run(["sh", "-c", cmd["setup_cmd"]], cwd=tree, capture_output=True, text=True)
        assert done.returncode == 0, (tree.name, done.stderr)
    assert sorted(p.name for p in old.rglob("*")) == ["prettytable.py"]
    assert "__version_tuple__ = version_tuple = (0, 0, 0)" in (new / "src/prettytable/_version.py").read_text()
