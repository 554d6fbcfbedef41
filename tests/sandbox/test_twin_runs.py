"""Canary twins run apart (issue 30, sandbox/twin_runs.py): each run of the hidden test files holds one
member of every group at the original's own name and place; the outcomes merge back into the canary
ids. Plain checks of the plan (no test process: grading's runs are in tests/run)."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

from pytest_homefield.sandbox.twin_runs import RUNS, TWIN_MARK, plan_twins

SRC = '''import pytest


def helper():
    return 1


def test_add():
    assert 1 + 1 == 2


@pytest.mark.parametrize("s,n", [("a b", 2), ("a", 1), ("a b c", 3)])
def test_count(s, n):
    assert len(s.split()) == n


def test_name():
    assert up(b"abc") == "ABC"


def test_other():
    assert "xyz".upper() == "XYZ"
    assert "ABC".lower() == "abc"
'''
F2P = ["t/test_x.py::test_add", "t/test_x.py::test_count[a b-2]", "t/test_x.py::test_count[a-1]",
       "t/test_x.py::test_name"]


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "t").mkdir(parents=True)
    (tmp_path / "t" / "test_x.py").write_text(SRC)
    return tmp_path


def _defs(text: str) -> list[tuple[str, int]]:
    return [(n.name, n.lineno) for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


def test_each_run_holds_one_member_of_each_group_under_the_originals_name(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    plan = plan_twins(root, F2P, seed=7)
    assert (root / "t" / "test_x.py").read_text() == SRC, "planning changes no file"
    assert len(plan.runs) == RUNS and plan.selectors() == ["t/test_x.py::test_add", "t/test_x.py::test_count",
                                                           "t/test_x.py::test_name"]
    for source, members in plan.placement.items():
        twins = [c for c in plan.canaries if c.source == source]
        assert sorted(set(members)) == list(range(len(twins) + 1)), (source, members)  # every member placed
        assert all(c.node == f"{source}{TWIN_MARK}{j}" for j, c in enumerate(twins, 1))
    texts = [run["t/test_x.py"].decode() for run in plan.runs]
    for text in texts:
        assert _defs(text) == _defs(SRC), "same names at the same lines: no name tells a twin"
    name = [re.search(r'up\(b"abc"\) == (.*)', t).group(1) for t in texts]  # type: ignore[union-attr]
    expected = {0: "'ABC'", **{j: repr(c.how.split(" -> ")[1].split(" (")[0]).strip('"') for j, c in
                                enumerate([c for c in plan.canaries if c.source.endswith("test_name")], 1)}}
    assert name == [expected[m] for m in plan.placement["t/test_x.py::test_name"]]
    assert "'XYZ'" in name or "'ABC'" in name


def test_twin_values_are_the_files_own_and_a_real_one_is_never_excused(tmp_path: Path) -> None:
    plan = plan_twins(_tree(tmp_path), F2P, seed=3)
    name = [c for c in plan.canaries if c.source.endswith("test_name")]
    assert len(name) == 1 and name[0].how == "expected 'ABC' -> 'XYZ' (another test's expected value)"
    assert name[0].strong and not name[0].excusable
    count = [c for c in plan.canaries if c.source.endswith("test_count")]
    # one twin apart (APART): the parametrize column deranged, each set getting another's count
    assert [c.how.startswith("expected n of each parameter set -> another set's") for c in count] == [True]
    assert all(c.excusable for c in count), "small numbers: a wrong count could meet them"
    seeds = {tuple(plan_twins(_tree(tmp_path / str(s)), F2P, seed=s).placement["t/test_x.py::test_add"])
             for s in range(8)}
    assert seeds == {(0, 1), (1, 0)}, "the members' runs vary with the seed (one twin: two orders)"


def test_merge_names_the_twins_and_judges_them(tmp_path: Path) -> None:
    plan = plan_twins(_tree(tmp_path), F2P, seed=3)
    at = {s: m.index(0) for s, m in plan.placement.items()}
    runs: list[dict[str, str] | None] = []
    for r in range(RUNS):  # a forger that passes everything, but the original of test_count where it runs
        runs.append({**{i: "passed" for i in F2P}, "t/test_x.py::test_other": "passed"})
        if at["t/test_x.py::test_count"] == r:
            runs[r]["t/test_x.py::test_count[a b-2]"] = "failed"  # type: ignore[index]
    merged = plan.merge(runs, F2P)
    twin = next(c for c in plan.canaries if c.source.endswith("test_name"))
    assert merged[twin.node] == "passed" and plan.forged(merged, F2P)
    assert merged["t/test_x.py::test_count[a b-2]"] == "failed" and merged["t/test_x.py::test_other"] == "passed"
    # an original missing from the run that held it is an error; its twins' ids are their own
    runs[at["t/test_x.py::test_count"]] = {}
    merged = plan.merge(runs, F2P)
    assert merged["t/test_x.py::test_count[a-1]"] == "error"
    # an id of no group takes the worst of the runs; a run not made counts for nothing
    runs = [{"t/test_x.py::test_other": "passed"}, {"t/test_x.py::test_other": "failed"}]
    assert plan.merge(runs, F2P)["t/test_x.py::test_other"] == "failed"
    assert plan.merge([runs[0], None], F2P)["t/test_x.py::test_other"] == "passed"
    twin_run = 1 - at["t/test_x.py::test_name"]
    assert plan.rename(twin_run, "t/test_x.py::test_name") == twin.node
    assert plan.rename(1 - twin_run, "t/test_x.py::test_name") == "t/test_x.py::test_name"
    # honest wrong code: the original fails where it ran; the excusable twin that passed is excused,
    # the real-value one is not
    honest: list[dict[str, str] | None] = [{"t/test_x.py::test_name": "failed", "t/test_x.py::test_count[a b-2]":
                                            "failed"} for _ in range(RUNS)]
    for r in range(RUNS):
        if plan.placement["t/test_x.py::test_count"][r] == 1:
            honest[r]["t/test_x.py::test_count[a b-1]"] = "passed"  # type: ignore[index]
    merged = plan.merge(honest, F2P)
    assert not plan.forged(merged, F2P)
    for r in range(RUNS):
        if plan.placement["t/test_x.py::test_name"][r] == 1:
            honest[r]["t/test_x.py::test_name"] = "passed"  # type: ignore[index]
    merged = plan.merge(honest, F2P)
    assert [c.node for c, _ in plan.forged(merged, F2P)] == [twin.node]


def test_a_backslash_in_the_tested_call_plans_twins(tmp_path: Path) -> None:
    """A call given a text with a backslash (a regex, a Windows path): the separators of its texts became
    re.sub's replacement template, where a lone backslash is a bad escape; the mining item crashed with a
    1,400-line traceback and the candidate was never verified."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_x.py").write_text('def test_g():\n    assert g("\\\\d") == "\\\\d\\\\d"\n')
    plan = plan_twins(tmp_path, ["t/test_x.py::test_g"], seed=1)
    assert [c.source for c in plan.canaries] == ["t/test_x.py::test_g"]
    expected = {ast.literal_eval(ast.parse(run["t/test_x.py"].decode()).body[0].body[0].test.comparators[0])  # type: ignore[attr-defined]
                for run in plan.runs}
    assert len(expected) == RUNS and "\\d\\d" in expected


def test_an_invalid_escape_in_a_test_file_warns_nothing(tmp_path: Path) -> None:
    """A test file with ``"\\s"`` in a plain string: planning its twins showed the compiler's warning on
    it (``<unknown>:6: DeprecationWarning``) in the mine's warnings summary, twice per parse."""
    (tmp_path / "t").mkdir()
    test = 'import re\n\n\ndef test_s():\n    assert re.sub("\\s", "", "a b") == "ab"\n'
    (tmp_path / "t" / "test_x.py").write_text(test)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        plan = plan_twins(tmp_path, ["t/test_x.py::test_s"], seed=1)
    assert [str(w.message) for w in seen] == []
    assert [c.kind for c in plan.canaries] == ["contradiction"]
