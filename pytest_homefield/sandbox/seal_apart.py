"""The sealed run's files with canaries (seal54, seal56, docs/contracts.md §7 "Sealed sites", "The sealed run
apart").

gatk52: the sealed run's files showed every group's **original** wherever no site was sealed, and the sealed run's
duration (or the wall clock's phase when the runs apart start) carried that to them: one bit per grading was enough
to pass the original and fail its twin (``tests/run/test_sealed_run_tells.py``). seal54 gave it the test files of
one run apart (:attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.runs`, drawn from the plan's seed: ``sealed_pick``
of :mod:`~pytest_homefield.run.sealed_grading`) with the sealed sites rewritten in them (:func:`sealed_in_run`); but
then each run apart learnt whether it was the drawn run, and passing that run's members alone was ``solved`` where
they were the originals (1 in 2 per group). seal56 (:func:`sealed_together`): the files lay out every member of every
group side by side as the confirmation run does, a group with sealed sites once, sealed (its members' sealed text
is one): what the sealed run shows is the same whichever run apart holds the original. seal54's files stay the
fallback where the members cannot be laid side by side.

A function with a judged sealed site and a twin: its sites are sealed in the run's version of it (each moved to its
place there, :func:`_placed`), and it is judged only when that sealed text is **the same in every run apart** (its
twin's site lies wholly inside statements the seal rewrites, or its twin deranges only sealed cells of its sealed
column: the seal erases what tells the members). Otherwise (:func:`told_apart`) its sites are not sealed in that
grading and it is left as the run holds it: a sealed original would show the original's text wherever the twin
differs, and a sealed twin would fail every real fix at its contradicted site; its twin guards it, as it guards a
function with no sealable site. Plain text and AST work, no test process.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pytest_homefield.sandbox.canary_teardown import reached_teardown, without_checks
from pytest_homefield.sandbox.seal_sites import (
    SealSite,
    _decoded,
    _functions,
    _lines,
    _span,
    seal_text,
)
from pytest_homefield.sandbox.twin_together import FileLayout, together

__all__ = ["placed_files", "sealed_in_run", "sealed_together", "told_apart", "unchecked_files"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _lines_of(node: _Def) -> tuple[int, int]:
    """A definition's first line (its first decorator's) and last line."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.end_lineno or node.lineno


def _defs(text: str) -> dict[str, _Def] | None:
    """Each definition of ``text`` by its path of names (``::Class::test_x``); ``None`` when it does not parse or
    defines a path twice (no definition could be placed by its name)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, _Def] = {}
    for name, node in _functions(tree, ""):
        if name in out:
            return None
        out[name] = node
    return out


def _holder(defs: Mapping[str, _Def], line: int) -> str | None:
    """The innermost definition of ``defs`` whose lines hold ``line``, by name."""
    best: tuple[int, str] | None = None
    for name, node in defs.items():
        first, last = _lines_of(node)
        if first <= line <= last and (best is None or last - first < best[0]):
            best = (last - first, name)
    return None if best is None else best[1]


def _counterpart(onode: ast.AST, rnode: ast.AST, where: tuple[int, int, int, int]) -> ast.expr | None:
    """The expression of ``rnode`` at the place ``onode``'s expression at ``where`` (line, column, end line, end
    column) holds in it: the same fields and indexes from the definition down, every list on the way as long in both
    (a table of as many rows: a row cut away would move another into its place); ``None`` when there is none."""
    def find(node: ast.AST) -> list[tuple[str, int | None]] | None:
        if isinstance(node, ast.expr) and (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == where:
            return []
        for name, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for n, item in enumerate(items):
                if isinstance(item, ast.AST):
                    got = find(item)
                    if got is not None:
                        return [(name, n if isinstance(value, list) else None), *got]
        return None

    path = find(onode)
    if path is None:
        return None
    o: Any = onode
    r: Any = rnode
    for name, n in path:
        ov, rv = getattr(o, name, None), getattr(r, name, None)
        if n is None:
            o, r = ov, rv
        elif isinstance(ov, list) and isinstance(rv, list) and len(ov) == len(rv):
            o, r = ov[n], rv[n]
        else:
            return None
        if not isinstance(r, ast.AST) or type(r) is not type(o):
            return None
    return r if isinstance(r, ast.expr) else None


def _placed(site: SealSite, onode: _Def, run: str, rnode: _Def) -> SealSite | None:
    """``site`` (found in the grading tree's file, in its definition ``onode``) moved to its place in ``run``, a run
    apart's version of the file whose definition of the same name is ``rnode``; ``None`` when it cannot be placed
    there: the definitions differ in their number of lines (a twin keeps its original's lines), a row's cell has
    no counterpart there (:func:`_counterpart`: a table of other rows), or a ``match`` site's ``with`` is not on its
    line. A twin's cell moved among the rows (a derangement) is found by its place, not its text."""
    if (rnode.end_lineno or 0) - rnode.lineno != (onode.end_lineno or 0) - onode.lineno:
        return None
    delta = rnode.lineno - onode.lineno
    cell = site.cell
    if cell is not None:  # a table's row: the node at the same place of the run's definition
        node = _counterpart(onode, rnode, cell)
        if node is None:
            return None
        cell = (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)
    span = site.span
    if span is not None:  # a ``match`` site: its ``with`` item's call, found again in the run's version
        at = site.first + delta
        held = next((n for n in ast.walk(rnode) if isinstance(n, ast.With) and n.lineno == at), None)
        if held is None or len(held.items) != 1:
            return None
        span = _span(run, held.items[0].context_expr)
    return dataclasses.replace(site, first=site.first + delta, last=site.last + delta, cell=cell, span=span)


def _covered(site: SealSite) -> set[str]:
    """The judged functions a site stands for: its own, or a cover's covered sites' functions."""
    return {k.rsplit("@", 1)[0] for k in site.covering} if site.cover else {site.function}


def _sealed_runs(texts: Mapping[str, tuple[str, str]], ids: Mapping[str, SealSite],
                 runs: Sequence[Mapping[str, bytes]]) -> tuple[set[str], dict[str, list[tuple[str, dict[str, _Def]]]]]:
    """``(the judged functions whose sites cannot be placed in some run, path → each run's (sealed text, its
    definitions))`` for each path of ``ids``' sites (``texts``: path → ``(encoding, text)`` as the grading tree
    has it)."""
    failed: set[str] = set()
    out: dict[str, list[tuple[str, dict[str, _Def]]]] = {}
    for path in sorted({s.path for s in ids.values()}):
        encoding, orig = texts[path]
        mine = [(i, s) for i, s in ids.items() if s.path == path]
        odefs = _defs(orig)
        if odefs is None:
            failed |= {f for _, s in mine for f in _covered(s)}
            continue
        every: list[tuple[str, dict[str, _Def]]] = []
        for files in runs:
            data = files.get(path)
            got = (encoding, orig) if data is None else _decoded(data)
            rdefs = None if got is None or got[0] != encoding else odefs if data is None else _defs(got[1])
            if got is None or rdefs is None:
                failed |= {f for _, s in mine for f in _covered(s)}
                break
            run = got[1]
            placed: list[tuple[str, SealSite]] = []
            for sid, s in mine:
                name = _holder(odefs, s.first)
                moved = None if name is None or name not in rdefs else _placed(s, odefs[name], run, rdefs[name])
                if moved is None:
                    failed |= _covered(s)
                else:
                    placed.append((sid, moved))
            every.append((seal_text(run, placed), rdefs))
        out[path] = every
    return failed, out


def told_apart(texts: Mapping[str, tuple[str, str]], ids: Mapping[str, SealSite],
               runs: Sequence[Mapping[str, bytes]]) -> set[str]:
    """The judged functions (ids of :attr:`SealSite.function`) of ``ids`` (site id → site, as
    :func:`~pytest_homefield.sandbox.seal_sites.sealed_files` named them in the grading tree, whose test files
    ``texts`` holds: path → ``(encoding, text)``) that ``runs`` (each run apart's files, path → bytes: a path
    absent is the grading tree's) tell apart once sealed: a site of theirs (or a cover of one) that cannot be
    placed in some run's version (:func:`_placed`), or their definition's sealed text differing between two runs.
    Empty: every judged function's sealed text is the same in every run."""
    return _told(ids, *_sealed_runs(texts, ids, runs))


@functools.lru_cache(maxsize=64)
def _mixin(text: str, name: str) -> str | None:
    """ut46: the name of the mixin of ``text`` (a test module) whose ``tearDown`` its top-level class ``name`` inherits
    (ran66: or reaches through ``super()``: :func:`~pytest_homefield.sandbox.canary_teardown.reached_teardown`),
    ``None`` when none (or it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    owner = None if cls is None else reached_teardown(tree, cls)
    return None if owner is None else owner.name


def _told(ids: Mapping[str, SealSite], failed: set[str],
          sealed: Mapping[str, list[tuple[str, dict[str, _Def]]]]) -> set[str]:
    """:func:`told_apart` of :func:`_sealed_runs`' ``(failed, sealed)``."""
    told = set(failed)
    for path, every in sealed.items():
        functions = {s.function for s in ids.values() if s.path == path and not s.cover}
        for fn in sorted(functions - told):
            texts_of: set[str] = set()
            name = "::" + fn.split("::", 1)[-1]  # a function id's names after its file
            for text, defs in every:
                if name not in defs:
                    told.add(fn)
                    break
                node = defs[name]
                # with the module's definitions it requests by name (its fixtures: a teardown twin's run changes one,
                # tdtwin56), so a function whose fixture differs among the runs is told apart too
                asked = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
                spans = [_lines_of(node), *(_lines_of(defs["::" + a]) for a in asked if "::" + a in defs)]
                # ucln62: and a method's class's tearDown, tearDownClass and setUpClass (a unittest teardown twin's
                # run changes one)
                owner = name.rsplit("::", 1)[0]
                spans += [_lines_of(defs[f"{owner}::{m}"]) for m in ("tearDown", "tearDownClass", "setUpClass")
                          if name.count("::") > 1 and f"{owner}::{m}" in defs]
                # ut46: and the tearDown its top-level class inherits from a mixin of the module (a twin changes it)
                # (gatk66, ran66: or its own hands on, or reaches it, through super())
                mixin = _mixin(text, owner[2:]) if name.count("::") == 2 else None
                spans += [_lines_of(defs[f"::{mixin}::tearDown"])] if f"::{mixin}::tearDown" in defs else []
                # ut64: and its module's tearDownModule (a unittest teardown twin's run changes it)
                spans += [_lines_of(defs["::tearDownModule"])] if name.count("::") > 1 and "::tearDownModule" in defs \
                    else []
                texts_of.add("\0".join("".join(_lines(text)[first - 1:last]) for first, last in spans))
            if len(texts_of) > 1:
                told.add(fn)
    return told


def placed_files(texts: Mapping[str, tuple[str, str]], ids: Mapping[str, SealSite],
                 run: Mapping[str, bytes]) -> dict[str, bytes]:
    """The sealed run's files: ``run`` (one run apart's files, path → bytes) with ``ids``' sites placed and sealed in
    it (every file of theirs, ``texts`` as :func:`told_apart`'s), the rest of its files as they are. ``ValueError``
    when a site cannot be placed (:func:`told_apart` of these ``ids`` was not empty)."""
    failed, sealed = _sealed_runs(texts, ids, [run])
    if failed:
        raise ValueError(f"sealed sites of {sorted(failed)[0]} cannot be placed in the run")
    out = dict(run)
    for path, [(text, _)] in sealed.items():
        out[path] = text.encode(texts[path][0])
    return out


def sealed_in_run(texts: Mapping[str, tuple[str, str]], ids: Mapping[str, SealSite],
                  runs: Sequence[Mapping[str, bytes]], pick: int) -> tuple[set[str], dict[str, bytes] | None]:
    """``(told_apart(texts, ids, runs), placed_files(texts, ids, runs[pick]))`` with each run sealed once: the
    files ``None`` when a function is told apart."""
    failed, sealed = _sealed_runs(texts, ids, runs)
    told = _told(ids, failed, sealed)
    if told:
        return told, None
    out = dict(runs[pick])
    for path, every in sealed.items():
        out[path] = every[pick][0].encode(texts[path][0])
    return told, out


def sealed_together(texts: Mapping[str, tuple[str, str]], ids: Mapping[str, SealSite],
                    runs: Sequence[Mapping[str, bytes]], layouts: Mapping[str, FileLayout], seed: int,
                    unprotected: Collection[str] = ()
                    ) -> tuple[set[str], tuple[dict[str, bytes], tuple[str, ...]] | None]:
    """seal56: ``(told, (files, members))``, the sealed run's files showing **no member** of any group as such: each
    test file of ``layouts`` (the plan's, :attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.layouts`) laid out as
    the confirmation run lays it (:func:`~pytest_homefield.sandbox.twin_together.together`, drawn from ``seed``),
    every member of every group side by side under drawn names, but a group whose definition holds a sealed site
    (or a cover) once, sealed, under its own name: its sealed text is the same in every member (else it is told
    apart: :func:`told_apart`, and a span holding only covers whose members differ once sealed tells the functions
    they cover), so one copy is every member's (gatk57: a file defining a path twice, a property and its setter,
    tells the guarded functions of its spans, whose sites cannot be placed by name, but lays out the unprotected ones:
    it gave up the whole layout before, and seal54's fallback left them unsealed). A file with sites and no group is
    the grading tree's, sealed (the
    same in every run, else its functions are told); every other file is the first run apart's, as the
    confirmation run holds it. ``members``: the function ids of the files' group members (to soften as the
    confirmation run does). What the run shows is then the same whichever run apart holds a group's original.
    ``told`` as :func:`told_apart` (and those functions' files ``None``); ``(set(), None)`` when the members cannot
    be laid side by side (a file would not parse, a layout is not of the grading tree's text, a member's name is not
    found): the caller falls back to one run apart's files (:func:`sealed_in_run`).

    ``unprotected`` (:attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.unprotected`, alt56): function ids whose
    twins a test process tells anyway (a sentinel; a twin rewriting a line of the parent's test; one the parent check
    told): their group is laid out once, as the grading tree holds it, sealed, never told apart by the runs, whose
    differences there say nothing a process cannot read from the twin itself. Told apart, such a function was left
    unsealed with nothing guarding its expected values (a sentinel does not): a change reading them from the test's
    own lines was ``solved`` on arrow-py/arrow c78e35e8ee31 (``TestFarsiLocale::test_timeframes``, 11 sealed sites,
    a sentinel its one twin)."""
    free = set(unprotected)
    guarded = {i: s for i, s in ids.items() if s.path not in layouts or not _covered(s) <= free}
    failed, sealed = _sealed_runs(texts, guarded, runs)
    told = _told(guarded, failed, sealed)
    paths = sorted({s.path for s in ids.values()})
    laid: dict[str, FileLayout] = dict(layouts)
    plain: dict[str, bytes] = {}
    for path in paths:
        encoding, orig = texts[path]
        mine = [(i, s) for i, s in ids.items() if s.path == path]
        every = sealed.get(path, [])
        if path not in layouts:
            if len({t for t, _ in every}) > 1:  # the runs differ outside any group: not shown
                told |= {f for _, s in mine for f in _covered(s)}
            elif every:
                plain[path] = every[0][0].encode(encoding)
            continue
        lay = layouts[path]
        text = seal_text(orig, mine)
        lines = _lines(text)
        odefs = _defs(orig)
        if lay.text != orig or lay.encoding != encoding or len(lines) < len(lay.lines):
            return set(), None
        spans = []
        for span in lay.spans:
            held = [s for _, s in mine if span.start <= s.first <= span.end]
            if not held:
                spans.append(span)
                continue
            one = "".join(lines[span.start - 1:span.end])
            # an unprotected function's twin tells itself anyway: the grading tree's, sealed, once; any other span's
            # members, each sealed in its run: one text, or told
            if not all(_covered(s) <= free for s in held):
                if odefs is None:  # a path defined twice: its runs' sites were not placed (told)
                    told |= {f for s in held for f in _covered(s)}
                    spans.append(span)
                    continue
                name = next((n for n, d in odefs.items() if _lines_of(d) == (span.start, span.end)), None)
                for run_text, rdefs in every:
                    node = None if name is None else rdefs.get(name)
                    first, last = (0, 0) if node is None else _lines_of(node)
                    if node is None or "".join(_lines(run_text)[first - 1:last]) != one:
                        told |= {f for s in held for f in _covered(s)}
                        break
            spans.append(dataclasses.replace(span, members=(one,)))
        laid[path] = dataclasses.replace(lay, text=text, lines=tuple(lines), spans=tuple(spans))
    if told:
        return told, None
    built = together(laid, seed)
    if built is None:
        return set(), None
    files, names = built
    members = tuple(sorted({n for ns in names.values() for n in ns}))
    return set(), ({**runs[0], **plain, **files} if runs else {**plain, **files}, members)


def unchecked_files(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The sealed run's ``files`` (path → bytes) with each Python file's teardown checks in a teardown twin's reach
    replaced by ``pass`` (:func:`~pytest_homefield.sandbox.canary_teardown.without_checks`; gatk57): the sealed run
    is made before the runs apart, and the file's own check there told which run apart holds the teardown twin
    (the runs apart start together, at a phase of the wall clock the sealed run's end sets). The check is judged in
    the runs apart; here it only guarded a teardown the original's run judges anyway. Other files as they are."""
    out = dict(files)
    for path, data in files.items():
        if not path.endswith(".py"):
            continue
        got = _decoded(data)
        text = None if got is None else without_checks(got[1])
        if got is not None and text is not None:
            out[path] = text.encode(got[0], errors="backslashreplace")
    return out
