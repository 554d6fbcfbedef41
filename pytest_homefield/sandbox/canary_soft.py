"""Soft statements (docs/contracts.md §7, twin37): a test file of a canary run whose test functions run to the end
of their body after a failed statement, failing there with the first failure, as their original does on a real fix.

A twin fails every real fix at its contradicted site. Stopped there, it never ran the rest of its body (a line putting
back a module setting the test changed), and what it left reached every later test of its process: a later
PASS_TO_PASS test failed in that run alone (``regression``), another group's original failed (``tests_failed``), or
another group's made-up twin met the left value and passed beside its original (``forged``; gatk36,
``tests/run/test_after_twin.py``). The plain run's bare ``raises`` body (neg35) stopped so too.

:func:`softened` rewrites a test file's text so that each *soft statement* of each test function records its
failure instead of ending the test: ``with __import__('homefield_reporter').soft(): <statement>`` (a ``with``
statement gets the context as its first item), on the statement's own line, so every line stays where it was (the
reporter's ``line``, the planner's statement lines, the plain run's unwrapped body lines). The reporter
(``_reporter/homefield_reporter.py``, :data:`SOFT`) keeps the first failure a soft statement met in the test's call
phase (an ``Exception`` or pytest's ``Failed``; a skip, ``xfail``, ``exit`` or ``KeyboardInterrupt`` goes through),
lets the body run on, and fails the call phase with that first failure at its end, whatever the rest of the body
did (raised, skipped, failed another assertion): its traceback still holds the test function's frame at the
statement that failed, so the reporter's ``line`` and ``operands`` name the contradicted site as before.

Every test function of every file a run writes is softened alike (originals, twins, other groups, tests of no group,
in every run apart, the confirmation runs, the rows run and the plain run): a soft statement tells neither the
member nor the site nor the group. Soft statements: an ``assert``, a call (an expression statement), an assignment
and a ``with`` (its header not parenthesized, but around its items: gatk39), each alone on its lines, in the
function's body, also under an ``if`` or a ``for`` and (gatk40) in a ``with`` there no context of which may take an
exception by its name (:func:`_may_take`; soft42: its header ends with :data:`BLOCK_TAKING`, and an exception that is
no assertion's failure goes on as written there when a context's own code takes exceptions); and (twin38) *nested*
ones, under :data:`NESTED`, in the body of a ``while``, a ``try`` or a ``with`` (a ``with`` statement's body is a
twin site, ``canary_sites._statements``: a
twin failing there left the rest of it unrun, seed 0 of ``tests/run/test_after_twin.py``'s ``with`` test was
``tests_failed``). A nested one keeps only an assertion's failure (an ``AssertionError``, pytest's ``Failed``;
gatk40: an exception a ``raises``/``assertRaises`` let through, not the one it expected), what a twin's site
raises, so each block keeps its meaning where a soft statement would change it:

* ``try``: the types its ``except`` clauses name (and the enclosing ``try``'s) are given to the context, evaluated
  when a failure arrives: a failure they catch goes to them as before (``except AssertionError`` still catches the
  assertion); under a bare ``except:`` (it catches every failure) and in a ``try``/``except*`` nothing is soft;
* ``while``: a failed assertion changed nothing the condition reads, so the loop ends as it did; another failure
  (one that may have left the condition unchanged: a loop waiting for a statement to succeed) goes through, and at
  most ``_MAX_NESTED`` (1,000) failures are kept so in one test's call phase;
* ``with``: :data:`BLOCK` ends the header, so the body's first kept failure is raised at the body's end and the
  ``with``'s contexts meet it as before (``raises``/``assertRaises`` take it, ``subTest`` reports it, ``suppress``
  swallows it; the rest of the body ran first, what the original's passing run never ran when that failure was the
  one the context expected: a ``raises(AssertionError)`` body's statements after the assertion); a ``return``,
  ``break`` or ``continue`` leaving the body gets :data:`JUMP` before it (soft40; :func:`_jump_edits`): the body,
  left so, keeps its failure further out instead of raising it (raised at the body's end, it would undo the jump);
  an ``async with`` is soft alike (soft40: the reporter's contexts are asynchronous ones too); no soft statement in
  a ``with`` whose header is continued or parenthesized otherwise than around its items (:func:`_parenthesized`).

Test functions (twin38): a module-level ``def test…`` and a ``test…`` method of any module-level class (a pytest
``Test…`` class, a ``unittest.TestCase`` or a mixin of one; ``setUp``/``tearDown`` are not tests: a failure there ends
the test as before), none a fixture (its decorator ``fixture``: :func:`_fixture`); soft39: a function or method the
repository's ``python_functions`` names (``check_*``) too, :func:`function_patterns` reading the configuration pytest
reads in the run's copy (soft40: and the test command's ``-o python_functions=…`` and ``-c FILE``, which pytest reads
first; soft41: the one configuration pytest finds for the run's targets, from their common folder, and the
``PYTEST_ADDOPTS`` an ``env`` before the command sets). Under pytest a ``TestCase`` runs ``setUp``, the method and
``tearDown`` in the call phase; a soft statement's failure never reaches ``unittest``'s result, the method returns, and
the reporter fails the call with it (what ``unittest`` recorded after it, a later failure or a ``SkipTest``, is
dropped); a ``subTest`` body is a ``with`` body, an ``assertRaises`` context a ``with``'s context; a test marked
``expectedFailure`` keeps no failure (its failure is its pass), and ``unittest``'s ``SkipTest`` goes through a soft
statement as pytest's skip does.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import io
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_homefield.sandbox.canaries import _chars, parse_source
from pytest_homefield.sandbox.canary_sites import _call_name
from pytest_homefield.sandbox.pytest_config import Setup, all_values, from_top, setup_for, split_args

__all__ = ["SOFT", "NESTED", "BLOCK", "BLOCK_TAKING", "JUMP", "softened", "softened_bytes", "softened_files",
           "function_patterns", "setup_functions"]

#: The context a soft statement runs in (the reporter's :func:`soft`; the reporter is loaded by name, ``-p
#: homefield_reporter``, in every test process homefield starts).
SOFT = "__import__('homefield_reporter').soft()"
#: The context of a *nested* soft statement (inside a ``while``, a ``try`` or a ``with``): ``{}`` is the types the
#: enclosing ``except`` clauses of the test function name (a tuple's text, evaluated only when a failure arrives).
NESTED = "__import__('homefield_reporter').soft(lambda: ({}))"
#: The last item of a ``with`` whose body holds soft statements: a nested failure kept there is raised at the body's
#: end, so the ``with``'s contexts meet it as they did (the reporter's :func:`soft_block`).
BLOCK = "__import__('homefield_reporter').soft_block()"
#: :data:`BLOCK` of a ``with`` at a test's top whose body holds top soft statements (soft42): ``{}`` is the text of what
#: makes its contexts (:func:`_takers`), read only when an exception that is no assertion's failure reaches one of them,
#: which goes on as written when a context's own code takes exceptions (the reporter's ``_takes``).
BLOCK_TAKING = "__import__('homefield_reporter').soft_block(lambda: ({}), {})"
#: Around each item's context of a ``with`` given :data:`BLOCK_TAKING` (gatk47): the context itself, noted for the
#: reporter, which reads the contexts the ``with`` entered (its ``through``; the second field of
#: :data:`BLOCK_TAKING` is their number), not only what made them (a maker returning ``pytest.raises(kind) if kind
#: else nullcontext()`` takes by its arguments). Its name sorts after :data:`SOFT`'s, inserted at the same place.
THROUGH = "__import__('homefield_reporter').through("
#: Put right before a ``return``, ``break`` or ``continue`` that leaves the bodies of ``{}`` ``with`` statements
#: :data:`BLOCK` ends (soft40): each keeps its body's failure further out rather than raise it and undo the jump.
JUMP = "__import__('homefield_reporter').soft_jump({}); "

_SIMPLE = (ast.Assert, ast.Assign, ast.AugAssign, ast.AnnAssign)
#: What a statement list is walked with: ``None`` at the test function's top (its body, under ``if``/``for``), else the
#: texts of the types the enclosing ``except`` clauses name (nested).
_Ctx = tuple[str, ...] | None


#: pytest's ``python_functions`` default: the prefix every test function of a run is told by, whatever its
#: configuration names beside (:func:`function_patterns`).
DEFAULT_FUNCTIONS = ("test",)


def softened(text: str, functions: tuple[str, ...] = DEFAULT_FUNCTIONS, names: tuple[str, ...] = ()) -> str:
    """``text`` (a test file) with its soft statements (module text) run under :data:`SOFT` (at a test function's top)
    or :data:`NESTED` (inside a ``while``, ``try`` or ``with``), each ``with`` whose body holds soft statements ending
    its header with :data:`BLOCK`, every line where it was; ``text`` itself when it does not parse, holds none, or
    would not parse so. ``functions``: the names of test functions, pytest's ``python_functions`` patterns
    (prefixes or globs, :func:`_named`; :func:`function_patterns`); ``names``: more test functions' exact names (the
    task's own, gatk41: :func:`softened_files`)."""
    try:
        tree = parse_source(text)
    except (SyntaxError, ValueError):
        return text
    lines = io.StringIO(text, newline="").readlines()
    edits: list[tuple[int, int, str]] = []  # (line from 1, character, text inserted there)
    for func in _test_functions(tree, functions, names):
        blocked: set[int] = set()
        edits += _soft_edits(func.body, None, lines, blocked)
        edits += _jump_edits(func.body, lines, blocked, 0, None)
    if not edits:
        return text
    for lineno, at, insert in sorted(edits, reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:at] + insert + line[at:]
    out = "".join(lines)
    try:
        parse_source(out)
    except (SyntaxError, ValueError):  # pragma: no cover - each edit keeps its statement whole
        return text
    return out


@functools.lru_cache(maxsize=64)
def softened_bytes(data: bytes, functions: tuple[str, ...] = DEFAULT_FUNCTIONS, names: tuple[str, ...] = ()) -> bytes:
    """:func:`softened` of a test file's bytes, in the encoding it declares (``utf-8`` by default, a BOM kept);
    ``data`` itself when it cannot be decoded or encoded back so. Remembered for the last 64 texts: a grading writes
    a file alike into each of its runs (two parses, some 1 ms of CPU per KiB)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        out = softened(text, functions, names)
        return data if out == text else out.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        return data


def softened_files(files: Mapping[str, bytes], root: Path | None = None, command: str = "",
                   targets: Sequence[str] | None = None, tests: Iterable[str] = (),
                   setup: Setup | None = None) -> dict[str, bytes]:
    """``files`` (path → bytes, a canary run's test files as a plan holds them) as the run writes them: each Python
    file :func:`softened_bytes`, anything else as it is. ``root`` (the copy the run's tree is made from, holding the
    repository's configuration): the test functions are also those its ``python_functions`` names
    (:func:`function_patterns`: the one configuration pytest reads for the run's ``targets``, its files or node ids,
    by default the Python files of ``files``, and ``command``: the task's test command, whose ``-o
    python_functions=…`` and ``-c`` pytest reads first); without it, ``test…`` functions only. ``tests``: node ids
    (or function ids) of the run's groups, the same for every run of a grading: the function each names in its file
    is a test function by its name too (gatk41), however pytest came to collect it (a script's
    ``pytest.main(["-o", "python_functions=…"])``, a ``conftest.py``, a plugin: what :func:`function_patterns`
    cannot read), so a group's twin is soft wherever its original runs. ``setup``: pytest's choice of configuration
    for the run, read before (:func:`~pytest_homefield.sandbox.testrun.pytest_setup`, the one the run is pinned to,
    passed on to it too; twin43: read twice); with it ``root`` and ``targets`` are not read, and ``tests``' paths
    are relative to its rootdir, as pytest reports ids (root47: a ``tests/pytest.ini``), else to the tree's top."""
    named: dict[str, set[str]] = {}
    base = setup.rootdir if setup is not None else "."
    for test in tests:
        path, sep, rest = test.partition("::")
        if sep and rest:
            named.setdefault(from_top(base, path), set()).add(rest.split("[", 1)[0].rsplit("::", 1)[-1])
    out: dict[str, bytes] = {}
    functions: tuple[str, ...] = DEFAULT_FUNCTIONS
    if setup is not None:
        functions = setup_functions(setup, command)
    elif root is not None:
        functions = function_patterns(root, tuple(rel for rel in files if rel.endswith(".py")) if targets is None
                                      else tuple(targets), command)
    for rel, data in files.items():
        out[rel] = softened_bytes(data, functions, tuple(sorted(named.get(rel, ())))) if rel.endswith(".py") else data
    return out


def function_patterns(root: Path, targets: str | Sequence[str], command: str = "") -> tuple[str, ...]:
    """The ``python_functions`` patterns (prefixes or globs) a pytest run of ``targets`` (test files or node ids,
    ``/``-separated paths in ``root``, or one such path) in ``root`` reads, :data:`DEFAULT_FUNCTIONS` first (soft39;
    a ``check_*`` test was no test function of :func:`softened`: a failing twin there stopped at its site and left
    what the rest of its body puts back). ``command``: the test command the run starts
    (:func:`~pytest_homefield.sandbox.pytest_config.pytest_args`, with the ``PYTEST_ADDOPTS`` it sets before them); as
    pytest reads it, the last ``-o``/``--override-ini python_functions=…`` of the configuration's ``addopts``, then
    of ``PYTEST_ADDOPTS``, then of the command wins over the configuration (soft40: the command's was not read, and
    such a test was no test function; soft41: nor ``PYTEST_ADDOPTS``'s). The configuration is the one pytest reads
    for the whole run (:func:`~pytest_homefield.sandbox.pytest_config.setup_for`, conf42: the one reading the test
    runs' pin shares; soft41: it was looked for from each file's folder, and a file whose folder held a
    configuration the run's common folder did not reach took a ``python_functions`` pytest never read): the
    command's ``-c FILE``, else the one found in ``root``; each read without following a link, one that cannot be
    read or parsed gives ``test`` only."""
    return setup_functions(setup_for(root, command, [targets] if isinstance(targets, str) else targets), command)


def setup_functions(setup: Setup, command: str = "") -> tuple[str, ...]:
    """:func:`function_patterns` of a configuration read before (``setup``, :func:`~pytest_homefield.sandbox.
    pytest_config.setup_for` of the run's tree, ``command`` and targets): its ``python_functions``, or the last
    ``-o python_functions=…`` of its ``addopts``, ``PYTEST_ADDOPTS`` and ``command``, after
    :data:`DEFAULT_FUNCTIONS` (a ``uv run --env-file``'s ``PYTEST_ADDOPTS`` before the command's, ops48:
    :meth:`~pytest_homefield.sandbox.pytest_config.Setup.args`)."""
    args = setup.args(command)
    override = None
    for value in all_values([*setup.addopts, *args], "-o", "--override-ini"):
        key, eq, setting = value.partition("=")
        if eq and key.strip() == "python_functions":
            override = split_args(setting)
    patterns = setup.python_functions if override is None else override
    return tuple(dict.fromkeys((*DEFAULT_FUNCTIONS, *patterns)))


def _named(name: str, functions: Iterable[str]) -> bool:
    """Whether ``name`` is a test function's by ``functions`` (``python_functions`` patterns), as pytest reads them:
    a prefix of it, or a glob (``*``, ``?`` or ``[`` in it) it matches."""
    return any(name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatchcase(name, p))
               for p in functions)


def _test_functions(tree: ast.Module, functions: tuple[str, ...] = DEFAULT_FUNCTIONS,
                    names: tuple[str, ...] = ()) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test functions of ``tree`` (module text): module-level functions and methods named by ``functions``
    (pytest's ``python_functions`` patterns, :func:`_named`: ``test…`` at least, soft39: a ``check_*`` too when the
    repository's configuration names it) of module-level classes (whatever their bases: a ``unittest.TestCase``, a
    pytest ``Test…`` class, a mixin whose tests a ``TestCase`` inherits; so ``python_classes`` needs nothing) and of
    the classes in them at any depth (gatk39: pytest collects a ``Test…`` class
    nested in one; its tests were not soft, and a failing twin there stopped at its site and left what the rest of
    its body puts back), none decorated as a fixture (:func:`_fixture`).
    ``names``: functions that are tests by their exact name (gatk41)."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    bodies = [tree.body]
    while bodies:
        for node in bodies.pop():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(node)
            elif isinstance(node, ast.ClassDef):
                bodies.append(node.body)
    return [f for f in out if (f.name in names or _named(f.name, functions))
            and not any(_fixture(d) for d in f.decorator_list)]


#: The names of the decorators that make a function a fixture (``pytest.fixture``, ``fixture``,
#: ``pytest_asyncio.fixture``, pytest's old ``yield_fixture``), called or not.
_FIXTURES = ("fixture", "yield_fixture")


def _fixture(decorator: ast.expr) -> bool:
    """Whether ``decorator`` makes its function a fixture: it is (or calls) a name or attribute :data:`_FIXTURES`
    names. gatk39: told by the word ``fixture`` in its text before, a test marked ``usefixtures`` (or parametrized
    over a ``fixture_name`` column, a ``lazy_fixture`` row) was no test: no soft statement in it, a twin there
    stopped at its site and left what the rest of its body puts back."""
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in _FIXTURES


def _soft_edits(body: list[ast.stmt], ctx: _Ctx, lines: list[str],
                blocked: set[int] | None = None) -> list[tuple[int, int, str]]:
    """The edits making the soft statements of ``body`` (module text) soft: at the test function's top (``ctx``
    ``None``) under :data:`SOFT`, under ``if`` and ``for`` too; nested (``ctx``: the enclosing ``except`` clauses'
    type texts) under :data:`NESTED`:

    * a ``while``'s body and ``else``: nested (the reporter keeps only an assertion's failure there, none past
      :data:`~homefield_reporter._MAX_NESTED` in a test: a failure that changed nothing the loop's condition reads);
    * a ``try``'s body: nested, its clauses' types added (a failure they catch goes to them as before); its
      handlers, ``else`` and ``finally``: nested; none under a bare ``except:`` (it catches every failure) nor in a
      ``try``/``except*``;
    * a ``with``'s or ``async with``'s body (the statement itself soft; soft40: an ``async with`` too, the reporter's
      contexts being asynchronous ones as well): nested (gatk40: at the top, ``ctx`` ``None``, when no context of it
      may take an exception, :func:`_may_take`, its statements are at the top too: a twin site as the top is, where a
      real fix's exception fails a twin as an assertion does), and :data:`BLOCK` ends its header so that the body's
      first kept failure reaches the contexts at the body's end (a ``raises``, ``assertRaises``, ``subTest``,
      ``suppress`` takes it as before); a ``return``, ``break`` or ``continue`` leaving the body gets :data:`JUMP`
      before it (:func:`_jump_edits`; soft40: such a body held no soft statement, and a failing twin there stopped at
      its site).

    ``blocked``: the ids of the ``with`` statements given :data:`BLOCK` are added to it."""
    out: list[tuple[int, int, str]] = []
    nested = () if ctx is None else ctx
    context = SOFT if ctx is None else NESTED.format("".join(t + ", " for t in ctx))
    for stmt in body:
        if isinstance(stmt, _SIMPLE) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await))):
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is not None:
                out += _edit(stmt, lines, context)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            edit = _edit(stmt, lines, context)
            out += edit
            # gatk40: the body of a with expecting no exception, at the function's top, is a twin site as the top is
            # (``canary_sites._statements``): its statements keep what a top statement keeps
            body_ctx = None if ctx is None and not _may_take(stmt) else nested
            inner = _soft_edits(stmt.body, body_ctx, lines, blocked) if edit else []
            # can49: the contexts entered are handed through whatever made them (``sys.modules[__name__].Expect(k)``
            # names no maker ``_takers`` can spell); the makers' names are read only where they cannot be
            through = _through_edits(stmt, lines) if body_ctx is None and inner else []
            takers = _takers(stmt) if body_ctx is None else ""
            block = _block_edit(stmt, lines, takers, len(stmt.items) if through else 0) \
                if inner else None
            if block is not None:
                out += [*inner, *through, block]
                if blocked is not None:
                    blocked.add(id(stmt))
        elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor)):
            out += _soft_edits(stmt.body, ctx, lines, blocked) + _soft_edits(stmt.orelse, ctx, lines, blocked)
        elif isinstance(stmt, ast.While):
            out += _soft_edits(stmt.body, nested, lines, blocked) + _soft_edits(stmt.orelse, nested, lines, blocked)
        elif isinstance(stmt, ast.Try) and all(h.type is not None for h in stmt.handlers):
            caught = tuple(ast.unparse(h.type) for h in stmt.handlers if h.type is not None)  # each on one line
            out += _soft_edits(stmt.body, nested + caught, lines, blocked)
            for part in (*(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                out += _soft_edits(part, nested, lines, blocked)
    return out


def _may_take(stmt: ast.With | ast.AsyncWith) -> bool:
    """Whether a context of ``stmt`` may take an exception its body raises as what the test expects (gatk40): one
    called by a name holding ``raise`` (``pytest.raises``, ``assertRaises…``, ``numpy.testing.assert_raises``, Django's
    ``assertRaisesMessage``) or ``suppress``. Its body's statements stay nested (an exception it takes ends the body
    there, as written); any other ``with`` body at a test's top holds top soft statements, as the site planner's
    (``canary_sites._statements``) twin sites, where a real fix's exception fails a twin as an assertion does."""
    names = [_call_name(item.context_expr) or "" for item in stmt.items]
    return any("raise" in n.lower() or n == "suppress" for n in names)


def _takers(stmt: ast.With | ast.AsyncWith) -> str:
    """The text of a tuple's items (``"a, b.c, "``) naming what makes each context of ``stmt`` (soft42): the callable
    of an item that is a call (``expect`` of ``expect(TypeError)``), else the item itself (``lock``), each a name or
    a chain of attributes of one (no call in it: read again, it runs nothing the header did not); ``""`` for none. The
    reporter reads them only when an exception that is no assertion's failure reaches a top soft statement of the body
    (:data:`BLOCK_TAKING`): a context the code of which takes exceptions (:func:`~homefield_reporter._takes`) ends its
    body there, as written."""
    out = ""
    for item in stmt.items:
        expr = item.context_expr.func if isinstance(item.context_expr, ast.Call) else item.context_expr
        node = expr
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            out += ast.unparse(expr) + ", "
    return out


def _jump_edits(body: list[ast.stmt], lines: list[str], blocked: set[int], in_function: int,
                in_loop: int | None) -> list[tuple[int, int, str]]:
    """The :data:`JUMP` edits of the jumps in ``body`` (module text, a test function's; not looking into functions
    and classes defined there) that leave ``with`` bodies :data:`BLOCK` ends (``blocked``: their ids): right before
    a ``return`` (``in_function``: the number of such bodies around it in the function), a ``break`` or
    ``continue`` (``in_loop``: the number around it inside its loop; ``None`` outside a loop), naming how many it
    leaves, on its own line (a simple statement, so ``…; return`` parses wherever it stood)."""
    out: list[tuple[int, int, str]] = []
    for stmt in body:
        if isinstance(stmt, (ast.Return, ast.Break, ast.Continue)):
            n = in_function if isinstance(stmt, ast.Return) else in_loop or 0
            if n and stmt.lineno <= len(lines):
                out.append((stmt.lineno, _chars(lines[stmt.lineno - 1], stmt.col_offset), JUMP.format(n)))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            k = 1 if id(stmt) in blocked else 0
            out += _jump_edits(stmt.body, lines, blocked, in_function + k, None if in_loop is None else in_loop + k)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            out += _jump_edits(stmt.body, lines, blocked, in_function, 0)
            out += _jump_edits(stmt.orelse, lines, blocked, in_function, in_loop)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            for field in ("body", "orelse", "finalbody"):
                part = getattr(stmt, field, None)
                if isinstance(part, list):
                    out += _jump_edits(part, lines, blocked, in_function, in_loop)
            for handler in getattr(stmt, "handlers", None) or ():
                out += _jump_edits(handler.body, lines, blocked, in_function, in_loop)
            for case in getattr(stmt, "cases", None) or ():
                out += _jump_edits(case.body, lines, blocked, in_function, in_loop)
    return out


def _edit(stmt: ast.stmt, lines: list[str], context: str) -> list[tuple[int, int, str]]:
    """What to insert (none or one edit) so that ``stmt`` runs under ``context`` on its own first line; none when it
    shares a line with another statement (``a; b``) or is a ``with`` whose header is continued (``\\``) or
    parenthesized otherwise than around its items (:func:`_parenthesized`)."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    if first > len(lines) or last > len(lines):  # pragma: no cover - the tree is the text's
        return []
    at = _chars(lines[first - 1], stmt.col_offset)
    if lines[first - 1][:at].strip():
        return []
    end = _chars(lines[last - 1], stmt.end_col_offset or 0)
    rest = lines[last - 1][end:].strip()
    if rest and not rest.startswith("#"):
        return []
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        head = lines[first - 1][at:]
        if isinstance(stmt, ast.AsyncWith):  # soft40: ``async with``, the keywords on one line
            rest = head[5:].lstrip(" \t")
            if not head.startswith("async") or not head[5:6].isspace() or not rest.startswith("with"):
                return []
            at += len(head) - len(rest)
            head = rest
        if head[4:].lstrip().startswith("("):  # gatk39: ``with (a as x, b):``, its items one per line most often
            paren = _parenthesized(stmt, lines)
            return [] if paren is None else [(*paren[0], f"{context}, ")]
        if not head.startswith("with") or not head[4:5].isspace() or head[4:].lstrip().startswith("\\"):
            return []
        return [(first, at + 4, f" {context},")]
    return [(first, at, f"with {context}: ")]


_SKIPPED = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT})


def _parenthesized(stmt: ast.With | ast.AsyncWith,
                   lines: list[str]) -> tuple[tuple[int, int], tuple[int, int], bool] | None:
    """For a ``with`` whose parentheses hold its items (``with (a as x, b):``, Python 3.9+; gatk39: its body was no
    soft statement, and a failing twin there stopped at its site and left what the rest of the body puts back):
    ``((line, character) right after its ``(``, (line, character) of the matching ``)``, whether a ``,`` ends the
    items)``; ``None`` for any other header, and for one item with no ``as`` (``with (a):`` parses so in Python 3.8
    too, where ``with (a, b):`` is one tuple)."""
    if len(stmt.items) < 2 and stmt.items[0].optional_vars is None:
        return None
    rest = iter(lines[stmt.lineno - 1:])
    opened: tuple[int, int] | None = None
    depth, previous = 0, ""
    try:
        tokens = tokenize.generate_tokens(lambda: next(rest, ""))
        for tok in tokens:
            if tok.type in _SKIPPED:
                continue
            where = (stmt.lineno + tok.start[0] - 1, tok.start[1])
            if opened is None:
                if tok.string == "async" and previous == "" and isinstance(stmt, ast.AsyncWith):
                    previous = "async"
                    continue
                if tok.string == "with" and previous in ("", "async"):
                    previous = "with"
                    continue
                if tok.string != "(":
                    return None
                opened, depth = (where[0], where[1] + 1), 1
            elif tok.type == tokenize.OP and tok.string in ("(", "[", "{"):
                depth += 1
            elif tok.type == tokenize.OP and tok.string in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    after = next(t for t in tokens if t.type not in _SKIPPED)
                    return (opened, where, previous == ",") if after.string == ":" else None
            previous = tok.string
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return None
    return None  # pragma: no cover - the tree is the text's


def _through_edits(stmt: ast.With | ast.AsyncWith, lines: list[str]) -> list[tuple[int, int, str]]:
    """The edits writing each item's context of ``stmt`` as ``through(<context>)`` (:data:`THROUGH`, gatk47): its
    opening before the context's first character, ``)`` after its last (before an ``as``); none when an item's
    place cannot be read (then the reporter reads what made the contexts, as before)."""
    out: list[tuple[int, int, str]] = []
    for item in stmt.items:
        expr = item.context_expr
        first, last = expr.lineno, expr.end_lineno or 0
        if not (0 < first <= last <= len(lines)) or expr.end_col_offset is None:
            return []
        out += [(first, _chars(lines[first - 1], expr.col_offset), THROUGH),
                (last, _chars(lines[last - 1], expr.end_col_offset), ")")]
    return out


def _block_edit(stmt: ast.With | ast.AsyncWith, lines: list[str], takers: str = "",
                entered: int = 0) -> tuple[int, int, str] | None:
    """Where :data:`BLOCK` goes as the last item of ``stmt``'s header (right after its last item, the ``:`` next
    there); ``None`` when the ``:`` is not next (a comment, a line continued). ``takers`` (:func:`_takers`): when not
    empty, or ``entered`` (the number of contexts :func:`_through_edits` wrote, gatk47) not 0, :data:`BLOCK_TAKING`
    with them goes there instead (can49: the contexts entered are read whatever made them)."""
    block = BLOCK_TAKING.format(takers, entered) if takers or entered else BLOCK
    paren = _parenthesized(stmt, lines)
    if paren is not None:  # before the closing parenthesis (after a trailing comma, or with one of its own)
        (lineno, at), comma = paren[1], paren[2]
        return lineno, at, f"{block}," if comma else f", {block}"
    item = stmt.items[-1]
    node = item.optional_vars or item.context_expr
    lineno, col = node.end_lineno or 0, node.end_col_offset or 0
    if not 0 < lineno <= len(lines):  # pragma: no cover - the tree is the text's
        return None
    at = _chars(lines[lineno - 1], col)
    if not lines[lineno - 1][at:].lstrip().startswith(":"):
        return None
    return lineno, at, f", {block}"
