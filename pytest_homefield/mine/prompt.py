"""Turn a raw commit message into the task prompt an agent sees (docs/contracts.md §6, field ``prompt``).

The agent must get the *request*, not pointers to the answer. homefield v0.2 used the raw message
(reference §9.2 item 2): ``Closes #NNN``, PR numbers and links lead to a page that shows the diff,
shas name the answer commit, and ``Co-authored-by`` trailers are noise. :func:`clean_prompt` removes,
in this order:

1. **The trailer block** at the end of the message, following git's rules
   (``git interpret-trailers``, ``trailer.c``): the last paragraph, not the subject, made of
   ``Token: value`` lines (token without spaces, continuation lines indented). It is a trailer block
   when every line is a trailer and either one token is a known trailer (:data:`KNOWN_TRAILERS`) or
   every token ends like a tool-made one (``-by``, ``-id``, ``-on``: ``Approved-by``, ``Bug-Id``); or
   when at least 25 % of its lines are trailers and one of them is known (git's mixed-block rule).
   Unlike git, non-trailer lines of a mixed block are kept, reference trailers (``Fixes:`` …) are
   left to step 2, and a lone ``Note: ...`` paragraph is kept as prose. Blocks are peeled
   repeatedly, so ``Closes: #1`` above ``Signed-off-by:`` both go, as do dangling ``-----`` lines
   (GitHub's squash separator).
2. **Person/id trailer lines anywhere** in the body (``Co-authored-by``, ``Signed-off-by``,
   ``Change-Id``, …), and reference-trailer lines (``Fixes:``, ``Closes:``, ``Refs:`` …) whose value
   is nothing but references. ``This reverts commit <sha>.``, ``(cherry picked from commit <sha>)``,
   GitLab's ``See merge request g/p!12``, a body line ``Merge PR #12`` and markdown link definitions
   ``[1]: https://…`` go too.
3. **Merge subjects**: ``Merge pull request #12 from user/branch`` (and ``Merge branch 'x' into y``)
   is dropped when a body follows; for a GitHub PR merge the body is the PR title. ``Merge PR #12:
   Title`` keeps ``Title``; git's ``# Conflicts:`` list goes.
4. **Inline**: markdown links keep their text (``[docs](https://…)`` → ``docs``); URLs
   (``http``/``https``); issue/PR references (``#123``, ``owner/repo#123``, ``GH-123``, ``gh-123``,
   ``bpo-123``, a leading ``Issue 1215:``) together with a keyword or preposition before them
   (``closes #12``, ``Fixes: #34``, ``see #5``, ``in PR #7``, ``for #3``; a bare ``issue #12`` keeps
   ``issue``); and commit shas: 7–40 lowercase hex characters with at least one digit and one letter,
   or at least 12 long with a letter (``added``, ``decade``, ``facade``, ``beef`` have no digit and
   are kept; all-digit runs are numbers and are kept). Brackets left empty (``Fix x (#123)``),
   dangling separators and blank-line runs are collapsed. Lines that nothing was removed from are
   returned byte for byte (code blocks keep their spacing).

If everything was removed but the subject had words, the cleaned subject is returned instead, so the
result is empty only when the subject held nothing but references, URLs or shas.

Once the commit is verified, :func:`mask_hidden_tests` takes the hidden tests out of the prompt: a
message saying "Add test_args2sh_sep" names a hidden test id, and "in tests/test_cli.py" the file
graded. Each FAIL_TO_PASS test's name (its function, or its ``Test…`` class), node id and test file
path (and the file's name) becomes ``<hidden test>`` / ``<hidden test file>``; the task record lists
what was masked (``prompt_masked``, docs/contracts.md §6).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

__all__ = ["KNOWN_TRAILERS", "clean_prompt", "count_words", "message_words", "mask_hidden_tests",
           "HIDDEN_TEST", "HIDDEN_TEST_FILE"]

#: What a hidden test's name or node id becomes in a prompt (:func:`mask_hidden_tests`).
HIDDEN_TEST = "<hidden test>"
#: What a hidden test file's path or name becomes in a prompt.
HIDDEN_TEST_FILE = "<hidden test file>"

#: Trailer tokens (lower case) that git or common tooling generates. A paragraph counts as a trailer
#: block (step 1) only if it holds one of these or all of its tokens end in ``-by``/``-id``/``-on``.
KNOWN_TRAILERS = frozenset(
    {
        "co-authored-by", "signed-off-by", "reviewed-by", "acked-by", "tested-by", "reported-by",
        "suggested-by", "helped-by", "requested-by", "cc", "reviewed-on", "change-id", "part-of",
        "fixes", "closes", "close", "resolves", "refs", "ref", "see-also", "link", "bug", "issue",
        "related", "pr", "pull-request", "ghstack-source-id", "differential-revision",
    }
)

#: Trailers that name people or review systems; removed wherever they stand in the body (step 2).
_PERSON_TRAILERS = (
    "co-authored-by", "signed-off-by", "reviewed-by", "acked-by", "tested-by", "reported-by",
    "suggested-by", "helped-by", "requested-by", "cc", "reviewed-on", "change-id", "part-of",
    "ghstack-source-id",
)
#: Trailers that point at an issue, PR or commit; removed anywhere when their value is only that.
_REFERENCE_TRAILERS = (
    "fixes", "closes", "close", "resolves", "refs", "ref", "see-also", "link", "bug", "issue",
    "related", "pr", "pull-request",
)

#: Suffixes of tool-made trailer tokens (``Approved-by``, ``Bug-Id``, ``Reviewed-on``).
_TOOL_SUFFIXES = ("-by", "-id", "-on")
_TRAILER_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*\S")
_CHERRY_RE = re.compile(r"^\(cherry picked from commit [0-9a-f]+\)\s*$")
_SEPARATOR_RE = re.compile(r"^\s*(?:-{3,}|={3,}|\*{3,}|_{3,})\s*$")
_PERSON_LINE_RE = re.compile(
    r"^\s*(?:" + "|".join(map(re.escape, _PERSON_TRAILERS)) + r")[ \t]*:", re.IGNORECASE
)
_REFERENCE_LINE_RE = re.compile(
    r"^\s*(?:" + "|".join(map(re.escape, _REFERENCE_TRAILERS)) + r")[ \t]*:[ \t]*(.*)$", re.IGNORECASE
)
#: "Issue 1215: Add note" at the start of a line (no "#", so not caught as a reference); "Bug 2:" stays.
_ISSUE_PREFIX_RE = re.compile(
    r"^([ \t]*)(?:issue|bug|pr|gh)[ \t]*(?:#\d+|\d{3,})[ \t]*:[ \t]*(?=\S)", re.IGNORECASE
)
_DROP_LINE_RES = (
    re.compile(r"^\s*This reverts commit [0-9a-f]{7,40}\.?\s*$", re.IGNORECASE),
    _CHERRY_RE,
    re.compile(r"^\s*See merge request \S+\s*$", re.IGNORECASE),
    re.compile(r"^\s*\[[^\]\n]+\]:\s*https?://\S+.*$"),  # markdown link definition
    re.compile(r"^\s*Merge (?:pull request|PR) #\d+(?: from \S+)?\s*$", re.IGNORECASE),
)
_MERGE_SUBJECT_RE = re.compile(
    r"^\s*Merge (?:(?:pull request|PR) #\d+(?: from \S+)?|(?:remote-tracking )?branch '[^']*'.*)$",
    re.IGNORECASE,
)
#: "Merge PR #1562: Log new message shapes" keeps the title after the colon.
_MERGE_PR_TITLE_RE = re.compile(r"^Merge (?:PR|pull request) #\d+:\s*(?=\S)", re.IGNORECASE)
#: The "# Conflicts:" list git appends to a merge message with conflicts.
_CONFLICTS_RE = re.compile(r"^# Conflicts:\n(?:#.*\n?)*", re.MULTILINE)

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
#: What a line must hold for any of the six patterns of :func:`_clean_inline` to match (a superset: a URL's
#: ``://``, a ``#12``, ``-12`` (``GH-12``/``bpo-12``), GitLab's ``!12``, 7 hex digits in a row), or start with
#: (:data:`_MAYBE_PREFIX_RE`: ``issue 123:``). Most lines hold none, and :func:`_maybe_inline` skips the six
#: (the scan cost 2-3× ``git log``, issue 35). Its regex starts with a rare character, so the search skips to
#: one; the hex run is sought in the line with every hex digit made ``\x01`` (one C-level pass each): a
#: ``[0-9a-f]{7}`` branch, tried at each of the many hex letters of English, was a fifth of cleaning a message.
_MARK_DIGIT_RE = re.compile(r"[#!-]\d")
_HEX_TO_1 = str.maketrans(dict.fromkeys("0123456789abcdef", "\x01"))
_HEX_RUN = "\x01" * 7


def _maybe_inline(line: str) -> bool:
    """Whether ``line`` holds what one of :func:`_clean_inline`'s six patterns needs (a superset)."""
    return "://" in line or _MARK_DIGIT_RE.search(line) is not None or _HEX_RUN in line.translate(_HEX_TO_1)


_MAYBE_PREFIX_RE = re.compile(r"[ \t]*(?:issue|bug|pr|gh)[ \t]*\d", re.IGNORECASE)
_MAYBE_PREFIX_LINE_RE = re.compile("^" + _MAYBE_PREFIX_RE.pattern, re.IGNORECASE | re.MULTILINE)
_HEX_TO_1_BYTES = bytes.maketrans(b"0123456789abcdef", b"\x01" * 16)


def _maybe_inline_anywhere(text: str) -> bool:
    """Whether some line of ``text`` may pass :func:`_maybe_inline` or start like ``issue 123:`` (a superset
    of the per-line tests, over the whole text at once: most messages have no line that does, and then no
    line is tested; issue 35). A hex run cannot span a newline; the hex digits are ASCII, so the run is
    sought in the UTF-8 bytes (a C-level table; ``str.translate`` maps character by character)."""
    return ("://" in text or _MARK_DIGIT_RE.search(text) is not None
            or _HEX_RUN.encode() in text.encode("utf-8", "surrogatepass").translate(_HEX_TO_1_BYTES)
            or _MAYBE_PREFIX_LINE_RE.search(text) is not None)
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
    # "closes #12", "Fixes: #3, #4", "see https://…" → one sentinel
    (
        re.compile(
            r"\b" + _KEYWORD + r"[ \t]*:?[ \t]*" + _LIST
            + r"(?:[ \t]+for[ \t]+(?:more[ \t]+)?(?:details|info(?:rmation)?|context|discussion)\b)?",
            re.IGNORECASE,
        ),
        _S,
    ),
    # "gh-123: Fix", "[#12] Fix", "#12 - Fix" at the start of a line (a bullet is kept)
    (
        re.compile(
            r"^([ \t]*(?:[-*+][ \t]+)?)(?:\[" + _LIST + r"\]|\(" + _LIST + r"\)|" + _LIST + r")"
            r"[ \t]*(?:[:\-–—](?:[ \t]+|$))?"
        ),
        r"\1",
    ),
    # "(#123)", "[#1, #2]", "(pull request #12)" → nothing, with the space before
    (re.compile(r"[ \t]*[(\[][ \t]*(?:" + _NOUN + r"[ \t]*:?[ \t]*)?" + _LIST + r"[ \t]*[)\]]", re.I), ""),
    # ", closes #1" / "; #2" / a bare item → nothing, with the separator and space before
    (re.compile(r"[ \t]*[,;]?[ \t]*" + _LIST), ""),
)
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
    # dangling separator at line end
    (re.compile(r"[ \t]*(?:[,;:]|[ \t][-–—])[ \t]*$"), "", lambda t: t.rstrip(" \t\n")[-1:] in ",;:-–—"),
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


def _clean_inline(line: str) -> str:
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
    if "#" in new or "-" in new or "!" in new:
        new = _REF_RE.sub(_S, new)
    new = _SHA_RE.sub(_sha_repl, new)
    if new == line:
        return line
    if _S in new:  # every sentinel rule needs one (a markdown link or "Issue 12:" leaves none)
        for pattern, repl in _SENTINEL_RULES if _after_word(new) else _SENTINEL_RULES[1:]:
            new = pattern.sub(repl, new)
        new = new.replace(_S, "")
    for _ in range(2):  # a collapse can expose one more ("( , )" → "()" → "")
        before = new
        for pattern, repl, may in _TIDY_RULES:
            if may(new):
                new = pattern.sub(repl, new)
        if new == before:  # nothing collapsed: a second round would change nothing either
            break
    new = new.rstrip()
    # a line that lost all its words (a bare "- https://…" bullet) disappears
    return new if _WORD_RE.search(new) else ""


def _paragraphs(lines: list[str]) -> list[list[str]]:
    paras: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paras[-1].append(line)
        elif paras[-1]:
            paras.append([])
    return [p for p in paras if p]


def _strip_trailer_block(para: list[str]) -> list[str] | None:
    """The paragraph without its trailer lines, or ``None`` if it is not a trailer block."""
    entries: list[tuple[bool, str | None]] = []  # (is_trailer, token) per logical line
    keep_flags: list[bool] = []
    for line in para:
        if line[:1].isspace() and entries:
            keep_flags.append(not entries[-1][0])  # continuation follows its trailer
            continue
        m = _TRAILER_RE.match(line)
        if m:
            entries.append((True, m.group(1).lower()))
        elif _CHERRY_RE.match(line):
            entries.append((True, "cherry-picked-from"))
        else:
            entries.append((False, None))
        # "Fixes: crash on empty input" is prose; _drop_line removes "Fixes: #12" later
        keep_flags.append(not entries[-1][0] or entries[-1][1] in _REFERENCE_TRAILERS)
    tokens = [tok for is_trailer, tok in entries if is_trailer and tok]
    known = sum(tok in KNOWN_TRAILERS or tok == "cherry-picked-from" for tok in tokens)
    all_trailers = len(tokens) == len(entries)
    tool_made = all_trailers and all(tok.endswith(_TOOL_SUFFIXES) for tok in tokens)
    if tool_made or (known and 4 * len(tokens) >= len(entries)):
        return [line for line, keep in zip(para, keep_flags, strict=True) if keep]
    return None


def _drop_trailer_blocks(paras: list[list[str]]) -> list[list[str]]:
    while len(paras) > 1:
        last = [line for line in paras[-1] if not _SEPARATOR_RE.match(line)]
        if not last:
            paras = paras[:-1]
            continue
        stripped = _strip_trailer_block(last)
        if stripped is None:
            break
        paras = paras[:-1] + ([stripped] if stripped else [])
        if stripped:
            break
    return paras


#: Starts of a line that :func:`_drop_line` may drop although it holds no ``:`` (every other rule needs one).
_DROP_STARTS = ("this reverts commit", "(cherry picked", "see merge request", "merge pull request", "merge pr")


def _drop_line(line: str) -> bool:
    if ":" not in line and not line.lstrip().lower().startswith(_DROP_STARTS):
        return False  # a plain prose line, most of them: none of the rules can match (issue 35: scan CPU)
    if _PERSON_LINE_RE.match(line) or any(r.match(line) for r in _DROP_LINE_RES):
        return True
    m = _REFERENCE_LINE_RE.match(line)
    if m:  # "Fixes: #12" goes, "Fixes: crash on empty input" stays
        rest = _clean_inline(m.group(1))
        return not rest or bool(re.fullmatch(r"\(?\s*[\"'].*[\"']\s*\)?", rest))
    return False


def _clean_lines(lines: list[str], inline: bool = True) -> list[str]:
    """Each line through :func:`_clean_inline` (``inline``; without it none would change), blank ones as
    ``""``, emptied ones left out."""
    if not inline:
        return [line if line.strip() else "" for line in lines]
    out: list[str] = []
    for line in lines:
        if not line.strip():
            out.append("")
            continue
        cleaned = _clean_inline(line)
        if cleaned:
            out.append(cleaned)
    return out


def _join(lines: list[str]) -> str:
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@functools.lru_cache(maxsize=1 << 14)  # the scan asks twice per candidate (filter 9, then the prompt)
def clean_prompt(message: str) -> str:
    """The commit ``message`` as a task prompt: no trailers, references, URLs or shas.

    ``"Fix AsyncResponse.log_to_db (#1668)\\n\\n- fix it\\n\\nCo-authored-by: A <a@x>"`` becomes
    ``"Fix AsyncResponse.log_to_db\\n\\n- fix it"``. See the module docstring for the exact rules.
    Returns ``""`` only if the subject has no word left once references, URLs and shas are removed.
    """
    message = message.replace("\r\n", "\n").replace("\r", "\n")
    if "# Conflicts:" in message:
        message = _CONFLICTS_RE.sub("", message)
    lines = [line.rstrip() for line in message.split("\n")]
    paras = _paragraphs(lines)
    if not paras:
        return ""
    subject = paras[0][0]
    paras = _drop_trailer_blocks(paras)
    body: list[str] = []
    for i, para in enumerate(paras):
        kept = [line for j, line in enumerate(para) if (i, j) == (0, 0) or not _drop_line(line)]
        if kept:
            body.extend([*kept, ""])
    if body and _MERGE_SUBJECT_RE.match(body[0]):
        body = body[1:]  # the PR title follows; if nothing does, the fallback below keeps it
    elif body:
        body[0] = _MERGE_PR_TITLE_RE.sub("", body[0])
    # every line left is a line of the message, or the first one's end ("Merge PR #12: Title", whose "#1"
    # the message-wide test sees)
    inline = _maybe_inline_anywhere(message)
    text = _join(_clean_lines(body, inline))
    if text:
        return text
    return _join(_clean_lines([subject], inline))


#: A whitespace-separated token without a word character, whole (``- ``, ``—``, ``**``): it starts with such a
#: character (a rare one: the search skips to it) that follows no other character of the token
#: (``\s`` is ``str.split``'s whitespace).
_WORDLESS_TOKEN_RE = re.compile(r"[^\w\s](?<!\S[^\w\s])[^\w\s]*(?!\S)")


def count_words(text: str) -> int:
    """Whitespace-separated tokens of ``text`` that hold a letter or digit (a ``-`` bullet is no word): every
    token (``str.split``) less the few wordless ones, two C-level passes (a ``findall`` of the words made a
    string per word: 40 % more instructions, issue 35)."""
    return len(text.split()) - len(_WORDLESS_TOKEN_RE.findall(text))


def message_words(message: str) -> int:
    """Words in :func:`clean_prompt` of ``message``, counted by :func:`count_words`: trailers,
    ``(#123)``, URLs and shas do not count. Used by the scan for ``min_message_words`` (docs/contracts.md §2)."""
    return count_words(clean_prompt(message))


#: Code-shaped tokens: ``name()``, snake_case, ``a.b``, lowerCamel, PascalCase with an inner capital,
#: anything in backticks.
_IDENTIFIER_RES = (
    re.compile(r"`[^`\n]+`"),
    re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\("),
    re.compile(r"\b_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*\b"),
    re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*"),
    re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b"),
    re.compile(r"\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"),
)


def names_identifier(text: str) -> bool:
    """Whether ``text`` names code by an identifier (``subfactorial()``, ``classify_unique``,
    ``seekable.__getitem__``, ``StreamEvent``, anything in backticks): for ``min_message_words`` an
    identifier is enough, since a short title such as "Add classify_unique" names the very function the
    hidden tests call (docs/contracts.md §2)."""
    cleaned = clean_prompt(text)
    return any(pattern.search(cleaned) for pattern in _IDENTIFIER_RES)


def _hidden_names(test_ids: Iterable[str]) -> list[str]:
    """The names of the tests in ``test_ids`` (pytest node ids) that a prompt could name: each id's
    function without its parameters, and its classes named ``Test…``; names that do not start with
    ``test``/``Test`` (a helper module's ``check_x``) are left alone, being ordinary words of code."""
    out: list[str] = []
    for node in test_ids:
        parts = node.split("::")[1:]
        if not parts:
            continue
        *classes, func = parts
        names = [func.split("[", 1)[0], *(c for c in classes if c.startswith("Test"))]
        out += [n for n in names if n.lower().startswith("test") and n not in out]
    return out


def mask_hidden_tests(prompt: str, test_ids: Iterable[str], test_files: Iterable[str]) -> tuple[str, list[str]]:
    """``prompt`` with the hidden tests masked, and what was masked (sorted, each once).

    Masked, longest first so that a node id goes whole: the FAIL_TO_PASS node ids ``test_ids``
    (``tests/test_x.py::test_a[1]``), their test names (:func:`_hidden_names`: ``test_a``, ``TestX``,
    matched as whole identifiers, also in backticks or followed by ``()``) → :data:`HIDDEN_TEST`; the
    paths of ``test_files`` (the hidden test files), and their file names when they start with
    ``test`` or end in ``_test.py`` → :data:`HIDDEN_TEST_FILE`. Nothing else changes; a prompt naming
    none comes back as it was, with ``[]``."""
    ids = sorted({i for i in test_ids if i}, key=len, reverse=True)
    files = [f for f in dict.fromkeys(test_files) if f]
    names = [n for n in (f.rsplit("/", 1)[-1] for f in files)
             if n.startswith("test") or n.endswith(("_test.py", "_tests.py"))]
    masked: set[str] = set()
    text = prompt
    for literal, repl in [*((i, HIDDEN_TEST) for i in ids),
                          *((f, HIDDEN_TEST_FILE) for f in sorted(files, key=len, reverse=True))]:
        pattern = re.compile(r"(?<![\w./-])" + re.escape(literal) + r"(?![\w/-])")
        text, n = pattern.subn(repl, text)
        if n:
            masked.add(literal)
    for literal in sorted(names, key=len, reverse=True):
        pattern = re.compile(r"(?<![\w./-])" + re.escape(literal) + r"(?![\w/-])")
        text, n = pattern.subn(HIDDEN_TEST_FILE, text)
        if n:
            masked.add(literal)
    for name in sorted(_hidden_names(ids), key=len, reverse=True):
        pattern = re.compile(r"(?<![\w.])" + re.escape(name) + r"(?!\w)")
        text, n = pattern.subn(HIDDEN_TEST, text)
        if n:
            masked.add(name)
    return text, sorted(masked)
