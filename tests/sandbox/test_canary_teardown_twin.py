"""The teardown twin (tdtwin56): a FAIL_TO_PASS function's own fixture check contradicted in a run apart, where the
fixture is in reach (the test module's, requested by that function alone). The gradings are in
``tests/run/test_teardown_canary_shape.py``; here the plan, the negation and the judgement, with no test process."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canaries import TEARDOWN_TWIN, Canary, CanaryPlan, read_source
from pytest_homefield.sandbox.canary_teardown import teardown_check
from pytest_homefield.sandbox.seal_apart import _told
from pytest_homefield.sandbox.seal_sites import SealSite
from pytest_homefield.sandbox.twin_runs import TWIN_MARK, plan_twins

TEST = "tests/test_totals.py"
SPIED = ("import pytest\n\nimport totals\n\n\n"
         "@pytest.fixture\n"
         "def spy(monkeypatch):\n"
         "    calls = []\n"
         "    monkeypatch.setattr(totals, 'fetch', lambda: calls.append(1) or 2)\n"
         "    yield calls\n"
         "    seen = len(calls)\n"
         "    assert {check}, \"total() never fetched\"\n\n\n"
         "def test_total(spy):\n"
         "    assert totals.total() == 4\n")


def _check(tmp_path: Path, source: str, name: str = "test_total") -> str | None:
    f = tmp_path / "t.py"
    f.write_text(source, encoding="utf-8")
    _, text, tree, lines = read_source(f)
    assert tree is not None
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    got = teardown_check(tree, text, lines, node)
    return None if got is None else got.twin


@pytest.mark.parametrize(("check", "twin"), [
    ("calls", "not calls"), ("not calls", "calls"), ("not (seen and calls)", "(seen and calls)"),
    ("seen == 1", "seen != 1"), ("seen != 0", "seen == 0"), ("1 in calls", "1 not in calls"),
    ("1 not in calls", "1 in calls"), ("calls is not None", "calls is None"), ("seen >= 1", "seen < 1"),
    ("seen > 0", "seen <= 0"), ("len(calls)", "not len(calls)"), ("calls[0]", "not calls[0]")])
def test_the_twin_negates_the_first_check_after_the_yield_in_place(tmp_path: Path, check: str, twin: str) -> None:
    """Only the check's expected side changes, written as the file writes it (its message, its quotes, the rest of
    the fixture's lines as they are)."""
    source = SPIED.format(check=check)
    got = _check(tmp_path, source)
    assert got is not None
    want = source.format(check=check).replace(f"assert {check},", f"assert {twin},")
    assert got == want[want.index("@pytest.fixture"):want.index("\n\n\ndef test_total") + 1]


@pytest.mark.parametrize("source", [
    SPIED.format(check="calls") + "\n\ndef test_other(spy):\n    assert spy == []\n",  # another test requests it
    SPIED.format(check="calls") + "\n\n@pytest.mark.usefixtures('spy')\ndef test_other():\n    pass\n",
    SPIED.format(check="calls").replace("@pytest.fixture\n", "@pytest.fixture(autouse=True)\n"),
    SPIED.format(check="calls").replace("@pytest.fixture\n", "@pytest.fixture(scope='module')\n"),
    SPIED.format(check="calls").replace("@pytest.fixture\n", "@pytest.fixture(params=[1])\n"),
    SPIED.format(check="calls").replace("    seen = len(calls)\n", "    yield\n"),  # two yields
    SPIED.format(check="calls").replace('    assert calls, "total() never fetched"\n', "    print(calls)\n"),
    SPIED.format(check="a < b < c"),  # a chain: no negation written in place
    SPIED.format(check="calls").replace("def test_total(spy):", "def test_total(monkeypatch):"),  # not requested
], ids=["other-test", "usefixtures", "autouse", "module-scope", "params", "two-yields", "no-check", "chain",
        "not-requested"])
def test_a_fixture_out_of_reach_gets_no_twin(tmp_path: Path, source: str) -> None:
    """Another test or fixture naming it would fail its teardown in the twin's run with any code; an autouse, wider-
    scoped or parametrized fixture runs for other tests or instances too."""
    assert _check(tmp_path, source) is None


def _tree(tmp_path: Path, check: str = "calls") -> Path:
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / TEST).write_text(SPIED.format(check=check), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("seed", range(4))
def test_the_twin_runs_apart_in_a_run_of_its_own(tmp_path: Path, seed: int) -> None:
    """One more run, holding the original body and the contradicted check; the other runs the original check; a
    confirmation run's layout holds the body members only (the twin's body is the original's)."""
    root = _tree(tmp_path)
    plan = plan_twins(root, [f"{TEST}::test_total"], seed=seed, teardown=True)
    fid = f"{TEST}::test_total"
    (torn,) = [c for c in plan.canaries if c.kind == TEARDOWN_TWIN]
    assert torn.node == f"{fid}{TWIN_MARK}2" and torn.source == fid
    assert len(plan.runs) == 3 and sorted(plan.placement[fid]) == [0, 1, 2]
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        assert ("assert not calls," in text) == (plan.placement[fid][r] == 2), (r, text)
        if plan.placement[fid][r] == 2:
            assert "assert totals.total() == 4\n" in text  # the original body
    assert len(plan.layouts[TEST].spans[0].members) == 2


def test_without_the_teardown_canaries_the_plan_is_as_before(tmp_path: Path) -> None:
    """``teardown`` off (a plan of neither grading nor mining's check): two runs, no teardown twin."""
    plan = plan_twins(_tree(tmp_path), [f"{TEST}::test_total"], seed=0)
    assert len(plan.runs) == 2 and not [c for c in plan.canaries if c.kind == TEARDOWN_TWIN]


def test_a_teardown_twin_passed_is_forged_only_beside_an_original_that_did_not_fail() -> None:
    """Passed beside the original passed: a swallowed teardown error, ``forged``. Beside a failing original: code that
    skips the work the check wants passes it honestly: neither forged nor excused (no confirmation run)."""
    fid = f"{TEST}::test_total"
    plan = CanaryPlan(0, [Canary(f"{fid}{TWIN_MARK}2", fid, TEARDOWN_TWIN, "teardown twin: x")])
    swallowed = {fid: "passed", f"{fid}{TWIN_MARK}2": "passed"}
    skipped = {fid: "error", f"{fid}{TWIN_MARK}2": "passed"}
    assert [t for _, t in plan.forged(swallowed, [fid])] == [f"{fid}{TWIN_MARK}2"]
    assert plan.forged(skipped, [fid]) == [] and plan.excused(skipped, [fid]) == []


def test_a_function_whose_fixture_differs_among_the_runs_is_told_apart_for_the_sealed_run() -> None:
    """The sealed run holds one run apart's files: a function sealed there whose fixture is the teardown twin's would
    fail every real fix at teardown, so it is told apart (left unsealed, guarded by its twins) as a body twin is."""
    texts = [SPIED.format(check=c) for c in ("calls", "calls", "not calls")]
    site = SealSite(key=f"{TEST}::test_total@15", path=TEST, function=f"{TEST}::test_total", first=15, last=15,
                    actual="totals.total()", expected="4")
    defs = [{name: node for name, node in _defs(t)} for t in texts]
    assert _told({site.key: site}, set(), {TEST: list(zip(texts, defs, strict=True))}) == {f"{TEST}::test_total"}
    same = [(texts[0], defs[0])] * 3
    assert _told({site.key: site}, set(), {TEST: same}) == set()


def _defs(text: str) -> list[tuple[str, ast.FunctionDef]]:
    tree = ast.parse(text)
    return [(f"::{n.name}", n) for n in tree.body if isinstance(n, ast.FunctionDef)]
