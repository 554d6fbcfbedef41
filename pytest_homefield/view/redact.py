"""What ``homefield view`` never shows: API-key shapes, and more than a page can hold.

:func:`redact` (:mod:`pytest_homefield.key_shapes`) replaces every secret-shaped token of a text with a
marker that keeps only its kind (``[redacted sk-ant-…]``). :func:`cap` cuts a text to a byte budget with one
marker line saying how much was left out and where the whole text is.

The site redacts each text once, before it is rendered (the agent's transcript, stdout, diff,
failure texts, the prompt), and marks the result :class:`Redacted`; the page frame scans only what is
not marked (ids, error lines, names: a few hundred bytes a page). Redact before :func:`cap`: a cut
through a key would leave its head too short to match.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_homefield.key_shapes import SECRET_PATTERNS, WRAPPED, redact

__all__ = ["SECRET_PATTERNS", "WRAPPED", "Redacted", "cap", "clean_join", "redact"]


@dataclass(frozen=True, slots=True)
class Redacted:
    """A ``text`` (or HTML) :func:`redact` has already been run over: :func:`clean_join` and the page
    frame (:func:`~.common.frame`) do not scan it again. A wrapper, not a ``str`` subclass: making
    one copies nothing, and it cannot be concatenated with unredacted text by mistake."""

    text: str


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
