"""API-key shapes, and :func:`redact`, which replaces each with a marker that keeps only its kind.

:func:`redact` replaces every secret-shaped token of a text with a marker that keeps only its
kind (``[redacted sk-ant-…]``): Anthropic keys (``sk-ant-…``), OpenAI-style keys (``sk-…``,
``sk-proj-…``), AWS access key ids (``AKIA…``), Google API keys (``AIza…``), GitHub tokens
(``ghp_…``, ``github_pat_…``), Slack tokens (``xox?-…``) and the token of an ``Authorization:
Bearer …`` (``bearer``, ``Bearer`` or ``BEARER`` followed by a token). The shapes are the providers'
published key formats; a shape is matched only where the key has at least 16 characters after its prefix (20 for
``sk-``), so words such as ``sk-learn`` or ``task-key`` stay. A key a client wrapped over two lines at its
terminal's width is redacted whole (:data:`WRAPPED`).

A ground module: a result's agent-written words are redacted where the :class:`~pytest_homefield.records.Result`
is made (an agent's error line is its stderr's last line, which the terminal, every report and the JUnit XML
show), and ``homefield view`` redacts every text of its pages (:mod:`pytest_homefield.view.redact`).
"""

from __future__ import annotations

import re

__all__ = ["SECRET_PATTERNS", "WRAPPED", "redact"]

#: (gate, ((kind shown in the marker, pattern), …)). Order matters: ``sk-ant-`` before ``sk-``. The
#: patterns of a gate run only on texts where the gate (the shapes' literal prefix, without the
#: ``\b`` that would make the search slow) is found: each gate is one fast scan, about 0.5–1 ms per
#: MB, and most texts hold none. Eighteen substring checks over every page took a quarter of a large
#: build's CPU.
SECRET_PATTERNS: tuple[tuple[re.Pattern[str], tuple[tuple[str, re.Pattern[str]], ...]], ...] = (
    (re.compile("sk-"), (("sk-ant-", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
                         ("sk-", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")))),
    (re.compile("A[KS]IA"), (("AKIA", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),)),
    (re.compile("AIza"), (("AIza", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),)),
    (re.compile("gh[pousr]_|github_pat_"),
     (("ghp_", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),)),
    (re.compile("xox[abprs]-"), (("xox", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),)),
)

#: Keys a client wrapped over two lines (rich and aider wrap their output at the terminal's width): (kind, a head
#: that ends its line and the next line's run of key characters, the shortest and longest whole key in characters).
#: The two are one key when the head alone is shorter than a whole key and head and run together are as long as one:
#: a key ending a line before another line's word (``KEY=sk-…`` then ``OTHER=…``) is not joined to it. Before, the
#: shape matched the head alone and the next line showed the rest (ratk46: 67 of a 108-character ``sk-ant-`` key),
#: and a 40-character ``ghp_`` token split anywhere matched nowhere.
WRAPPED: tuple[tuple[str, re.Pattern[str], int, int], ...] = tuple(
    (kind, re.compile(rf"\b(?P<head>{head}[{chars}]*)\r?\n(?P<run>[A-Za-z0-9][{chars}]*)"), low, high)
    for kind, head, chars, low, high in (
        ("sk-ant-", "sk-ant-", r"A-Za-z0-9_\-", 100, 130),  # sk-ant-api03-…: 108
        ("sk-", "sk-(?:proj|svcacct|admin)-", r"A-Za-z0-9_\-", 120, 220),  # about 164
        ("sk-", "sk-", r"A-Za-z0-9_\-", 45, 60),  # the older sk- + 48
        ("AKIA", "(?:AKIA|ASIA)", "0-9A-Z", 20, 20),
        ("AIza", "AIza", r"0-9A-Za-z_\-", 39, 39),
        ("ghp_", "gh[pousr]_", "A-Za-z0-9", 40, 40),
        ("ghp_", "github_pat_", "A-Za-z0-9_", 80, 100),  # github_pat_ + 82
    ))


def _unwrap(text: str) -> str:
    """``text`` with each key of :data:`WRAPPED` split over two lines replaced by its marker and the line break."""
    for kind, pattern, low, high in WRAPPED:
        def whole(m: re.Match[str], kind: str = kind, low: int = low, high: int = high) -> str:
            head = len(m.group("head"))
            return f"[redacted {kind}…]\n" if head < low <= head + len(m.group("run")) <= high else m.group()
        text = pattern.sub(whole, text)
    return text


#: ``Bearer <token>`` (an ``Authorization`` header as a client may log it); the word is kept. The space and the
#: token's characters may be written as a JSON text or a URL writes them (``\u0020``, ``\/``, ``\u002b``, ``%2F``,
#: ``+`` for the space): before, ``Bearer abcdefgh\/ijkl…`` lost its head only and ``Bearer\u0020…`` nothing.
_TOKEN_CHAR = r"(?:[A-Za-z0-9._~+/\-]|\\/|\\u00[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2})"
_BEARER = re.compile(rf"(?i)\b(bearer)(\s+|%20|\\u0020|\\t|\+)({_TOKEN_CHAR}{{8,}}(?:=|\\u003[dD]|%3[dD])*)")
_BEARER_HINTS = ("earer", "EARER")  # two substring scans: a case-blind search is ten times slower


#: A run of key characters holding at least one JSON string escape that could stand in a key: ``\u00XX`` of a
#: letter, digit, ``-`` or ``_`` (``sk-ant-api03-\u0041…``: JSON text may escape any character, and the key's head
#: then ended at the backslash, too short for any shape), or ``\n`` / ``\r`` (a key a client wrapped over two
#: lines, as a JSON log line holds it). A run starts where key characters do (the look-behind: each word is
#: scanned once) and only where 16 key characters or backslashes follow (no key is shorter; ``one\ntwo`` of an
#: error's JSON is let be).
_KEY_ESCAPE = r"\\u00(?:3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|2[Dd]|5[Ff])"
_ESCAPED_RUN = re.compile(r"(?<![A-Za-z0-9_\-])(?=[A-Za-z0-9_\-\\]{16})[A-Za-z0-9_\-]*"
                          rf"(?:(?:{_KEY_ESCAPE}|\\[nr])[A-Za-z0-9_\-]*)+")
_ONE_ESCAPE = re.compile(rf"(?:{_KEY_ESCAPE}|\\[nr])")
_LINE_ESCAPES = {"\\n": "\n", "\\r": "\r"}


def _escaped_keys(text: str) -> str:
    """``text`` with each run of :data:`_ESCAPED_RUN` that holds a key once its escapes are decoded replaced by
    the redacted decoded run (its line breaks written ``\\n`` again, so a JSON line stays one line); every other
    run is kept as written (a diff's ``"\\u0041"`` is the code it shows)."""
    def decoded(m: re.Match[str]) -> str:
        run = m.group()
        plain = _ONE_ESCAPE.sub(lambda e: _LINE_ESCAPES.get(e.group()) or chr(int(e.group()[2:], 16)), run)
        shown = _redact(plain)
        return run if shown == plain else shown.replace("\r", "\\r").replace("\n", "\\n")
    return _ESCAPED_RUN.sub(decoded, text)


def redact(text: str) -> str:
    """``text`` with every secret-shaped token replaced by ``[redacted KIND…]`` (see the module
    docstring for the shapes), a key written with JSON string escapes too (:data:`_ESCAPED_RUN`); ``text``
    itself (not a copy) when it holds none."""
    if "\\" in text and ("\\u00" in text or "\\n" in text or "\\r" in text):
        text = _escaped_keys(text)
    return _redact(text)


def _redact(text: str) -> str:
    """:func:`redact` but for keys written with escapes."""
    # a substring every shape holds (a gate's literal part, the bearer word's), or none: most texts, let through
    # without a regular expression. A result redacts up to four texts of the agent's, on each record read: with the
    # gates first, reading 100,000 results took 1.99 s of CPU (1.14 s unredacted); with these checks, 1.4 s (a loop
    # over a tuple of them cost more than the rest)
    if not ("sk-" in text or "KIA" in text or "SIA" in text or "AIza" in text or "gh" in text
            or "github_pat_" in text or "xox" in text or "earer" in text or "EARER" in text):
        return text
    found = [patterns for gate, patterns in SECRET_PATTERNS if gate.search(text) is not None]
    if found and "\n" in text:
        text = _unwrap(text)
    for patterns in found:
        for kind, pattern in patterns:
            text = pattern.sub(f"[redacted {kind}…]", text)
    if _BEARER_HINTS[0] in text or _BEARER_HINTS[1] in text:
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted token]", text)
    return text
