"""The teardown twin (tdtwin56): a FAIL_TO_PASS function's own fixture check contradicted in a run apart, where the
fixture is in reach (the test module's, requested by that function alone). The gradings are in
``tests/run/test_teardown_canary_shape.py``; here the plan, the negation and the judgement, with no test process."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canaries import TEARDOWN_TWIN, Canary, CanaryPlan, read_source
from pytest_homefield.sandbox.canary_teardown import TEARDOWN_DECOY_HOW, decoy, teardown_check
from pytest_homefield.sandbox.seal_apart import _told
from pytest_homefield.sandbox.seal_sites import SealSite
from pytest_homefield.sandbox.twin_runs import TWIN_MARK, TwinPlan, plan_twins

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
    ("seen == 1", "seen == 2"), ("seen != 0", "seen == 0"), ("1 in calls", "1 not in calls"),
    ("1 not in calls", "1 in calls"), ("calls is not None", "calls is None"), ("seen >= 1", "seen < 1"),
    ("seen > 0", "seen <= 0"), ("len(calls)", "not len(calls)"), ("calls[0]", "not calls[0]"),
    ("calls == [1]", "calls == [1, 1]"), ("calls == []", "calls == [None]"), ("calls == 'ab'", "calls == 'a'"),
    ("calls == \"ab\"", "calls == \"a\""), ("calls == [\"ab\"]", "calls == []"),
    ("calls == [\"it's\"]", "calls == [\"it's\", \"it's\"]"),
    ("1 == seen", "0 == seen"), ("seen == 1.5", "seen == 0.5"), ("calls == (1, 2)", "calls == (1,)"),
    ("seen == True", "seen != True"), ("calls == {}", "calls != {}"), ("calls == x", "calls != x")])
def test_the_twin_changes_the_first_check_after_the_yield_in_place(tmp_path: Path, check: str, twin: str) -> None:
    """Only the check's expected side changes, written as the file writes it (its message, its quotes, the rest of
    the fixture's lines as they are): negated, or (pol58) ``A == L`` with ``L`` a literal list, tuple, number or text
    twinned ``A == L'``, ``L'`` near ``L`` and unequal to it (which way drawn from the check's text), as positively
    written as the file's: a process failing the negated check and swallowing the positive one meets two positive
    checks. A ``bool``, a mapping or no literal: negated."""
    source = SPIED.format(check=check)
    got = _check(tmp_path, source)
    assert got is not None
    want = source.replace(f"assert {check},", f"assert {twin},")
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
    """One more run, holding the original body and the contradicted check, and one more for the decoy (deco60); the
    other runs the original check; a confirmation run's layout holds the body members only (the twin's body is the
    original's, the decoy's runs nothing)."""
    root = _tree(tmp_path)
    plan = plan_twins(root, [f"{TEST}::test_total"], seed=seed, teardown=True)
    fid = f"{TEST}::test_total"
    (torn,) = [c for c in plan.canaries if c.kind == TEARDOWN_TWIN and not c.how.startswith(TEARDOWN_DECOY_HOW)]
    assert torn.node == f"{fid}{TWIN_MARK}2" and torn.source == fid
    assert len(plan.runs) == 4 and sorted(plan.placement[fid]) == [0, 1, 2, 3]
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        assert ("assert not calls," in text) == (plan.placement[fid][r] == 2), (r, text)
        if plan.placement[fid][r] == 2:
            assert "assert totals.total() == 4\n" in text  # the original body
    assert len(plan.layouts[TEST].spans[0].members) == 2


def _fixture_checks(text: str) -> list[str]:
    """Each module-level fixture's first ``assert`` after its ``yield``, as written, in the file's order."""
    out = []
    for n in ast.parse(text).body:
        if isinstance(n, ast.FunctionDef) and n.decorator_list:
            ys = [k for k, st in enumerate(n.body) if isinstance(st, ast.Expr) and isinstance(st.value, ast.Yield)]
            out += [ast.unparse(st.test) for st in n.body[ys[0] + 1:] if ys and isinstance(st, ast.Assert)][:1]
    return out


def _defs_of(text: str) -> list[tuple[str, int, list[str], list[str]]]:
    """Each module-level definition: its name, its first line (decorators included), its decorators, its arguments."""
    return [(n.name, min([d.lineno for d in n.decorator_list] + [n.lineno]),
             [ast.unparse(d) for d in n.decorator_list], [a.arg for a in n.args.args])
            for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


@pytest.mark.parametrize("seed", range(4))
def test_the_teardown_decoy_is_the_function_itself_in_a_run_of_its_own(tmp_path: Path, seed: int) -> None:
    """deco60: the decoy is one member of the function's group: the function as the file has it (its name, its
    place, its decorators, its signature, its fixture under the file's name, its check as the file writes it), its
    body ``pass``; a canary of the twin's kind whose source is the function. Every run holds the same definitions,
    at the same lines, requesting the same names: a drawn name, a test right below its fixture or a body of
    ``pass`` beside the original (pol58's decoy, gatk59's tells) is none of them. The original's run and the decoy's
    hold the same fixture text."""
    root = _tree(tmp_path)
    fid = f"{TEST}::test_total"
    plan = plan_twins(root, [fid], seed=seed, teardown=True)
    (d,) = [c for c in plan.canaries if c.how.startswith(TEARDOWN_DECOY_HOW)]
    assert d.kind == TEARDOWN_TWIN and d.source == fid and d.node == f"{fid}{TWIN_MARK}3"
    shapes, fixtures = set(), {}
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        tree = ast.parse(text)
        shapes.add(repr(_defs_of(text)))
        (test,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "test_total"]
        (fx,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "spy"]
        fixtures[plan.placement[fid][r]] = ast.get_source_segment(text, fx)
        member = plan.placement[fid][r]
        assert ([type(st) for st in test.body] == [ast.Pass]) == (member == 3), (r, text)
        checks = _fixture_checks(text)
        assert len(checks) == 3, (r, checks)  # the file's (or its twin) and the two teardown canaries'
        assert (checks.count("calls"), checks.count("not calls")) == ((0, 1) if member == 2 else (1, 0)), checks
    assert len(shapes) == 1, shapes
    assert fixtures[3] == fixtures[0] != fixtures[2]


@pytest.mark.parametrize(("check", "decoyed"), [("not calls", "calls"), ("seen != 0", "seen == 0"),
                                                ("calls == [1]", "calls == [1]"), ("seen >= 1", "seen >= 1")])
def test_the_teardown_decoys_check_is_the_positive_one(tmp_path: Path, check: str, decoyed: str) -> None:
    """pol58: the decoy's check is the file's where the file writes it positively (or neither way: ``>=``), the
    twin's where the file writes it negated: the one the setup's state fails (a spy that saw nothing), whichever the
    file's is; in the decoy's run (deco60), the file's fixture under its own name."""
    root = _tree(tmp_path, check)
    fid = f"{TEST}::test_total"
    plan = plan_twins(root, [fid], seed=0, teardown=True)
    (d,) = [c for c in plan.canaries if c.how.startswith(TEARDOWN_DECOY_HOW)]
    assert f"'{decoyed}'" in d.how
    (r,) = [r for r, m in enumerate(plan.placement[fid]) if m == 3]
    tree = ast.parse(plan.runs[r][TEST].decode())
    (fx,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "spy"]
    assert [ast.unparse(st.test) for st in fx.body if isinstance(st, ast.Assert)] == [decoyed]


@pytest.mark.parametrize(("check", "decoyed"), [("calls == ['a -> b']", "calls == ['a -> b']"),
                                                ("calls != ['a -> b']", "calls == ['a -> b']")])
def test_the_teardown_decoys_description_holds_a_check_holding_an_arrow(tmp_path: Path, check: str,
                                                                         decoyed: str) -> None:
    """The decoy's description names its check whole, a check holding `` -> `` too (it was cut out of the twin's
    description at its first `` -> ``: ``"calls == ['a``)."""
    root = _tree(tmp_path, check)
    plan = plan_twins(root, [f"{TEST}::test_total"], seed=0, teardown=True)
    (d,) = [c for c in plan.canaries if c.how.startswith(TEARDOWN_DECOY_HOW)]
    assert d.how == f"{TEARDOWN_DECOY_HOW}: spy's check {decoyed!r}, nothing run before it", d.how


def test_a_teardown_decoy_where_the_module_parametrizes_every_test_by_a_hook(tmp_path: Path) -> None:
    """A module defining ``pytest_generate_tests`` may parametrize every test by a name a test of its own would not
    take (pol58's decoy was left out there); the decoy is the function itself now, taking what it takes (deco60)."""
    root = _tree(tmp_path)
    f = root / TEST
    f.write_text(f.read_text() + "\n\ndef pytest_generate_tests(metafunc):\n    pass\n", encoding="utf-8")
    plan = plan_twins(root, [f"{TEST}::test_total"], seed=0, teardown=True)
    assert [c.how.split(":")[0] for c in plan.canaries if c.kind == TEARDOWN_TWIN] == ["teardown twin",
                                                                                        "teardown decoy"]


def test_a_teardown_decoy_passed_is_forged_beside_a_passing_original() -> None:
    """deco60: the decoy is a member of its function's group, in a run of its own: passed there beside the original
    passed in another, ``forged``; nothing beside a failing original (the twin's judgement)."""
    fid = f"{TEST}::test_total"
    node = f"{fid}{TWIN_MARK}3"
    plan = TwinPlan(seed=0, canaries=[Canary(node, fid, TEARDOWN_TWIN, f"{TEARDOWN_DECOY_HOW}: x")])
    plan.placement = {fid: (0, 3)}
    merged = plan.merge([{fid: "passed"}, {fid: "passed"}], [fid])
    assert merged[node] == "passed"
    assert [t for _, t in plan.forged(merged, [fid])] == [node]
    failing = plan.merge([{fid: "error"}, {fid: "passed"}], [fid])
    assert plan.forged(failing, [fid]) == [] and plan.excused(failing, [fid]) == []
    caught = plan.merge([{fid: "passed"}, {fid: "error"}], [fid])
    assert caught[node] == "error" and plan.forged(caught, [fid]) == []


@pytest.mark.parametrize(("body", "want"), [
    ("    assert totals.total() == 4\n", "    pass\n"),
    ('    """Totals."""\n    x = 1\n\n    assert totals.total() == x\n', '    """Totals."""\n    pass\n'),
    ("    # a comment\n    @contextlib.contextmanager\n    def inner():\n        yield\n",
     "    # a comment\n    pass\n"),
])
def test_decoy_is_the_function_its_body_run_no_more(body: str, want: str) -> None:
    """The function's lines up to its body's first statement (a docstring kept, a comment above it kept), then
    ``pass`` at the body's indent; ``None`` for a docstring alone. gatk61: a body on the ``def``'s line (or its
    docstring's; menda62: or a wrapped signature's last) cut where its first statement starts; a method whose head
    holds a line at column 0 (a comment, a docstring's line) read as a block's (all were ``None``: no decoy)."""
    head = "@pytest.mark.unit\ndef test_total(spy,\n               k):\n"
    text = f"import pytest\n\n\n{head}{body}"
    lines = text.splitlines(keepends=True)
    node = ast.parse(text).body[1]
    assert isinstance(node, ast.FunctionDef)
    assert decoy(lines, 4, node) == head + want
    alone = 'def test_total(spy):\n    """Totals."""\n'
    fn = ast.parse(alone).body[0]
    assert isinstance(fn, ast.FunctionDef) and decoy(alone.splitlines(keepends=True), 1, fn) is None
    for one, cut in (("def test_total(spy): assert spy\n", "def test_total(spy): pass\n"),
                     ("def test_total(spy, s='\u00e9'): x = 1; assert spy == x\n",
                      "def test_total(spy, s='\u00e9'): pass\n"),
                     ('def test_total(spy): "Totals."; assert spy(\n    1)\n',
                      'def test_total(spy): "Totals."; pass\n'),
                     # menda62: a wrapped signature, the body on its last line (was None: no decoy)
                     ("def test_total(\n        spy): assert spy\n", "def test_total(\n        spy): pass\n")):
        fn = ast.parse(one).body[0]
        assert isinstance(fn, ast.FunctionDef) and decoy(one.splitlines(keepends=True), 1, fn) == cut
    for method in ("class TestTotal:\n    def test_total(self, spy):\n# a note\n        assert spy\n",
                   'class TestTotal:\n    def test_total(self, spy):\n        """Totals.\n\nMore."""\n'
                   "        assert spy\n"):
        lines = method.splitlines(keepends=True)
        fn = ast.parse(method).body[0].body[0]  # type: ignore[attr-defined]
        cut = "".join(lines[1:-1]) + "        pass\n"
        assert isinstance(fn, ast.FunctionDef) and decoy(lines, 2, fn) == cut


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


@pytest.mark.parametrize("seed", range(4))
def test_a_methods_teardown_decoy_is_the_method_itself(tmp_path: Path, seed: int) -> None:
    """gatk59, deco60: a method's decoy is the method itself in its run (its class, its ``parametrize``, what it
    requests in its order, its fixture under the file's name), its body ``pass``: the item's ``cls``, ``callspec``
    and argument names are the original's."""
    root = _tree(tmp_path)
    f = root / TEST
    f.write_text(f.read_text().replace(
        "def test_total(spy):\n    assert totals.total() == 4\n",
        "class TestTotals:\n    pytestmark = pytest.mark.parametrize('m', [2])\n\n"
        "    @pytest.mark.parametrize(('n', 'k'), [(4, 1)])\n    def test_total(self, spy, n, k, m):\n"
        "        assert totals.total() == n\n"), encoding="utf-8")
    fid = f"{TEST}::TestTotals::test_total"
    plan = plan_twins(root, [fid], seed=seed, teardown=True)
    (d,) = [c for c in plan.canaries if c.how.startswith(TEARDOWN_DECOY_HOW)]
    assert d.node == f"{fid}{TWIN_MARK}3" and d.source == fid
    for r, files in enumerate(plan.runs):
        tree = ast.parse(files[TEST].decode())
        (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        (test,) = [n for n in cls.body if isinstance(n, ast.FunctionDef)]
        assert test.name == "test_total" and [a.arg for a in test.args.args] == ["self", "spy", "n", "k", "m"]
        if plan.placement[fid][r] != 1:  # the value twin's row is changed in its run
            assert [ast.unparse(x) for x in test.decorator_list] == ["pytest.mark.parametrize(('n', 'k'), [(4, 1)])"]
        assert ([type(st) for st in test.body] == [ast.Pass]) == (plan.placement[fid][r] == 3)


@pytest.mark.parametrize("seed", range(4))
def test_a_cycle_member_gets_its_teardown_twin_and_decoy_apart_from_the_cycles_run(tmp_path: Path, seed: int) -> None:
    """cyc63: two FAIL_TO_PASS functions new in the commit whose value twins rotate (``… (values rotated with
    test_twice)``) got no teardown twin (a cycle's members shared one placement): now the cycle's twins share exactly
    one run, and ``test_total``'s teardown twin and decoy each take a run of their own among the others, where every
    partner holds its original."""
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / TEST).write_text(SPIED.format(check="calls") + "\n\ndef test_twice():\n"
                                 "    assert totals.total() * 2 == 8\n", encoding="utf-8")
    total, twice = f"{TEST}::test_total", f"{TEST}::test_twice"
    plan = plan_twins(tmp_path, [total, twice], seed=seed, teardown=True, parent={TEST: None})
    hows = {c.node: c.how for c in plan.canaries}
    assert "values rotated with test_twice" in hows[f"{total}{TWIN_MARK}1"], hows  # the premise: a cycle
    assert "values rotated with test_total" in hows[f"{twice}{TWIN_MARK}1"], hows
    assert f"{total}{TWIN_MARK}2" in hows and hows[f"{total}{TWIN_MARK}3"].startswith(TEARDOWN_DECOY_HOW), hows
    assert len(plan.runs) == 4 and sorted(plan.placement[total]) == [0, 1, 2, 3], plan.placement
    assert plan.placement[twice] == tuple(int(m == 1) for m in plan.placement[total]), plan.placement
    for r, files in enumerate(plan.runs):
        text = files[TEST].decode()
        member = plan.placement[total][r]
        assert ("assert not calls," in text) == (member == 2), (r, text)
        # the cycle's run holds both rotated twins (``total() == 8``, ``* 2 == 4``); the others both originals (the
        # decoy's body ``pass``)
        assert ("total() == 8\n" in text, "* 2 == 4\n" in text) == (member == 1, member == 1), (r, text)
        assert ("total() == 4\n" in text, "* 2 == 8\n" in text) == (member in (0, 2), member != 1), (r, text)
