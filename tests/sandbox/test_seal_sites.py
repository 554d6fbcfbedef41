"""seal34: what a sealed run seals and how (contracts §7 "Sealed sites"): the sealable sites of a task's hidden
tests (:func:`~pytest_homefield.sandbox.seal_sites.sealable_sites`), the sealed file
(:func:`~pytest_homefield.sandbox.seal_sites.sealed_files`), the seal call's conversion (``homefield_seal``) and the
host's comparison on the outcome channel (:class:`~pytest_homefield.sandbox.outcomes.EventTally` ``seals``)."""

from __future__ import annotations

import ast
import collections
import decimal
import enum
import fractions
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_homefield.run.sealed_grading import SealPlan
from pytest_homefield.sandbox.outcomes import EventTally, SealScope, seal_verdict, well_formed
from pytest_homefield.sandbox.seal_sites import SEAL_CALL, passing_sites, sealable_sites, sealed_files, withheld_data
from pytest_homefield.sandbox.testrun import run_tests

TEST = "tests/test_x.py"
OTHER = "tests/test_other.py"
#: A hidden test file: the sealable sites are in test_new (three forms) and T.test_m; the others are not.
HIDDEN = '''import unittest

from pkg import f


def test_new():
    x = f("a b")
    assert f("a  b") == "alpha-bravo-1"
    assert "charlie-delta-2" == f(x)
    assert f(3) == 3
    if x:
        assert f(4) == "inside-an-if"
    assert f(5) == "in-a-comment"  # the comment names in-a-comment
    assert f(6) == "in-the-other-file"
    y = 1; assert f(y) == "shares-a-line"
    assert f(7) == x
    assert f(8) == (1, "echo-foxtrot")


def test_kept():
    assert f(9) == "kept-from-the-parent"
    assert f(10) == "added-to-a-kept-test"


def test_not_failing():
    assert f(11) == "not-fail-to-pass"


class T(unittest.TestCase):
    def test_m(self):
        self.assertEqual(f(12), b"golf-hotel", "a message")
'''
PARENT = '''from pkg import f


def test_kept():
    assert f(9) == "kept-from-the-parent"
'''
F2P = [f"{TEST}::test_new", f"{TEST}::test_kept", f"{TEST}::T::test_m", OTHER + "::test_o"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(HIDDEN)
    (tmp_path / OTHER).write_text('def test_o():\n    assert 1 == 1  # in-the-other-file\n')
    return tmp_path


def test_sealable_sites(tree: Path) -> None:
    """Only top-level ``assert A == L`` / ``assertEqual`` with a literal read nowhere else, on added lines, of
    FAIL_TO_PASS functions: not ``3`` (read elsewhere), not inside ``if``, not a value in a comment or another
    hidden file, not a line shared, not a non-literal, not a line kept from the parent, not a non-F2P test."""
    sites = sealable_sites(tree, [TEST, OTHER], F2P, {TEST: PARENT.encode(), OTHER: None})
    got = {s.key: (s.actual, s.expected) for s in sites}
    assert got == {
        f"{TEST}::test_new@8": ('f("a  b")', '"alpha-bravo-1"'),
        f"{TEST}::test_new@9": ("f(x)", '"charlie-delta-2"'),
        f"{TEST}::test_new@17": ("f(8)", '(1, "echo-foxtrot")'),
        f"{TEST}::test_kept@22": ("f(10)", '"added-to-a-kept-test"'),
        f"{TEST}::T::test_m@31": ("f(12)", 'b"golf-hotel"'),
    }


def test_the_sealed_file_holds_no_expected_value(tree: Path, seal_module: ModuleType) -> None:
    """The sealed file parses, keeps every line where it was, holds none of the sealed literals, and running a
    sealed test gives the seal call with the code's value (here ``f`` returns its argument)."""
    sites = sealable_sites(tree, [TEST, OTHER], F2P, {TEST: PARENT.encode(), OTHER: None})
    files, ids = sealed_files(tree, sites, [TEST, OTHER])
    text = files[TEST].decode()
    ast.parse(text)
    for s in sites:
        assert s.expected not in text
        assert str(s.value()) not in text
    assert len(ids) == len(sites) and all(sid in text and sid not in HIDDEN for sid in ids)
    old, new = HIDDEN.splitlines(), text.splitlines()
    assert new[-1] == f"from homefield_seal import {SEAL_CALL}  # homefield: a sealed run (docs/contracts.md §7)"
    assert len(new) == len(old) + 1
    for n, line in enumerate(old):  # every unsealed line in place
        if not any(s.first <= n + 1 <= s.last for s in sites):
            assert new[n] == line
    scope: dict[str, object] = {"f": lambda v: v, "__name__": "sealed"}
    exec(compile(text.replace("from pkg import f\n", ""), TEST, "exec"), scope)
    scope["T"]("test_m").test_m()  # type: ignore[operator]
    assert [(ids[sid].key, value) for sid, value in seal_module.take()] == [(f"{TEST}::T::test_m@31", "12")]


class _Liar(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return "alpha-bravo-1"

    def __repr__(self) -> str:
        return "'alpha-bravo-1'"


class _AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True


class _BadIndex(int):
    def __index__(self) -> int:
        raise SystemExit(3)


def test_the_seal_call_converts_generously_and_never_raises(seal_module: ModuleType) -> None:
    """Builtins as they are; subclasses read with the base type's own methods (a ``str`` whose ``__eq__``,
    ``__str__`` and ``__repr__`` lie is its characters, loose for its ``__eq__``); a namedtuple a tuple, an
    ``OrderedDict`` a dict (loose: it defines ``__eq__``); a range
    a list and a ``Fraction`` a float, by their own protocol (marked ``~``: loose); an object equal to anything,
    nan, and values past the caps are opaque (``None``); a value whose own method raises ``SystemExit`` is
    converted by the base type or opaque, never raised."""
    text = seal_module.literal_text
    point = collections.namedtuple("point", "x y")
    assert text(_Liar("x")) == "~'x'"  # its characters; loose, as its own __eq__ may have held (satk34)
    assert text(point(1, "b")) == "(1, 'b')"
    assert text(collections.OrderedDict(a=[1, (2,)])) == "~{'a': [1, (2,)]}"  # OrderedDict defines __eq__
    assert text(range(3)) == "~[0, 1, 2]"  # by its own protocol: marked loose
    assert text(fractions.Fraction(1, 2)) == "~0.5"
    assert text({1}) == "{1}" and text(frozenset()) == "set()"
    assert text(float("inf")) == "1e999" and text(2j) == "2j" and text(bytearray(b"q")) == "b'q'"
    assert text(_BadIndex(4)) == "4"
    for opaque in (_AlwaysEqual(), [_AlwaysEqual()], float("nan"), "x" * 9000, list(range(5000))):
        assert text(opaque) is None
    seal_module.__hf_seal__("s", _AlwaysEqual())
    assert seal_module.take() == [["s", None]]


class _Spelled(str):
    """A real fix's string type: equal to the same text with ``-`` for ``_``."""

    def __eq__(self, other: object) -> bool:
        return str(self).replace("_", "-") == str(other).replace("_", "-")

    __hash__ = str.__hash__


class _Near(float):
    """A real fix's float type: equal within 1e-9."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (int, float)) and abs(float(self) - other) < 1e-9

    __hash__ = float.__hash__


class _Bag(list):  # type: ignore[type-arg]
    """A real fix's list type: equal to a list of the same items in any order."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and sorted(self) == sorted(other)


class _Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(("value", "literal"), [
    (_Spelled("hello_world"), "hello-world"), (_Near(12.566370614359174), 12.566370614359172),
    (_Bag([2, 1]), [1, 2]), ([_Spelled("a_b")], ["a-b"]), ({"k": _Near(0.30000000000000004)}, {"k": 0.3})])
def test_a_builtin_subclass_equal_by_its_own_eq_is_loose_never_forged(seal_module: ModuleType, value: object,
                                                                     literal: object) -> None:
    """satk34: a subclass of a builtin defining ``__eq__`` itself (a real fix's string equal to another spelling, a
    float equal within a tolerance, a list equal in any order, one inside a container) passes the original
    ``assert A == L`` by its own ``==``, while its base value differs from ``L``: its text is loose, so the host's
    verdict is ``loose`` (failing, never ``forged``). Before, it was ``unequal``: a real fix graded ``forged``."""
    assert value == literal
    text = seal_module.literal_text(value)
    assert text is not None and text.startswith("~"), text
    assert seal_verdict(text, literal) == "loose"


def test_exact_types_and_integral_numbers_convert_exactly(seal_module: ModuleType) -> None:
    """satk34: a subclass that keeps its base's ``__eq__`` (a namedtuple, a ``defaultdict``, an ``IntEnum``) is not
    loose; a ``Fraction`` or ``Decimal`` that is integral is its exact ``int`` however large (was ``~1e+20``: a real
    fix returning ``Fraction(10**20 + 1)`` failed); one no float equals (``Decimal("0.1")``) is opaque, not the float
    near it."""
    text = seal_module.literal_text
    assert text(collections.defaultdict(int, a=1)) == "{'a': 1}" and text(_Color.RED) == "1"
    assert text(collections.namedtuple("p", "x")(1)) == "(1,)"
    big = 10 ** 20 + 1
    for value in (fractions.Fraction(big), decimal.Decimal(big)):
        assert seal_verdict(text(value), big) == "equal"
    assert text(fractions.Fraction(1, 2)) == "~0.5" and text(decimal.Decimal("0.5")) == "~0.5"
    assert text(decimal.Decimal("0.1")) is None and text(decimal.Decimal("1e400")) is None


def _phase(nodeid: str, seals: list[list[object]]) -> str:
    return json.dumps({"event": "phase", "nodeid": nodeid, "when": "call", "outcome": "passed", "xfail": False,
                       "duration": 0.0, "message": None, "subtest": False, "timeout": False, "line": None,
                       "operands": None, "seals": seals, "pid": 7})


def test_the_host_compares_each_report_with_the_literal() -> None:
    """On the channel: an equal value, an unequal one, an opaque one (null, or no literal: code is never run), a
    site reported twice (two kept: exactly one counts), an unknown site id passed over; malformed seals do not
    count at all."""
    tally = EventTally(seals=SealScope({"s1": "alpha", "s2": (1, "b"), "s3": 5, "s4": b"x"}))
    lines = [json.dumps({"event": "start", "pid": 7}),
             _phase("t::a", [["s1", "'alpha'"], ["s2", "(1, 'c')"], ["s3", None], ["zz", "5"]]),
             _phase("t::b", [["s3", "__import__('os').getpid()"], ["s4", "b'x'"], ["s4", "b'x'"], ["s4", "b'x'"]]),
             _phase("t::c", [["s1", 1]]),  # type: ignore[list-item]
             json.dumps({"event": "finish", "exitstatus": 0, "pid": 7})]
    tally.feed(("\n".join(lines) + "\n").encode())
    parsed, _ = tally.result()
    assert parsed.seal_reports == {"t::a": {"s1": ["equal"], "s2": ["unequal"], "s3": ["opaque"]},
                                   "t::b": {"s3": ["opaque"], "s4": ["equal", "equal"]}}
    assert "t::c" not in parsed.outcomes and parsed.ignored == 1
    assert not well_formed({"event": "phase", "seals": [["s1"]]})
    assert seal_verdict("1e999", float("inf")) == "equal" and seal_verdict("[" * 5000, []) == "opaque"
    assert seal_verdict("1", True) == "equal"  # Python's ==, as the original assertion
    assert (seal_verdict("~[1]", [1]), seal_verdict("~[1]", [2])) == ("equal", "loose")  # loose: never forged


def test_lines_are_counted_as_python_counts_them(tmp_path: Path) -> None:
    """A U+2028 or a form feed inside a string literal ends no line for Python (``str.splitlines`` would split
    there): the site's lines are still the ones rewritten, and the sealed file parses with every other line in
    place."""
    text = ('from pkg import f\n\nSEP = "a\u2028b\x0cc"\n\n\ndef test_new():\n'
            '    assert f(SEP) == "india-juliett"\n    assert f(1) == SEP\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(text)
    sites = sealable_sites(tmp_path, [TEST], [f"{TEST}::test_new"], {TEST: None})
    assert [s.key for s in sites] == [f"{TEST}::test_new@7"]
    files, ids = sealed_files(tmp_path, sites, [TEST])
    sealed = files[TEST].decode()
    ast.parse(sealed)
    (sid,) = ids
    assert sealed.split("\n")[:8] == [*text.split("\n")[:6], f"    {SEAL_CALL}({sid!r}, (f(SEP)))",
                                      "    assert f(1) == SEP"]


@pytest.mark.slow
@pytest.mark.parametrize("addopts", ["", "-n 2"], ids=["plain", "xdist"])
def test_a_sealed_run_reports_each_seal_once_under_xdist_too(tmp_path: Path, addopts: str) -> None:
    """A real test process (:func:`run_tests` with ``seals``): each sealed site's value reaches the host once per
    test id, compared there, with xdist in ``addopts`` too (the worker's report carries the seals to the
    controller, which writes them)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg.py").write_text("def f(v):\n    return v.upper()\n")
    text = ('import pytest\n\nfrom pkg import f\n\n\n@pytest.mark.parametrize("v", ["kilo-lima"])\n'
            'def test_p(v):\n    assert f(v) == "KILO-LIMA"\n\n\n'
            'def test_q():\n    assert f("mike") == "MIKE-NOVEMBER"\n')
    (tmp_path / TEST).write_text(text)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
    fids = [f"{TEST}::test_p", f"{TEST}::test_q"]
    sites = sealable_sites(tmp_path, [TEST], fids, {TEST: None})
    files, ids = sealed_files(tmp_path, sites, [TEST])
    (tmp_path / TEST).write_bytes(files[TEST])
    run = run_tests(tmp_path, f"{sys.executable} -m pytest -p no:randomly -p no:cacheprovider", fids,
                    out_dir=tmp_path / "out", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}))
    by_key = {s.key: sid for sid, s in ids.items()}
    assert run.outcomes == {f"{TEST}::test_p[kilo-lima]": "passed", f"{TEST}::test_q": "passed"}, run.error
    assert run.seal_reports == {f"{TEST}::test_p[kilo-lima]": {by_key[f"{TEST}::test_p@8"]: ["equal"]},
                                f"{TEST}::test_q": {by_key[f"{TEST}::test_q@12"]: ["unequal"]}}


def test_a_value_in_a_hidden_data_file_of_any_encoding_is_not_sealed(tmp_path: Path) -> None:
    """A hidden data file that is no UTF-8 text (bytes around the value) shows the value: not sealed; the other
    site, whose value is in no file, is."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text('from pkg import f\n\n\ndef test_new():\n    assert f(1) == "oscar-papa"\n'
                                 '    assert f(2) == b"quebec\\xe9"\n    assert f(3) == "romeo-sierra"\n')
    (tmp_path / "tests/data.bin").write_bytes(b"\xff\xfe oscar-papa \x00 quebec\xe9 \xff")
    sites = sealable_sites(tmp_path, [TEST, "tests/data.bin"], [f"{TEST}::test_new"], {TEST: None})
    assert [s.expected for s in sites] == ['"romeo-sierra"']


def test_a_value_spelled_otherwise_elsewhere_is_not_sealed(tmp_path: Path) -> None:
    """satk34: a value whose spelling differs elsewhere is readable there as much: two adjacent strings
    (``'tango' '-uniform'``), an escape (``"victor\\x2dwhiskey"``), ``1000`` for ``1e3``, ``0x7B`` for ``123`` (in
    the parent's version of the file), a tuple of the same items in another hidden file. Each was sealed on seal34's
    base (a forger taking the test file's constant nearest to its own output was ``solved`` with no fix where the
    sealed run claimed the value was in no file: /tmp measurement in the satk34 report). The value in no other
    spelling (``"xray-yankee"``) and the site's own literal alone are sealed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(
        'from pkg import f\n\nDASH = "victor\\x2dwhiskey"\n\n\ndef test_new():\n'
        '    assert f(1) == "tango-uniform"\n    assert f(2) == "victor-whiskey"\n    assert f(3) == 1e3\n'
        '    assert f(4) == 123\n    assert f(5) == (1.5, "zulu")\n    assert f(6) == "xray-yankee"\n\n\n'
        "def test_old():\n    assert f(7) != 'tango' '-uniform'\n    assert f(8) != 1000\n")
    (tmp_path / OTHER).write_text('ROW = (1.50, "zu" "lu")\n')
    parent = {TEST: b'from pkg import f\n\n\ndef test_old():\n    assert f(9) == 0x7B\n', OTHER: None}
    sites = sealable_sites(tmp_path, [TEST, OTHER], [f"{TEST}::test_new"], parent)
    assert [s.expected for s in sites] == ['"xray-yankee"']


def test_a_value_inside_another_literals_value_is_not_sealed(tmp_path: Path) -> None:
    """gatk35: a string or bytes value held inside another literal's value is readable there, whatever the
    spelling: ``"first\\nsecond"`` at the start of ``"first\\nsecond\\nthird"`` (the escape hides both its text and
    its content from the text search), ``"mike\\tnovember"`` in the parent's docstring, ``b"oscar\\x00papa"`` in a
    ``str`` of another file, ``"quebec\\u00e9"`` in adjacent strings' value. Each was sealed on this round's
    base, and a forger returning the substring of the test file's constants nearest its own output was
    ``solved`` with no fix under bubblewrap with canaries on (seeds 0 and 1: tests/run/test_sealed_run.py
    ``LINES_TESTS``). A value held in no other (``"romeo\\nsierra"``) is sealed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(
        'from pkg import f\n\n\ndef test_new():\n'
        '    assert f(1) == "first\\nsecond"\n    assert f(2) == "mike\\tnovember"\n'
        '    assert f(3) == b"oscar\\x00papa"\n    assert f(4) == "quebec\\u00e9"\n'
        '    assert f(5) == "romeo\\nsierra"\n\n\n'
        'def test_old():\n    assert f(6) != "first\\nsecond\\nthird"\n    assert f(7) != "que" "bec\\xe9 x"\n')
    (tmp_path / OTHER).write_text('ROW = "<oscar\\0papa>"\n')
    parent = {TEST: b'"""Old: mike\\tnovember, and more."""\n', OTHER: None}
    sites = sealable_sites(tmp_path, [TEST, OTHER], [f"{TEST}::test_new"], parent)
    assert [s.expected for s in sites] == ['"romeo\\nsierra"']


def test_a_value_the_compiler_folds_elsewhere_is_not_sealed(tmp_path: Path) -> None:
    """gatk35: a value the compiler folds another expression of constants into is held by the file's code as a
    constant (``co_consts``), readable with no evaluation: ``3 * 2 ** 10`` (``3072``, and ``1024`` in it),
    ``"sierra\\n" + "tango"`` (in the parent's version), ``("uni" * 2)`` in another file. Each was sealed on this
    round's base, and a forger returning the constant of the compiled test files nearest its own output was
    ``solved`` with no fix under bubblewrap with canaries on (seeds 0 and 1: tests/run/test_sealed_run.py
    ``KIB_TESTS``). ``4096`` is not sealed for its text in ``x * 4096``; ``-17``, whose own literal is a sign and a
    number (a node the compiler folds too), is sealed: its own site is not another place."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(
        'from pkg import f\n\nBLOCK = 3 * 2 ** 10\n\n\ndef test_new():\n'
        '    assert f(1) == 3072\n    assert f(2) == 1024\n    assert f(3) == "sierra\\ntango"\n'
        '    assert f(4) == "uniuni"\n    assert f(5) == 4096\n    assert f(6) == -17\n\n\n'
        'def test_old(x):\n    assert f(7) == x * 4096\n')
    (tmp_path / OTHER).write_text('ROW = ("uni" * 2, 1)\n')
    parent = {TEST: b'X = "sierra\\n" + "tango"\n', OTHER: None}
    sites = sealable_sites(tmp_path, [TEST, OTHER], [f"{TEST}::test_new"], parent)
    assert [s.expected for s in sites] == ["-17"]


def test_a_container_of_the_same_items_elsewhere_is_not_sealed(tmp_path: Path) -> None:
    """gatk35: a container whose items another container holds in another container type is readable there (a
    forger reads the list and returns the tuple): ``(10, "zulu-x")`` for ``[10, "zulu-x"]``, ``{"kilo-a", "lima-b"}``
    for a tuple of them (one twice), ``["mike-c", 7]`` for a tuple in the parent's version, ``{"november": [1, 2]}``
    for ``{"november": (1, 2)}`` in another file. Each was sealed on this round's base (the text search reads a
    container's source and ``repr``, the values are compared with ``==``, and a tuple is no list). A list of the
    same items in another order (``["oscar", 8]`` for ``[8, "oscar"]``) is another value: sealed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(
        'from pkg import f\n\n\ndef test_new():\n'
        '    assert f(1) == (10, "zulu-x")\n    assert f(2) == {"kilo-a", "lima-b"}\n'
        '    assert f(3) == ["mike-c", 7]\n    assert f(4) == {"november": [1, 2]}\n'
        '    assert f(5) == ["oscar", 8]\n\n\n'
        'def test_old():\n    assert f(6) != [10, "zulu-x"]\n    assert f(7) != ("lima-b", "kilo-a", "lima-b")\n'
        '    assert f(8) != [8, "oscar"]\n')
    (tmp_path / OTHER).write_text('ROW = {"november": (1, 2)}\n')
    parent = {TEST: b'X = ("mike-c", 7)\n', OTHER: None}
    sites = sealable_sites(tmp_path, [TEST, OTHER], [f"{TEST}::test_new"], parent)
    assert [s.expected for s in sites] == ['["oscar", 8]']


#: hole41: values held only by other ``==`` assertions' literals (covers), and three held elsewhere besides.
COVERED = ('from pkg import f\n\n\ndef test_new():\n'
           '    assert f(1) == "first\\nsecond"\n    assert f(2) == "tango-uniform"\n'
           '    assert f(3) == (10, "zulu-x")\n    assert f(4) == "kept\\nin-parent"\n'
           '    assert f(5) == "an\\nargument"\n    assert f(6) == "held\\nby-a-ne"\n\n\n'
           'def test_old():\n    assert f(6) == "first\\nsecond\\nthird"\n    assert f(7) == \'tango\' \'-uniform\'\n'
           '    assert f("an\\nargument x") == "an\\nargument x y"\n    assert f(8) == "kept\\nin-parent\\n!"\n'
           '    assert f(9) != "held\\nby-a-ne!"\n')


def test_a_value_held_by_other_assertions_literals_is_sealed_with_them(tmp_path: Path) -> None:
    """hole41 (gatk35's substring reader, tests/run/test_sealed_run.py): a value held only by the literals of other
    ``==`` assertions of the hidden test files (a PASS_TO_PASS test's ``"first\\nsecond\\nthird"`` holding
    ``"first\\nsecond"``, ``'tango' '-uniform'`` equal to ``"tango-uniform"``, ``[10, "zulu-x"]`` the items of
    ``(10, "zulu-x")`` in a class of another hidden file) is sealed with them: each such statement is a cover, sealed
    beside the site and never judged (:func:`passing_sites` leaves it out however it reported), so that the sealed
    files hold the value in no literal. A value shown elsewhere besides (a holder in the parent's version, a call's
    argument, a ``!=``) is not sealed. On SEAL_RULES 12 none of the three was."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(COVERED)
    (tmp_path / OTHER).write_text('from pkg import f\n\n\nclass TestK:\n    def test_k(self):\n'
                                  '        assert f(10) == [10, "zulu-x"]\n')
    parent = {TEST: b'def test_old():\n    assert f(8) == "kept\\nin-parent\\n!"\n', OTHER: None}
    fid = f"{TEST}::test_new"
    sites = sealable_sites(tmp_path, [TEST, OTHER], [fid], parent)
    judged = [s for s in sites if not s.cover]
    assert [s.expected for s in judged] == ['"first\\nsecond"', '"tango-uniform"', '(10, "zulu-x")']
    keys = [s.key for s in judged]
    covers = {(s.function, s.expected): s.covering for s in sites if s.cover}
    assert covers == {(f"{TEST}::test_old", '"first\\nsecond\\nthird"'): (keys[0],),
                      (f"{TEST}::test_old", "'tango' '-uniform'"): (keys[1],),
                      (f"{OTHER}::TestK::test_k", '[10, "zulu-x"]'): (keys[2],)}
    files, ids = sealed_files(tmp_path, sites, [TEST, OTHER])
    assert set(files) == {TEST, OTHER}
    for data in files.values():
        shown = [n.value for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Constant)]
        for value in ("first\nsecond", "tango-uniform", "zulu-x"):
            assert not any(isinstance(c, str) and value in c for c in shown), (value, data)
        assert b"'tango'" not in data and b"first\\nsecond" not in data
    every = {i: {sid: ["equal"] for sid in ids} for i in (fid, f"{TEST}::test_old", f"{OTHER}::TestK::test_k")}
    outcomes = dict.fromkeys(every, "passed")
    assert passing_sites(ids, [fid, f"{TEST}::test_old"], outcomes, every) == sorted(keys)


def test_a_cover_beside_a_sealed_column_is_not_judged_with_it(tmp_path: Path) -> None:
    """hole41: a cover may sit in a function whose ``parametrize`` column is sealed (its plain statements are no sites
    then): the plan judges that function by its rows alone (``SealPlan.columns``), never by the cover, which every
    item would report once (a row reported several times fails its function)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(
        'import pytest\n\nfrom pkg import f, g\n\n\n'
        '@pytest.mark.parametrize("n, expected", [(1, "uno-a"), (2, "dos-b")])\n'
        'def test_rows(n, expected):\n    assert f(n) == expected\n    assert g() == "first\\nsecond\\nthird"\n\n\n'
        'def test_new():\n    assert f(0) == "first\\nsecond"\n')
    fids = [f"{TEST}::test_rows[1-uno-a]", f"{TEST}::test_rows[2-dos-b]", f"{TEST}::test_new"]
    sites = sealable_sites(tmp_path, [TEST], fids, {TEST: None})
    assert sorted((s.function.rsplit("::", 1)[1], s.cover, s.decorated) for s in sites) == [
        ("test_new", False, False), ("test_rows", False, True), ("test_rows", False, True), ("test_rows", True, False)]
    files, ids = sealed_files(tmp_path, sites, [TEST])
    plan = SealPlan(files, ids)
    rows = sorted(i for i, s in ids.items() if s.decorated)
    assert len(rows) == 2 and {fn: sorted(v) for fn, v in plan.columns.items()} == {f"{TEST}::test_rows": rows}
    assert plan.functions == [f"{TEST}::test_new", f"{TEST}::test_rows"]
    assert "first\\nsecond" not in files[TEST].decode()


def test_a_sealed_run_holds_no_hidden_data_file_of_the_commit(tmp_path: Path) -> None:
    """gatk35: what a sealed run's copy holds in place of the hidden test files that are no Python source: an
    empty file for a changed data file (not its parent's version) and for a new one (a JSON file too, though it
    parses as Python: its decoder is not Python's), and for a ``.py`` that does not parse; a Python test file, an
    empty ``__init__.py``, a data file the commit left as it was and one it deleted are not written."""
    (tmp_path / "tests").mkdir()
    files = {TEST: "def test_x():\n    pass\n", "tests/__init__.py": "", "tests/cases.yaml": "a: |\n  b\n",
             "tests/data.json": '{"a": "b"}', "tests/old.txt": "same\n", "tests/bad.py": "def (:\n",
             "tests/changed.csv": "a,b\n"}
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    parent = {TEST: None, "tests/__init__.py": None, "tests/cases.yaml": None, "tests/data.json": None,
              "tests/old.txt": b"same\n", "tests/bad.py": None, "tests/changed.csv": b"a\n"}
    parent["tests/gone.json"] = b"{}"  # the commit deleted it: not brought back
    assert withheld_data(tmp_path, [*files, "tests/gone.json"], parent) == {
        "tests/bad.py": b"", "tests/cases.yaml": b"", "tests/changed.csv": b"", "tests/data.json": b""}


def test_an_assert_equal_site_is_opaque_unless_it_is_unittests_own_eq(seal_module: ModuleType) -> None:
    """satk34: a ``self.assertEqual`` site's call is given ``self``; its value is kept only when that
    ``assertEqual`` is ``==`` (unittest's own methods, no type-specific comparison of the value's type but
    unittest's): a class's own ``assertEqual``, one set on the instance, a float comparison registered by
    ``addTypeEqualityFunc``, a ``fail`` that does not raise, or a ``self`` that is no ``TestCase`` give ``None``
    (opaque: the reference check then seals nothing there)."""
    import unittest

    class Stock(unittest.TestCase):
        def runTest(self) -> None:  # noqa: N802 - unittest's name
            pass

    class Near(Stock):
        def assertEqual(self, first: object, second: object, msg: object = None) -> None:  # noqa: N802
            self.assertAlmostEqual(first, second, places=9)  # type: ignore[call-overload]

    class Mute(Stock):
        def fail(self, msg: object = None) -> None:  # type: ignore[override]
            pass

    def kept(case: object, value: object) -> object:
        seal_module.__hf_seal__("s", value, case)
        return seal_module.take()[0][1]

    assert (kept(Stock(), 1.5), kept(Stock(), "a"), kept(Stock(), [1]), seal_module.literal_text(1.5)) == (
        "1.5", "'a'", "[1]", "1.5")
    floats = Stock()
    floats.addTypeEqualityFunc(float, lambda a, b, msg=None: None)
    assert (kept(floats, 1.5), kept(floats, "a")) == (None, "'a'")
    instance = Stock()
    instance.assertEqual = lambda *a, **k: None  # type: ignore[method-assign]
    assert [kept(c, 1.5) for c in (Near(), Mute(), instance, object())] == [None] * 4


def test_a_user_string_or_one_item_array_is_its_item_loose(seal_module: ModuleType) -> None:
    """satk34: a ``UserString`` is its characters, a numpy ``bool_``, 0-d or one-item array its one item (each
    equal to a builtin by it: ``np.bool_(True) == True``), by their own protocol (loose): a real fix returning one
    passes the sealed run where its value is equal. On seal34's base each was opaque (``tests_failed``). An array
    of two items (whose ``==`` has no truth value) stays opaque."""
    np = pytest.importorskip("numpy")
    text = seal_module.literal_text
    cases = [(collections.UserString("ab"), "ab"), (np.bool_(True), True), (np.array(5), 5), (np.array([3]), 3),
             (np.float64(1.5), 1.5)]
    for value, literal in cases:
        assert bool(value == literal)
        assert seal_verdict(text(value), literal) == "equal", (value, text(value))
    assert text(np.array([1, 2])) is None


def test_reports_of_ids_the_run_does_not_judge_are_never_parsed() -> None:
    """satk34: with ``seal_tests`` (a sealed run's: each FAIL_TO_PASS id of a sealed function → its function's site
    ids) a report of another id, or of a site of another function, is passed over before its text is parsed. A test
    process sending 1000 lines of made-up ids, each with texts of 8000 characters, had the host parse 2 of them per
    id: the slug task's grading took 98.9 s instead of 5.7 s (/tmp/satk34/flood.py, the satk34 report)."""
    tally = EventTally(seals=SealScope({"s1": "alpha", "s2": "beta"}, {"t::a": ["s1"]}))
    lines = [json.dumps({"event": "start", "pid": 7}),
             _phase("t::a", [["s1", "'alpha'"], ["s2", "'beta'"]]),
             _phase("t::zz", [["s1", "'alpha'"], ["s2", "'x'"]]),
             json.dumps({"event": "finish", "exitstatus": 0, "pid": 7})]
    tally.feed(("\n".join(lines) + "\n").encode())
    parsed, _ = tally.result()
    assert parsed.seal_reports == {"t::a": {"s1": ["equal"]}}


@pytest.mark.parametrize("literal", [b"\xac\x02", b"\xac", b"", "\xac\x02", [172, 2], (172, 2), 172, None])
def test_a_memoryview_converts_to_the_bytes_it_is_equal_to(seal_module: ModuleType, literal: object) -> None:
    """gatk36: a one-dimensional ``memoryview`` of ``0..255`` items is equal to the ``bytes`` of those items and to
    no other literal; its text is those ``bytes``, exactly (was the loose list ``~[172, 2]``: unequal to
    ``b"\\xac\\x02"``, a real fix returning a view failed the sealed run). The host's verdict is the view's own ``==``
    whatever the literal; a view of another shape or of other items is opaque, and an ``in`` site's text is the list
    of its items, which ``in`` walks."""
    import array

    view = memoryview(bytearray(b"\xac\x02"))
    assert seal_module.literal_text(view) == "b'\\xac\\x02'"
    assert seal_verdict(seal_module.literal_text(view), literal) == ("equal" if view == literal else "unequal")
    assert seal_module.literal_text([view, 1]) == "[b'\\xac\\x02', 1]"
    for other in (memoryview(array.array("i", [-1])), memoryview(b"abcd").cast("B", (2, 2)),
                  memoryview(b"ab").cast("c")):
        assert seal_module.literal_text(other) is None
    seal_module.take()
    seal_module.__hf_seal_in__("s", view)
    assert seal_module.take() == [["s", "[172, 2]"]]
