"""Unified diffs as HTML, each line classed by what it is (no library: one pass over the lines).

Classes (styled in :mod:`.assets`): ``df`` file headers (``diff --git``, ``index``, ``---``,
``+++``, modes, renames, ``Binary files``), ``dh`` hunk headers (``@@ … @@``, the function name
after them in ``dn``), ``da`` added lines, ``dd`` removed lines, ``dm`` ``\\ No newline at end of
file``; context lines are bare. Every line is escaped, control characters shown as escapes (:func:`text_html`;
the page is redacted whole, :func:`.common.frame`).
"""

from __future__ import annotations

import re
from html import escape

from pytest_homefield.records import visible

__all__ = ["text_html", "diff_html", "diff_stats", "diff_files"]

_FILE_HEAD = ("diff --git ", "index ", "--- ", "+++ ", "new file mode", "deleted file mode", "old mode", "new mode",
              "similarity index", "rename from", "rename to", "copy from", "copy to", "Binary files",
              "GIT binary patch")
_HUNK = re.compile(r"^(@@ [^@]* @@)(.*)$")


def text_html(text: str, *, quote: bool = False) -> str:
    """``text`` escaped for an HTML page, its control and format characters but newline and tab shown as
    escapes (:func:`pytest_homefield.records.visible`): a page, read in a browser or with ``cat``, replays
    nothing an agent wrote (its output, its diff, file names)."""
    return escape(visible(text, keep="\n\t"), quote=quote)


def diff_html(text: str) -> str:
    """``text`` (a unified diff) as the inside of a ``<pre>``: one ``<span class=…>`` per line that is
    not context, lines joined with newlines. In a file header, a ``---``/``+++`` line is a header,
    not a removed or added line. The text is escaped once, whole (escaping changes no line's first
    character that decides its class)."""
    out: list[str] = []
    in_header = False
    for line in text_html(text).split("\n"):
        if line.startswith("diff --git "):
            in_header = True
        if in_header and line.startswith(_FILE_HEAD):
            out.append(f'<span class="df">{line}</span>')
            if line.startswith("+++ ") or line.startswith("Binary files"):
                in_header = False
            continue
        first = line[:1]
        if first == "@":
            m = _HUNK.match(line)
            if m:
                in_header = False
                out.append(f'<span class="dh">{m.group(1)}</span><span class="dn">{m.group(2)}</span>')
                continue
        if first == "+":
            out.append(f'<span class="da">{line}</span>')
        elif first == "-":
            out.append(f'<span class="dd">{line}</span>')
        elif first == "\\":
            out.append(f'<span class="dm">{line}</span>')
        else:
            out.append(line)
    return "\n".join(out)


def diff_stats(text: str) -> tuple[int, int, int]:
    """``(files, added lines, removed lines)`` of a unified diff (header lines not counted)."""
    files = added = removed = 0
    in_header = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            files += 1
            in_header = True
            continue
        if in_header:
            if line.startswith("@@"):
                in_header = False
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return files, added, removed


def diff_files(text: str) -> list[str]:
    """The paths a unified diff changes, in order (from its ``diff --git a/X b/Y`` lines: ``Y``)."""
    out = []
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            _, _, b = line.rpartition(" b/")
            out.append(b)
    return out
