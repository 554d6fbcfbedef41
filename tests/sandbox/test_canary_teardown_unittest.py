"""ucln62: a ``unittest`` test's own check after the test (a cleanup's ``addCleanup(lambda: self.assertTrue(calls))``,
a ``tearDown``'s ``self.assertTrue(self.calls)``) contradicted in a run apart, as the teardown twin (tdtwin56) does a
fixture's; and its decoy (deco60). Plain AST work and :func:`plan_twins` over files on disk."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canaries import TEARDOWN, TEARDOWN_TWIN, read_source
from pytest_homefield.sandbox.canary_teardown import TEARDOWN_DECOY_HOW, TeardownCheck, unittest_check, without_checks
from pytest_homefield.sandbox.seal_apart import _defs, _told
from pytest_homefield.sandbox.seal_sites import SealSite
from pytest_homefield.sandbox.twin_runs import TWIN_MARK, plan_twins

TEST = "tests/test_totals.py"
HEAD = "import unittest\n\nimport totals\n\n\n"
CLEANUP = (HEAD + "class TestTotal(unittest.TestCase):\n"
           "    def test_total(self):\n        calls = []\n        real = totals.fetch\n"
           "        totals.fetch = lambda: calls.append(1) or real()\n"
           "        self.addCleanup(setattr, totals, 'fetch', real)\n"
           "        self.addCleanup(lambda: {check})\n"
           "        self.assertEqual(totals.total(), 4)\n")
LOCAL = (HEAD + "class TestTotal(unittest.TestCase):\n"
         "    def test_total(self):\n        calls = []\n\n        def seen():\n            x = 1\n"
         "            {check}\n\n        self.addCleanup(seen)\n"
         "        totals.fetch = lambda: calls.append(1) or 2\n"
         "        self.assertEqual(totals.total(), 4)\n")
DOWN = (HEAD + "class TestTotal(unittest.TestCase):\n"
        "    def setUp(self):\n        self.calls = []\n        self.real = totals.fetch\n"
        "        totals.fetch = lambda: self.calls.append(1) or self.real()\n\n"
        "    def tearDown(self):\n        totals.fetch = self.real\n        {check}\n\n"
        "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n{more}")

DOWN_CLASS = (HEAD + "class TestTotal(unittest.TestCase):\n"
              "    @classmethod\n    def setUpClass(cls):\n        cls.calls = []\n"
              "        totals.fetch = lambda: cls.calls.append(1) or 2\n\n"
              "    @classmethod\n    def tearDownClass(cls):\n        {check}\n\n"
              "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n{more}")
UP_CLASS = (HEAD + "class TestTotal(unittest.TestCase):\n"
            "    @classmethod\n    def setUpClass(cls):\n        calls = []\n"
            "        totals.fetch = lambda: calls.append(1) or 2\n"
            "        cls.addClassCleanup(lambda: {check})\n\n"
            "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n{more}")


def _check(tmp_path: Path, source: str) -> TeardownCheck | None:
    f = tmp_path / "t.py"
    f.write_text(source, encoding="utf-8")
    _, text, tree, lines = read_source(f)
    assert tree is not None
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TestTotal")
    node = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "test_total")
    return unittest_check(tree, text, lines, node, ["TestTotal"])


@pytest.mark.parametrize(("check", "twin"), [
    ("self.assertTrue(calls)", "self.assertFalse(calls)"), ("self.assertFalse(calls)", "self.assertTrue(calls)"),
    ("self.assertEqual(calls, [1])", "self.assertEqual(calls, [1, 1])|self.assertEqual(calls, [])"),
    ("self.assertEqual(len(calls), 1)", "self.assertEqual(len(calls), 2)|self.assertEqual(len(calls), 0)"),
    ("self.assertEqual(calls, real)", "self.assertNotEqual(calls, real)"),
    ("self.assertIn(1, calls)", "self.assertNotIn(1, calls)"),
    ("self.assertGreater(len(calls), 0)", "self.assertLessEqual(len(calls), 0)")])
def test_a_cleanups_check_is_contradicted_in_the_body(tmp_path: Path, check: str, twin: str) -> None:
    """The lambda's check contradicted in place, the rest of the method as it is; the decoy is the body cut after the
    ``addCleanup`` adding it, its check the positive one (the twin's where the file's is negated)."""
    got = _check(tmp_path, CLEANUP.format(check=check))
    assert got is not None and got.inside and got.fixture == "addCleanup"
    (twin,) = [t for t in twin.split("|") if got.twin == got.original.replace(check, t)] or [got.twin]
    assert got.twin == got.original.replace(check, twin) and got.now == twin and got.was == check
    assert got.decoy is not None
    assert got.decoy.rstrip().endswith(f"self.addCleanup(lambda: {twin if got.negative else check})")
    assert "assertEqual(totals.total(), 4)" not in got.decoy
    assert got.negative == (check.startswith("self.assertFalse"))


@pytest.mark.parametrize(("check", "twin"), [("assert calls", "assert not calls"),
                                             ("self.assertTrue(calls)", "self.assertFalse(calls)")])
def test_a_cleanup_function_of_the_body_is_contradicted_too(tmp_path: Path, check: str, twin: str) -> None:
    got = _check(tmp_path, LOCAL.format(check=check))
    assert got is not None and got.inside
    assert got.twin == got.original.replace(check, twin), got.twin
    assert got.decoy is not None and got.decoy.rstrip().endswith("self.addCleanup(seen)")


@pytest.mark.parametrize(("check", "twin", "was"), [
    ("self.assertTrue, calls", "self.assertFalse, calls", "self.assertTrue(calls)"),
    ("self.assertFalse, calls", "self.assertTrue, calls", "self.assertFalse(calls)"),
    ("self.assertIn, 1, calls", "self.assertNotIn, 1, calls", "self.assertIn(1, calls)"),
    ("self.assertEqual, calls, [1]", "self.assertEqual, calls, [1, 1]|self.assertEqual, calls, []",
     "self.assertEqual(calls, [1])")])
def test_a_cleanups_assert_method_added_without_a_lambda_is_contradicted_too(tmp_path: Path, check: str, twin: str,
                                                                             was: str) -> None:
    """gatk63: ``self.addCleanup(self.assertTrue, calls)``, the method and its arguments with no lambda, had no twin (a
    change dropping every cleanup's error was ``solved`` with no fix): its method (or literal) is contradicted in place
    as a lambda's call is, the decoy the body cut after it, its check the positive one."""
    source = CLEANUP.replace("self.addCleanup(lambda: {check})", "self.addCleanup({check})").format(check=check)
    got = _check(tmp_path, source)
    assert got is not None and got.inside and got.fixture == "addCleanup" and got.was == was
    assert any(got.twin == got.original.replace(check, t) for t in twin.split("|")), got.twin
    assert got.negative == check.startswith("self.assertFalse")
    assert got.decoy is not None and "assertEqual(totals.total(), 4)" not in got.decoy
    positive = twin.split("|")[0] if got.negative else check
    assert got.decoy.rstrip().endswith(f"self.addCleanup({positive})"), got.decoy


@pytest.mark.parametrize("check", ["self.assertTrue", "print, calls", "self.fail, 'no'"])
def test_a_cleanup_of_no_check_with_arguments_gets_no_twin(tmp_path: Path, check: str) -> None:
    source = CLEANUP.replace("self.addCleanup(lambda: {check})", "self.addCleanup({check})").format(check=check)
    assert _check(tmp_path, source) is None


@pytest.mark.parametrize(("check", "twin"), [("self.assertTrue(self.calls)", "self.assertFalse(self.calls)"),
                                             ("assert self.calls", "assert not self.calls"),
                                             ("self.assertEqual(self.calls, [1])",
                                              "self.assertEqual(self.calls, [1, 1])|self.assertEqual(self.calls, [])")])
def test_a_teardowns_check_is_contradicted_in_place(tmp_path: Path, check: str, twin: str) -> None:
    source = DOWN.format(check=check, more="")
    got = _check(tmp_path, source)
    assert got is not None and not got.inside and got.fixture == "tearDown"
    assert "".join(source.splitlines(keepends=True)[got.start - 1:got.end]) == got.original
    assert got.original.lstrip().startswith("def tearDown")
    assert any(got.twin == got.original.replace(check, t) for t in twin.split("|")), got.twin


def test_a_teardowns_check_of_a_class_with_another_test_names_it(tmp_path: Path) -> None:
    """ut64: in reach, the class's other tests named (their outcomes in the twin's run count for nothing)."""
    source = DOWN.format(check="self.assertTrue(self.calls)", more="\n    def test_other(self):\n        pass\n")
    got = _check(tmp_path, source)
    assert got is not None and got.fixture == "tearDown" and got.shared == ("TestTotal::test_other",)
    assert got.twin == got.original.replace("assertTrue", "assertFalse") and not got.last
    alone = _check(tmp_path, DOWN.format(check="self.assertTrue(self.calls)", more=""))
    assert alone is not None and alone.shared == ()


@pytest.mark.parametrize(("source", "fixture"), [
    (DOWN_CLASS.format(check="assert cls.calls", more="\n    def test_other(self):\n        pass\n"), "tearDownClass"),
    (UP_CLASS.format(check="cls.assertTrue(cls, calls)", more="\n    def test_other(self):\n        pass\n"),
     "addClassCleanup")], ids=["tearDownClass", "addClassCleanup"])
def test_a_class_check_of_a_class_with_another_test_names_it(tmp_path: Path, source: str, fixture: str) -> None:
    """ut65: in reach, the class's other tests named, the check reported on the last test run (``last``)."""
    got = _check(tmp_path, source)
    assert got is not None and got.fixture == fixture and got.shared == ("TestTotal::test_other",) and got.last


@pytest.mark.parametrize("source", [
    DOWN.format(check="self.assertTrue(self.calls)", more="\n\nclass TestMore(TestTotal):\n    pass\n"),
    DOWN.format(check="self.assertTrue(self.calls)", more="").replace("def tearDown", "def tearDownLater"),
    DOWN.format(check="self.assertCountEqual(self.calls, [1])", more=""),
    CLEANUP.format(check="print(calls)"),
    CLEANUP.format(check="self.assertTrue(calls)").replace("unittest.TestCase", "object")],
    ids=["subclassed", "no-teardown", "no-check", "print", "not-unittest"])
def test_a_unittest_check_out_of_reach_gets_no_twin(tmp_path: Path, source: str) -> None:
    """A subclass's test would fail the contradicted tearDown whatever the code does."""
    assert _check(tmp_path, source) is None


def _tree(tmp_path: Path, source: str) -> Path:
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / TEST).write_text(source, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("shape", ["addCleanup", "tearDown", "tearDownClass", "addClassCleanup"])
def test_the_unittest_twin_and_decoy_run_apart(tmp_path: Path, shape: str, seed: int) -> None:
    """Two runs more: one holding the test's own check contradicted (the body's cleanup, the class's tearDown, its
    tearDownClass, its setUpClass's class cleanup), one its decoy; every other run holds the file's check; the
    confirmation layout holds the body members only."""
    source = {"addCleanup": CLEANUP.format(check="self.assertTrue(calls)"),
              "tearDown": DOWN.format(check="self.assertTrue(self.calls)", more=""),
              "tearDownClass": DOWN_CLASS.format(check="cls.assertTrue(cls, cls.calls)", more=""),
              "addClassCleanup": UP_CLASS.format(check="cls.assertTrue(cls, calls)", more="")}[shape]
    root = _tree(tmp_path, source)
    fid = f"{TEST}::TestTotal::test_total"
    plan = plan_twins(root, [fid], seed=seed, teardown=True)
    torn = [c for c in plan.canaries if c.kind == TEARDOWN_TWIN and c.source == fid]
    assert [c.node for c in torn] == [f"{fid}{TWIN_MARK}2", f"{fid}{TWIN_MARK}3"]
    assert torn[0].how.startswith(f"teardown twin: {shape}'s check") and torn[1].how.startswith(TEARDOWN_DECOY_HOW)
    assert len(plan.runs) == 4 and sorted(plan.placement[fid]) == [0, 1, 2, 3]
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        ast.parse(text)
        member = plan.placement[fid][r]
        assert (".assertFalse(" in text) == (member == 2), (r, text)
        assert ("self.assertEqual(totals.total()," in text) == (member != 3), (r, text)
    assert len(plan.layouts[TEST].spans[0].members) == 2


@pytest.mark.parametrize("shape", ["DOWN", "DOWN_CLASS", "UP_CLASS", "MIXIN", "SUPERED"],
                         ids=["tearDown", "tearDownClass", "setUpClass", "mixin", "super"])
def test_a_method_whose_teardown_differs_among_the_runs_is_told_apart_for_the_sealed_run(shape: str) -> None:
    """The sealed run's files are one run apart's: a method whose class's tearDown (tearDownClass, setUpClass; ut46:
    a mixin's of the module, its class's; ran66: the one its own reaches through ``super()``) differs among them is
    left unsealed, as a function whose fixture differs is."""
    texts = [globals()[shape].format(check=c, more="", bases="Spy, unittest.TestCase").replace(
        "self.assertTrue(self.calls)", c) for c in ("self.assertTrue(cls)", "self.assertFalse(cls)")]
    fid = f"{TEST}::TestTotal::test_total"
    line = texts[0].splitlines().index("        self.assertEqual(totals.total(), 4)") + 1
    site = SealSite(key=f"{fid}@{line}", path=TEST, function=fid, first=line, last=line, actual="totals.total()",
                    expected="4", case=True)
    defs = [_defs(t) for t in texts]
    assert all(d is not None for d in defs)
    assert _told({site.key: site}, set(), {TEST: list(zip(texts, defs, strict=True))}) == {fid}
    assert _told({site.key: site}, set(), {TEST: [(texts[0], defs[0])] * 2}) == set()


#: ut64: a module whose ``tearDownModule`` checks after its one test.
MODULE = (HEAD + "CALLS = []\n\n\ndef tearDownModule():\n    assert CALLS\n\n\n"
          "class TestTotal(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n")


@pytest.mark.parametrize("seed", range(12))
def test_a_teardown_module_twin_runs_apart_with_the_teardown_canaries_before_its_test(tmp_path: Path,
                                                                                      seed: int) -> None:
    """ut64: the module's check contradicted in the twin's run; pytest reports a ``tearDownModule`` error on the
    module's last test run, so every teardown canary comes before the test's class (at the file's end the canary's
    teardown error took it, and a real fix passed the twin: seeds 0, 2, 4, 6 and 7 of these put one there)."""
    root = _tree(tmp_path, MODULE)
    fid = f"{TEST}::TestTotal::test_total"
    plan = plan_twins(root, [fid], seed=seed, teardown=True)
    torn = [c for c in plan.canaries if c.kind == TEARDOWN_TWIN and c.source == fid]
    assert [c.how.split(":")[0] for c in torn] == ["teardown twin", TEARDOWN_DECOY_HOW], torn
    assert "tearDownModule's check 'CALLS' -> 'not CALLS'" in torn[0].how
    canaries = [c.node.rsplit("::", 1)[1] for c in plan.canaries if c.kind == TEARDOWN]
    assert len(canaries) == 2
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        assert ("assert not CALLS" in text) == (plan.placement[fid][r] == 2), text
        assert all(text.index(f"def {c}(") < text.index("class TestTotal") for c in canaries), text


def test_a_class_teardown_twin_blinds_the_class_other_tests_in_its_run(tmp_path: Path) -> None:
    """ut64: the other test's outcomes in the twin's run count for nothing, and each of its members is in another
    run; its outcome elsewhere stands."""
    source = DOWN.format(check="self.assertTrue(self.calls)",
                         more="\n    def test_other(self):\n        self.assertEqual(totals.total(), 4)\n")
    root = _tree(tmp_path, source)
    fid, other = f"{TEST}::TestTotal::test_total", f"{TEST}::TestTotal::test_other"
    for seed in range(8):
        plan = plan_twins(root, [fid, other], seed=seed, teardown=True)
        owner = next(iter(plan.blind))
        shut = next(f for f in (fid, other) if f != owner)
        assert plan.blind == {owner: ((2,), (shut,))}
        at = plan.placement[owner].index(2)
        assert plan.blinded(at) == {shut} and all(not plan.blinded(r) for r in range(4) if r != at)
        rest = [plan.placement[shut][r] for r in range(4) if r != at]
        assert set(rest) == set(range(max(rest) + 1)) and max(rest) >= 1, plan.placement
        runs: list[dict[str, str] | None] = [{} for _ in range(4)]
        for r in range(4):
            runs[r] = {owner: "passed" if plan.placement[owner][r] == 0 else "failed",
                       shut: "error" if r == at else "passed" if plan.placement[shut][r] == 0 else "failed"}
        merged = plan.merge(runs, [fid, other])
        assert merged[shut] == "passed" and merged[owner] == "passed", merged
        assert shut not in plan.originals_in(at)


@pytest.mark.parametrize("shape", ["tearDownClass", "tearDownModule"])
def test_a_class_or_module_check_reported_on_another_test_fails_the_twin(tmp_path: Path, shape: str) -> None:
    """ut65: pytest reports a class- or module-level check's error on the unit's last test run: in the twin's run the
    other's error is the twin's (a real fix fails the twin), which passes where the other passed. ut46: and a decoy
    (ut65 had none: the other test ran the code before the check whatever the method's body ran), the method's body
    ``pass`` in a run where the other's is cut so too, the other blinded there and its error the decoy's."""
    other = "\n    def test_other(self):\n        self.assertEqual(totals.total(), 4)\n"
    source = DOWN_CLASS.format(check="assert cls.calls", more=other) if shape == "tearDownClass" else \
        MODULE + "\n\nclass TestOther(unittest.TestCase):" + other
    root = _tree(tmp_path, source)
    fid = f"{TEST}::TestTotal::test_total"
    shut = f"{TEST}::{'TestTotal' if shape == 'tearDownClass' else 'TestOther'}::test_other"
    plan = plan_twins(root, [fid, shut], seed=0, teardown=True)
    owner = next(iter(plan.blind))
    if owner == shut:
        fid, shut = shut, fid
    assert plan.blind == {fid: ((2, 3), (shut,))} and plan.last == {fid}, (plan.blind, plan.last)
    assert [c.how.split(":")[0] for c in plan.canaries if c.source == fid and c.kind == TEARDOWN_TWIN] == \
        ["teardown twin", TEARDOWN_DECOY_HOW]
    cut = shut.rsplit("::", 1)[1]
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        ast.parse(text)
        assert (f"def {cut}(self):\n        pass\n" in text) == (plan.placement[fid][r] == 3), text
        assert ("def test_total(self):\n        pass\n" in text) == (plan.placement[fid][r] == 3), text
    for j in (2, 3):
        for reported in ("error", "passed"):
            runs: list[dict[str, str] | None] = [{fid: "passed", shut: reported if plan.placement[fid][r] == j
                                                  else "passed"} for r in range(len(plan.runs))]
            assert plan.merge(runs, [fid, shut])[f"{fid}{TWIN_MARK}{j}"] == reported


@pytest.mark.parametrize("seed", range(8))
def test_the_teardown_canaries_come_before_the_class_of_the_module_check(tmp_path: Path, seed: int) -> None:
    """ut65: :data:`MODULE` with a class of another test after the method's, that test no id of the task: every
    teardown canary before the method's class (before the module's last class, one was between the two on every seed
    of these, 0-7, on 16a38905: the module's last test run where the other is not; graded end to end, that task's
    real fix was ``solved`` all the same there, seeds 0 and 1, so a defence by construction, no outcome measured)."""
    root = _tree(tmp_path, MODULE + "\n\nclass TestOther(unittest.TestCase):\n    def test_other(self):\n"
                 "        self.assertEqual(totals.total(), 4)\n")
    fid = f"{TEST}::TestTotal::test_total"
    plan = plan_twins(root, [fid], seed=seed, teardown=True)
    assert plan.last == {fid}, plan.last
    canaries = [c.node.rsplit("::", 1)[1] for c in plan.canaries if c.kind == TEARDOWN]
    assert len(canaries) == 2
    for files in plan.runs:
        text = files[TEST].decode()
        assert all(text.index(f"def {c}(") < text.index("class TestTotal") for c in canaries), text


def test_a_method_whose_module_teardown_differs_among_the_runs_is_told_apart_for_the_sealed_run() -> None:
    texts = [MODULE.replace("assert CALLS", c) for c in ("assert CALLS", "assert not CALLS")]
    fid = f"{TEST}::TestTotal::test_total"
    site = SealSite(key=f"{fid}@14", path=TEST, function=fid, first=14, last=14, actual="totals.total()",
                    expected="4", case=True)
    defs = [_defs(t) for t in texts]
    assert _told({site.key: site}, set(), {TEST: list(zip(texts, defs, strict=True))}) == {fid}
    assert _told({site.key: site}, set(), {TEST: [(texts[0], defs[0])] * 2}) == set()


#: seal64: a test class of another test file of the task deriving from ``TestTotal`` (its module imported by name,
#: or the class imported under another name): it runs ``test_total`` and ``tearDown`` in every run too.
ELSEWHERE = {"module": "import test_totals\n\n\nclass TestMore(test_totals.TestTotal):\n    pass\n",
             "alias": "from test_totals import TestTotal as Base\n\n\nclass TestMore(Base):\n"
                      "    def test_double(self):\n        pass\n"}


@pytest.mark.parametrize("shape", ["addCleanup", "tearDown"])
@pytest.mark.parametrize("more", sorted(ELSEWHERE))
def test_a_class_derived_in_another_test_file_gets_no_twin_in_its_body_or_teardown(tmp_path: Path, shape: str,
                                                                                  more: str) -> None:
    """seal64: ``_alone`` read the class's own file only. A subclass in another test file of the task runs the
    class's method (its twin's body) and ``tearDown`` (the contradicted check) in the twin's run too, and failed the
    real fix there (``tests_failed``, ``tests/run/test_subclass_elsewhere.py``). The method gets a sentinel, its
    class check no twin, the plan no run more; the same file the agent could write (not one of ``hidden``) is not
    read, and the twins stay."""
    source = {"addCleanup": CLEANUP.format(check="self.assertTrue(calls)"),
              "tearDown": DOWN.format(check="self.assertTrue(self.calls)", more="")}[shape]
    root = _tree(tmp_path, source)
    (root / "tests/test_more.py").write_text(ELSEWHERE[more], encoding="utf-8")
    fid = f"{TEST}::TestTotal::test_total"
    plan = plan_twins(root, [fid], seed=0, teardown=True, hidden=[TEST, "tests/test_more.py"])
    assert [(c.kind, c.how) for c in plan.canaries if c.source == fid and c.kind != "teardown"] == [
        ("sentinel", "sentinel: other tests run the same definition")]
    assert len(plan.runs) == 1
    kept = plan_twins(root, [fid], seed=0, teardown=True, hidden=[TEST])
    assert [c.kind for c in kept.canaries if c.source == fid].count(TEARDOWN_TWIN) == 2


@pytest.mark.parametrize("shape", ["addCleanup", "local", "addCleanup-method", "tearDown", "tearDownClass",
                                   "addClassCleanup", "tearDownModule", "mixin", "super"])
def test_the_sealed_runs_file_shows_no_unittest_check_after_the_test(shape: str) -> None:
    """seal64: the sealed run (made before the runs apart) blanked a fixture's check a teardown twin contradicts
    (gatk57) but showed ucln62's unittest checks as the file writes them: on a unittest-shaped task graded sealed its
    file held ``self.assertTrue(self.calls)`` in ``tearDown`` (``tests/run/test_sealed_unittest_checks.py``), what
    tells the runs apart's two checks. The check's statement is ``pass`` now (a cleanup's ``addCleanup``), no line
    moved, whatever the class's tests (the sealed run lays a group's members side by side in it); ut64's
    ``tearDownModule`` check likewise (the lead, merging the two); ran66: a mixin's reached through ``super()`` and
    the class's own after it."""
    source = {"addCleanup": CLEANUP.format(check="self.assertTrue(calls)"),
              "local": LOCAL.format(check="self.assertTrue(calls)"),
              "addCleanup-method": CLEANUP.replace("self.addCleanup(lambda: {check})",
                                                   "self.addCleanup(self.assertTrue, calls)"),
              "tearDown": DOWN.format(check="self.assertTrue(self.calls)", more=""),
              "tearDownClass": DOWN_CLASS.format(check="cls.assertTrue(cls, cls.calls)", more=""),
              "addClassCleanup": UP_CLASS.format(check="cls.assertTrue(cls, calls)", more=""),
              "tearDownModule": MODULE, "mixin": MIXIN.format(bases="Spy, unittest.TestCase", more=""),
              "super": SUPERED.format(bases="Spy, unittest.TestCase", more="")}[shape]
    got = without_checks(source)
    assert got is not None and got.count("\n") == source.count("\n"), got
    assert "assertTrue" not in got and "assert CALLS" not in got, got
    assert "assertEqual(totals.total(), 4)" in got
    ast.parse(got)
    if shape in ("tearDown", "tearDownClass"):
        more = without_checks(source.replace("    def test_total(self):", "    def test_other(self):\n        pass\n\n"
                                             "    def test_total(self):"))
        assert more is not None and "assertTrue" not in more, more


#: ut46: the spy and its ``tearDown`` check in a mixin of the module (no test of its own), the test class deriving from
#: it (gatk65's ``MIXIN``), ``{more}`` after it.
MIXIN = (HEAD + "class Spy:\n"
         "    def setUp(self):\n        self.calls = []\n        self.real = totals.fetch\n"
         "        totals.fetch = lambda: self.calls.append(1) or self.real()\n\n"
         "    def tearDown(self):\n        totals.fetch = self.real\n        self.assertTrue(self.calls)\n\n\n"
         "class TestTotal({bases}):\n"
         "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n{more}")
#: A second class running the mixin's ``tearDown``, through a class of the module deriving from it.
OTHER = ("\n\nclass Between(Spy):\n    pass\n\n\n"
         "class TestOther(Between, unittest.TestCase):\n    def test_other(self):\n        self.assertTrue(totals)\n")


def test_a_teardown_inherited_from_a_mixin_of_the_module_is_contradicted_where_it_is_defined(tmp_path: Path) -> None:
    """ut46: the class's MRO as far as the module defines it gives the mixin's ``tearDown`` (gatk65: the class's own
    body alone was read, no twin); every class of the module deriving from the mixin named, their tests shared."""
    got = _check(tmp_path, MIXIN.format(bases="Spy, unittest.TestCase", more=OTHER))
    assert got is not None and got.fixture == "tearDown", got
    assert (got.start, got.end) == (12, 14) and got.how.endswith("'self.assertFalse(self.calls)'"), got
    assert got.shared == ("TestOther::test_other",) and got.classes == ("Spy", "TestTotal", "Between", "TestOther")
    assert not got.last


#: gatk66: :data:`MIXIN` whose class's own ``tearDown`` checks nothing and reaches the mixin's through ``super()``.
HANDS_ON = "    def tearDown(self):\n        totals.fetch = totals.fetch\n        {call}.tearDown()\n\n"


@pytest.mark.parametrize("call", ["super()", "super(TestTotal, self)", "try:\n            pass\n        finally:\n"
                                  "            super()"], ids=["super", "super-named", "finally"])
def test_a_mixins_teardown_reached_through_super_is_contradicted_where_it_is_defined(tmp_path: Path,
                                                                                      call: str) -> None:
    """gatk66: the class's own ``tearDown`` (no check) was the one bound first in its MRO, no twin: a change dropping
    every ``tearDown``'s error was ``solved`` with no fix (``tests/run/test_gatk66_mixin_reach.py``). The check its
    ``super().tearDown()`` reaches is contradicted; the sealed run blanks it; runs changing it tell the test apart."""
    source = MIXIN.format(bases="Spy, unittest.TestCase", more="").replace(
        "    def test_total(self):\n", HANDS_ON.format(call=call) + "    def test_total(self):\n")
    got = _check(tmp_path, source)
    assert got is not None and (got.start, got.end) == (12, 14) and got.classes == ("Spy", "TestTotal"), got
    blank = without_checks(source)
    assert blank is not None and "assertTrue" not in blank and blank.count("\n") == source.count("\n"), blank
    texts = [source.replace("self.assertTrue(self.calls)", c)
             for c in ("self.assertTrue(cls)", "self.assertFalse(cls)")]
    fid = f"{TEST}::TestTotal::test_total"
    line = texts[0].splitlines().index("        self.assertEqual(totals.total(), 4)") + 1
    site = SealSite(key=f"{fid}@{line}", path=TEST, function=fid, first=line, last=line, actual="totals.total()",
                    expected="4", case=True)
    defs = [_defs(t) for t in texts]
    assert all(d is not None for d in defs)
    assert _told({site.key: site}, set(), {TEST: list(zip(texts, defs, strict=True))}) == {fid}


@pytest.mark.parametrize("down", ["        if self.calls:\n            super().tearDown()\n",
                                  "        super().tearDown()\n        self.assertEqual(self.calls, [1])\n"],
                         ids=["conditional", "own-check"])
def test_a_tearDown_that_may_not_hand_on_keeps_its_own(tmp_path: Path, down: str) -> None:
    """gatk66: a ``super().tearDown()`` under a condition may not run the mixin's (no twin, as before). ran66: a class's
    own check after an unconditional ``super().tearDown()`` runs after the mixin's, whose error fails the test first:
    the mixin's check is the one contradicted (the own check's twin is a strict xfail in
    ``tests/run/test_unittest_reach66.py``)."""
    source = MIXIN.format(bases="Spy, unittest.TestCase", more="").replace(
        "    def test_total(self):\n", "    def tearDown(self):\n" + down + "\n    def test_total(self):\n")
    got = _check(tmp_path, source)
    assert (got is None) if "if " in down else (
        got is not None and (got.start, got.end) == (12, 14) and got.classes == ("Spy", "TestTotal")), got


@pytest.mark.parametrize("bases", ["unittest.TestCase, Spy", "Imported, Spy, unittest.TestCase"])
def test_a_mixins_teardown_behind_a_base_of_elsewhere_gets_no_twin(tmp_path: Path, bases: str) -> None:
    """``TestCase`` (or an imported class) before the mixin in the MRO: its ``tearDown`` runs, not the mixin's."""
    assert _check(tmp_path, MIXIN.format(bases=bases, more="")) is None


@pytest.mark.parametrize("more", ["\n\nclass Bad(Spy, TestTotal):\n    pass\n",
                                  "\n\nclass Outer:\n    class TestIn(Spy, unittest.TestCase):\n        pass\n"],
                         ids=["no-order", "nested"])
def test_a_mixin_run_beyond_the_module_top_level_gets_no_twin(tmp_path: Path, more: str) -> None:
    """A class order Python would refuse, or a nested class deriving from the mixin (ids beyond the top level)."""
    assert _check(tmp_path, MIXIN.format(bases="Spy, unittest.TestCase", more=more)) is None


def test_a_mixins_teardown_twin_blinds_every_class_running_it(tmp_path: Path) -> None:
    """ut46: the twin's run holds the mixin's check contradicted; the other class's test (PASS_TO_PASS) and a graded
    test that class inherits from another module blinded there (gatk65 blinded the test's class's alone)."""
    source = MIXIN.format(bases="Spy, unittest.TestCase", more=OTHER)
    root = _tree(tmp_path, source)
    fid = f"{TEST}::TestTotal::test_total"
    kept = [f"{TEST}::TestOther::test_other", f"{TEST}::TestOther::test_common"]
    for seed in range(4):
        plan = plan_twins(root, [fid], seed=seed, teardown=True, pass_to_pass=kept)
        assert plan.blind == {fid: ((2,), tuple(kept))}, plan.blind
        at = plan.placement[fid].index(2)
        assert plan.blinded(at) == set(kept) and all(not plan.blinded(r) for r in range(4) if r != at)
        for r, files in enumerate(plan.runs):
            text = files[TEST].decode()
            assert ("self.assertFalse(self.calls)" in text) == (r == at), text
            assert text.index("self.assert") < text.index("class TestTotal"), text


#: ran66: the class's own ``tearDown`` calling the mixin's through ``super()``, then a check of its own.
SUPER = "\n    def tearDown(self):\n        super().tearDown()\n        self.assertTrue(self.checked)\n"
#: ran66: :data:`MIXIN` with :data:`SUPER` in its test class.
SUPERED = MIXIN.replace("{more}", SUPER + "{more}")


@pytest.mark.parametrize("own", [SUPER, SUPER.replace("self.assertTrue(self.checked)", "self.checked = None")],
                         ids=["own-check", "no-check"])
def test_a_mixins_teardown_reached_through_super_is_contradicted_where_it_is_defined(tmp_path: Path, own: str) -> None:
    """ran66: the class's own ``tearDown`` calls the mixin's first (``super().tearDown()`` before any check of its
    own): the mixin's check is the twin's (the class's own was, or none: gatk65's reach stopped at a class defining
    ``tearDown``, and a change dropping the mixin's error was ``solved`` with no fix)."""
    got = _check(tmp_path, MIXIN.format(bases="Spy, unittest.TestCase", more=own))
    assert got is not None and (got.start, got.end) == (12, 14), got
    assert got.how.endswith("'self.assertFalse(self.calls)'") and got.classes == ("Spy", "TestTotal"), got


def test_a_check_of_its_own_before_the_super_call_is_the_twins(tmp_path: Path) -> None:
    """The class's own check runs first there: it is the twin's, as before ran66."""
    own = SUPER.replace("        super().tearDown()\n        self.assertTrue(self.checked)\n",
                        "        self.assertTrue(self.checked)\n        super().tearDown()\n")
    got = _check(tmp_path, MIXIN.format(bases="Spy, unittest.TestCase", more=own))
    assert got is not None and got.how.endswith("'self.assertFalse(self.checked)'") and not got.classes, got


@pytest.mark.parametrize(("more", "shared"), [
    ("\n\nclass TestOuter:\n    class TestInner(unittest.TestCase):\n        def test_in(self):\n            pass\n",
     ("TestOuter::TestInner::test_in",)),
    ("\n\nclass TestMore(TestTotal):\n    def test_more(self):\n        pass\n",
     ("TestMore::test_more", "TestMore::test_total")),
    (None, ("Base::test_base", "TestTotal::test_base")),
], ids=["nested", "derived", "based"])
def test_a_module_check_names_nested_and_inherited_tests(tmp_path: Path, more: str | None,
                                                         shared: tuple[str, ...]) -> None:
    """ran66: the module's tests read through nesting and each class's MRO as far as the module defines it (ut65 gave
    up at a nested class or a class deriving from another, and a change dropping ``tearDownModule``'s error was
    ``solved`` with no fix); ``based`` (``more`` None): the test's class derives from a base of the module holding a
    test (no class-level check in reach, ``_siblings``; it stopped there)."""
    source = MODULE + more if more is not None else MODULE.replace("class TestTotal(unittest.TestCase):", (
        "class Base(unittest.TestCase):\n    def test_base(self):\n        pass\n\n\nclass TestTotal(Base):"))
    got = _check(tmp_path, source)
    assert got is not None and got.fixture == "tearDownModule" and got.shared == shared and got.last, got


def test_a_module_check_beside_a_nested_class_deriving_from_the_module_gets_no_twin(tmp_path: Path) -> None:
    """A nested class deriving from a class of the module: its ids are not read."""
    more = "\n\nclass TestOuter:\n    class TestIn(TestTotal):\n        pass\n"
    assert _check(tmp_path, MODULE + more) is None
