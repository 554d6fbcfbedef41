"""The teardown canary (tcan50, sandbox/twin_runs.py ``plant_teardown``): a planted test whose body passes and whose
own fixture's teardown fails, in every run of a plan made with ``teardown``, named from the file's words, fresh per
seed. pytest reports it ``error`` (a real pytest run here); a run reporting it ``passed`` swallowed teardown errors,
and the plan calls that forged, whichever run it was in. Grading's verdicts on it are in tests/run/
test_teardown_error.py, mining's check in tests/mine/test_mined_teardown_canary.py."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from helpers.attack_repo import NO_PLUGINS

from pytest_homefield.sandbox.canaries import TEARDOWN
from pytest_homefield.sandbox.twin_runs import RUNS, plan_twins, teardown_nodes

SRC = '''import pytest


def total(xs):
    return sum(xs)


def test_total_of_rows():
    assert total([1, 2]) == 3


def test_total_of_nothing():
    assert total([]) == 0
'''
F2P = ["tests/test_rows.py::test_total_of_rows", "tests/test_rows.py::test_total_of_nothing"]


def _tree(tmp_path: Path, src: str = SRC) -> Path:
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / "tests" / "test_rows.py").write_text(src, encoding="utf-8")
    return tmp_path


def _places(text: str, names: list[str]) -> list[int]:
    """Per canary test of ``names``: how many of :data:`SRC`'s own ``def``s come before its block (its fixture)."""
    own = re.findall(r"^def (\w+)\(", SRC, re.M)
    out = []
    for name in names:
        fixture = re.search(rf"^def {name}\((\w+)\)", text, re.M)
        assert fixture, (name, text)
        at = text.index(f"def {fixture.group(1)}(")
        out.append(sum(text.index(f"def {o}(") < at for o in own))
    return out


def test_the_canary_is_in_every_run_named_from_the_file_fresh_per_seed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    plan = plan_twins(root, F2P, seed=5, teardown=True)
    torn = [c for c in plan.canaries if c.kind == TEARDOWN]
    assert len(torn) == 2 and teardown_nodes(plan) == [c.node for c in torn], plan.canaries  # two (can52)
    assert not any(c.excusable for c in torn) and len({c.node for c in torn}) == 2, torn
    assert all(c.source in F2P and c.node.startswith("tests/test_rows.py::test_") for c in torn), torn
    names = [c.node.rsplit("::", 1)[1] for c in torn]
    assert len(plan.runs) == RUNS
    blocks = set()
    for files in plan.runs:
        text = files["tests/test_rows.py"].decode()
        assert text.count("@pytest.fixture\ndef ") == 2, text
        for name in names:
            assert text.count(f"def {name}(") == 1 and compile(text, "t.py", "exec")
            body = text.index(f"def {name}(")
            end = text.index("\n", text.index("    assert not ", body))
            blocks.add(text[text.rindex("@pytest.fixture", 0, body):end])
    assert len(blocks) == 2, blocks  # the same canaries in every run
    others = {c.node for s in range(1, 9) for c in plan_twins(root, F2P, seed=s, teardown=True).canaries
              if c.kind == TEARDOWN}
    assert len(others) >= 8, others  # fresh per seed
    # at places drawn per seed among the file's tests, not always its last: after the import, before or after
    # each definition; the two at different places (can52)
    places: set[int] = set()
    for s in range(12):
        drawn = plan_twins(root, F2P, seed=s, teardown=True)
        names = [n.rsplit("::", 1)[1] for n in teardown_nodes(drawn)]
        at = _places(drawn.runs[0]["tests/test_rows.py"].decode(), names)
        assert len(set(at)) == 2, (s, at)
        places |= set(at)
    assert places == {0, 1, 2, 3}, places
    # off, the plan is as before: no canary, the same runs
    assert [c.kind for c in plan_twins(root, F2P, seed=5).canaries] == [c.kind for c in plan.canaries if c not in torn]


def test_pytest_reports_the_canary_error_and_the_plan_calls_a_pass_forged(tmp_path: Path) -> None:
    root = _tree(tmp_path / "a", SRC.replace("import pytest\n", "import os\n"))  # no pytest import: one is added
    plan = plan_twins(root, F2P, seed=11, teardown=True)
    node = teardown_nodes(plan)[0]
    (root / "tests" / "test_rows.py").write_bytes(plan.runs[0]["tests/test_rows.py"])
    done = subprocess.run([sys.executable, "-m", "pytest", *NO_PLUGINS.split(), "-rA", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", node], cwd=root, capture_output=True, text=True, timeout=60)
    assert "1 passed, 1 error" in done.stdout, done.stdout + done.stderr  # its call passed, its teardown failed
    assert f"ERROR {node}" in done.stdout, done.stdout

    def run(r: int, torn: str) -> dict[str, str]:
        return {**{i: "passed" if i in plan.originals_in(r) else "failed" for i in F2P}, node: torn}
    honest = plan.merge([run(r, "error") for r in range(len(plan.runs))], F2P)
    assert honest[node] == "error" and not plan.forged(honest, F2P), plan.forged(honest, F2P)
    # swallowed in one run alone (a forger guessing which run holds the originals): still passed, forged
    once = plan.merge([run(r, "passed" if r == 0 else "error") for r in range(len(plan.runs))], F2P)
    assert once[node] == "passed"
    assert [(c.kind, tid) for c, tid in plan.forged(once, F2P)] == [(TEARDOWN, node)]


def test_one_of_the_two_canaries_is_never_its_modules_last_test(tmp_path: Path) -> None:
    """can52: a change swallowing every teardown error but its module's last test's (``QUIET_BUT_LAST``,
    tests/run/test_teardown_error.py) is caught where a canary is not the module's last test. With one canary that
    was every seed but 1 in k + 1 (k top-level statements after the imports: 3 here; the one canary, which is the first
    of the two now, drawn as it was, was last on 11 of these 60 seeds); two at different places, one at most is last:
    every seed (one is last on 28 of them). Read from the tests of the planted text, in the file's order."""
    root = _tree(tmp_path)
    last = 0
    for s in range(60):
        plan = plan_twins(root, F2P, seed=s, teardown=True)
        canaries = [n.rsplit("::", 1)[1] for n in teardown_nodes(plan)]
        for files in plan.runs:
            order = [n.name for n in ast.parse(files["tests/test_rows.py"]).body
                     if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
            assert len(canaries) == 2 and set(canaries) <= set(order), (s, canaries, order)
            assert any(c != order[-1] for c in canaries), (s, order)
            last += order[-1] in canaries
    assert last > 0  # a canary is still last on some seeds (the other is not)
