"""What every page of the site shares: names of pages, the page frame (which redacts every part of the
page not already redacted, :func:`~.redact.clean_join`), escaping, and the caps that keep a page
under :data:`PAGE_BUDGET` bytes. :func:`pre` and :func:`diff_block` redact their text before they
cap it and return :class:`~.redact.Redacted` HTML, which the frame does not scan again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_homefield.records import UNSCORED_OUTCOMES
from pytest_homefield.report.fmt import SUSPICIOUS_SOLVE_SYMBOL, SUSPICIOUS_SOLVE_WORDS, outcome_words
from pytest_homefield.view.highlight import diff_html, text_html
from pytest_homefield.view.redact import Redacted, cap, clean_join, redact

__all__ = ["PAGE_BUDGET", "Caps", "CAPS", "attempt_page_name", "task_page_name", "e", "pre", "diff_block",
           "frame", "outcome_span", "Nav"]

#: The largest page the site should write (bytes); the caps below keep every page under it.
PAGE_BUDGET = 2 * 1024 * 1024


@dataclass(frozen=True)
class Caps:
    """Characters shown at most, per page part (the rest is named with the file that holds it):
    ``transcript`` all entries of one attempt, ``entry`` one entry, ``diff`` an attempt's diff,
    ``log`` one test's failure text, ``tests`` all failure texts of one attempt, ``prompt``, ``err``
    (agent.err, proxy.log), and on a task page ``side_total`` the diffs of all attempts together
    (shared evenly, at least ``side_min`` each) and ``gold`` the reference fix."""

    transcript: int = 400_000
    entry: int = 8_000
    diff: int = 300_000
    log: int = 8_000
    tests: int = 150_000
    prompt: int = 60_000
    err: int = 30_000
    side_total: int = 700_000
    side_min: int = 4_000
    gold: int = 150_000


CAPS = Caps()


def attempt_page_name(task_id: str, agent: str, attempt: int) -> str:
    """``attempts/<task>--<agent>--<attempt>.html`` (ids and agent names are path-safe, docs/contracts.md §5)."""
    return f"attempts/{task_id}--{agent}--{attempt}.html"


def task_page_name(task_id: str) -> str:
    """``tasks/<task>.html``."""
    return f"tasks/{task_id}.html"


def e(x: object) -> str:
    """``x`` as escaped HTML text (not redacted: :func:`frame` scans every part not yet redacted)."""
    return text_html(str(x), quote=True)


def pre(text: str, limit: int, where: str, cls: str = "") -> Redacted:
    """A ``<pre>`` of ``text``, redacted, then capped at ``limit`` characters with a marker naming ``where``."""
    body, _ = cap(redact(text), limit, where=where)
    c = f' class="{cls}"' if cls else ""
    return Redacted(f"<pre{c}>{text_html(body)}</pre>")


def diff_block(text: str | Redacted, limit: int, where: str) -> Redacted:
    """A highlighted ``<pre class="diff">`` of a unified diff, redacted (a :class:`~.redact.Redacted`
    diff is not scanned again: an attempt's diff is shown on its page and its task's), then capped."""
    raw = text.text if isinstance(text, Redacted) else redact(text)
    if not raw.strip():
        return Redacted('<p class="muted">(empty diff)</p>')
    body, _ = cap(raw, limit, where=where)
    return Redacted(f'<pre class="diff">{diff_html(body)}</pre>')


def outcome_span(outcome: str, symbol: str = "", *, flagged_solve: bool = False) -> str:
    """The outcome in its colour (the report's ``o-<outcome>`` classes), unscored ones marked; ``flagged_solve``
    (a solve flagged suspicious, counted solved, shown apart): the grid's own mark and words, class ``o-suspicious``."""
    if flagged_solve:
        sym = f"{e(SUSPICIOUS_SOLVE_SYMBOL)} " if symbol else ""
        return f'<span class="o-suspicious">{sym}{e(SUSPICIOUS_SOLVE_WORDS)}</span>'
    extra = " <em>(unscored)</em>" if outcome in UNSCORED_OUTCOMES else ""
    sym = f"{e(symbol)} " if symbol else ""
    return f'<span class="o-{e(outcome)}">{sym}{e(outcome_words(outcome))}</span>{extra}'


@dataclass(frozen=True)
class Nav:
    """The links of a page's top bar: ``up`` (the run page), ``prev``/``next`` (``j``/``k``), and any
    ``extra`` ``(href, text)`` pairs; hrefs relative to the page."""

    up: str
    prev: str | None = None
    next: str | None = None
    extra: Sequence[tuple[str, str]] = ()


_KEYS = ('<div class="keys"><b>Keys</b><br>j / k: next / previous<br>o or Enter: open the selected task<br>'
         "u: up to the run<br>/: filter tasks<br>?: this help</div>")


def frame(title: str, body: Sequence[str | Redacted], *, depth: int, nav: Nav | None = None) -> str:
    """A whole page: ``title``, the stylesheet and script (``depth`` folders below the site root),
    the top bar of ``nav``, then ``body`` (whole HTML elements), every part redacted once: the parts
    not yet :class:`~.redact.Redacted` are scanned here (:func:`~.redact.clean_join`)."""
    root = "../" * depth
    links = []
    if nav is not None:
        links.append(f'<a rel="up" href="{e(nav.up)}">run</a>')
        links += [f'<a href="{e(h)}">{e(t)}</a>' for h, t in nav.extra]
        if nav.prev:
            links.append(f'<a rel="prev" href="{e(nav.prev)}">← prev (k)</a>')
        if nav.next:
            links.append(f'<a rel="next" href="{e(nav.next)}">next (j) →</a>')
        links.append('<span class="muted">press ? for keys</span>')
    head = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(title)}</title>"
            f'<link rel="stylesheet" href="{root}site.css"></head><body>')
    top = f'<nav class="top">{"".join(links)}</nav>' if links else ""
    # every key shape is made of characters escaping leaves alone: redacting escaped HTML finds every
    # key the text held; the agent's long texts were redacted before they were rendered
    return clean_join([head, top, *body, _KEYS, f'<script src="{root}site.js"></script></body></html>', ""], "\n").text
