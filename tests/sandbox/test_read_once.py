"""Files read once and passed down (rev58): what a stage read is handed to the next step rather than read and parsed
again. Each test counts the real reads of a real file (the function wrapped, never replaced)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sandbox.test_canary_teardown_twin import SPIED as SPIED_FORMAT

from pytest_homefield.sandbox import twin_runs
from pytest_homefield.sandbox.twin_runs import plan_twins

TEST = "tests/test_totals.py"
#: the teardown twin's spied test file (a fixture check in reach: two runs more, its twin's and its decoy's)
SPIED = SPIED_FORMAT.format(check="calls")


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """``module.name`` wrapped to note each call's first argument (the real function still does the work)."""
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(args[0] if args else None)
        return real(*args, **kw)
    monkeypatch.setattr(module, name, counted)
    return calls


def test_plan_twins_reads_each_test_file_once_with_the_teardown_twins(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With teardown canaries planned, plan_twins read and parsed each test file twice: once for whether a teardown
    twin is in reach (one run more), once to plan it. The same plan, one read."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(SPIED, encoding="utf-8")
    before = plan_twins(tmp_path, [f"{TEST}::test_total"], seed=1, teardown=True)
    reads = _counted(monkeypatch, twin_runs, "read_source")
    plan = plan_twins(tmp_path, [f"{TEST}::test_total"], seed=1, teardown=True)
    assert [Path(f).name for f in reads] == ["test_totals.py"]  # before: twice
    assert len(plan.runs) == 4 and plan.runs == before.runs and plan.to_dict() == before.to_dict()  # deco60: 4


def test_the_sealed_runs_plan_reads_its_test_files_once_for_the_runs_apart(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """plan_seals with a twin plan read each file of a sealed site again (``_text``) right after ``sealed_files`` had
    read it: the texts ``sealed_files`` read are handed on. The same sealed files."""
    from sandbox.test_seal_apart import LOCALE_F2P, LOCALE_TESTS, _sentinel_only

    from pytest_homefield.run.sealed_grading import plan_seals
    from pytest_homefield.sandbox import nofollow, seal_sites

    task, ref, parent, plan = _sentinel_only(tmp_path, LOCALE_TESTS)
    first = plan_seals(ref, task.task, parent, apart=plan)
    calls: list[str] = []
    real = nofollow.read_bytes

    def counted(root: Path, path: str, *args: Any, **kw: Any) -> bytes:
        calls.append(path)
        return real(root, path, *args, **kw)
    monkeypatch.setattr(nofollow, "read_bytes", counted)
    monkeypatch.setattr(seal_sites.nofollow, "read_bytes", counted)
    sp = plan_seals(ref, task.task, parent, apart=plan)
    assert sp is not None and first is not None and sp.functions == [LOCALE_F2P]
    assert sp.files.keys() == first.files.keys()
    # sealable_sites', sealed_files' (the sealed text and what the runs apart are sealed from) and withheld_data's;
    # before: _text's too, 4
    assert calls.count("tests/test_fa.py") == 3, calls


def test_each_finder_module_of_a_pth_file_is_read_and_parsed_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """editable_entries read every module a ``.pth`` file imports twice and parsed it twice: as a setuptools finder
    (its ``MAPPING``) and as an ``editables`` redirector. A site folder holding one of each: one read and one parse of
    each, the same entries."""
    import ast

    from pytest_homefield.sandbox import editable

    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "__editable__.a-1.pth").write_text("import __editable___a_1_finder; __editable___a_1_finder.install()\n")
    (site / "__editable___a_1_finder.py").write_text(f"MAPPING = {{'a': '{tmp_path / 'src' / 'a'}'}}\n")
    (site / "_b.pth").write_text("import _editable_impl_b\n")
    (site / "_editable_impl_b.py").write_text("from editables.redirector import RedirectingFinder as F\n"
                                              f"F.install()\nF.map_module('b', '{tmp_path / 'src' / 'b.py'}')\n")
    for name in ("_tree_of", "_literals_of", "_redirects_of"):  # parsed afresh (the caches are keyed by text)
        if hasattr(editable, name):
            getattr(editable, name).cache_clear()
    from pytest_homefield.sandbox import protected

    monkeypatch.setattr(protected, "_PROTECTED", [*protected._PROTECTED, (tmp_path / "src").resolve()])
    reads = _counted(monkeypatch, editable, "read_own")
    parses = _counted(monkeypatch, ast, "parse")
    got = editable.editable_entries([tmp_path])
    assert sorted(Path(p).name for p in reads if p.endswith(".py")) == ["__editable___a_1_finder.py",
                                                                        "_editable_impl_b.py"]  # before: each twice
    assert len(parses) == 2  # before: 4
    assert got == [(str(tmp_path / "src" / "a"), True), (str(tmp_path / "src" / "b"), True)]
