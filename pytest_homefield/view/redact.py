"""What ``homefield view`` never shows: API-key shapes, and more than a page can hold.

:func:`redact` replaces every secret-shaped token of a text with a marker that keeps only its
kind (``[redacted sk-ant-…]``): Anthropic keys (``sk-ant-…``), OpenAI-style keys (``sk-…``,
``sk-proj-…``), AWS access key ids (``AKIA…``), Google API keys (``AIza…``), GitHub tokens
(``ghp_…``, ``github_pat_…``), Slack tokens (``xox?-…``) and the token of an ``Authorization:
Bearer …`` (any ``bearer`` followed by a token). The shapes are the providers' published key
formats; a shape is matched only where the key has at least 16 characters after its prefix (20 for
``sk-``), so words such as ``sk-learn`` or ``task-key`` stay. :func:`cap` cuts a text to a byte
budget with one marker line saying how much was left out and where the whole text is.
"""

from __future__ import annotations

import re

__all__ = ["SECRET_PATTERNS", "cap", "redact"]

#: (kind shown in the marker, substrings one of which the shape holds, pattern). Order matters:
#: ``sk-ant-`` before ``sk-``. A pattern runs only on texts holding one of its substrings (``in`` is
#: a fast substring search; the regular expressions over every page cost a third of a large build).
SECRET_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("sk-ant-", ("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("sk-", ("sk-",), re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("AKIA", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("AIza", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("ghp_", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("xox", ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"), re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
)

#: ``Bearer <token>`` (an ``Authorization`` header as a client may log it); the word is kept.
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20)([A-Za-z0-9._~+/\-]{8,}=*)")
_BEARER_HINTS = ("earer", "EARER")


def redact(text: str) -> str:
    """``text`` with every secret-shaped token replaced by ``[redacted KIND…]`` (see the module
    docstring for the shapes). Returns ``text`` itself when it holds none."""
    for kind, hints, pattern in SECRET_PATTERNS:
        if any(h in text for h in hints):
            text = pattern.sub(f"[redacted {kind}…]", text)
    if any(h in text for h in _BEARER_HINTS):
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted token]", text)
    return text


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
