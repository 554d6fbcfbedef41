"""Split a Markdown rules file (CLAUDE.md, AGENTS.md, GEMINI.md, …) into rules (issue 14).

No Markdown parser is a dependency, so this is a careful line-based parser of the CommonMark block
structure that such files use. Each line is kept with its line ending, so :meth:`RuleSet.render`
with nothing removed gives the input back byte for byte.

Default units (``by_section=False``): every top-level list item (``-``, ``*``, ``+``, ``N.``,
``N)``) and every paragraph. An item's indented lines (nested items, indented code, a loose list's
indented paragraphs) and lazy continuation lines belong to it. A fenced code block (````` ``` ````` or
``~~~``, closed by the same character at least as long, or by the end of the file), a table (lines
starting with ``|``) and an ``@import`` line (``@path``) belong to the rule they sit in: the item or
paragraph before them in the same section; with none (right after a heading, or after another such
block), each is a rule of its own. Headings
(ATX ``#``… and setext), thematic breaks, HTML comments and YAML front matter are never rules and
stay in every variant.

``by_section=True``: each ``##`` section (its heading and everything up to the next ``#`` or ``##``
heading, deeper sub-sections included) is one unit; what comes before the first ``##`` is never
removable, and a file without ``##`` has no units.

Source of the block rules: CommonMark 0.31 §4 (leaf blocks) and §5.2 (list items); GFM tables;
Claude Code's ``@path`` imports.

The repository's rules file itself: :func:`resolve_rules_file` (where it is, and that it is one of
the repository's files) and :func:`load_rules` (read and split).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Rule", "RuleSet", "split_rules", "first_words", "resolve_rules_file", "load_rules"]

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TABLE = re.compile(r"^ {0,3}\|")
_IMPORT = re.compile(r"^ {0,3}@[^\s@]\S*\s*$")
_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")


@dataclass(frozen=True)
class Rule:
    """One removable unit: ``number`` (from 1, as printed), ``kind`` (``item``, ``para``, ``code``,
    ``table``, ``import`` or ``section``), the 0-based line range ``[start, end)`` it covers (its last
    line is never blank), its ``text`` and the title of the heading it sits under (``""`` if none)."""

    number: int
    kind: str
    start: int
    end: int
    text: str
    heading: str = ""

    @property
    def label(self) -> str:
        """``"3. Always run the tests…"``: the number and the first words."""
        return f"{self.number}. {first_words(self.text)}"


def first_words(text: str, n: int = 8, width: int = 60) -> str:
    """The first ``n`` words of ``text`` without list markers or heading hashes, at most ``width``
    characters, with ``…`` when cut."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(?:[-*+]|\d{1,9}[.)]|#{1,6})\s+", "", line).strip()
    words = line.split()
    out = " ".join(words[:n])
    cut = len(words) > n or len(text.strip().splitlines()) > 1
    if len(out) > width:
        out, cut = out[: width - 1].rstrip(), True
    return out + ("…" if cut else "")


@dataclass(frozen=True)
class RuleSet:
    """The file's lines (each with its line ending) and its rules."""

    lines: tuple[str, ...]
    rules: tuple[Rule, ...]
    by_section: bool = False

    def render(self, remove: Iterable[int] = ()) -> str:
        """The file without the rules numbered in ``remove``. With nothing removed, the input exactly.
        A blank line that would be left doubled (or leading) by a removal goes with the rule."""
        drop: set[int] = set()
        numbers = set(remove)
        unknown = numbers - {r.number for r in self.rules}
        if unknown:
            raise ValueError(f"no rule numbered {sorted(unknown)[0]} "
                             f"(the file has {len(self.rules)} rule{'s' if len(self.rules) != 1 else ''})")
        for r in self.rules:
            if r.number in numbers:
                drop.update(range(r.start, r.end))
        kept: list[str] = []
        for i, line in enumerate(self.lines):
            if i in drop:
                continue
            if not line.strip() and (i - 1 in drop or i == 0) and (not kept or not kept[-1].strip()):
                continue  # the blank after a removed rule, when one is already there
            kept.append(line)
        if drop and self.lines and self.lines[-1].strip():
            while kept and not kept[-1].strip():  # a removal at the end leaves no trailing blank lines
                kept.pop()
        return "".join(kept)

    def numbers(self) -> list[int]:
        """Every rule number, in order."""
        return [r.number for r in self.rules]


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def split_rules(text: str, *, by_section: bool = False) -> RuleSet:
    """Split ``text`` (the whole file) into a :class:`RuleSet` (see the module docstring)."""
    lines = tuple(text.splitlines(keepends=True))
    blocks = _blocks(lines)
    rules = _sections(lines, blocks) if by_section else _rules(lines, blocks)
    return RuleSet(lines=lines, rules=tuple(rules), by_section=by_section)


@dataclass
class _Block:
    kind: str  # blank heading break comment front code table import item para
    start: int
    end: int  # exclusive
    level: int = 0  # heading level
    indent: int = 0  # list-item marker indent


def _blocks(lines: tuple[str, ...]) -> list[_Block]:
    """Leaf blocks of the file, in order, covering every line."""
    out: list[_Block] = []
    i, n = 0, len(lines)
    if n and lines[0].rstrip("\r\n") == "---":  # YAML front matter
        j = 1
        while j < n and lines[j].rstrip("\r\n") not in ("---", "..."):
            j += 1
        if j < n:
            out.append(_Block("front", 0, j + 1))
            i = j + 1
    while i < n:
        line = lines[i]
        bare = line.rstrip("\r\n")
        if not bare.strip():
            out.append(_Block("blank", i, i + 1))
            i += 1
            continue
        m = _FENCE.match(bare)
        if m and not (m.group(2)[0] == "`" and "`" in bare[m.end():]):
            char, length = m.group(2)[0], len(m.group(2))
            j = i + 1
            while j < n:
                close = re.match(r"^ {0,3}(" + re.escape(char) + r"{" + str(length) + r",})[ \t]*$",
                                 lines[j].rstrip("\r\n"))
                if close:
                    break
                j += 1
            end = min(j + 1, n)
            kind = "code"
            prev = out[-1] if out else None
            # a fence indented under a list item continues the item
            if prev is not None and prev.kind == "item" and len(m.group(1)) >= 2:
                prev.end = end
            else:
                out.append(_Block(kind, i, end))
            i = end
            continue
        if _ATX.match(bare):
            out.append(_Block("heading", i, i + 1, level=len(_ATX.match(bare).group(1))))  # type: ignore[union-attr]
            i += 1
            continue
        if _COMMENT_OPEN.match(bare):
            j = i
            while j < n and "-->" not in lines[j]:
                j += 1
            out.append(_Block("comment", i, min(j + 1, n)))
            i = min(j + 1, n)
            continue
        prev = out[-1] if out else None
        # setext heading underline directly below a paragraph line
        if prev is not None and prev.kind == "para" and _SETEXT.match(bare) and prev.end == i:
            prev.kind = "heading"
            prev.level = 1 if bare.strip()[0] == "=" else 2
            prev.end = i + 1
            i += 1
            continue
        if _BREAK.match(bare):
            out.append(_Block("break", i, i + 1))
            i += 1
            continue
        if _TABLE.match(bare):
            j = i
            while j < n and _TABLE.match(lines[j]):
                j += 1
            if prev is not None and prev.kind == "item" and prev.end == i and _indent(bare) >= 2:
                prev.end = j
            else:
                out.append(_Block("table", i, j))
            i = j
            continue
        if _IMPORT.match(bare):
            if prev is not None and prev.kind == "item" and prev.end == i and _indent(bare) >= 2:
                prev.end = i + 1
            else:
                out.append(_Block("import", i, i + 1))
            i += 1
            continue
        m = _ITEM.match(bare)
        ind = _indent(bare)
        open_item = _open_item(out, i)
        if m:
            if open_item is not None and ind >= open_item.indent + 2:
                open_item.end = i + 1  # a nested item
            else:
                out.append(_Block("item", i, i + 1, indent=ind))
            i += 1
            continue
        if open_item is not None and (open_item.end == i or ind >= open_item.indent + 2):
            open_item.end = i + 1  # continuation (lazy, or indented after a blank line)
            i += 1
            continue
        if prev is not None and prev.kind == "para" and prev.end == i:
            prev.end = i + 1
        else:
            out.append(_Block("para", i, i + 1))
        i += 1
    # blank lines swallowed into an item (a loose item's inner blank lines) are fine; drop blank blocks
    # now inside an item's range
    covered: list[_Block] = []
    for b in out:
        if covered and b.kind == "blank" and covered[-1].kind == "item" and b.start < covered[-1].end:
            continue
        covered.append(b)
    return covered


def _open_item(blocks: list[_Block], i: int) -> _Block | None:
    """The list item that line ``i`` could continue: the last item, with only blank lines after it."""
    for b in reversed(blocks):
        if b.kind == "blank":
            continue
        return b if b.kind == "item" else None
    return None


def _heading_text(lines: tuple[str, ...], b: _Block) -> str:
    return lines[b.start].strip().lstrip("#").strip()


def _make_rule(number: int, kind: str, start: int, end: int, lines: tuple[str, ...], heading: str) -> Rule:
    while end > start and not lines[end - 1].strip():
        end -= 1
    return Rule(number, kind, start, end, "".join(lines[start:end]).rstrip("\r\n"), heading)


def _rules(lines: tuple[str, ...], blocks: list[_Block]) -> list[Rule]:
    spans: list[list[Any]] = []  # [kind, start, end, heading]
    heading = ""
    current: list[Any] | None = None
    for b in blocks:
        if b.kind in ("heading", "break", "front"):
            current = None
            if b.kind == "heading":
                heading = _heading_text(lines, b)
            continue
        if b.kind in ("blank", "comment"):
            continue
        if b.kind in ("item", "para"):
            current = [b.kind, b.start, b.end, heading]
            spans.append(current)
        elif current is not None and current[0] in ("item", "para"):
            current[2] = b.end  # code, table, import: part of the rule they sit in
        else:
            current = [b.kind, b.start, b.end, heading]
            spans.append(current)
    # a comment inside a rule's span stays with it; one between rules is not in any span
    return [_make_rule(i + 1, k, s, e, lines, h) for i, (k, s, e, h) in enumerate(spans)]


def _sections(lines: tuple[str, ...], blocks: list[_Block]) -> list[Rule]:
    rules: list[Rule] = []
    start: int | None = None
    title = ""
    for b in blocks:
        if b.kind == "heading" and b.level <= 2:
            if start is not None:
                rules.append(_make_rule(len(rules) + 1, "section", start, b.start, lines, title))
                start = None
            if b.level == 2:
                start, title = b.start, _heading_text(lines, b)
    if start is not None:
        rules.append(_make_rule(len(rules) + 1, "section", start, len(lines), lines, title))
    return rules


def resolve_rules_file(arg: str, cwd: Path, root: Path) -> tuple[Path, str]:
    """The rules file ``arg`` (relative to ``cwd``, or absolute) as ``(absolute path, POSIX path relative
    to the repository root)``. Raises ``ValueError`` (one line) when it is missing, not a regular
    file, or outside the repository."""
    path = Path(arg)
    path = (path if path.is_absolute() else cwd / path)
    if not path.is_file():
        raise ValueError(f"rules file {arg!r} not found (looked at {path})")
    resolved = path.resolve()
    try:
        rel = resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        raise ValueError(f"rules file {arg!r} is outside the repository {root}") from None
    if rel.startswith(".homefield/") or rel.startswith(".git/"):
        raise ValueError(f"rules file {arg!r} must be a file of the repository, not under .homefield/ or .git/")
    return resolved, rel


def load_rules(path: Path, *, by_section: bool) -> RuleSet:
    """Read (UTF-8) and split the rules file. Raises ``ValueError`` when it is not UTF-8 or has no rules."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"rules file {path.name} is not UTF-8 text") from None
    return parse_rules(text, path.name, by_section=by_section)


def parse_rules(text: str, name: str, *, by_section: bool) -> RuleSet:
    """Split the text of the rules file named ``name`` (:func:`load_rules`; an xdist worker's is the controller's
    text, sent in its ``workerinput``: ux63). Raises ``ValueError`` when it has no rules."""
    rules = split_rules(text, by_section=by_section)
    if not rules.rules:
        what = "no ## sections" if by_section else "no rules (list items or paragraphs)"
        raise ValueError(f"rules file {name} has {what}: nothing to ablate")
    return rules
