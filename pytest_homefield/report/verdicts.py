"""The sentences of a comparison: the verdict of :func:`.stats.compare` (re-worded after a Holm
adjustment), the notes on a degenerate interval, and the report's line for a pair it could not
compare (issue 7). The numbers come from :mod:`.stats`; only the wording is here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_homefield.report.distributions import min_tasks_for_significance
from pytest_homefield.terminal.progress import plural

if TYPE_CHECKING:
    from pytest_homefield.report.stats import Comparison

__all__ = ["fmt_num", "not_compared", "note_exact_bound", "note_point_interval", "note_whole_range", "pts",
           "reword_verdict", "verdict_for", "too_few_for_interval"]


def fmt_num(x: float) -> str:
    """Three significant digits: ``0.05``, ``95``."""
    return f"{x:.3g}"


def too_few_for_interval(n_tasks: int, alpha: float) -> str | None:
    """``'too few tasks (3) for an interval'`` when ``n_tasks`` paired tasks are fewer than
    :func:`~.distributions.min_tasks_for_significance` (6 at ``alpha`` 0.05): no difference can reach
    ``p < alpha``, and the interval (whole range or an exact bound) says nothing a reader can use
    (issue 35); ``None`` otherwise. Text, Markdown, HTML and the gate's lines print it instead of numbers."""
    if n_tasks < min_tasks_for_significance(alpha):
        return f"too few tasks ({n_tasks}) for an interval"
    return None


def pts(x: float) -> str:
    """A fraction as signed percentage points: "+12", "−9", "0", "+0.4" (Unicode minus)."""
    v = 100.0 * x
    if abs(v) < 0.005:
        return "0"
    r = round(v)
    s = f"{v:+.2g}" if r == 0 else f"{r:+d}"
    return s.replace("-", "\u2212")


def _fmt_p(p: float, alpha: float) -> str:
    """p with 2 significant digits ("<0.001" below 0.001), more when rounding would cross alpha."""
    if p < 0.001:
        return "<0.001"
    for digits in (2, 3, 4, 6):
        s = f"{p:.{digits}g}"
        if (float(s) < alpha) == (p < alpha):
            return "=" + s
    return "=" + repr(p)


def _attempts_phrase(cmp: Comparison) -> str:
    k_a, k_b = cmp.attempts
    tasks = f"{cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''}"
    if k_a == k_b and float(k_a).is_integer():
        k = int(k_a)
        return f"{tasks} \u00d7 {k} attempt{'s' if k != 1 else ''}"
    return f"{tasks} \u00d7 {(k_a + k_b) / 2:.1f} attempts on average"


def _test_phrase(cmp: Comparison) -> str:
    if cmp.test == "mcnemar":
        name = "exact McNemar"
    else:
        name = "paired permutation" if cmp.exact else "paired permutation (Monte Carlo)"
    return f"{name} over {cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''}"


def verdict_for(comparison: Comparison, *, p_adjusted: float | None = None, alpha: float | None = None,
                family: int | None = None, sanity: bool = False) -> str:
    """The one-line verdict for ``comparison``, decided by ``p_adjusted`` when given (e.g. Holm across the
    pairs of non-reference agents, :func:`.stats.holm`) else by its own p; ``alpha`` defaults to the
    comparison's. ``family``: the number of pairs the Holm adjustment ran over, said beside the adjusted
    p ("Holm-adjusted p=0.031 over 3 pairs"). ``sanity``: a pair with a reference agent (``oracle``,
    ``noop``, ``sim:P``), decided by its own p and labelled "sanity check, unadjusted" (issue 32).

    Significant (decision p < alpha): the winner is named first and Δ and the CI are shown from the
    winner's side (winner - loser, so positive), e.g.
    ``"B beats A (Δ=+12 pts, 95% CI +3…+21, p=0.01, paired permutation over 30 tasks)"``;
    with ``p_adjusted`` the Holm-adjusted p follows p.
    Otherwise Δ and the CI are first-named minus second-named (a - b), followed by the power statement:
    ``"A vs B: no detectable difference (Δ=+2 pts, 95% CI −9…+13, p=0.71; gaps under 18 pts would
    usually go unseen with 30 tasks × 3 attempts)"``; "after Holm adjustment" (and an "unadjusted" CI)
    when only the adjustment removed significance; "with 5 tasks no gap can reach p<0.05" when too few
    tasks exist for any significance. Points are rounded to whole points (2 significant digits below 1).

    Source of the wording: issue 7; v0.2's always-"a - b" sign (reference §9.5 item 8) is fixed here.
    """
    cmp = comparison
    alpha = cmp.alpha if alpha is None else alpha
    p_dec = cmp.p_value if p_adjusted is None else float(p_adjusted)
    level = f"{fmt_num(100.0 * (1.0 - cmp.alpha))}% CI"
    p_txt = f"p{_fmt_p(cmp.p_value, alpha)}"
    if p_adjusted is not None:
        p_txt += f", Holm-adjusted p{_fmt_p(float(p_adjusted), alpha)}"
        if family is not None:
            p_txt += f" over {family} pair{'s' if family != 1 else ''}"
    elif sanity:
        p_txt += " unadjusted: a sanity check against a reference agent"
    lo, hi = cmp.ci
    if p_dec < alpha and cmp.delta != 0.0:
        if cmp.delta > 0:
            win, lose, d, lo_w, hi_w = cmp.a, cmp.b, cmp.delta, lo, hi
        else:
            win, lose, d, lo_w, hi_w = cmp.b, cmp.a, -cmp.delta, -hi, -lo
        return (
            f"{win} beats {lose} (\u0394={pts(d)} pts, {level} {pts(lo_w)}\u2026{pts(hi_w)}, {p_txt}, "
            f"{_test_phrase(cmp)})"
        )
    after_holm = p_adjusted is not None and cmp.p_value < alpha
    head = "no detectable difference" + (" after Holm adjustment" if after_holm else "")
    ci_txt = too_few_for_interval(cmp.n_tasks, alpha) or f"{'unadjusted ' if after_holm else ''}{level} " \
        f"{pts(lo)}\u2026{pts(hi)}"
    n_min = min_tasks_for_significance(alpha)
    if cmp.n_tasks < n_min:
        power = f"with {cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''} no gap can reach p<{fmt_num(alpha)}"
    else:
        power = f"gaps under {round(100.0 * cmp.mde)} pts would usually go unseen with {_attempts_phrase(cmp)}"
    return f"{cmp.a} vs {cmp.b}: {head} (\u0394={pts(cmp.delta)} pts, {ci_txt}, {p_txt}; {power})"


def reword_verdict(comparison: Comparison, p_adjusted: float, *, alpha: float | None = None,
                   family: int | None = None) -> str:
    """:func:`verdict_for` with a positional ``p_adjusted`` (the report's call after Holm); same text."""
    return verdict_for(comparison, p_adjusted=p_adjusted, alpha=alpha, family=family)


def not_compared(a: str, b: str) -> str:
    """The verdict of a pair without a task that both agents have scored attempts on."""
    return f"{a} vs {b}: not compared (no task with scored attempts from both)"


def note_point_interval(n_tasks: int, diff: float) -> str:
    """Why the interval is the single point ``diff`` (every one of ``n_tasks`` differs by it and the test
    rejects)."""
    return (f"every one of the {n_tasks} tasks differs by the same {pts(diff)} pts, so the test-inversion "
            "interval is a single point")


def note_exact_bound(n_tasks: int, diff: float, share: float) -> str:
    """Why the interval is the exact bound on the ``share`` of tasks differing otherwise than by ``diff``."""
    what = "all tied" if diff == 0.0 else f"all differing by the same {pts(diff)} pts"
    return (f"{n_tasks} task{'s' if n_tasks != 1 else ''} {what}: the interval is the exact bound from 0 of "
            f"{n_tasks} tasks differing otherwise (share <= {share:.3f}), not a test inversion")


def note_whole_range(n_tasks: int, alpha: float) -> str:
    """Why there is no interval: too few tasks for any difference to reach ``p < alpha``."""
    return (f"{too_few_for_interval(n_tasks, alpha) or 'an interval'}: with {plural(n_tasks, 'task')} no "
            f"difference can reach p<{fmt_num(alpha)}")
