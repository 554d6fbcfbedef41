"""The confirmation run's files (atk14 A1, sandbox/twin_together.py): every member of every group side by
side, one under the test's own name, the order and the names drawn from the task's seed. Plain checks of
the plan (the run itself: tests/run/test_twin_confirm.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_homefield.sandbox.twin_runs import TWIN_MARK, plan_twins
from pytest_homefield.sandbox.twin_together import together

SRC = '''import pytest


def test_add():
    assert 1 + 1 == 2
    assert 2 + 3 == 5


class TestWords:
    @pytest.mark.parametrize("s,n", [("a b", 2), ("a", 1), ("a b c", 3)])
    def test_count(self, s, n):
        assert len(s.split()) == n


def test_other():
    assert "xyz".upper() == "XYZ"
'''
F2P = ["t/test_x.py::test_add", "t/test_x.py::TestWords::test_count[a b-2]", "t/test_x.py::TestWords::test_count[a-1]"]


def _functions(text: str) -> dict[str, str]:
    """Each function of ``text`` at the top level or in a class (``Class::name``) → its source, its name blanked."""
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        for fn, prefix in ([(node, "")] if isinstance(node, ast.FunctionDef) else
                           [(f, node.name + "::") for f in node.body if isinstance(f, ast.FunctionDef)]
                           if isinstance(node, ast.ClassDef) else []):
            src = ast.get_source_segment(text, fn) or ""
            out[prefix + fn.name] = src.replace(f"def {fn.name}(", "def _(", 1)
    return out


def test_every_member_side_by_side_one_under_its_own_name(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_x.py").write_text(SRC)
    seen_kept = set()
    for seed in range(6):
        plan = plan_twins(tmp_path, F2P, seed=seed)
        runs = [_functions(r["t/test_x.py"].decode()) for r in plan.runs]
        built = together(plan.layouts, seed)
        assert built is not None
        files, names = built
        assert together(plan.layouts, seed) == built  # the task's seed: the same at every grading
        laid = _functions(files["t/test_x.py"].decode())
        assert set(names) == set(plan.placement) == {"t/test_x.py::test_add", "t/test_x.py::TestWords::test_count"}
        for fid, ids in names.items():
            own = fid.split("::", 1)[1]
            members = {c.node for c in plan.canaries if c.source == fid}
            assert len(ids) == 1 + len(members) and len(set(ids)) == len(ids), ids
            assert fid in ids, ids  # one member keeps the test's own name
            seen_kept.add((fid, ids.index(fid)))
            # member j there is the text the runs held for member j
            for j, i in enumerate(ids):
                run = plan.placement[fid].index(j) if j in plan.placement[fid] else None
                if run is not None:
                    assert laid[i.split("::", 1)[1]] == runs[run][own], (seed, fid, j)
            assert all(TWIN_MARK not in i for i in ids)
        assert laid["test_other"] == runs[0]["test_other"]  # the rest of the file as it is
    assert {j for fid, j in seen_kept if fid.endswith("test_add")} == {0, 1}  # either member keeps the name


def test_a_member_laid_out_first_changes_nothing_else(tmp_path: Path) -> None:
    """gatk36: ``first`` lays the given member of a group out before its group's other members (the second
    confirmation run), every other draw as without it: the same names, the same files but for that span's order;
    ``orders`` says the order laid out."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_x.py").write_text(SRC)
    fid, other = "t/test_x.py::test_add", "t/test_x.py::TestWords::test_count"
    for seed in range(6):
        plan = plan_twins(tmp_path, F2P, seed=seed)
        orders: dict[str, tuple[int, ...]] = {}
        built = together(plan.layouts, seed, orders=orders)
        assert built is not None and set(orders) == {fid, other}
        for j in orders[fid]:
            again: dict[str, tuple[int, ...]] = {}
            moved = together(plan.layouts, seed, first={fid: j}, orders=again)
            assert moved is not None and moved[1] == built[1]  # the same names
            assert again[fid][0] == j and sorted(again[fid]) == sorted(orders[fid]) and again[other] == orders[other]
            text = moved[0]["t/test_x.py"].decode()
            starts = {i: text.index(f"def {i.split('::')[-1]}(") for i in built[1][fid]}
            assert min(starts, key=lambda i: starts[i]) == built[1][fid][j]
            assert _functions(text) == _functions(built[0]["t/test_x.py"].decode())
