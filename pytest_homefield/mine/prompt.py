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
   ``issue``), except references that are part of the sentence, after a word and followed by more of it
   (``Port bpo-39057 to Requests (#7427)`` → ``Port bpo-39057 to Requests``; nu41: it became ``Port to
   Requests``), unless after a noun that means nothing without them (``Merge pull request #4 from x``) or
   followed by ``for details``; and commit shas: 7–40 lowercase hex characters with at least one digit and one letter,
   or at least 12 long with a letter (``added``, ``decade``, ``facade``, ``beef`` have no digit and
   are kept; all-digit runs are numbers and are kept). A bracket that holds one word and the keyword
   before its items goes whole: the word spoke of the item only (``(connected to https://…)``, ``[reported
   in #12]``; ux63: it left ``(connected)``); one with more of its own keeps that (``(thanks to Bob, see #3)``
   → ``(thanks to Bob)``, ``(regression in 2.0 from #12)`` → ``(regression in 2.0)``). Brackets left empty
   (``Fix x (#123)``), dangling separators and blank-line runs are collapsed. Lines that nothing was removed from are
   returned byte for byte (code blocks keep their spacing).

If everything was removed but the subject had words, the cleaned subject is returned instead, so the
result is empty only when the subject held nothing but references, URLs or shas.

Step 4 is :mod:`.prompt_inline`'s. Each step is skipped where it cannot change a line (issue 35: a scan of a
long history cleans thousands of messages): steps 1-3 for a message none of whose lines starts as they need
(:func:`_line_rules_may_apply`), step 4 for one holding nothing its patterns need.

Once the commit is verified, :func:`mask_hidden_tests` takes the hidden tests out of the prompt: a
message saying "Add test_args2sh_sep" names a hidden test id, and "in tests/test_cli.py" the file
graded. Each FAIL_TO_PASS test's name (its function, or its ``Test…`` class), node id and test file
path (and the file's name) becomes ``<hidden test>`` / ``<hidden test file>``; the task record lists
what was masked (``prompt_masked``, docs/contracts.md §6).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from pytest_homefield.mine.prompt_inline import clean_inline, maybe_inline_anywhere

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
#: Tokens before a colon at a line's start that steps 1-2 act on (:func:`_strip_trailer_block`, :func:`_drop_line`).
_RULE_TOKENS = frozenset({*KNOWN_TRAILERS, *_PERSON_TRAILERS, *_REFERENCE_TRAILERS})
#: A token before a colon at a line's start, sought after a newline in ``"\n" + message`` (its literal first
#: character lets the search skip from line to line).
_LINE_TOKEN_RE = re.compile(r"\n[^\S\n]*([\w-]+)[ \t]*:")
#: The other starts of a line that steps 1-3 drop or change, sought the same way: a separator
#: (:data:`_SEPARATOR_RE`), the other starts of :data:`_DROP_LINE_RES`, a merge subject (:data:`_MERGE_SUBJECT_RE`,
#: :data:`_MERGE_PR_TITLE_RE`); the same letters under the same ``IGNORECASE`` as those rules.
_LINE_START_RE = re.compile(
    r"\n[^\S\n]*(?:-{3}|={3}|\*{3}|_{3}|\(cherry picked|this reverts commit|see merge request|\[[^\]\n]+\]:"
    r"|merge (?:pull request|pr |remote-tracking |branch '))",
    re.IGNORECASE,
)


def _line_rules_may_apply(message: str) -> bool:
    """Whether steps 1-3 may drop or change a line of ``message`` (a superset, issue 35: most messages hold no
    such line, and then :func:`clean_prompt` skips them). A line they act on starts (past blanks) with a token
    before a colon that is a known, person or reference trailer or ends like a tool-made one (``-by``, ``-id``,
    ``-on``), or as :data:`_LINE_START_RE` says. The rules match their tokens ignoring case: an ASCII token
    matches exactly when its lower case is theirs, and any other (``\u212a``, Kelvin, is ``k`` to them) counts
    as one that may."""
    text = "\n" + message
    if _LINE_START_RE.search(text) is not None:
        return True
    if ":" not in message:
        return False
    for match in _LINE_TOKEN_RE.finditer(text):
        token = match.group(1)
        if not token.isascii():
            return True
        token = token.lower()
        if token in _RULE_TOKENS or token.endswith(_TOOL_SUFFIXES):
            return True
    return False


def _drop_line(line: str) -> bool:
    if ":" not in line and not line.lstrip().lower().startswith(_DROP_STARTS):
        return False  # a plain prose line, most of them: none of the rules can match (issue 35: scan CPU)
    if _PERSON_LINE_RE.match(line) or any(r.match(line) for r in _DROP_LINE_RES):
        return True
    m = _REFERENCE_LINE_RE.match(line)
    if m:  # "Fixes: #12" goes, "Fixes: crash on empty input" stays
        rest = clean_inline(m.group(1))
        return not rest or bool(re.fullmatch(r"\(?\s*[\"'].*[\"']\s*\)?", rest))
    return False


def _clean_lines(lines: list[str], inline: bool = True) -> list[str]:
    """Each line through :func:`clean_inline` (``inline``; without it none would change), blank ones as
    ``""``, emptied ones left out."""
    if not inline:
        return [line if line.strip() else "" for line in lines]
    out: list[str] = []
    for line in lines:
        if not line.strip():
            out.append("")
            continue
        cleaned = clean_inline(line)
        if cleaned:
            out.append(cleaned)
    return out


_BLANK_RUN_RE = re.compile(r"\n{3,}")


def _join(lines: list[str]) -> str:
    """``lines`` as one text: a run of blank lines becomes one, the ends are stripped."""
    text = "\n".join(lines)
    return (_BLANK_RUN_RE.sub("\n\n", text) if "\n\n\n" in text else text).strip()


@functools.lru_cache(maxsize=1 << 14)  # the scan asks twice per candidate (filter 9, then the prompt)
def clean_prompt(message: str) -> str:
    """The commit ``message`` as a task prompt: no trailers, references, URLs or shas.

    ``"Fix AsyncResponse.log_to_db (#1668)\\n\\n- fix it\\n\\nCo-authored-by: A <a@x>"`` becomes
    ``"Fix AsyncResponse.log_to_db\\n\\n- fix it"``. See the module docstring for the exact rules.
    Returns ``""`` only if the subject has no word left once references, URLs and shas are removed.
    """
    if "\r" in message:
        message = message.replace("\r\n", "\n").replace("\r", "\n")
    if "# Conflicts:" in message:
        message = _CONFLICTS_RE.sub("", message)
    lines = [line.rstrip() for line in message.split("\n")]
    inline = maybe_inline_anywhere(message)
    if not _line_rules_may_apply(message):
        # steps 1-3 keep every line (most messages, issue 35): the paragraphs are the message's lines, and
        # joining those with their blank runs collapsed (_join) is joining the paragraphs; then step 4
        text = _join(_clean_lines(lines, inline))
        subject = next((line for line in lines if line.strip()), None) if not text else None
        return text if subject is None else _join(_clean_lines([subject], inline))
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
    text = _join(_clean_lines(body, inline))
    if text:
        return text
    return _join(_clean_lines([subject], inline))


#: A whitespace-separated token without a word character, whole (``- ``, ``—``, ``**``): it starts with such a
#: character (a rare one: the search skips to it) that follows no other character of the token
#: (``\s`` is ``str.split``'s whitespace).
_WORDLESS_TOKEN_RE = re.compile(r"[^\w\s](?<!\S[^\w\s])[^\w\s]*(?!\S)")


#: For :func:`count_words` of an ASCII text: its bytes with ``str.split``'s ASCII separators that
#: ``bytes.split`` does not know (``\x1c``-``\x1f``) made spaces, and every byte that is neither a word
#: character nor whitespace (punctuation, control characters) deleted.
_WORD_BYTES_TABLE = bytes.maketrans(b"\x1c\x1d\x1e\x1f", b"    ")
_WORDLESS_BYTES = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) == "_" or chr(b).isspace()))


def count_words(text: str) -> int:
    """Whitespace-separated tokens of ``text`` that hold a letter or digit (a ``-`` bullet is no word). An ASCII
    text (most) in one C-level pass: its bytes without the characters that are neither word characters nor
    whitespace, split: a wordless token vanishes, every other keeps a character (the regex below tests each
    character's Unicode class: 3 µs a message, issue 35). Else every token (``str.split``) less the wordless
    ones, two C-level passes (a ``findall`` of the words made a string per word: 40 % more instructions)."""
    if text.isascii():
        return len(text.encode("ascii").translate(_WORD_BYTES_TABLE, _WORDLESS_BYTES).split())
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
