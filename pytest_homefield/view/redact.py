"""What ``homefield view`` never shows: API-key shapes, and more than a page can hold.

:func:`redact` replaces every secret-shaped token of a text with a marker that keeps only its
kind (``[redacted sk-ant-…]``): Anthropic keys (``sk-ant-…``), OpenAI-style keys (``sk-…``,
``sk-proj-…``), AWS access key ids (``AKIA…``), Google API keys (``AIza…``), GitHub tokens
(``ghp_…``, ``github_pat_…``), Slack tokens (``xox?-…``) and the token of an ``Authorization:
Bearer …`` (``bearer``, ``Bearer`` or ``BEARER`` followed by a token). The shapes are the providers'
published key formats; a shape is matched only where the key has at least 16 characters after its prefix (20 for
``sk-``), so words such as ``sk-learn`` or ``task-key`` stay. A key a client wrapped over two lines at its
terminal's width is redacted whole (:data:`WRAPPED`). :func:`cap` cuts a text to a byte
budget with one marker line saying how much was left out and where the whole text is.

The site redacts each text once, before it is rendered (the agent's transcript, stdout, diff,
failure texts, the prompt), and marks the result :class:`Redacted`; the page frame scans only what is
not marked (ids, error lines, names: a few hundred bytes a page). Redact before :func:`cap`: a cut
through a key would leave its head too short to match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SECRET_PATTERNS", "Redacted", "cap", "clean_join", "redact"]

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


#: ``Bearer <token>`` (an ``Authorization`` header as a client may log it); the word is kept.
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20)([A-Za-z0-9._~+/\-]{8,}=*)")
_BEARER_HINTS = ("earer", "EARER")  # two substring scans: a case-blind search is ten times slower


@dataclass(frozen=True, slots=True)
class Redacted:
    """A ``text`` (or HTML) :func:`redact` has already been run over: :func:`clean_join` and the page
    frame (:func:`~.common.frame`) do not scan it again. A wrapper, not a ``str`` subclass: making
    one copies nothing, and it cannot be concatenated with unredacted text by mistake."""

    text: str


def redact(text: str) -> str:
    """``text`` with every secret-shaped token replaced by ``[redacted KIND…]`` (see the module
    docstring for the shapes); ``text`` itself (not a copy) when it holds none."""
    found = [patterns for gate, patterns in SECRET_PATTERNS if gate.search(text) is not None]
    if found and "\n" in text:
        text = _unwrap(text)
    for patterns in found:
        for kind, pattern in patterns:
            text = pattern.sub(f"[redacted {kind}…]", text)
    if _BEARER_HINTS[0] in text or _BEARER_HINTS[1] in text:
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted token]", text)
    return text


def clean_join(parts: Iterable[str | Redacted], sep: str = "") -> Redacted:
    """``sep.join(parts)``, redacted: :class:`Redacted` parts are kept as they are, each run of other
    parts is joined and redacted once. The parts must be whole HTML elements or plain words (a key
    shape has no ``<``, ``>`` or space, so none spans two parts that each begin and end at a tag)."""
    out: list[str] = []
    run: list[str] = []
    for part in parts:
        if isinstance(part, Redacted):
            if run:
                out.append(redact(sep.join(run)))
                run.clear()
            out.append(part.text)
        else:
            run.append(part)
    if run:
        out.append(redact(sep.join(run)))
    return Redacted(sep.join(out))


def cap(text: str, limit: int, *, where: str) -> tuple[str, int]:
    """``(text cut to about limit characters, characters left out)``. A cut text ends at a line start
    when one is near, then one line ``[homefield view: N characters more not shown; the whole text is
    in WHERE]``. ``limit`` counts characters (the pages are UTF-8: at most 4 bytes each)."""
    if len(text) <= limit:
        return text, 0
    cut = text.rfind("\n", max(0, limit - 2000), limit)
    head = text[: cut + 1 if cut > 0 else limit]
    left = len(text) - len(head)
    return head + f"\n[homefield view: {left:,} characters more not shown; the whole text is in {where}]\n", left
