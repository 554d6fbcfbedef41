"""Twins for tests nothing can contradict, shaped like their originals (docs/contracts.md §7, issue 30,
attacker8's F1): a sentinel ``def test_x(self): raise AssertionError("…")`` in place of the whole
definition was told apart by its shape, and a forger passing every test but those was solved on every
task whose groups were all sentinels.

* :func:`no_assertion_site`: a test that only calls code expecting no exception ("no assertion") gets
  one twin: its last eligible call statement wrapped in ``with pytest.raises(E):`` (a method of a
  ``unittest`` class: ``with self.assertRaises(E):``), ``E`` drawn from
  :data:`~pytest_homefield.sandbox.canary_sites.OTHER_EXCEPTIONS`. The original passes with the real
  fix, so that statement raises nothing there and the twin fails ("DID NOT RAISE") whatever ``E`` is.
  Originals holding a ``raises`` are common and their twins keep it (another exception), so a
  ``raises`` says neither "original" nor "twin".
* :func:`sentinel_member`: what is left a sentinel (the reference fix failed with the twins, or no call
  statement) keeps the original's decorators, signature (fixtures, ``parametrize``, the test's ids)
  and body, and ends in one failing assertion of two unequal values of the file's own kind
  (``assert 'ab' == 'ac'``, ``self.assertEqual(3, 4)``). It still fails by constant evaluation: a
  process that evaluates the test's last statement tells it (measured in
  ``benchmarks/sentinel_kinds.py``); it is no longer a lone ``raise``.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Sequence
from typing import Any

from pytest_homefield.sandbox.canaries import _find
from pytest_homefield.sandbox.canary_sites import OTHER_EXCEPTIONS, Site, _dotted_last, _statements
from pytest_homefield.sandbox.canary_values import alternatives

__all__ = ["NO_ASSERTION", "top_names", "raises_call", "no_assertion_site", "sentinel_member", "shared_definition",
           "definition_runners", "subclassed", "star_imported"]

#: How a "no assertion" twin's :attr:`~pytest_homefield.sandbox.canaries.Canary.how` begins.
NO_ASSERTION = "no assertion: its last call expected to raise"
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def top_names(tree: ast.Module) -> set[str]:
    """The names ``tree`` binds at its top level (imports, classes, functions, plain assignments): what
    an expression of a test of it can name without an import."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            out |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return out


def is_unittest(tree: ast.Module, classes: Sequence[str]) -> bool:
    """Whether the class chain ``classes`` (top level first) ends in a class deriving, through classes
    defined at the module's top level, from one whose name ends in ``TestCase``."""
    if not classes:
        return False
    top = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    body: list[ast.stmt] = tree.body
    found: ast.ClassDef | None = None
    for cls in classes:
        found = next((n for n in reversed(body) if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if found is None:
            return False
        body = found.body
    queue: list[ast.ClassDef] = [found] if found is not None else []
    seen: set[str] = set()
    while queue:
        c = queue.pop(0)
        for b in c.bases:
            name = _name(b)
            if name is None or name in seen:
                continue
            if name.endswith("TestCase"):
                return True
            seen.add(name)
            if name in top:
                queue.append(top[name])
    return False


def raises_call(tree: ast.Module, classes: Sequence[str], func: ast.FunctionDef | ast.AsyncFunctionDef
                ) -> str | None:
    """What a twin of ``func`` (in the class chain ``classes`` of ``tree``) expects an exception with:
    ``self.assertRaises`` for a method of a ``unittest`` class (:func:`is_unittest`, first argument
    ``self``); else ``pytest.raises`` under the name the module binds at its top level (``import
    pytest [as p]`` → ``p.raises``, ``from pytest import raises [as r]`` → ``r``); ``None`` when neither."""
    args = func.args.posonlyargs + func.args.args
    if is_unittest(tree, classes):
        return "self.assertRaises" if args and args[0].arg == "self" else None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "pytest":
                    return f"{a.asname or 'pytest'}.raises"
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "pytest" and not stmt.level:
            for a in stmt.names:
                if a.name == "raises":
                    return a.asname or "raises"
    return None


def no_assertion_site(func: ast.FunctionDef | ast.AsyncFunctionDef, rng: random.Random, raises: str | None,
                      exceptions: Sequence[str] = OTHER_EXCEPTIONS,
                      allowed: Callable[[ast.AST], bool] | None = None) -> Site | None:
    """The twin of a test with no contradiction site: its last eligible statement (the top level and
    the bodies of ``with`` statements expecting no exception) that is an expression or an assignment
    holding a call (no ``yield``), wrapped in ``with {raises}(E):`` for ``E`` drawn from
    :data:`OTHER_EXCEPTIONS`; one twin, not strong, excusable (honest code raising ``E`` fails the
    original). ``exceptions``: the names ``E`` is drawn from (grading and mining: those the parent's code raises,
    :meth:`~pytest_homefield.sandbox.canary_parent.ParentText.raised`, or those it does not raise, half and half
    per seed: :func:`~pytest_homefield.sandbox.twin_runs._no_assertion_pool`, xatk32); ``allowed``: the statements it
    may wrap (:func:`~pytest_homefield.sandbox.canary_added.allow`). ``None`` without ``raises``,
    ``exceptions`` or such a statement."""
    if raises is None or not exceptions:
        return None
    last: ast.stmt | None = None
    for stmt in _statements(func.body):
        nodes = list(ast.walk(stmt))
        if isinstance(stmt, _SIMPLE) and any(isinstance(n, ast.Call) for n in nodes) \
                and (allowed is None or allowed(stmt)) \
                and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
            last = stmt
    if last is None:
        return None
    other = rng.choice(exceptions)
    text = ast.unparse(last)
    twin = f"with {raises}({other}):\n    " + text.replace("\n", "\n    ")
    return Site(last, text, [(twin, f"{NO_ASSERTION} {other}")], False, statement=True, excusable=[True])


def _literal(v: Any) -> bool:
    """Whether ``repr(v)`` reads back as ``v`` (not ``inf``, ``nan``, an object)."""
    try:
        return bool(ast.literal_eval(repr(v)) == v)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _unequal(pool: Sequence[Any], rng: random.Random, token: str) -> tuple[Any, Any]:
    """Two unequal values: one of ``pool`` (the file's expected values) and a made-up one of its type,
    else two texts made from ``token``."""
    for v in rng.sample(list(pool), len(pool)):
        alts = [a for a in alternatives(v, 1, rng) if a != v and type(a) is type(v)]
        if alts and repr(v) != repr(alts[0]) and _literal(v) and _literal(alts[0]):
            return v, alts[0]
    return token, token + "s"


def sentinel_member(segment: str, func: ast.FunctionDef | ast.AsyncFunctionDef, lines: Sequence[str],
                    rng: random.Random, pool: Sequence[Any], token: str, *, unittest: bool) -> str | None:
    """The sentinel member of ``func`` (whose lines, decorators included, are ``segment``): the same
    text with one more statement at the end of its body, a failing equality of two unequal values
    (:func:`_unequal`; ``self.assertEqual(a, b)`` when ``unittest``). ``None`` when the body could end
    before it (a ``return``, a generator) or shares its first line with the signature."""
    if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(func)) \
            or func.body[0].lineno == func.lineno:
        return None
    last = func.body[-1]
    line = lines[last.lineno - 1]
    indent = line[:len(line) - len(line.lstrip())]
    a, b = _unequal(pool, rng, token)
    stmt = f"self.assertEqual({a!r}, {b!r})" if unittest else f"assert {a!r} == {b!r}"
    tail = "" if segment.endswith(("\n", "\r")) else "\n"
    return f"{segment}{tail}{indent}{stmt}\n"


def _collected(tree: ast.Module, cls: ast.ClassDef) -> bool:
    """Whether pytest collects ``cls`` as a test class (its default ``Test*`` name, or a ``unittest`` class)."""
    return cls.name.startswith("Test") or is_unittest(tree, [cls.name])


def definition_runners(tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The collected top-level classes of ``tree`` (:func:`_collected`) that resolve ``func``'s name to
    ``func`` (its class, its subclasses that do not override it), in file order; ``[]`` for a function
    in no class."""
    if not any(isinstance(c, ast.ClassDef) and func in c.body for c in ast.walk(tree)):
        return []
    top = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    return [c.name for c in top if _collected(tree, c) and _find(tree, [c.name], func.name) is func]


def subclassed(tree: ast.Module) -> set[str]:
    """seal64: the class names the classes of ``tree`` derive from, each base by its last dotted name
    (``test_totals.TestTotal``: ``TestTotal``), a name bound by ``from m import A as B`` as ``A`` too. Read from
    another test file of the task, they are the classes whose tests (and ``tearDown``) that file runs as well.
    reach46: and every name ``tree`` imports (``from m import A``, ``A as B``: ``A``) or assigns from a name
    (``Base = test_totals.TestTotal``: ``TestTotal``): pytest collects a test class imported into another test
    module there again (``test_more.py::TestTotal::test_total``; a ``unittest`` class under any name), and an
    assigned alias is a base by another name; before, such a file ran the twin's body and the real fix was
    ``tests_failed``. A star import is :func:`star_imported`'s."""
    bases = {name for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases
             if (name := _dotted_last(b)) is not None}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names if a.name != "*"}
    assigned = {name for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
                and (name := _dotted_last(n.value)) is not None}
    return bases | imported | assigned


def star_imported(tree: ast.Module) -> set[str]:
    """reach46: the last dotted names of the modules ``tree`` star-imports (``from tests.test_totals import *``:
    ``test_totals``): every class of such a test module is collected in ``tree``'s too."""
    return {n.module.rsplit(".", 1)[-1] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
            and any(a.name == "*" for a in n.names)}


def shared_definition(tree: ast.Module, classes: Sequence[str], func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether test ids of the module other than ``classes``' own run ``func`` (the definition found for
    it, maybe in a base class): another collected class (:func:`definition_runners`) resolves the name
    to it (a base, a sibling, a subclass that does not override it). A twin of such a definition changes
    those ids too: it is planted only when every one of them is a FAIL_TO_PASS function of the task (they
    all join its group, :func:`~pytest_homefield.sandbox.twin_runs.plan_twins`); else a PASS_TO_PASS id or
    one of no group would fail in the twin's run and a real fix be ``tests_failed`` (itsdangerous: 4 of
    16 tasks), and it gets a sentinel. Only the module itself is read (the task's own file): a class
    imported by another test file is not seen, since an agent could add a file importing every class
    to turn twins into sentinels."""
    return bool(set(definition_runners(tree, func)) - set(classes[-1:]))
