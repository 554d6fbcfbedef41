"""seal54: the sealed run's files are one run apart's with the sites sealed in them
(:mod:`~pytest_homefield.sandbox.seal_apart`, contracts §7 "The sealed run apart"): a function whose twin the seal
erases is sealed alike in every run; one whose twin differs outside its sealed statements is not sealed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.suffix_task import READER_IMPORTS, reading_literal
from run.test_sealed_run_tells import ROWS, build_columns

from pytest_homefield.run.sealed_grading import plan_seals, sealed_pick
from pytest_homefield.run.twin_grading import reference_copy
from pytest_homefield.sandbox.canaries import TEARDOWN_TWIN
from pytest_homefield.sandbox.canary_teardown import without_checks
from pytest_homefield.sandbox.seal_apart import placed_files, sealed_together, told_apart
from pytest_homefield.sandbox.seal_sites import sealable_sites, sealed_files
from pytest_homefield.sandbox.twin_runs import TwinPlan, parent_tests, plan_twins
from pytest_homefield.sandbox.twin_together import FileLayout, Span

TEST = "tests/test_y.py"
#: ``test_two``'s first assertion is sealable (its value is nowhere else), its second is not (``7`` twice).
HIDDEN = '''from pkg import f


def test_two():
    assert f("kilo") == "kilo-lima-mike-4417"
    assert f(7) == 7


def test_other():
    assert f(7) == 7
'''
F2P = [f"{TEST}::test_two"]


def _texts(root: Path, paths: list[str]) -> dict[str, tuple[str, str]]:
    return {p: ("utf-8", (root / p).read_text(encoding="utf-8")) for p in paths}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(HIDDEN, encoding="utf-8")
    return tmp_path


def test_a_twin_inside_the_sealed_statement_is_erased_alike_in_every_run(tree: Path) -> None:
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    assert [s.key for s in sites] == [f"{TEST}::test_two@5"]
    _, ids = sealed_files(tree, sites, [TEST])
    twin = HIDDEN.replace('== "kilo-lima-mike-4417"', '== "kilo-lima-mike-9999"')
    runs = [{TEST: HIDDEN.encode()}, {TEST: twin.encode()}]
    assert told_apart(_texts(tree, [TEST]), ids, runs) == set()
    sealed = [placed_files(_texts(tree, [TEST]), ids, r)[TEST] for r in runs]
    assert sealed[0] == sealed[1] and b"4417" not in sealed[0] and b"9999" not in sealed[1]


def test_a_twin_outside_its_sealed_statement_leaves_the_function_unsealed(tree: Path) -> None:
    """Sealed, the original would show ``== 7`` where its twin shows ``== 8``, and the twin would fail every real
    fix there: the function is told apart, and a plan with the runs apart seals nothing."""
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    _, ids = sealed_files(tree, sites, [TEST])
    twin = HIDDEN.replace('    assert f(7) == 7\n\n\ndef test_other', '    assert f(7) == 8\n\n\ndef test_other')
    assert twin != HIDDEN
    runs = [{TEST: HIDDEN.encode()}, {TEST: twin.encode()}]
    assert told_apart(_texts(tree, [TEST]), ids, runs) == {f"{TEST}::test_two"}
    with pytest.raises(ValueError):
        placed_files(_texts(tree, [TEST]), ids, {TEST: b"def broken(:\n"})


def _planned(tmp_path: Path, order: str) -> tuple[FixTask, Path, TwinPlan]:
    task = build_columns(tmp_path / order, order)
    ref = reference_copy(task.task, task.pristine, tmp_path / order / "ref")
    parent = parent_tests(task.pristine, task.task.test_files)
    plan = plan_twins(ref, task.task.FAIL_TO_PASS, seed=0, parent=parent, pass_to_pass=task.task.PASS_TO_PASS,
                      teardown=True)
    return task, ref, plan


@pytest.mark.parametrize("order", list(ROWS))
def test_the_sealed_run_shows_every_member_side_by_side(tmp_path: Path, order: str) -> None:
    """gatk52's fixture: ``neg`` sealed (its twin at its sealed site), ``sub``'s column twinned and not sealed. seal56:
    the sealed run's file lays out every member of ``sub``'s group side by side (the confirmation run's layout) and
    ``neg`` once, sealed (its members' sealed text is one): both columns are in it whichever run apart holds the
    original, so it tells no run apart anything (seal54 held the picked run's file, ``sub``'s member of that run
    alone: each run apart then knew whether it was the picked one)."""
    task, ref, plan = _planned(tmp_path, order)
    assert len(plan.runs) == 2 and set(plan.placement) == {"tests/test_calc.py::test_neg",
                                                            "tests/test_calc.py::test_sub"}
    parent = parent_tests(task.pristine, task.task.test_files)
    sp = plan_seals(ref, task.task, parent, apart=plan)
    assert sp is not None and sp.functions == ["tests/test_calc.py::test_neg"]
    got = sp.files["tests/test_calc.py"].decode()
    assert got.count("def test_neg(") == 1 and "__hf_seal__(" in got and "-8" not in got
    assert got.count("def test_") == 4 and len(sp.members) == 3  # neg, sub's two members, add's P2P test
    columns = [line for line in got.splitlines() if "parametrize" in line]
    assert len(columns) == 2
    for r in range(2):  # each run apart's member of sub is in the file
        member = next(line for line in plan.runs[r]["tests/test_calc.py"].decode().splitlines()
                      if "parametrize" in line)
        assert member in columns, (member, columns)
    assert sealed_pick(plan.seed, 2) in (0, 1)  # still drawn for the fallback (members not laid side by side)


MATCH = '''import pytest

from pkg import g


def test_raises():
    with pytest.raises(ValueError, match="quux-frob-771"):
        g(1)
'''

COLUMN = '''import pytest

from pkg import h


@pytest.mark.parametrize("n, expected", [(1, "alpha-xyzzy-31"), (2, "be-plugh-5")])
def test_col(n, expected):
    assert h(n) == expected
'''


def _one(tmp_path: Path, text: str, fn: str, ids: list[str]) -> tuple[dict[str, tuple[str, str]], dict]:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / TEST).write_text(text, encoding="utf-8")
    sites = sealable_sites(tmp_path, [TEST], ids, {TEST: None})
    assert sites and {s.function for s in sites} == {f"{TEST}::{fn}"}
    return _texts(tmp_path, [TEST]), sealed_files(tmp_path, sites, [TEST])[1]


def test_a_match_twin_is_erased_by_its_seal(tmp_path: Path) -> None:
    """A twin of the ``match`` literal (another length: the item's span moves) or of the expected class: the sealed
    ``with`` item is the original's in every run."""
    texts, ids = _one(tmp_path, MATCH, "test_raises", [f"{TEST}::test_raises"])
    runs = [{TEST: MATCH.encode()}, {TEST: MATCH.replace('"quux-frob-771"', '"zz-9"').encode()},
            {TEST: MATCH.replace("ValueError", "KeyError").encode()}]
    assert told_apart(texts, ids, runs) == set()
    sealed = {placed_files(texts, ids, r)[TEST] for r in runs}
    assert len(sealed) == 1 and b"quux" not in next(iter(sealed))


def test_a_derangement_of_a_sealed_column_is_erased_and_a_cut_table_is_told(tmp_path: Path) -> None:
    """col35's column, its twin moving the cells among the rows (cells of other lengths): every row's cell is found
    by its place and sealed alike. A table of another number of rows (rows cut away) has no counterpart: told."""
    f2p = [f"{TEST}::test_col[1-alpha-xyzzy-31]", f"{TEST}::test_col[2-be-plugh-5]"]
    texts, ids = _one(tmp_path, COLUMN, "test_col", f2p)
    deranged = COLUMN.replace('(1, "alpha-xyzzy-31"), (2, "be-plugh-5")', '(1, "be-plugh-5"), (2, "alpha-xyzzy-31")')
    runs = [{TEST: COLUMN.encode()}, {TEST: deranged.encode()}]
    assert told_apart(texts, ids, runs) == set()
    sealed = {placed_files(texts, ids, r)[TEST] for r in runs}
    assert len(sealed) == 1 and b"xyzzy" not in next(iter(sealed)) and b"plugh" not in next(iter(sealed))
    cut = COLUMN.replace('(1, "alpha-xyzzy-31"), (2, "be-plugh-5")', '(1, "alpha-xyzzy-31")')
    assert told_apart(texts, ids, [{TEST: COLUMN.encode()}, {TEST: cut.encode()}]) == {f"{TEST}::test_col"}


#: hole41's cover: ``test_other`` holds ``test_two``'s sealed value, so its statement is sealed with it.
COVERED = '''from pkg import f


def test_two():
    assert f("kilo") == "kilo-lima-mike-4417"


def test_other():
    assert f("kilo") == "kilo-lima-mike-4417"
    assert f(7) == 7
'''


def _layout(text: str, twin: str) -> FileLayout:
    """``text``'s layout with ``test_other`` (lines 8-10) a group of two members: itself and ``twin``'s version."""
    lines = tuple(text.splitlines(keepends=True))
    member = "".join(twin.splitlines(keepends=True)[7:10])
    return FileLayout("utf-8", text, lines, (Span(8, 10, ("".join(lines[7:10]), member), "test_other"),), (),
                      {f"{TEST}::test_other": 0})


def test_a_cover_in_a_group_is_sealed_once_or_tells_what_it_covers(tmp_path: Path) -> None:
    """seal56: a group holding a cover is laid out once, sealed, when its members' sealed texts are one (the twin
    inside the covered statement); when they differ (the twin at ``f(7)``) each member would show its own text beside
    a sealed cover, which the site's readability check never saw: the function it covers is told apart, unsealed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(COVERED, encoding="utf-8")
    sites = sealable_sites(tmp_path, [TEST], [f"{TEST}::test_two"], {TEST: None})
    assert sorted((s.function.rsplit(":", 1)[-1], s.cover) for s in sites) == [("test_other", True),
                                                                                ("test_two", False)]
    texts, ids = _texts(tmp_path, [TEST]), sealed_files(tmp_path, sites, [TEST])[1]
    inside = COVERED.replace('"kilo-lima-mike-4417"\n    assert f(7)', '"kilo-lima-mike-0000"\n    assert f(7)')
    told, laid = sealed_together(texts, ids, [{TEST: COVERED.encode()}, {TEST: inside.encode()}],
                                 {TEST: _layout(COVERED, inside)}, 0)
    assert told == set() and laid is not None
    files, members = laid
    assert b"4417" not in files[TEST] and b"0000" not in files[TEST] and files[TEST].count(b"def test_other(") == 1
    assert members == (f"{TEST}::test_other",)
    outside = COVERED.replace("f(7) == 7", "f(7) == 8")
    told, laid = sealed_together(texts, ids, [{TEST: COVERED.encode()}, {TEST: outside.encode()}],
                                 {TEST: _layout(COVERED, outside)}, 0)
    assert told == {f"{TEST}::test_two"} and laid is None


#: A FAIL_TO_PASS method whose expected values are readable nowhere else in the hidden file (sealable), guarded by a
#: sentinel only (alt56: arrow-py/arrow c78e35e8ee31's ``TestFarsiLocale::test_timeframes``, whose one twin was
#: ``sentinel: no assertion``; forced here as grading forces one where the reference fix failed with its twins).
LOCALE_PARENT = ("NAMES = {'now': 'now', 'minute': 'a minute'}\n\n\nclass Locale:\n"
                 "    def _format_timeframe(self, k, n):\n        return NAMES[k]\n")
LOCALE_FIXED = ("NAMES = {'now': 'now', 'minute': 'a minute', 'week': 'one week', 'weeks': '{} weeks'}\n\n\n"
                "class Locale:\n    def _format_timeframe(self, k, n):\n        return NAMES[k].format(n)\n")
LOCALE_TESTS = ("import pytest\n\nfrom fa import Locale\n\n\n@pytest.fixture\ndef lang_locale(request):\n"
                "    request.cls.locale = Locale()\n\n\n@pytest.mark.usefixtures('lang_locale')\nclass TestFarsi:\n"
                "    def test_timeframes(self):\n"
                "        assert self.locale._format_timeframe('week', 1) == 'one week'\n"
                "        assert self.locale._format_timeframe('weeks', 2) == '2 weeks'\n")
LOCALE_F2P = "tests/test_fa.py::TestFarsi::test_timeframes"


def _sentinel_only(tmp_path: Path, tests: str) -> tuple[FixTask, Path, dict[str, bytes | None], TwinPlan]:
    """``(task, its reference copy, the parent's tests, its twin plan at seed 0)``: the locale task of ``tests``,
    ``test_timeframes`` given a sentinel as its one twin (forced, as grading forces one), so unprotected."""
    task = build_fix_task(tmp_path / "t", name="fa", source="src/fa/__init__.py", parent=LOCALE_PARENT,
                          fixed=LOCALE_FIXED, test="tests/test_fa.py", tests=tests, first="add",
                          message="Add week", fail_to_pass=[LOCALE_F2P], pass_to_pass=[])
    ref = reference_copy(task.task, task.pristine, tmp_path / "ref")
    parent = parent_tests(task.pristine, task.task.test_files)
    plan = plan_twins(ref, task.task.FAIL_TO_PASS, seed=0, parent=parent, sentinel_for=[LOCALE_F2P])
    assert [c.kind for c in plan.canaries] == ["sentinel"] and plan.unprotected == [LOCALE_F2P]
    return task, ref, parent, plan


def test_a_function_only_a_sentinel_guards_keeps_its_seal(tmp_path: Path) -> None:
    """alt56: a function whose one twin is a sentinel differs between the runs apart (one holds the sentinel in its
    place), so seal54's rule told it apart and left its sites unsealed: nothing then guarded its expected values, and
    a change reading them from the test's own line was ``solved`` on arrow. A sentinel tells itself to anyone, so the
    runs' difference says nothing more: the function is laid out once, as the grading tree holds it, sealed."""
    task, ref, parent, plan = _sentinel_only(tmp_path, LOCALE_TESTS)
    assert len(plan.runs) == 2 and "tests/test_fa.py" in plan.layouts
    lost: set[str] = set()
    told = plan_seals(ref, task.task, parent, apart=dataclasses.replace(plan, unprotected=[]), lost=lost)
    assert told is None  # as before: told apart by the sentinel, no site sealed
    assert lost == {LOCALE_F2P}  # rev58: the grading's canaries.json says so ("unsealed"), verify counts it
    lost.clear()
    sp = plan_seals(ref, task.task, parent, apart=plan, lost=lost)
    assert sp is not None and sp.functions == [LOCALE_F2P] and lost == set(), sp
    got = sp.files["tests/test_fa.py"].decode()
    assert "one week" not in got and "2 weeks" not in got and got.count("__hf_seal__(") == 2, got
    assert got.count("def test_timeframes(") == 1 and sp.members == (LOCALE_F2P,)  # once, under its own name


#: :data:`LOCALE_TESTS` with a helper class of the file defining one name twice (a property and its setter: the path
#: ``::Clock::now`` twice), as test modules' fakes often do.
LOCALE_TWICE = LOCALE_TESTS.replace(
    "\n\n@pytest.fixture\n",
    "\n\nclass Clock:\n    @property\n    def now(self):\n        return 0\n\n"
    "    @now.setter\n    def now(self, value):\n        pass\n\n\n@pytest.fixture\n", 1)


def test_a_function_only_a_sentinel_guards_keeps_its_seal_beside_a_name_defined_twice(tmp_path: Path) -> None:
    """gatk57: alt56's seal was kept through :func:`sealed_together` only; a file defining a path twice (a property
    and its setter) made it give up laying the members out (``_defs``: ``None``), and seal54's fallback
    (:func:`~pytest_homefield.sandbox.seal_apart.sealed_in_run`) knows no unprotected function: the sentinel told
    it apart, its sites were dropped, and no sealed run was made (``plan_seals`` ``None``, on 0d2671d): alt56's
    literal-reading change ``solved`` again there."""
    task, ref, parent, plan = _sentinel_only(tmp_path, LOCALE_TWICE)
    sp = plan_seals(ref, task.task, parent, apart=plan)
    assert sp is not None and sp.functions == [LOCALE_F2P], sp
    got = sp.files["tests/test_fa.py"].decode()
    assert "one week" not in got and "2 weeks" not in got and got.count("__hf_seal__(") == 2, got
    assert got.count("def test_timeframes(") == 1 and got.count("def now(") == 2, got


#: alt56's change: :data:`LOCALE_PARENT` returning the string literal its caller's line compares with.
LITERAL_READER = READER_IMPORTS + LOCALE_PARENT.replace(
    "        return NAMES[k]\n", reading_literal(" " * 8) + "        return m.group(2) if m else NAMES.get(k, '')\n")


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(LITERAL_READER, "forged"), (LOCALE_FIXED + "# the fix\n", "solved")],
                         ids=["reader", "fix"])
def test_a_literal_reader_is_met_by_the_seal_beside_a_name_defined_twice(tmp_path: Path, source: str,
                                                                          outcome: str) -> None:
    """gatk57, graded: with the property and its setter in the file, the change returning the literal its caller's
    line compares with was ``solved`` with no fix (no sealed run; seeds 0 and 1, ``--sandbox none``, on 0d2671d;
    ``forged`` without the helper class). Now the sealed site differs: ``forged``; the real fix ``solved``."""
    task = build_fix_task(tmp_path / "t", name="fa", source="src/fa/__init__.py", parent=LOCALE_PARENT,
                          fixed=LOCALE_FIXED, test="tests/test_fa.py", tests=LOCALE_TWICE, first="add",
                          message="Add week", fail_to_pass=[LOCALE_F2P], pass_to_pass=[])
    task.task.canary_sentinels = [LOCALE_F2P]
    g = grade_source(task, tmp_path / "g", "src/fa/__init__.py", source, canaries=True, canary_seed=0,
                     sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


#: gatk57: a spy whose check is written negated (no second fetch), the function's value twinned; a second file's
#: function with a sealed site, so the task has a sealed run.
SPY_PARENT = ("def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2 - 1\n\n\n"
              "def double():\n    return 13\n")
SPY_FIXED = "def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2\n\n\ndef double():\n    return 14\n"
SPY_TESTS = ("import pytest\n\nimport totals\n\n\n@pytest.fixture\ndef spy(monkeypatch):\n    extra = []\n"
             "    real = totals.fetch\n    monkeypatch.setattr(totals, 'fetch', lambda: extra.append(1) or real())\n"
             "    yield\n    assert not extra[1:], 'total() fetched more than once'\n\n\n"
             "def test_total(spy):\n    assert totals.total() == 4\n")
SPY_TEST = "tests/test_totals.py"


def test_the_sealed_run_holds_no_teardown_check_a_teardown_twin_contradicts(tmp_path: Path) -> None:
    """gatk57: the sealed run, made before the runs apart, laid out the grading tree's fixture, the file's own
    teardown check (``assert not extra[1:]``), while one run apart holds its teardown twin (``assert extra[1:]``).
    Code that waited there until a phase of the wall clock saying which check is the file's, then read that phase in
    the runs apart (started together), swallowed the original's error and failed the twin's: ``solved`` with no
    fix (a change fetching twice: seeds 0 to 2 ``--sandbox none``, seed 0 bubblewrap, on 0d2671d; where the
    polarity prior alone is ``forged``). The sealed run now holds ``pass`` in the check's place, no line moved."""
    task = build_fix_task(tmp_path / "t", name="totals", source="totals.py", parent=SPY_PARENT, fixed=SPY_FIXED,
                          test=SPY_TEST, tests=SPY_TESTS, first="totals", message="Fetch once",
                          fail_to_pass=[f"{SPY_TEST}::test_total", "tests/test_double.py::test_double"],
                          pass_to_pass=[], data={"tests/test_double.py": "import totals\n\n\ndef test_double():\n"
                                                                          "    assert totals.double() == 14\n"})
    ref = reference_copy(task.task, task.pristine, tmp_path / "ref")
    parent = parent_tests(task.pristine, task.task.test_files)
    plan = plan_twins(ref, task.task.FAIL_TO_PASS, seed=0, parent=parent, teardown=True)
    assert [c.how.split(":")[0] for c in plan.canaries if c.kind == TEARDOWN_TWIN] == [
        "teardown twin", "teardown decoy"]  # pol58: the decoy's check (the twin's, written positively) blanked too
    held = [r[SPY_TEST].decode() for r in plan.runs]
    assert any("    assert not extra[1:]" in t for t in held) and any("    assert extra[1:]" in t for t in held)
    sp = plan_seals(ref, task.task, parent, apart=plan)
    assert sp is not None and sp.functions == ["tests/test_double.py::test_double"], sp
    got = sp.files[SPY_TEST].decode()
    assert "def spy(monkeypatch):" in got and "extra[1:]" not in got and "    yield\n    pass\n" in got, got


def test_without_checks_blanks_a_check_in_place() -> None:
    """The check's first line becomes ``pass`` at its indent, its other lines empty; a check sharing a line with
    another statement is left (``None``: nothing changed), as is a file with no such check."""
    long = SPY_TESTS.replace("assert not extra[1:], 'total() fetched more than once'",
                             "assert not extra[1:], (\n        'total() fetched more than once')")
    got = without_checks(long)
    assert got is not None and got.count("\n") == long.count("\n") and "    yield\n    pass\n\n" in got, got
    assert without_checks(SPY_TESTS.replace("    yield\n    assert", "    yield; assert")) is None
    assert without_checks("def test_x():\n    assert 1\n") is None
