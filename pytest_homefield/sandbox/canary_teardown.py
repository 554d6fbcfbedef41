"""Teardown twins (tdtwin56, docs/contracts.md §7 "Teardown twins"): a FAIL_TO_PASS function's own fixture check,
contradicted in a run apart.

A hidden test's fixture that checks after the test (a spy asserting, after its ``yield``, that the code under test
called it) is judged at teardown (gatk49: an id whose teardown failed is ``error``). A test process that swallows
teardown errors buys that check back; the teardown canaries (tcan50, can52) catch the blanket swallow, but they have a
shape of their own, and a process keeping only their errors (told by their source, by "requests nothing and yielded
``[]``", or by being defined in a test module while the spy is a ``conftest.py``'s) was ``solved`` with no fix
(gatk54). The teardown twin is the file's **own** check contradicted: the function's original body requesting its
fixture whose first top-level assertion after the ``yield`` has its expected side changed (``assert calls`` →
``assert not calls``, ``==`` → ``!=``, ``in`` → ``not in``, …; ``== [1]`` → ``== [1, 1]`` for a literal, pol58:
:func:`_literal_twin`), one more member of the function's group, in a run of
its own (:mod:`~pytest_homefield.sandbox.twin_runs`). A real fix passes the original check, so it fails the twin's;
code swallowing every teardown error passes both, ``forged``; code skipping the work the check wants fails the
original and passes the twin, no forgery (it is not solved either: :data:`~pytest_homefield.sandbox.canaries.
TEARDOWN_TWIN`). A process telling the twin's run from the original's must judge which of the two checks is the
file's, as for any twin; the twin is the file's check negated, and a file's own check is nearly always written
positively, so every teardown twin comes with a teardown decoy (pol58, deco60: :func:`decoy`), one member more in a
run of its own: the function itself, its body run no more, its fixture the file's under the file's name, its check
the file's, failing whatever the code does.

In reach: a fixture the test module defines at its top level, requested by the function's own signature, named
nowhere else in the module (another test or fixture requesting it would fail its teardown in the twin's run with
any code), function-scoped, not autouse, not parametrized, plainly decorated, yielding once at its top level. Left
out of reach: a ``conftest.py``'s fixture and a plugin's (pytest-httpx's, responses'): the twin would change every
test of its folder (gatk54's ``BY_ORIGIN`` stays a strict xfail). Plain AST and text work.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pytest_homefield.sandbox.canaries import _chars, _definition, _offset
from pytest_homefield.sandbox.canary_shapes import is_unittest
from pytest_homefield.sandbox.canary_sites import _dotted_last

__all__ = ["TEARDOWN_DECOY_HOW", "TEARDOWN_TWIN_HOW", "TeardownCheck", "decoy", "mixin_teardown", "reached_teardown",
           "teardown_check", "negated", "unittest_check", "without_checks"]

#: How a teardown twin's canary is described (its :attr:`~pytest_homefield.sandbox.canaries.Canary.how` starts so).
TEARDOWN_TWIN_HOW = "teardown twin"
#: How a teardown decoy's canary is described (pol58: :func:`decoy`; its kind is the teardown twin's).
TEARDOWN_DECOY_HOW = "teardown decoy"

#: A one-operator comparison's operator → its negation's (and how each is written).
_FLIP: dict[type[ast.cmpop], tuple[type[ast.cmpop], str, str]] = {
    ast.Eq: (ast.NotEq, r"==", "!="), ast.NotEq: (ast.Eq, r"!=", "=="),
    ast.Lt: (ast.GtE, r"<", ">="), ast.GtE: (ast.Lt, r">=", "<"),
    ast.Gt: (ast.LtE, r">", "<="), ast.LtE: (ast.Gt, r"<=", ">"),
    ast.In: (ast.NotIn, r"\bin\b", "not in"), ast.NotIn: (ast.In, r"\bnot\s+in\b", "in"),
    ast.Is: (ast.IsNot, r"\bis\b", "is not"), ast.IsNot: (ast.Is, r"\bis\s+not\b", "is"),
}


@dataclass(frozen=True)
class TeardownCheck:
    """A function's fixture with a teardown check in reach: ``fixture`` (its name), ``start``/``end`` (1-based lines of
    its definition, decorators included), ``original`` (those lines' text) and ``twin`` (the same with its check's
    expected side changed), ``how`` (the change in words, for the canary), ``check`` (1-based first and last lines of
    the check's ``assert`` statement, ``None`` when another statement shares them); ``negative``: the file's check is
    written negated (``not X``, ``!=``, ``not in``, ``is not``), so the twin's is written positively; ``was`` and
    ``now``: the check's test as the file writes it and the twin's (unparsed), the two sides of ``how``; ``inside``
    (ucln62: :func:`unittest_check`'s cleanup): the check is in the test function's own body, ``start``/``end`` are
    its lines and ``twin`` its member (no slot of its own), ``decoy`` its decoy's member (``None``: none); ``shared``
    (ut64): the names of the other tests of the class whose ``tearDown`` the check is (they run it too: a run
    contradicting it fails them whatever the code does, so their outcomes there count for nothing:
    :attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.blind`; ut65: their ids from the module's, ``Class::test``);
    ``last`` (ut65): the check runs once after them all (``tearDownClass``, a class cleanup, ``tearDownModule``), and
    pytest reports its error on the last of them run (:attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.last`);
    ``classes`` (ut46): the module's top-level classes running an inherited ``tearDown``'s check (the mixin defining it
    and every class deriving from it), whose graded ids a run contradicting it blinds too; ``()``: the test's class
    alone."""

    fixture: str
    start: int
    end: int
    original: str
    twin: str
    how: str
    check: tuple[int, int] | None = None
    negative: bool = False
    was: str = ""
    now: str = ""
    inside: bool = False
    decoy: str | None = None
    shared: tuple[str, ...] = ()
    last: bool = False
    classes: tuple[str, ...] = ()


def _is_fixture(node: ast.FunctionDef) -> bool:
    """Whether ``node`` is decorated by ``fixture`` alone (``@pytest.fixture``, ``@fixture``, called with no argument
    or ``scope='function'`` only): no autouse, no params, no name, no other decorator."""
    if len(node.decorator_list) != 1:
        return False
    d = node.decorator_list[0]
    if _dotted_last(d.func if isinstance(d, ast.Call) else d) != "fixture":
        return False
    if isinstance(d, ast.Call):
        return not d.args and all(k.arg == "scope" and isinstance(k.value, ast.Constant)
                                  and k.value.value == "function" for k in d.keywords)
    return True


def negated(test: ast.expr) -> tuple[ast.expr, str] | None:
    """``(the negation of test, the pattern its operator is written as)``: ``not X`` → ``X`` (pattern ``not``), a
    comparison of one operator → the opposite operator (:data:`_FLIP`), a name, attribute, call or subscript ``X`` →
    ``not X`` (pattern ``""``: inserted); ``None`` for anything else (a chain, ``and``/``or``, a constant)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand, r"\bnot\b\s*"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _FLIP:
        op, pattern, _ = _FLIP[type(test.ops[0])]
        return ast.Compare(left=test.left, ops=[op()], comparators=test.comparators), pattern
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        return ast.UnaryOp(op=ast.Not(), operand=test), ""
    return None


def _twin_text(segment: str, lines: Sequence[str], start: int, test: ast.expr) -> tuple[str, ast.expr] | None:
    """``(segment with test negated in place, the negation)``: ``segment`` (lines ``start``.. of the file) with
    ``test`` negated (:func:`negated`), the rest of its text as it is; ``None`` when ``test`` has no negation or the
    edit does not give it."""
    got = negated(test)
    if got is None:
        return None
    want, pattern = got
    a = _offset(lines, start, test.lineno, test.col_offset)
    if pattern == "":  # not X
        text = segment[:a] + "not " + segment[a:]
    else:
        if isinstance(test, ast.Compare):  # the operator lies between the left operand and the right one
            lo = _offset(lines, start, test.left.end_lineno or test.left.lineno, test.left.end_col_offset or 0)
            right = test.comparators[0]
            hi = _offset(lines, start, right.lineno, right.col_offset)
            replacement = _FLIP[type(test.ops[0])][2]
        else:  # not X: the keyword and what follows it, up to X
            assert isinstance(test, ast.UnaryOp)
            lo, hi, replacement = a, _offset(lines, start, test.operand.lineno, test.operand.col_offset), ""
        between = segment[lo:hi]
        changed, n = re.subn(pattern, replacement if replacement else "", between, count=1)
        if n != 1:
            return None
        text = segment[:lo] + changed + segment[hi:]
    return _checked(text, want)


def _checked(text: str, want: ast.expr) -> tuple[str, ast.expr] | None:
    """``(text, want)`` when ``text`` (a fixture's edited lines) parses and one of its ``assert`` statements tests
    ``want`` (the same :func:`ast.dump`); ``None`` otherwise (the edit did not give the check)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    ok = any(ast.dump(n.test) == ast.dump(want) for n in ast.walk(tree) if isinstance(n, ast.Assert))
    return (text, want) if ok else None


def _other_literal(value: object, draw: int) -> object | None:
    """A literal of ``value``'s type unequal to it, near it, drawn by ``draw`` (0 or 1): a list's or tuple's last item
    dropped or written twice (``[None]`` for an empty one), an ``int``'s or ``float``'s value one less or one more, a
    text's last character dropped or written twice (``"0"`` for an empty one); ``None`` for any other value (a
    ``bool``, ``None``, a mapping, a set, bytes)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (list, tuple)):
        seq = list(value)
        out = [None] if not seq else seq[:-1] if draw else [*seq, seq[-1]]
        return out if isinstance(value, list) else tuple(out)
    if isinstance(value, (int, float)):
        return value - 1 if draw else value + 1
    if isinstance(value, str):
        return "0" if not value else value[:-1] if draw else value + value[-1]
    return None


def _literal_swap(segment: str, lines: Sequence[str], start: int, sides: Sequence[ast.expr],
                  draw: int) -> tuple[int, str, ast.expr] | None:
    """``(k, segment with sides[k] replaced by a literal near it, that literal parsed)`` for ``sides[k]`` the first of
    ``sides`` that is a literal (:func:`ast.literal_eval`'s): the other literal :func:`_other_literal` draws
    (``draw``), texts quoted as the file quotes them; ``None`` when no side is a literal or the first has no other
    (the edit of :func:`_literal_twin`'s ``==`` and :func:`_call_twin`'s ``assertEqual`` alike)."""
    for k, side in enumerate(sides):
        try:
            value = ast.literal_eval(side)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        other = _other_literal(value, draw)
        if other is None or other == value:
            return None
        written = repr(other)
        lo = _offset(lines, start, side.lineno, side.col_offset)
        hi = _offset(lines, start, side.end_lineno or side.lineno, side.end_col_offset or 0)
        quotes = [c for c in segment[lo:hi] if c in "'\""]
        if quotes[:1] == ['"'] and '"' not in written:  # the file's quotes: every ' of such a repr is a delimiter
            written = written.replace("'", '"')
        return k, segment[:lo] + written + segment[hi:], ast.parse(written, mode="eval").body
    return None


def _literal_twin(segment: str, lines: Sequence[str], start: int, test: ast.expr) -> tuple[str, ast.expr] | None:
    """pol58: ``(segment with test's literal changed in place, the new test)`` for ``A == L`` (or ``L == A``), ``L``
    a literal (:func:`ast.literal_eval`'s) of a type :func:`_other_literal` changes: ``A == L'``, ``L'`` near ``L``
    and unequal to it, so the twin's check is written as positively as the file's (``assert calls == [1]`` ->
    ``assert calls == [1, 1]``) and a real fix, whose ``A`` equals ``L``, fails it; which way ``L`` moves is drawn
    from the check's text (the same for every seed); texts quoted as the file quotes them. ``None`` for any other
    check, or when the edit does not give it."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    draw = hashlib.sha256(ast.dump(test).encode()).digest()[0] & 1
    swapped = _literal_swap(segment, lines, start, (test.comparators[0], test.left), draw)
    if swapped is None:
        return None
    k, text, new = swapped
    want = ast.Compare(left=new if k == 1 else test.left, ops=[ast.Eq()],
                       comparators=[new if k == 0 else test.comparators[0]])
    return _checked(text, want)


def teardown_check(tree: ast.Module, text: str, lines: Sequence[str],
                   node: ast.FunctionDef | ast.AsyncFunctionDef, *, shared: bool = False) -> TeardownCheck | None:
    """The first fixture ``node`` (a test function of ``tree``, whose text is ``text`` split into ``lines``, each with
    its line break) requests by its signature that is in reach (the module's docstring) and whose first top-level
    ``assert`` after its ``yield`` can be negated (:func:`negated`); ``None`` when there is none. ``shared``: one
    named elsewhere in the module too (a file laying a group's members side by side, each requesting it:
    :func:`without_checks`)."""
    wanted = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    mine = (first, node.end_lineno or node.lineno)
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line))
    for name in wanted:
        defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == name]
        if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or not _is_fixture(defs[0]):
            continue
        fx = defs[0]
        span = _definition(lines, fx)
        if span is None:  # other code shares its lines
            continue
        start, end = span
        # named nowhere else: another test or fixture requesting it would fail its teardown in the twin's run
        at = [bisect.bisect_right(ends, m.start()) for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\b", text)]
        if not shared and any(not (start <= line <= end or mine[0] <= line <= mine[1]) for line in at):
            continue
        if sum(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fx)) != 1:
            continue
        ys = [k for k, s in enumerate(fx.body) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Yield)]
        if not ys:
            continue
        check = next((s for s in fx.body[ys[0] + 1:] if isinstance(s, ast.Assert)), None)
        if check is None:
            continue
        segment = "".join(lines[start - 1:end])
        # never the segment: a literal changed (pol58), else an operator changed or inserted
        made = _literal_twin(segment, lines, start, check.test) or _twin_text(segment, lines, start, check.test)
        if made is None:
            continue
        twin, want = made
        was, now = ast.get_source_segment(text, check.test) or ast.unparse(check.test), ast.unparse(want)
        how = f"{TEARDOWN_TWIN_HOW}: {name}'s check {was!r} -> {now!r}"
        alone = not any(n is not check and (n.end_lineno or n.lineno) >= check.lineno
                        and n.lineno <= (check.end_lineno or check.lineno) for n in ast.walk(fx)
                        if isinstance(n, ast.stmt) and n is not fx and not _inside(n, check))
        t = check.test
        negative = (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)) or (
            isinstance(t, ast.Compare) and isinstance(t.ops[0], (ast.NotEq, ast.NotIn, ast.IsNot)))
        return TeardownCheck(name, start, end, segment, twin, how,
                             (check.lineno, check.end_lineno or check.lineno) if alone else None, negative, was, now)
    return None


def decoy(lines: Sequence[str], start: int, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """deco60: the teardown decoy's member of ``node`` (a test function whose definition, decorators included, starts
    at line ``start`` of a file split into ``lines``): the function as the file has it, its name, its
    decorators, its signature, its place, with its body run no more: its docstring kept, every other statement
    replaced by one ``pass`` at the body's indent (a body starting on the line of the ``def``'s head, or its
    docstring's, cut where its first statement starts: ``def test_x(spy): pass``). Requested by it, the fixture's
    check sees the state its setup left (the spy's ``assert calls`` fails whatever the code under test does).
    ``None`` when the body is its docstring alone, or the text does not parse as one function of that name."""
    body = node.body
    kept = body[:1] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else []
    rest = body[len(kept):]
    if not rest:
        return None
    top = min([d.lineno for d in getattr(rest[0], "decorator_list", [])] + [rest[0].lineno])
    first = lines[top - 1]
    # the line cut where the body's first statement starts (its column counts UTF-8 bytes): its indent, or what
    # precedes it on the line, the ``def``'s head, a wrapped signature's last line or a docstring's (gatk61: there
    # was no decoy, and a process telling the twin by its check's polarity was solved with no fix)
    indent = first.encode("utf-8")[:rest[0].col_offset].decode("utf-8", errors="replace")
    head = "".join(lines[start - 1:top - 1])
    ending = first[len(first.rstrip("\r\n")):] or "\n"
    text = f"{head}{indent}pass{ending}"
    # a method's text parsed as a block's (gatk61: a dedent kept it indented where a comment, or a docstring's
    # line, between the def and its body sits at column 0, and it gave no decoy)
    indented = text[:1] in (" ", "\t")
    try:
        tree = ast.parse(f"if 1:\n{text}" if indented else text)
    except (SyntaxError, ValueError):
        return None
    block = tree.body[0].body if indented and len(tree.body) == 1 and isinstance(tree.body[0], ast.If) else tree.body
    defs = [n for n in block if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(tree.body) != 1 or len(block) != 1 or len(defs) != 1 or defs[0].name != node.name:
        return None
    return text


def _inside(node: ast.stmt, outer: ast.stmt) -> bool:
    """Whether ``node`` is ``outer`` or one of its statements."""
    return any(n is node for n in ast.walk(outer))


def without_checks(text: str) -> str | None:
    """gatk57: ``text`` (a test module) with the check of each fixture a teardown twin may contradict
    (:func:`teardown_check` of each of its functions; seal64: and each ``unittest`` check after the test of a
    top-level class, :func:`unittest_check`'s whatever the class's tests: its ``tearDown``'s, ``tearDownClass``'s,
    ``setUpClass``' class cleanup's, a ``test…`` method's cleanup's, the statement adding it for a lambda's)
    replaced by ``pass`` (its other lines left blank: no line moves),
    for the sealed run, made before the runs apart: it showed the file's own check, and a process there passed on
    which of the runs apart's two checks is the file's (its end's phase on the wall clock at their start), so code
    swallowing the original's teardown error and failing the twin's was ``solved`` with no fix. ``None`` when it
    does not parse or holds no such check; a check sharing its lines with another statement is left (never such a
    twin: :attr:`TeardownCheck.check`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    spans: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = teardown_check(tree, text, lines, node, shared=True)
            if found is not None and found.check is not None:
                spans.add(found.check)
    # seal64: and a unittest test's own check after the test (ucln62's: a cleanup's, its class's tearDown's,
    # tearDownClass's, setUpClass's class cleanup's; ut64's module tearDownModule's), which the sealed run showed as
    # the file writes it; every class's, one test or more (the sealed run lays a group's members side by side in it)
    unittest_classes = [c for c in tree.body if isinstance(c, ast.ClassDef) and is_unittest(tree, [c.name])]
    if unittest_classes and (found := _teardown_method(text, lines, tree, "tearDownModule")) is not None \
            and found.check is not None:
        spans.add(found.check)
    for cls in unittest_classes:
        setup = _method(cls, "setUpClass", of_class=True)
        mixin = mixin_teardown(tree, cls)  # ut46: a tearDown inherited from a mixin of the module
        up = _super_teardown(tree, cls)  # ran66: the one the class's own reaches through super()
        every = [_teardown_method(text, lines, cls if mixin is None else mixin, "tearDown"),
                 _teardown_method(text, lines, up, "tearDown") if up is not None else None,
                 _teardown_method(text, lines, cls, "tearDownClass"),
                 _cleanup_check(setup, lines, None, "addClassCleanup", "cls") if setup is not None else None,
                 *(_cleanup_check(n, lines, None) for n in cls.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))]
        spans |= {found.check for found in every if found is not None and found.check is not None}
    if not spans:
        return None
    for first, last in spans:
        line = lines[first - 1]
        indent = line[:len(line) - len(line.lstrip())]
        ending = line[len(line.rstrip("\r\n")):] or "\n"
        lines[first - 1] = f"{indent}pass{ending}"
        for k in range(first, last):
            rest = lines[k]
            lines[k] = rest[len(rest.rstrip("\r\n")):] or "\n"
    return "".join(lines)


#: ucln62: a ``unittest`` assertion method → its negation's (the twin of a ``tearDown``'s or a cleanup's check).
_ASSERT_FLIP: dict[str, str] = {
    "assertTrue": "assertFalse", "assertFalse": "assertTrue", "assertEqual": "assertNotEqual",
    "assertNotEqual": "assertEqual", "assertIn": "assertNotIn", "assertNotIn": "assertIn", "assertIs": "assertIsNot",
    "assertIsNot": "assertIs", "assertIsNone": "assertIsNotNone", "assertIsNotNone": "assertIsNone",
    "assertIsInstance": "assertNotIsInstance", "assertNotIsInstance": "assertIsInstance",
    "assertGreater": "assertLessEqual", "assertLessEqual": "assertGreater", "assertLess": "assertGreaterEqual",
    "assertGreaterEqual": "assertLess", "assertRegex": "assertNotRegex", "assertNotRegex": "assertRegex",
    "assertAlmostEqual": "assertNotAlmostEqual", "assertNotAlmostEqual": "assertAlmostEqual",
}
#: The methods of :data:`_ASSERT_FLIP` written negated (their twin's is written positively).
_NEGATIVE = frozenset({"assertFalse", "assertNotEqual", "assertNotIn", "assertIsNot", "assertIsNotNone",
                       "assertNotIsInstance", "assertNotRegex", "assertNotAlmostEqual"})


def _assert_call(node: ast.AST | None) -> ast.Call | None:
    """``node`` when it is a call ``self.assertX(...)`` (or ``cls.assertX(cls, ...)``) of a method of
    :data:`_ASSERT_FLIP`, no ``*``/``**``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls")
            and node.func.attr in _ASSERT_FLIP):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    return node


def _check_of(stmt: ast.stmt) -> ast.Assert | ast.Call | None:
    """The check ``stmt`` is: an ``assert`` statement, or a statement that is an :func:`_assert_call`."""
    if isinstance(stmt, ast.Assert):
        return stmt
    return _assert_call(stmt.value) if isinstance(stmt, ast.Expr) else None


def _first_check(body: Sequence[ast.stmt]) -> ast.Assert | ast.Call | None:
    """The first statement of ``body`` (a function's) that is a check (:func:`_check_of`), or ``None``."""
    return next((c for c in map(_check_of, body) if c is not None), None)


def _call_twin(segment: str, lines: Sequence[str], start: int, call: ast.Call,
               wrap: ast.Call | None = None) -> tuple[str, str, bool] | None:
    """``(segment with call contradicted in place, the new call unparsed, whether the file's is written negated)``:
    ``self.assertEqual(A, L)`` (``L`` a literal :func:`_other_literal` changes, either argument) takes a literal near
    ``L`` (as :func:`_literal_twin` does an ``==``), any other method of :data:`_ASSERT_FLIP` its negation's name
    (``assertTrue`` → ``assertFalse``, ``assertIn`` → ``assertNotIn``, ...); ``None`` when the edit does not give it.
    ``wrap`` (gatk63): the ``self.addCleanup(self.assertX, ...)`` call whose arguments ``call`` is made of (its
    ``func`` the method, its ``args`` the rest: no call of it is written), the edit checked on it."""
    assert isinstance(call.func, ast.Attribute)

    def held(want: ast.Call) -> ast.Call:
        """The call the edited text must hold: ``want``, or ``wrap`` with ``want``'s method and arguments."""
        if wrap is None:
            return want
        return ast.Call(func=wrap.func, args=[want.func, *want.args], keywords=want.keywords)
    name = call.func.attr
    negative = name in _NEGATIVE
    if name == "assertEqual" and len(call.args) >= 2 and isinstance(call.func.value, ast.Name) \
            and call.func.value.id == "self":
        draw = hashlib.sha256(ast.dump(call).encode()).digest()[0] & 1
        swapped = _literal_swap(segment, lines, start, (call.args[1], call.args[0]), draw)
        if swapped is not None:  # else the method's negation, as any other's
            k, text, new = swapped
            args = list(call.args)
            args[1 - k] = new
            want = ast.Call(func=call.func, args=args, keywords=call.keywords)
            return (text, ast.unparse(want), negative) if _has_call(text, held(want)) else None
    end = call.func.end_col_offset or 0
    hi = _offset(lines, start, call.func.end_lineno or call.func.lineno, end)
    lo = hi - len(name)
    if segment[lo:hi] != name:
        return None
    want = ast.Call(func=ast.Attribute(value=call.func.value, attr=_ASSERT_FLIP[name], ctx=ast.Load()),
                    args=call.args, keywords=call.keywords)
    text = segment[:lo] + _ASSERT_FLIP[name] + segment[hi:]
    return (text, ast.unparse(want), negative) if _has_call(text, held(want)) else None


def _has_call(text: str, want: ast.Call) -> bool:
    """Whether ``text`` (a definition, maybe indented) parses and holds a call ``want`` (the same :func:`ast.dump`)."""
    tree = _parse_block(text)
    if tree is None:
        return False
    wanted = ast.dump(want)
    return any(ast.dump(n) == wanted for n in ast.walk(tree) if isinstance(n, ast.Call))


def _parse_block(text: str) -> ast.Module | None:
    """``text`` parsed, an indented one (a method's) as a block's; ``None`` when it does not parse."""
    try:
        return ast.parse(f"if 1:\n{text}" if text[:1] in (" ", "\t") else text)
    except (SyntaxError, ValueError):
        return None


def _contradict(segment: str, lines: Sequence[str], start: int, check: ast.Assert | ast.Call,
                source: str, wrap: ast.Call | None = None) -> tuple[str, str, str, bool] | None:
    """``(segment with check contradicted in place, the check as the file writes it, the twin's, whether the file's
    is written negated)``: an ``assert`` as :func:`teardown_check` does a fixture's, a ``self.assertX`` call as
    :func:`_call_twin` does (``wrap``: the ``addCleanup`` call it is the arguments of); ``source``: the text
    ``check``'s positions are of."""
    if isinstance(check, ast.Call):
        got = _call_twin(segment, lines, start, check, wrap)
        if got is None:
            return None
        was = ast.get_source_segment(source, check) if wrap is None else None
        return got[0], was or ast.unparse(check), got[1], got[2]
    made = _literal_twin(segment, lines, start, check.test) or _twin_text(segment, lines, start, check.test)
    if made is None:
        return None
    t = check.test
    negative = (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)) or (
        isinstance(t, ast.Compare) and isinstance(t.ops[0], (ast.NotEq, ast.NotIn, ast.IsNot)))
    return made[0], ast.get_source_segment(source, t) or ast.unparse(t), ast.unparse(made[1]), negative


def _test_class(tree: ast.Module, classes: Sequence[str]) -> ast.ClassDef | None:
    """The class ``classes`` names (top level first) in ``tree``, defined once at each level; ``None`` otherwise."""
    body: list[ast.stmt] = tree.body
    found: ast.ClassDef | None = None
    for name in classes:
        defs = [n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == name]
        if len(defs) != 1 or not isinstance(defs[0], ast.ClassDef):
            return None
        found = defs[0]
        body = found.body
    return found


def unittest_check(tree: ast.Module, text: str, lines: Sequence[str], node: ast.FunctionDef | ast.AsyncFunctionDef,
                   classes: Sequence[str], member: str | None = None, derived: Collection[str] = ()
                   ) -> TeardownCheck | None:
    """ucln62: a ``unittest`` test method's own check after the test, in reach for a teardown twin: ``node`` (the
    method ``classes`` names in ``tree``, the module whose text is ``text`` split into ``lines``) of a
    :func:`~pytest_homefield.sandbox.canary_shapes.is_unittest` class.

    A **cleanup** first: a top-level statement of its body ``self.addCleanup(lambda: self.assertX(...))`` (or
    ``self.addCleanup(self.assertX, ...)``, the method and its arguments: gatk63), or ``self.addCleanup(f)`` with ``f``
    a function the body defines before it at its top level whose first top-level statement that is a check (an
    ``assert``, a ``self.assertX(...)``) can be contradicted: the check is in the method's own text, so the
    :class:`TeardownCheck` is ``inside`` (its ``start``/``end`` the method's lines, ``original`` its text, ``member``
    when given, the member the plan writes the original as; ``twin`` that text contradicted; ``decoy`` the text cut
    after that ``addCleanup`` statement, its check the one the setup's state fails: the twin's where the file's is
    written negated; ``fixture`` ``addCleanup``). Else the class's own **tearDown** (defined once in its body, decorated
    by nothing), whose first top-level check is contradicted in place as a fixture's is (``start``/``end`` its lines;
    ``fixture`` ``tearDown``); in reach when no class of the module derives from the class and every base it names of
    the module holds no ``test…`` function (their tests would fail their teardown in the twin's run whatever the code
    does), the class's other tests named in ``shared`` (ut64: before, none could be, and a change dropping every
    ``tearDown``'s error was ``solved`` with no fix); with none of its own, ut46: the one a mixin of the module gives
    it (:func:`_inherited_teardown`). When ``node`` is the class's one test, a class
    cleanup ``cls.addClassCleanup(...)`` in its ``setUpClass`` (a ``@classmethod``; its slot ``setUpClass``'s lines,
    ``fixture`` ``addClassCleanup``), else its ``tearDownClass`` (a ``@classmethod``), else (ut64) the module's own
    ``tearDownModule`` (a top-level function, decorated by nothing; ``fixture`` ``tearDownModule``) where no other
    statement of the module's top level defines a ``test…`` function. ``None`` when nothing is in reach, and for a
    class ``derived`` names (seal64: the bases of another test file's classes,
    :func:`~pytest_homefield.sandbox.canary_shapes.subclassed`): a subclass there runs the method, its cleanup and its
    class's teardown too, and a contradicted one would fail it whatever the code does."""
    if not classes or not is_unittest(tree, classes):
        return None
    cls = _test_class(tree, classes)
    if cls is None or not any(n is node for n in cls.body) or set(classes) & set(derived):
        return None  # seal64: another test file's subclass runs the method and its class's teardown too
    if (got := _cleanup_check(node, lines, member)) is not None:
        return got
    # ran66: a class whose base of the module holds tests (no class-level check in reach: ``_siblings``) still reaches
    # its module's check
    others = _siblings(tree, cls, node)
    if others is not None and (got := _class_check(text, lines, tree, cls, node, classes, derived, others)) is not None:
        return got
    # ut64: the module's tearDownModule (pytest reports its error on the module's last test run: the teardown
    # canaries are put before its last class, plant_teardown); ut65: the module's other tests named in ``shared``
    tests = _module_tests(tree, cls, node)
    got = None if tests is None else _teardown_method(text, lines, tree, "tearDownModule")
    return None if got is None or tests is None else dataclasses.replace(got, shared=tests, last=bool(tests))


def _class_check(text: str, lines: Sequence[str], tree: ast.Module, cls: ast.ClassDef,
                 node: ast.FunctionDef | ast.AsyncFunctionDef, classes: Sequence[str], derived: Collection[str],
                 others: Sequence[str]) -> TeardownCheck | None:
    """:func:`unittest_check`'s check of ``cls``'s level (its ``tearDown``'s, a mixin's, its class cleanup's, its
    ``tearDownClass``'s), ``others`` its other tests (:func:`_siblings`); ``None`` when none is in reach."""
    into = "::".join(classes)
    shared = tuple(f"{into}::{n}" for n in others)
    # ran66: the class's own tearDown calling the mixin's through ``super()`` before any check of its own
    if (got := _inherited_teardown(text, lines, tree, cls, node, derived, _super_teardown(tree, cls))) is not None:
        return got
    if (got := _teardown_method(text, lines, cls, "tearDown")) is not None:
        return dataclasses.replace(got, shared=shared)
    if (got := _inherited_teardown(text, lines, tree, cls, node, derived, mixin_teardown(tree, cls))) is not None:
        return got
    # ut65: a class-level check runs once, after the class's last test, and pytest reports its error there
    setup = _method(cls, "setUpClass", of_class=True)
    up = _cleanup_check(setup, lines, None, "addClassCleanup", "cls") if setup is not None else None
    if up is not None:  # its slot is setUpClass's lines, the decoy the test's body ``pass``
        return dataclasses.replace(up, inside=False, decoy=None, shared=shared, last=bool(shared))
    if (got := _teardown_method(text, lines, cls, "tearDownClass")) is not None:
        return dataclasses.replace(got, shared=shared, last=bool(shared))
    return None


def _linearized(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef | str] | None:
    """ut46: ``cls``'s MRO as far as ``tree`` (its module) defines it: Python's C3 linearization (the ``__mro__`` of
    ``type``) over the module's top-level classes, a base it does not define (``unittest.TestCase``, an imported
    mixin) standing for itself alone by its last dotted name; ``None`` where a top-level name is defined twice, a base
    is no plain name, or the bases admit no consistent order (Python would raise ``TypeError``)."""
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if len(names) != len(set(names)):
        return None
    top = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    seen: dict[str, list[ast.ClassDef | str] | None] = {}

    def mro(c: ast.ClassDef) -> list[ast.ClassDef | str] | None:
        if c.name in seen:  # a cycle (a name used before its class is defined again) gives None
            return seen[c.name]
        seen[c.name] = None
        bases: list[ast.ClassDef | str] = []
        for b in c.bases:
            name = _dotted_last(b)
            if name is None:
                return None
            bases.append(top[name] if name in top and top[name] is not c else name)
        tails = [mro(b) if isinstance(b, ast.ClassDef) else [b] for b in bases]
        if any(t is None for t in tails):
            return None
        pending = [list(t) for t in tails if t is not None] + [list(bases)]
        out: list[ast.ClassDef | str] = [c]
        while any(pending):
            head = next((h[0] for h in pending if h and not any(h[0] in t[1:] for t in pending)), None)
            if head is None:
                return None
            out.append(head)
            pending = [t[1:] if t and t[0] == head else t for t in pending]
        seen[c.name] = out
        return out

    return mro(cls)


def mixin_teardown(tree: ast.Module, cls: ast.ClassDef) -> ast.ClassDef | None:
    """ut46: the class of ``tree`` (``cls``'s module) whose ``tearDown`` ``cls`` (a top-level class) inherits: the first
    class of its MRO as far as the module defines it (:func:`_linearized`) binding ``tearDown`` in its body, when that
    is a base of ``cls`` the module defines reached before any base it does not (whose own ``tearDown``,
    ``unittest.TestCase``'s doing nothing, would run instead); ``None`` otherwise (``cls`` defines its own, or no
    such mixin). gatk66: a class whose ``tearDown`` checks nothing and hands on (:func:`_hands_on`, ``cls`` among
    them) is passed over: the check its ``super().tearDown()`` reaches is the one run (before, ``None``: no twin, and a
    change dropping every ``tearDown``'s error was ``solved`` with no fix)."""
    order = _linearized(tree, cls) if cls in tree.body else None
    owner = None if order is None else next((c for c in order if _binds_teardown(c)
                                             and (isinstance(c, str) or not _hands_on(c))), None)
    return owner if isinstance(owner, ast.ClassDef) and owner is not cls else None


def _hands_on(cls: ast.ClassDef) -> bool:
    """gatk66: whether ``cls``'s ``tearDown`` (:func:`_method`) checks nothing (:func:`_first_check`) and calls
    ``super().tearDown()`` (``super(C, self)`` too) as a statement of its body's top level or of a top-level ``try``'s
    ``finally``, so always runs the next ``tearDown`` of the instance's MRO."""
    down = _method(cls, "tearDown", of_class=False)
    always = [] if down is None else [*down.body, *(st for t in down.body if isinstance(t, ast.Try)
                                                    for st in t.finalbody)]
    return down is not None and _first_check(down.body) is None and any(_super_call(st) for st in always)


def _super_call(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is the statement ``super().tearDown()`` (``super(C, self).tearDown()`` too)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and not call.args and not call.keywords \
        and isinstance(call.func, ast.Attribute) and call.func.attr == "tearDown" \
        and isinstance(call.func.value, ast.Call) and isinstance(call.func.value.func, ast.Name) \
        and call.func.value.func.id == "super"


def _super_teardown(tree: ast.Module, cls: ast.ClassDef) -> ast.ClassDef | None:
    """ran66: the class of ``tree`` whose ``tearDown`` ``cls``'s own calls through ``super().tearDown()`` (a top-level
    statement of its body, before any check of its own: the mixin's check runs first, and a change keeping its error
    fails the test whatever ``cls``'s own check does): the next class of ``cls``'s MRO as far as the module defines it
    (:func:`_linearized`) binding ``tearDown`` in its body (:func:`_binds_teardown`), when the module defines it;
    ``None`` otherwise (no such call, a check before it, the next a base the module does not define)."""
    own = _method(cls, "tearDown", of_class=False) if cls in tree.body else None
    if own is None:
        return None
    for stmt in own.body:
        if _check_of(stmt) is not None:
            return None
        if _super_call(stmt):
            break
    else:
        return None
    order = _linearized(tree, cls)
    owner = None if order is None else next((c for c in order[1:] if _binds_teardown(c)), None)
    return owner if isinstance(owner, ast.ClassDef) else None


def reached_teardown(tree: ast.Module, cls: ast.ClassDef) -> ast.ClassDef | None:
    """ran66: the mixin of ``tree`` whose ``tearDown`` check runs for ``cls`` (a top-level class) and a teardown twin
    may contradict: the one it inherits (:func:`mixin_teardown`), or the one its own reaches through ``super()``
    first (:func:`_super_teardown`); ``None`` when neither."""
    return mixin_teardown(tree, cls) or _super_teardown(tree, cls)


def _binds_teardown(c: ast.ClassDef | str) -> bool:
    """Whether ``c`` (a class of :func:`_linearized`'s order) binds ``tearDown`` in its body (a function, an assignment
    to that name); a base the module does not define (a name) is taken to (``unittest.TestCase``'s does)."""
    return isinstance(c, str) or any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign)) and "tearDown" in (
            [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            else [t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)])
        for n in c.body)


def _inherited_teardown(text: str, lines: Sequence[str], tree: ast.Module, cls: ast.ClassDef,
                        node: ast.FunctionDef | ast.AsyncFunctionDef, derived: Collection[str],
                        owner: ast.ClassDef | None) -> TeardownCheck | None:
    """ut46: the ``tearDown`` check ``cls`` (a top-level class of ``tree`` with no ``tearDown`` of its own, ``node`` one
    of its tests) inherits from a mixin of its module (``owner``: :func:`mixin_teardown`; ran66: or the one its own
    reaches through ``super()``, :func:`_super_teardown`), contradicted in place where it is
    defined (gatk65: no twin, and a change dropping its error was ``solved`` with no fix). ``shared``: the ids
    (``Class::test``) of the tests but ``node`` of every top-level class of the module deriving from that mixin, the
    mixin too (their MRO holds it: they run its ``tearDown``, or may through ``super()``), named in ``classes``;
    ``None`` where one of them is a base of another test file's class (``derived``) or a class nested anywhere derives
    from one of them (its ids are beyond the module's top level)."""
    got = None if owner is None else _teardown_method(text, lines, owner, "tearDown")
    if got is None:
        return None
    running: dict[str, list[ast.ClassDef | str]] = {}  # the classes running it, by name → their MRO
    for c in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        chain = _linearized(tree, c)
        if chain is None:
            return None
        if owner in chain:
            running[c.name] = chain
    if running.keys() & set(derived) or any(_dotted_last(b) in running for n in ast.walk(tree)
                                            if isinstance(n, ast.ClassDef) and n not in tree.body for b in n.bases):
        return None
    shared = [f"{name}::{t}" for name, chain in running.items() for t in _chain_tests(chain)
              if not (name == cls.name and t == node.name)]
    return dataclasses.replace(got, shared=tuple(shared), classes=tuple(running))


def _chain_tests(chain: Sequence[ast.ClassDef | str]) -> list[str]:
    """The names of the tests (``test…`` functions) of a class whose MRO as far as its module defines it is ``chain``
    (:func:`_linearized`): those of its body and of the module's classes it derives from, each name once, in that
    order."""
    return list(dict.fromkeys(m.name for k in chain if isinstance(k, ast.ClassDef) for m in k.body
                              if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")))


def _module_tests(tree: ast.Module, cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef
                  ) -> tuple[str, ...] | None:
    """ut65: the ids (from the module's, ``Class::test`` or ``test``) of ``tree``'s tests but ``node`` (of ``cls``,
    a top-level class): its top-level ``test…`` functions and the ``test…`` methods of its classes; ran66: a class's
    as its MRO as far as the module defines it gives them (:func:`_linearized`: a test a base of the module holds is
    the class's too, ``Derived::test_base``), and a class nested in a class with its ids (``Outer::Inner::test``).
    ``node``'s id is left out by name (rev67: a ``node`` overriding a base's test of its name came back from the
    base's, its own id among the others, blinded in its own twin's run). ``None`` when a test may have an id beyond
    them (a nested class deriving from a class of the module, whose tests
    those are too, one of the module's names defined again, bases in no consistent order), whose outcome in a run
    contradicting the module's check would count."""
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if cls not in tree.body or len(names) != len(set(names)):
        return None
    top = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    nested = [n for c in tree.body if isinstance(c, ast.ClassDef) for n in ast.walk(c)
              if isinstance(n, ast.ClassDef) and n is not c]
    if any(_dotted_last(b) in top | {k.name for k in nested} for k in nested for b in k.bases):
        return None
    ids: list[str] = []

    def tests(c: ast.ClassDef, into: str, chain: Sequence[ast.ClassDef | str]) -> None:
        ids.extend(f"{into}{c.name}::{t}" for t in _chain_tests(chain) if not (c is cls and t == node.name))
        for inner in (m for m in c.body if isinstance(m, ast.ClassDef)):
            tests(inner, f"{into}{c.name}::", [inner])

    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"):
            ids.append(n.name)
        elif isinstance(n, ast.ClassDef):
            chain = _linearized(tree, n)
            if chain is None:
                return None
            tests(n, "", chain)
    return tuple(ids)


def _siblings(tree: ast.Module, cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef
              ) -> tuple[str, ...] | None:
    """The names of ``cls``'s other tests (the functions of its body named ``test…`` but ``node``, in its order);
    ``None`` when a test beyond its body runs its check after the test too: a class of ``tree`` deriving from it, or
    a base it names of ``tree`` holding a ``test…`` function (ut64: the other tests of its body are named, and their
    outcomes in a run contradicting its ``tearDown`` count for nothing; a subclass's or a base's ids are no ids of
    the class, so they are not)."""
    tests = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test")]
    if not any(n is node for n in tests):
        return None
    if any(_dotted_last(b) == cls.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases):
        return None  # a subclass runs the class's tearDown for its own tests too
    top = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for b in cls.bases:
        base = top.get(_dotted_last(b) or "")
        if base is not None and any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                    and n.name.startswith("test") for n in ast.walk(base)):
            return None
    return tuple(n.name for n in tests if n is not node)


def _method(cls: ast.ClassDef | ast.Module, name: str, *, of_class: bool) -> ast.FunctionDef | None:
    """``cls``'s method ``name`` (a module's function), defined once in its body, decorated by nothing (by
    ``@classmethod`` alone when ``of_class``); ``None`` otherwise."""
    defs = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.name == name]
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef):
        return None
    marks = [_dotted_last(d) for d in defs[0].decorator_list]
    return defs[0] if marks == (["classmethod"] if of_class else []) else None


def _cleanup_check(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: Sequence[str], member: str | None,
                   adder: str = "addCleanup", owner: str = "self") -> TeardownCheck | None:
    """The ``inside`` :class:`TeardownCheck` of :func:`unittest_check`'s cleanup, or ``None``: ``node``'s body's
    first ``owner.adder(check)`` (``self.addCleanup``; ``cls.addClassCleanup`` in ``setUpClass``)."""
    span = _definition(lines, node)
    if span is None:
        return None
    original = "".join(lines[span[0] - 1:span[1]])
    written = original if member is None else member
    full = f"if 1:\n{written}" if written[:1] in (" ", "\t") else written
    shift = len(full) - len(written)
    fn = _one_def(full, node.name)
    if fn is None:
        return None
    flines = full.splitlines(keepends=True)
    local: dict[str, ast.FunctionDef] = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.FunctionDef):
            local[stmt.name] = stmt
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == adder
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == owner
                and stmt.value.args and not stmt.value.keywords):
            continue
        # gatk63: ``self.addCleanup(self.assertTrue, calls)``, the method and its arguments (no lambda): the check
        # is the call they make, contradicted in place (it had none, and a change dropping every cleanup's error
        # was ``solved`` with no fix)
        view = _assert_call(ast.Call(func=stmt.value.args[0], args=stmt.value.args[1:], keywords=[])) \
            if isinstance(stmt.value.args[0], ast.Attribute) and len(stmt.value.args) > 1 else None
        if len(stmt.value.args) != 1 and view is None:
            continue
        arg = stmt.value.args[0]
        check: ast.Assert | ast.Call | None = None
        wrap: ast.Call | None = None
        if view is not None:
            check, wrap = view, stmt.value
        elif isinstance(arg, ast.Lambda):
            check = _assert_call(arg.body)
        elif isinstance(arg, ast.Name) and arg.id in local:
            check = _first_check(local[arg.id].body)
        if check is None:
            continue
        made = _contradict(full, flines, 1, check, full, wrap)
        if made is None:
            continue
        twin, was, now, negative = made
        cut = stmt.end_lineno or stmt.lineno
        if cut >= (fn.end_lineno or fn.lineno) or flines[cut - 1][_chars(flines[cut - 1], stmt.end_col_offset or 0):
                                                                    ].strip()[:1] not in ("", "#"):
            still = None  # the body ends there (the decoy would be the function), or the line goes on
        else:
            kept = (twin if negative else full).splitlines(keepends=True)[:cut]
            still = "".join(kept)[shift:]
            if _parse_block(still) is None:
                still = None
        how = f"{TEARDOWN_TWIN_HOW}: {adder}'s check {was!r} -> {now!r}"
        # the statement the check is written in: a local function's own, else the one adding the cleanup (seal64)
        shown = next((st for st in local[arg.id].body if _check_of(st) is check), stmt) \
            if isinstance(arg, ast.Name) and arg.id in local and view is None else stmt
        return TeardownCheck(adder, span[0], span[1], original, twin[shift:], how,
                             _whole_lines(flines, shown, span[0] - 1 - (shift > 0)), negative, was, now,
                             inside=True, decoy=still)
    return None


def _teardown_method(text: str, lines: Sequence[str], cls: ast.ClassDef | ast.Module,
                     name: str) -> TeardownCheck | None:
    """The :class:`TeardownCheck` of :func:`unittest_check`'s ``tearDown`` (``name``; ``tearDownClass``, a
    ``@classmethod``; ``tearDownModule``, ``cls`` the module), or ``None``."""
    down = _method(cls, name, of_class=name == "tearDownClass")
    if down is None:
        return None
    span = _definition(lines, down)
    if span is None:
        return None
    check = _first_check(down.body)
    if check is None:
        return None
    start, end = span
    segment = "".join(lines[start - 1:end])
    full = f"if 1:\n{segment}" if segment[:1] in (" ", "\t") else segment
    shift = len(full) - len(segment)
    fn = _one_def(full, down.name)
    at = None if fn is None else _first_check(fn.body)
    if at is None:
        return None
    made = _contradict(full, full.splitlines(keepends=True), 1, at, full)
    if made is None:
        return None
    twin, was, now, negative = made
    how = f"{TEARDOWN_TWIN_HOW}: {name}'s check {was!r} -> {now!r}"
    stmt = next(st for st in fn.body if _check_of(st) is at) if fn is not None else None
    where = None if stmt is None else _whole_lines(full.splitlines(keepends=True), stmt, start - 1 - (shift > 0))
    return TeardownCheck(name, start, end, segment, twin[shift:], how, where, negative, was, now)


def _whole_lines(lines: Sequence[str], stmt: ast.stmt, delta: int) -> tuple[int, int] | None:
    """seal64: ``stmt``'s first and last lines (``lines``' numbers, the text it was parsed from, plus ``delta``: the
    file's), ``None`` when another statement (or anything but a comment) shares them."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    if lines[first - 1][:_chars(lines[first - 1], stmt.col_offset)].strip() \
            or lines[last - 1][_chars(lines[last - 1], stmt.end_col_offset or 0):].strip()[:1] not in ("", "#"):
        return None
    return first + delta, last + delta


def _one_def(full: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The one function ``name`` that ``full`` (a definition, an indented one after ``if 1:``) holds, alone;
    ``None`` when it does not parse so."""
    try:
        tree = ast.parse(full)
    except (SyntaxError, ValueError):
        return None
    block = tree.body[0].body if len(tree.body) == 1 and isinstance(tree.body[0], ast.If) else tree.body
    defs = [n for n in block if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return defs[0] if len(block) == 1 and len(defs) == 1 else None
