"""Step 4 of :func:`.prompt.clean_prompt`, inline: markdown links keep their text; URLs, issue and PR
references with the keyword or preposition before them, and commit shas go from one line (the module docstring
of :mod:`.prompt` gives the rules); brackets left empty, dangling separators and space runs are collapsed.

Every pattern is tried only where it can match (issue 35: the scan of a long history cleans thousands of
messages, and each pattern tried at every character of every line was most of that): a line holding none of
what the six need (:func:`_maybe_inline`) comes back as is, a message holding none on any line
(:func:`maybe_inline_anywhere`) is not looked at line by line, and the patterns that try every position of a
line are searched only over the part of it where a match can lie (:func:`_sub_tokens`,
:func:`_apply_sentinel_rules`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["clean_inline", "maybe_inline_anywhere"]

#: "Issue 1215: Add note" at the start of a line (no "#", so not caught as a reference); "Bug 2:" stays.
_ISSUE_PREFIX_RE = re.compile(
    r"^([ \t]*)(?:issue|bug|pr|gh)[ \t]*(?:#\d+|\d{3,})[ \t]*:[ \t]*(?=\S)", re.IGNORECASE
)
# --- inline items -------------------------------------------------------------------------------
# Every removable item is first replaced by a NUL sentinel; the sentinel rules below then take the
# keyword before it, brackets around it and separators after it in one place.
_S = "\x00"
# A URL may hold balanced parentheses (Wikipedia); trailing punctuation is not part of it.
_URL = (
    r"https?://(?:\([^\s()<>]*\)|[^\s<>\"'`\[\]()])*"
    r"(?:\([^\s()<>]*\)|[^\s<>\"'`\[\]().,;:!?])"
)
_MD_LINK_RE = re.compile(r"\[([^\]\n]+)\]\(\s*<?" + _URL + r">?(?:\s+\"[^\"]*\")?\s*\)")
_ANGLE_URL_RE = re.compile(r"<" + _URL + r">")
_URL_RE = re.compile(_URL)
_REF_RE = re.compile(
    r"(?<![\w&#/])(?:[A-Za-z0-9][\w.-]*/[\w.-]+)?#\d+\b"
    r"|\b(?:GH|gh|bpo)-\d+\b"
    r"|(?<![\w/])[A-Za-z0-9][\w.-]*/[\w./-]+!\d+\b"  # GitLab group/project!12
)
_SHA_RE = re.compile(r"(?<![\w./-])[0-9a-f]{7,40}(?:\.\.\.?[0-9a-f]{7,40})?(?![\w/-])")
#: What a line must hold for any of the six patterns of :func:`clean_inline` to match (a superset: a URL's
#: ``://``, a ``#12``, ``-12`` (``GH-12``/``bpo-12``), GitLab's ``!12``, 7 hex digits in a row), or start with
#: (:data:`_MAYBE_PREFIX_RE`: ``issue 123:``). Most lines hold none, and :func:`_maybe_inline` skips the six
#: (the scan cost 2-3× ``git log``, issue 35). Its regex starts with a rare character, so the search skips to
#: one; the hex run is sought in the line with every hex digit made ``\x01`` (one C-level pass each): a
#: ``[0-9a-f]{7}`` branch, tried at each of the many hex letters of English, was a fifth of cleaning a message.
_MARK_DIGIT_RE = re.compile(r"[#!-]\d")
_HEX_TO_1 = str.maketrans(dict.fromkeys("0123456789abcdef", "\x01"))
_HEX_TO_1_BYTES = bytes.maketrans(b"0123456789abcdef", b"\x01" * 16)
_HEX_RUN = "\x01" * 7
#: Seven hex digits in a row, in a text whose hex digits were made ``\x01`` (:func:`_hexed`).
_HEX_RUN_RE = re.compile(_HEX_RUN)
_HEX_RUN_BYTES_RE = re.compile(_HEX_RUN.encode())


def _hexed(line: str) -> str | bytes:
    """``line`` with every hex digit made ``\x01``, character for character (the same positions): for an
    ASCII line its bytes through a C-level table (``str.translate`` maps character by character: a tenth of
    cleaning a line, issue 35)."""
    return line.encode("ascii").translate(_HEX_TO_1_BYTES) if line.isascii() else line.translate(_HEX_TO_1)


def _hex_runs(line: str) -> Iterator[re.Match[Any]]:
    """Where ``line`` holds 7 hex digits in a row (each run of 7 to 13 once, one more per 7 after)."""
    hexed = _hexed(line)
    return _HEX_RUN_BYTES_RE.finditer(hexed) if isinstance(hexed, bytes) else _HEX_RUN_RE.finditer(hexed)


def _maybe_inline(line: str) -> bool:
    """Whether ``line`` holds what one of :func:`clean_inline`'s six patterns needs (a superset)."""
    return "://" in line or _MARK_DIGIT_RE.search(line) is not None or next(_hex_runs(line), None) is not None


_MAYBE_PREFIX_RE = re.compile(r"[ \t]*(?:issue|bug|pr|gh)[ \t]*\d", re.IGNORECASE)
#: :data:`_MAYBE_PREFIX_RE` after a newline: sought in ``"\n" + text``, whose newlines the search skips to (a
#: ``^`` under ``MULTILINE`` is tried at every character).
_MAYBE_PREFIX_LINE_RE = re.compile("\n" + _MAYBE_PREFIX_RE.pattern, re.IGNORECASE)


def maybe_inline_anywhere(text: str) -> bool:
    """Whether some line of ``text`` may pass :func:`_maybe_inline` or start like ``issue 123:`` (a superset
    of the per-line tests, over the whole text at once: most messages have no line that does, and then no
    line is tested; issue 35). A hex run cannot span a newline; the hex digits are ASCII, so the run is
    sought in the UTF-8 bytes (a C-level table; ``str.translate`` maps character by character)."""
    return ("://" in text or _MARK_DIGIT_RE.search(text) is not None
            or _HEX_RUN.encode() in text.encode("utf-8", "surrogatepass").translate(_HEX_TO_1_BYTES)
            or _MAYBE_PREFIX_LINE_RE.search("\n" + text) is not None)
_LIST = _S + r"(?:[ \t]*(?:,|&|/|\band\b)?[ \t]*" + _S + r")*"
_NOUN = r"(?:the[ \t]+)?(?:pr|pull[ \t]+request|merge[ \t]+request|issues?|tickets?|bugs?|commits?)"
#: Nouns that mean nothing without their number ("Merge PR #12" → "Merge"; "issue #12" keeps "issue").
_NOUN_ALONE = r"(?:prs?|pull[ \t]+requests?|merge[ \t]+requests?|commits?)"
_VERB = (
    r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|references?|see(?:[ \t]+also)?|cf\.?"
    r"|related|part[ \t]+of|re|address(?:es|ed)?|towards?|follow[- ]?up|backport(?:ed)?"
    r"|cherry[- ]picked|link|details|discussion|upstream)"
)
#: "closes", "Fixes issue", "see also", "in PR", "from commit", "for", "PR" before a removed item.
_KEYWORD = (
    r"(?:" + _VERB + r"(?:[ \t]+(?:in|by|from|to|of|for))?(?:[ \t]+" + _NOUN + r")?"
    r"|(?:in|from|by|via|on|to|for|of)(?:[ \t]+" + _NOUN + r")?|" + _NOUN_ALONE + r")"
)
_SENTINEL_RULES = (
    # "(connected to https://…)", "[reported in #12]": a bracket holding one word and the keyword before its
    # items goes whole (ux63: xmltodict's "(connected to https://…/issues/109) (#221)" left "(connected)"); the
    # word spoke of the item only. A bracket with more of its own ("(thanks to Bob, see #3)") keeps it.
    (
        re.compile(
            r"(?:\([ \t]*[A-Za-z][\w'-]*[ \t]+" + _KEYWORD + r"[ \t]*:?[ \t]*" + _LIST + r"[ \t]*\)"
            r"|\[[ \t]*[A-Za-z][\w'-]*[ \t]+" + _KEYWORD + r"[ \t]*:?[ \t]*" + _LIST + r"[ \t]*\])",
            re.IGNORECASE,
        ),
        "",
    ),
    # "closes #12", "Fixes: #3, #4", "see https://…" → one sentinel
    (
        re.compile(
            r"\b" + _KEYWORD + r"[ \t]*:?[ \t]*" + _LIST
            + r"(?:[ \t]+for[ \t]+(?:more[ \t]+)?(?:details|info(?:rmation)?|context|discussion)\b)?",
            re.IGNORECASE,
        ),
        _S,
    ),
    # "gh-123: Fix", "[#12] Fix", "#12 - Fix", "Fix for issue #147 -- Stop" at the start of a line (a bullet is kept)
    (
        re.compile(
            r"^([ \t]*(?:[-*+][ \t]+)?)(?:\[" + _LIST + r"\]|\(" + _LIST + r"\)|" + _LIST + r")"
            r"[ \t]*(?:(?:--|[:\-–—])(?:[ \t]+|$))?"
        ),
        r"\1",
    ),
    # "(#123)", "[#1, #2]", "(pull request #12)" → nothing, with the space before
    (re.compile(r"[ \t]*[(\[][ \t]*(?:" + _NOUN + r"[ \t]*:?[ \t]*)?" + _LIST + r"[ \t]*[)\]]", re.I), ""),
    # ", closes #1" / "; #2" / a bare item → nothing, with the separator and space before
    (re.compile(r"[ \t]*[,;]?[ \t]*" + _LIST), ""),
)
#: References that are part of the sentence (nu41, psf/requests: ``Port bpo-39057 to Requests`` became ``Port to
#: Requests``): a list of them (:data:`_REF_RE`) after a word and a blank, followed by a blank and a letter (the
#: sentence goes on: ``Port bpo-39057 to Requests``, ``Fix issue #12 in parser``), unless what follows is ``for
#: details`` (``see #5 for details`` goes), it follows a noun that means nothing without it (``Merge pull
#: request #45 from x`` loses both), or a keyword verb alone before it starts the line and a capital follows it
#: (``fix #3902 Add docs``: a label). The list is taken whole (``see #12 and #13`` is one). Where the line
#: ends, a bracket or a separator follows, the reference is said beside the sentence (``Fix x (#12)``,
#: ``Fix x, closes #3``) and goes.
_SEP = r"[ \t]*(?:,|&|/|\band\b)?[ \t]*"
_FOR_DETAILS = r"(?i:for[ \t]+(?:more[ \t]+)?(?:details|info|context|discussion))\b"
_PART_OF_SENTENCE_RE = re.compile(
    r"(?<=\w)(?P<blank>[ \t]+)(?P<refs>(?:" + _REF_RE.pattern + r")(?:" + _SEP + r"(?:" + _REF_RE.pattern + r"))*)"
    r"(?!" + _SEP + r"(?:" + _REF_RE.pattern + r"))(?=[ \t]+(?!" + _FOR_DETAILS + r")[A-Za-z])"
)
#: A noun that means nothing without its number (:data:`_NOUN_ALONE`) ending the text before a reference: the
#: keyword rule removes the two (``Merge pull request #45 from alice/x`` → ``Merge from alice/x``).
_AFTER_NOUN_ALONE_RE = re.compile(r"\b" + _NOUN_ALONE + r"$", re.IGNORECASE)
#: A keyword verb alone at the start of a line (``fix``, ``Closes issue``): with a capital after its references
#: (``fix #3902 Add proposed documentation``, psf/requests) they label the sentence that follows and go.
_LEADING_VERB_RE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?" + _VERB + r"(?:[ \t]+" + _NOUN + r")?[ \t]*$",
                              re.IGNORECASE)
#: A reference :data:`_PART_OF_SENTENCE_RE` keeps, while the others are removed: a private-use character (no
#: word character, digit or mark any pattern here looks for) between two control characters.
_KEPT = "\x02{}\x03"
_KEPT_RE = re.compile("\x02(.)\x03")


def _keep_sentence_refs(line: str) -> tuple[str, list[str]]:
    """``line`` with each list of references that is part of its sentence (:data:`_PART_OF_SENTENCE_RE`)
    replaced by a placeholder (:data:`_KEPT`), and those lists in order, for :func:`_restore`."""
    kept: list[str] = []

    def hold(m: re.Match[str]) -> str:
        if _AFTER_NOUN_ALONE_RE.search(line, 0, m.start()):
            return m.group(0)  # "Merge pull request #45 from x": the noun goes with its number
        if _LEADING_VERB_RE.match(line, 0, m.start()) and line[m.end():].lstrip(" \t")[:1].isupper():
            return m.group(0)  # "fix #3902 Add proposed documentation": a label before the sentence
        kept.append(m.group("refs"))
        return m.group("blank") + _KEPT.format(chr(0xE000 + len(kept) - 1))

    return _PART_OF_SENTENCE_RE.sub(hold, line), kept


def _restore(line: str, kept: list[str]) -> str:
    """``line`` with the placeholders of :func:`_keep_sentence_refs` given back their references."""
    return _KEPT_RE.sub(lambda m: kept[ord(m.group(1)) - 0xE000], line) if kept else line


def _has_any(*needles: str) -> Callable[[str], bool]:
    return lambda text: any(n in text for n in needles)


#: ``(pattern, replacement, may)``: ``may(text)`` is false only when the pattern cannot match ``text`` (a
#: substring test instead of a substitution; most cleaned lines need two or three of the seven, issue 35).
_TIDY_RULES: tuple[tuple[re.Pattern[str], str, Callable[[str], bool]], ...] = (
    (re.compile(r"(?:^|[ \t]+)\([ \t,;:&]*\)"), "", _has_any("(")),  # "Fix x ()" → "Fix x"; "f()" is kept
    (re.compile(r"([(\[])[ \t]*[,;:][ \t]*"), r"\1", _has_any("(", "[")),  # "(, thanks)" → "(thanks)"
    (re.compile(r"(?<=\S)[ \t]{2,}"), " ", _has_any("  ", "\t")),  # inner space runs (indentation is kept)
    (re.compile(r"[ \t]+(?=[,.;:!?](?:\s|$))"), "", _has_any(" ", "\t")),  # "word ." → "word."
    (re.compile(r"([,;:])(?:[ \t]*[,;:])+"), r"\1", _has_any(",", ";", ":")),  # ", ," → ","
    # dangling separator at line end ("--" too: "Stop caching -- fixes #12", nu52)
    (re.compile(r"[ \t]*(?:[,;:]|[ \t](?:--|[-–—]))[ \t]*$"), "", lambda t: t.rstrip(" \t\n")[-1:] in ",;:-–—"),
    # dangling separator at line start
    (re.compile(r"^([ \t]*)[,;:][ \t]*"), r"\1", lambda t: t.lstrip(" \t")[:1] in ",;:"),
)
_WORD_RE = re.compile(r"\w")


def _is_sha(text: str) -> bool:
    """Does ``text`` (lowercase hex, 7–40 chars) look like a commit id rather than a word or number?"""
    has_letter = any(c in "abcdef" for c in text)
    has_digit = any(c.isdigit() for c in text)
    return has_letter and (has_digit or len(text) >= 12)


def _sha_repl(match: re.Match[str]) -> str:
    parts = re.split(r"\.{2,3}", match.group(0))
    return _S if all(_is_sha(p) for p in parts) else match.group(0)


def _after_word(text: str) -> bool:
    """Whether a sentinel of ``text`` follows a letter or ``.`` (spaces and colons between): where the first
    sentinel rule can match, its keywords ending so (``closes``, ``cf.``). Most removed items are bare, as
    in ``Fix x (#123)``, and that rule's search was a sixth of cleaning such a line (issue 35)."""
    i = text.find(_S)
    while i != -1:
        before = text[:i].rstrip(" \t:")
        if before and (before[-1].isalpha() or before[-1] == "."):
            return True
        i = text.find(_S, i + 1)
    return False


def _sub_tokens(pattern: re.Pattern[str], repl: Any, line: str,
                anchors: Iterator[re.Match[Any]]) -> str:
    """``pattern.sub(repl, line)`` for :data:`_REF_RE` and :data:`_SHA_RE`, searched only from the start of the
    token (the whitespace-separated run) of the first of ``anchors`` to the end of the last's: each match of
    those holds one of their anchors (``#1``, ``-1``, ``!1``; a run of 7 hex digits) and no whitespace, and
    next to whitespace their lookarounds and ``\b`` see what they see at the ends of a text. Both patterns try
    each position of a line (issue 35: the reference search was a quarter of cleaning a subject like
    ``Fix x (#12)``); most of a line lies outside that span. No anchor: ``line`` as is."""
    first = next(anchors, None)
    if first is None:
        return line
    start, end = first.start(), first.end()
    for match in anchors:
        end = match.end()
    head = line[:start]
    if head and not head[-1].isspace():
        start -= len(head.rsplit(None, 1)[-1])
    tail = line[end:]
    if tail and not tail[0].isspace():
        end += len(tail.split(None, 1)[0])
    return line[:start] + pattern.sub(repl, line[start:end]) + line[end:]


def _apply_sentinel_rules(new: str) -> str:
    """:data:`_SENTINEL_RULES` in order on a line holding a sentinel, then the sentinels left removed. Each rule
    is tried only where it can match (issue 35: tried at every character, the last four were a third of
    cleaning a subject like ``Fix x (#12)``): the lone-word bracket (ux63) when the line holds a bracket; the
    keyword one after a word (:func:`_after_word`); the start one, anchored, when the line starts (past blanks
    and a bullet) with a bracket or a sentinel; the bracketed one from the blanks before the last bracket ahead
    of the first sentinel (a match holds one bracket, then only blanks, a noun and ``:`` up to its first
    sentinel), or from that sentinel; the bare one from the run of blanks, ``,`` and ``;`` before the first
    sentinel. None looks behind where it starts, so the line before that point cannot change what it matches;
    once no sentinel is left none can match."""
    lone_word, keyword, start, bracketed, bare = _SENTINEL_RULES
    if "(" in new or "[" in new:
        new = lone_word[0].sub(lone_word[1], new)
    if _after_word(new):
        new = keyword[0].sub(keyword[1], new)
    if new.lstrip(" \t-*+")[:1] in ("[", "(", _S):
        new = start[0].sub(start[1], new)
    first = new.find(_S)
    if first != -1:
        bracket = max(new.rfind("(", 0, first), new.rfind("[", 0, first))
        cut = len(new[:bracket].rstrip(" \t")) if bracket != -1 else first
        new = new[:cut] + bracketed[0].sub(bracketed[1], new[cut:])
        first = new.find(_S)
    if first != -1:
        cut = len(new[:first].rstrip(" \t,;"))
        new = new[:cut] + bare[0].sub(bare[1], new[cut:])
    return new.replace(_S, "")


def clean_inline(line: str) -> str:
    """Remove links, URLs, references and shas from one line; unchanged lines come back as is."""
    if not _maybe_inline(line) and not _MAYBE_PREFIX_RE.match(line):
        return line
    # each substitution only where its pattern can match (a substring test is far cheaper, issue 35)
    new = _ISSUE_PREFIX_RE.sub(r"\1", line) if ":" in line else line
    if "](" in new:
        new = _MD_LINK_RE.sub(r"\1", new)
    if "://" in new:
        new = _ANGLE_URL_RE.sub(_S, new) if "<" in new else new
        new = _URL_RE.sub(_S, new)
    new, kept = _keep_sentence_refs(new) if _MARK_DIGIT_RE.search(new) else (new, [])
    new = _sub_tokens(_REF_RE, _S, new, _MARK_DIGIT_RE.finditer(new))
    new = _sub_tokens(_SHA_RE, _sha_repl, new, _hex_runs(new))
    if _restore(new, kept) == line:
        return line
    if _S in new:  # every sentinel rule needs one (a markdown link or "Issue 12:" leaves none)
        new = _apply_sentinel_rules(new)
    for _ in range(2):  # a collapse can expose one more ("( , )" → "()" → "")
        before = new
        for pattern, repl, may in _TIDY_RULES:
            if may(new):
                new = pattern.sub(repl, new)
        if new == before:  # nothing collapsed: a second round would change nothing either
            break
    new = _restore(new, kept).rstrip()
    # a line that lost all its words (a bare "- https://…" bullet) disappears
    return new if _WORD_RE.search(new) else ""
