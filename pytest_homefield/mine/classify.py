"""Classify what a commit changed beyond its paths: dependency manifests by content, messages by words.

The path classes (``test``, ``docs``, ``config``, ``dependency``, ``source``) are
:mod:`pytest_homefield.paths`' (one rule for mining, grading and the report). Some manifests also hold
non-dependency settings (:data:`~pytest_homefield.paths.CONTENT_CHECKED`); for those
:func:`dependency_tables_changed` compares the two versions' dependency tables, and a change outside
them counts as a source change. :func:`message_words` counts the words a commit message gives an agent.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from packaging.utils import canonicalize_name

from pytest_homefield.mine.prompt import message_words as _prompt_words
from pytest_homefield.sandbox.canaries import parse_source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "changed_manifests",
    "dependency_tables",
    "dependency_tables_changed",
    "message_words",
    "tool_settings_changed",
]

# --- manifests by content ----------------------------------------------------------------------

def _pick(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


#: A table header line, after its newline: sought in ``"\n" + text`` (a ``^`` under ``MULTILINE`` is tried at
#: every character; a literal first character lets the search skip to the next newline, issue 35).
_TOML_HEADER_RE = re.compile(r"\n[ \t]*\[\[?[ \t]*([^\]\n]*?)[ \t]*\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)
_PYPROJECT_TABLES = ("project", "build-system", "dependency-groups", "tool.poetry", "tool.pdm", "tool.uv")
_PYPROJECT_SUBTABLES = tuple(f"{t}." for t in _PYPROJECT_TABLES)


def _pyproject_subset(text: str) -> str:
    """The top-level keys and the tables that can declare dependencies. A pyproject is mostly
    tool settings, and parsing only this part makes the check several times cheaper."""
    keep: list[str] = []
    start, wanted = 0, True
    for match in _TOML_HEADER_RE.finditer("\n" + text):  # match.start(): the line's start in text
        if wanted:
            keep.append(text[start : match.start()])
        key = match.group(1).replace('"', "").replace("'", "").replace(" ", "")
        wanted = key in _PYPROJECT_TABLES or key.startswith(_PYPROJECT_SUBTABLES)
        start = match.start()
    if wanted:
        keep.append(text[start:])
    return "".join(keep)


def _toml_deps(text: str, name: str, memo: dict[Any, Any] | None = None) -> Any:
    data: dict[str, Any] = {}
    if text.strip() and name == "pyproject.toml":
        subset = _pyproject_subset(text)
        if memo is not None and subset in memo:
            return memo[subset]
        try:
            tables = _tables_of(tomllib.loads(subset), name)
        except tomllib.TOMLDecodeError:  # e.g. a header-like line inside a multi-line string
            data = tomllib.loads(text)
        else:
            if memo is not None:
                memo[subset] = tables
            return tables
    elif text.strip():
        data = tomllib.loads(text)
    return _tables_of(data, name)


def _tables_of(data: dict[str, Any], name: str) -> Any:
    """The dependency tables of a parsed ``Cargo.toml`` or ``pyproject.toml``."""
    if name == "Cargo.toml":
        tables = ("dependencies", "dev-dependencies", "build-dependencies")
        targets = data.get("target") or {}
        return {
            "top": {t: data.get(t) for t in tables},
            "target": {k: {t: _pick(v, t) for t in tables} for k, v in targets.items()},
            "workspace": _pick(data, "workspace", "dependencies"),
            "patch": data.get("patch"),
            "replace": data.get("replace"),
        }
    poetry = _pick(data, "tool", "poetry") or {}
    return {
        "project.dependencies": _pick(data, "project", "dependencies"),
        "project.optional-dependencies": _pick(data, "project", "optional-dependencies"),
        "build-system.requires": _pick(data, "build-system", "requires"),
        "dependency-groups": data.get("dependency-groups"),
        "poetry": {
            "dependencies": poetry.get("dependencies"),
            "dev-dependencies": poetry.get("dev-dependencies"),
            "extras": poetry.get("extras"),
            "group": {k: _pick(v, "dependencies") for k, v in (poetry.get("group") or {}).items()},
        },
        "pdm": _pick(data, "tool", "pdm", "dev-dependencies"),
        "uv": {k: _pick(data, "tool", "uv", k) for k in ("dev-dependencies", "sources",
                                                          "constraint-dependencies",
                                                          "override-dependencies")},
    }


def _json_deps(text: str, name: str) -> Any:
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if name == "composer.json":
        keys: tuple[str, ...] = ("require", "require-dev")
    else:
        keys = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies",
                "bundleDependencies", "bundledDependencies", "overrides", "resolutions")
    return {k: data.get(k) for k in keys}


def _setup_cfg_deps(text: str) -> Any:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)

    def lines(value: str | None) -> list[str]:
        return [ln.strip() for ln in (value or "").splitlines() if ln.strip()]

    opts = {k: lines(parser.get("options", k, fallback=None))
            for k in ("install_requires", "setup_requires", "tests_require")}
    extras = ({k: lines(v) for k, v in parser.items("options.extras_require")}
              if parser.has_section("options.extras_require") else {})
    return {"options": opts, "extras": extras}


_SETUP_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require")


def _statements(body: list[Any]) -> Iterator[ast.AST]:
    """Statements of a module, nested blocks included (no expressions: a setup.py is small, but
    walking every expression node of each version of it would dominate a scan)."""
    for node in body:
        yield node
        for attr in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(node, attr, None)
            if isinstance(sub, list):
                yield from _statements(sub)


#: A line at column 0 that is no comment, blank line or closing bracket: where a top-level statement may
#: start, unless it is an ``else``/``elif``/``except``/``finally`` clause or follows a decorator line. Its
#: newline is part of the match (a literal first character lets the search skip to the next newline instead
#: of trying a ``^`` at every character: a tenth of filter 10's work, issue 35); the text's first line is
#: looked at apart.
_COLUMN_0_RE = re.compile(r"\n[^ \t#)\]}\r\n\f]")
_CLAUSE_RE = re.compile(r"(?:else|elif|except|finally)\b")


def _chunks(text: str) -> list[str]:
    """``text`` cut before each line that may start a top-level statement (:data:`_COLUMN_0_RE`), except
    where an odd number of triple quotes came before (inside a string, probably: a guess, which
    :func:`_setup_parts` checks)."""
    chunks: list[str] = []
    start = 0
    counted = 0
    quotes = 0
    after_decorator = text[:1] == "@"
    for m in _COLUMN_0_RE.finditer(text):
        pos = m.start() + 1
        quotes += text.count('"""', counted, pos) + text.count("'''", counted, pos)
        counted = pos
        if not after_decorator and quotes % 2 == 0 and not _CLAUSE_RE.match(text, pos):
            chunks.append(text[start:pos])
            start = pos
        after_decorator = text[pos] == "@"
    chunks.append(text[start:])
    return chunks


class _SetupPart:
    """What one run of top-level statements of a ``setup.py`` contributes to its dependency tables: the
    names it binds at module level (in order) and the ``setup(...)`` calls among its statements, nested
    blocks included (in :func:`_statements` order); ``dumps`` caches :func:`ast.dump` per node; ``spans``
    the first and last line (1-based, in the chunk) of every node whose dump can be a table: the values
    bound and the dependency keywords' values; ``lines`` the chunk's text, line by line."""

    __slots__ = ("assigns", "calls", "dumps", "spans", "lines")

    def __init__(self, body: list[ast.stmt], lines: list[str]) -> None:
        self.assigns: list[tuple[str, ast.expr]] = [
            (target.id, node.value) for node in body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)]
        self.calls: list[ast.Call] = []
        for stmt in _statements(body):
            call = getattr(stmt, "value", None)
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) == "setup":
                self.calls.append(call)
        self.dumps: dict[int, str] = {}
        values = [value for _, value in self.assigns] + [
            kw.value for call in self.calls for kw in call.keywords if kw.arg in _SETUP_KEYWORDS or kw.arg is None]
        self.spans = [(v.lineno, v.end_lineno or v.lineno) for v in values]
        self.lines = lines

    def dump(self, node: ast.expr) -> str:
        """``ast.dump(node)`` of a node this part holds, computed once."""
        got = self.dumps.get(id(node))
        if got is None:
            got = self.dumps[id(node)] = ast.dump(node)
        return got

    def like(self, lines: list[str]) -> _SetupPart | None:
        """This part for a chunk of ``lines`` that differs from this one's only inside plain string literals
        (:data:`_PLAIN_STRING_LINE_RE`) on lines no table covers (a ``version='2.0.dev3'`` bump: a third of
        pytest's ``setup.py`` versions, each a long ``setup(...)`` call to parse), else ``None``. Exact: only
        the characters between the quotes differ, and they hold no quote, backslash, brace or newline, so the
        chunk reads as the same tokens, in a string or out of one, whatever came before; its syntax tree is
        this one with a constant changed outside every node :meth:`dump` can be asked for."""
        if len(lines) != len(self.lines):
            return None
        changed = False
        for i, (old, new) in enumerate(zip(self.lines, lines, strict=True)):
            if old == new:
                continue
            a, b = _PLAIN_STRING_LINE_RE.fullmatch(old), _PLAIN_STRING_LINE_RE.fullmatch(new)
            if a is None or b is None or a.group(1, 4) != b.group(1, 4) or (i and self.lines[i - 1].endswith("\\")):
                return None
            if any(first <= i + 1 <= last for first, last in self.spans):
                return None
            changed = True
        if not changed:
            return None
        twin = _SetupPart.__new__(_SetupPart)
        twin.assigns, twin.calls, twin.dumps, twin.spans, twin.lines = (
            self.assigns, self.calls, self.dumps, self.spans, lines)
        return twin


#: A line that is one ``name = 'text'`` (a keyword argument or an assignment; a trailing comma and comment
#: allowed) whose text is a plain one: letters, digits and ``._+-/:@~``. Groups: up to and including the
#: opening quote, the text, the rest.
_PLAIN_STRING_LINE_RE = re.compile(
    r"""([ \t]*[A-Za-z_]\w*[ \t]*=[ \t]*(['"]))([\w.+\-/:@~]*)(\2[ \t]*,?[ \t]*(?:#.*)?)""", re.ASCII)
#: How many recently parsed chunks of each line count :func:`_setup_parts` compares a new chunk with.
_RECENT = 4


def _setup_parts(text: str, memo: dict[Any, Any] | None) -> list[_SetupPart]:
    """The :class:`_SetupPart` of each chunk of ``text`` (:func:`_chunks`), each chunk parsed and walked once
    per ``memo`` (most versions of a ``setup.py`` change one part of it: parsing and walking each version
    whole was a fifth of a scan's Python work on pytest, issue 35), or not at all when it differs from one
    of the last chunks parsed only in a plain string no table holds (:meth:`_SetupPart.like`). A chunk that
    does not parse alone (cut inside brackets, a string or a continued line) has the whole text read as one
    part instead. Exact: a chunk that parses alone ends at bracket depth 0 outside any string, and the next
    one starts at column 0, where the tokenizer is as at the start of a file; so the whole text's statements
    are the chunks' in order (their line numbers aside, which :func:`ast.dump` leaves out). Raises
    ``SyntaxError`` as :func:`ast.parse` does."""
    if memo is None:
        return [_SetupPart(parse_source(text).body, [])]
    parts: list[_SetupPart] = []
    for chunk in _chunks(text):
        key = ("setup.py", chunk)
        got = memo.get(key)
        if got is None:
            lines = chunk.split("\n")
            recent: list[_SetupPart] = memo.setdefault(("setup.py lines", len(lines)), [])
            got = next((twin for part in recent if (twin := part.like(lines)) is not None), None)
            if got is None:
                try:
                    body = parse_source(chunk).body
                except SyntaxError:
                    return [_SetupPart(parse_source(text).body, [])]
                got = _SetupPart(body, lines)
            memo[key] = got
            recent.insert(0, got)
            del recent[_RECENT:]
        parts.append(got)
    return parts


def _setup_py_deps(text: str, memo: dict[Any, Any] | None = None) -> Any:
    parts = _setup_parts(text, memo)
    assigned: dict[str, tuple[_SetupPart, ast.expr]] = {}
    for part in parts:
        for name, value in part.assigns:
            assigned[name] = (part, value)
    found: dict[str, str] = {}
    for part in parts:
        for call in part.calls:
            for kw in call.keywords:
                if kw.arg not in _SETUP_KEYWORDS and kw.arg is not None:
                    continue
                owner, value = part, kw.value
                if isinstance(value, ast.Name) and value.id in assigned:
                    owner, value = assigned[value.id]
                # setup(**options): the whole mapping
                found["**" if kw.arg is None else kw.arg] = owner.dump(value)
    return found


_READERS: dict[str, Callable[[str, str], Any]] = {
    "pyproject.toml": _toml_deps,
    "Cargo.toml": _toml_deps,
    "package.json": _json_deps,
    "composer.json": _json_deps,
    "setup.cfg": lambda text, name: _setup_cfg_deps(text),
    "setup.py": lambda text, name: _setup_py_deps(text),
}


def dependency_tables(path: str, content: bytes | None, *, memo: dict[Any, Any] | None = None) -> Any:
    """The dependency declarations of one version of a manifest in :data:`CONTENT_CHECKED`, as a
    value that compares equal exactly when the declarations are equal (formatting and comments
    never count). ``None`` content means the file is absent. Raises ``ValueError`` if the part
    read does not parse (for ``pyproject.toml`` only its top-level keys and the tables below are
    read, so a broken ``[tool.*]`` table elsewhere passes) or the base name is not content-checked.

    Read: ``pyproject.toml`` ([project] dependencies and optional-dependencies, [build-system]
    requires, [dependency-groups], [tool.poetry] dependency tables and groups, [tool.pdm]/[tool.uv]
    dev, source, constraint and override tables), ``setup.cfg`` (install/setup/tests requires and
    extras), ``setup.py`` (the same ``setup()`` keywords, read with ``ast``; a name bound at module
    level is followed once), ``package.json`` (the dependency maps, overrides, resolutions),
    ``composer.json`` (require, require-dev), ``Cargo.toml`` (dependency tables, target and
    workspace ones too, patch, replace).

    ``memo`` (a dict the caller keeps for a scan): pyproject tables kept per text of the part read, so
    versions that differ only in tool settings (most, e.g. 24 distinct parts in pytest's 77 versions) are
    parsed once, and a ``setup.py``'s statements per chunk (:func:`_setup_parts`); the values it holds are
    shared between calls: compare them, never change them.
    """
    name = path.rsplit("/", 1)[-1]
    reader = _READERS.get(name)
    if reader is None:
        raise ValueError(f"{name}: not a content-checked manifest")
    try:
        text = (content or b"").decode("utf-8")
        if name == "pyproject.toml":
            return _toml_deps(text, name, memo)
        return _setup_py_deps(text, memo) if name == "setup.py" else reader(text, name)
    except (SyntaxError, configparser.Error, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: does not parse: {exc}") from None


#: The ``[tool.X]`` tables of a ``pyproject.toml`` that change what the tests see or what the build makes (names
#: compared as :func:`~packaging.utils.canonicalize_name` gives them, a name or its ``-`` extensions:
#: ``setuptools-scm``, ``pytest-env``): pytest's own, the build backends' and the environment managers' (they
#: also install, version or build the code).
BEHAVIOUR_TOOLS = ("pytest", "setuptools", "hatch", "poetry", "uv", "pdm", "flit", "pixi", "maturin",
                   "scikit-build", "meson-python", "versioningit")


def tool_settings_changed(old: bytes | None, new: bytes | None) -> list[str] | None:
    """The ``[tool.X]`` table names (sorted) that differ between two versions of a ``pyproject.toml`` whose
    change is confined to tool settings no test or build reads (linters, formatters, type checkers,
    coverage, changelog tools: configuration, like ``ruff.toml`` or ``mypy.ini``); ``[]`` when the two
    parse to the same tables (comments, formatting). ``None`` when the change may change behaviour: a side
    absent (added or deleted file), a side that does not parse as TOML, any difference outside ``[tool]``,
    or one in a :data:`BEHAVIOUR_TOOLS` table or in the project's own (``[tool.<project.name>]``, which the
    project itself may read). Parses both versions whole: the scan asks only for a candidate whose one
    non-test change is this file."""
    if old is None or new is None:
        return None
    try:
        before, after = tomllib.loads(old.decode("utf-8")), tomllib.loads(new.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tools_before, tools_after = before.pop("tool", {}), after.pop("tool", {})
    if before != after or not isinstance(tools_before, dict) or not isinstance(tools_after, dict):
        return None
    changed = sorted(k for k in tools_before.keys() | tools_after.keys() if tools_before.get(k) != tools_after.get(k))
    names = {str(_pick(data, "project", "name") or "") for data in (before, after)} - {""}
    behaviour = {canonicalize_name(n) for n in names}
    for name in changed:
        key = canonicalize_name(name)
        if key in behaviour or any(key == t or key.startswith(t + "-") for t in BEHAVIOUR_TOOLS):
            return None
    return changed


_UNREADABLE = object()


def changed_manifests(versions: list[list[tuple[str, str, str]]], blobs: dict[str, bytes]) -> list[list[str]]:
    """Filter 10 of the scan for several commits at once: for each commit's content-checked manifests
    ``(path, old blob id, new blob id)`` (all zeros: absent), the paths whose dependency tables differ,
    given the blobs' contents by id. Each blob is parsed once (a blob is usually the new side of one commit
    and the old side of the next), with one ``memo`` (:func:`dependency_tables`) for all; a version missing
    from ``blobs`` or that does not parse counts as a change (the safe answer)."""
    tables: dict[tuple[str, str], Any] = {}
    memo: dict[Any, Any] = {}

    def tables_of(path: str, sha: str) -> Any:
        key = (path.rsplit("/", 1)[-1], sha)
        if key not in tables:
            present = not sha.strip("0") or sha in blobs
            try:
                tables[key] = dependency_tables(path, blobs.get(sha), memo=memo) if present else _UNREADABLE
            except ValueError:
                tables[key] = _UNREADABLE
        return tables[key]

    result = []
    for files in versions:
        changed = []
        for path, old, new in files:
            before, after = tables_of(path, old), tables_of(path, new)
            if before is _UNREADABLE or after is _UNREADABLE or before != after:
                changed.append(path)
        result.append(changed)
    return result


def dependency_tables_changed(path: str, old: bytes | None, new: bytes | None) -> bool:
    """Whether a manifest's dependency declarations differ between two versions of its content
    (:func:`dependency_tables`; ``None`` = absent on that side, i.e. added or deleted).

    A file that is not content-checked, or a version that does not parse, counts as changed: the
    safe answer, since the commit is then not a task.
    """
    try:
        return bool(dependency_tables(path, old) != dependency_tables(path, new))
    except ValueError:
        return True


# --- messages ----------------------------------------------------------------------------------

_MERGE_SUBJECT_RE = re.compile(
    r"^Merge (?:pull request #\d+ from \S+|(?:remote-tracking )?branch(?:es)? .*|tag .*|commit .*)$"
)


def message_words(message: str) -> int:
    """Words a commit message gives an agent to work from: the words of the cleaned prompt
    (:func:`pytest_homefield.mine.prompt.message_words`: no trailers, PR/issue references, URLs, shas or
    generated merge subjects), so the scan filter and the prompt agree."""
    stripped = message.strip()
    if stripped.startswith("Merge "):  # what the subject pattern starts with: the rest need no lines (issue 35)
        lines = stripped.splitlines()
        if _MERGE_SUBJECT_RE.match(lines[0].strip()):
            message = "\n".join(lines[1:])  # git's generated merge subject is no description
    return _prompt_words(message)
