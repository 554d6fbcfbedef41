"""The page of one task: "why did A solve this and B not", on one screen.

The task's prompt, its spec score with the parts that made it
(:func:`pytest_homefield.mine.message_score.spec_breakdown`, and what the hidden tests need that the
prompt does not name), its hidden test ids, then side by side: the reference fix (the gold patch) and
one column per agent with each attempt's outcome (linked to its page), the hidden ids it failed, the
files it changed against the reference's, its edit-F1 to the reference, and its diff. The diffs share
:attr:`~.common.Caps.side_total` characters. The attempts' diffs come redacted from their pages
(:class:`~.attempt_page.AttemptSummary`) and are not scanned again: the side-by-side section is put together
with :func:`~.redact.clean_join`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_homefield.mine.message_score import spec_breakdown, unnamed_requirements
from pytest_homefield.records import Task
from pytest_homefield.report.compute import SYMBOLS
from pytest_homefield.report.family import COST_REPORTED, cost_measured
from pytest_homefield.report.fmt import fmt_usd
from pytest_homefield.report.model import TaskRow
from pytest_homefield.terminal.progress import plural
from pytest_homefield.view.attempt_page import AttemptSummary
from pytest_homefield.view.common import CAPS, Nav, attempt_page_name, diff_block, e, frame, outcome_span, pre
from pytest_homefield.view.data import AttemptRef
from pytest_homefield.view.highlight import diff_files
from pytest_homefield.view.redact import Redacted, clean_join

__all__ = ["render_task", "spec_parts"]


def spec_parts(task: Task) -> list[str]:
    """The spec score section: score and verdict, each part of the formula, and the unnamed
    identifiers and strings the hidden tests need."""
    prompt = task.prompt if task.mode == "merge" else None
    try:
        parts = spec_breakdown(task.message, test_patch=task.test_patch, gold_patch=task.gold_patch, prompt=prompt)
        missing = unnamed_requirements(task.message, test_patch=task.test_patch, gold_patch=task.gold_patch,
                                       prompt=prompt)
    except Exception as exc:  # a patch the scorer cannot read: the recorded score is still shown
        parts, missing = {}, {"error": [f"{type(exc).__name__}: {exc}"]}
    verdict = "well specified" if task.well_specified else "vague (below 0.5)"
    out = [f'<p id="spec">Spec score <b>{task.spec_score:.2f}</b>: {verdict}. '
           '<span class="muted">(parts as computed now; the score was recorded at mining)</span></p>']
    if parts:
        out.append("<table><thead><tr><th>Part</th><th>Points</th></tr></thead><tbody>" + "".join(
            f'<tr><td>{e(k)}</td><td class="n">{v:+.2f}</td></tr>' for k, v in parts.items()) + "</tbody></table>")
    for what, names in missing.items():
        if names:
            out.append(f"<p>Hidden tests need {e(what)} the prompt does not name: "
                       + ", ".join(f"<code>{e(n)}</code>" for n in names[:30]) + "</p>")
    return out


def _files_vs_gold(diff: str, gold: Sequence[str]) -> str:
    mine = diff_files(diff)
    if not mine:
        return ""
    missing = [f for f in gold if f not in mine]
    extra = [f for f in mine if f not in gold]
    if not missing and not extra:
        return '<span class="t-passed">same files as the reference</span>'
    bits = []
    if missing:
        bits.append("not touched: " + ", ".join(f"<code>{e(f)}</code>" for f in missing[:10]))
    if extra:
        bits.append("also changed: " + ", ".join(f"<code>{e(f)}</code>" for f in extra[:10]))
    return "; ".join(bits)


def render_task(task_id: str, task: Task | None, row: TaskRow | None, agents: Sequence[str],
                refs: Mapping[str, Sequence[AttemptRef]], summaries: Mapping[tuple[str, str, int], AttemptSummary],
                nav: Nav, specs: Mapping[str, str | None] | None = None) -> str:
    """The whole task page (``tasks/<task>.html``). ``refs``: agent → its attempts; ``summaries`` by
    (task, agent, attempt); ``agents`` in rank order; ``row`` the report's row of the task (its edit-F1s);
    ``specs`` agent → spec (a cost homefield did not measure is labelled ``reported by the agent``)."""
    subject = task.subject if task else "(not in tasks.jsonl)"
    b: list[str | Redacted] = [f"<h1>{e(task_id)}: {e(subject)}</h1>"]
    if task is not None:
        flags = [] if task.well_specified else ["vague"]
        flags += ["red by import error"] if task.red_by_import_error else []
        b.append(f'<p class="muted">commit <code>{e(task.commit[:12])}</code> · authored {e(task.authored_at)} · '
                 f"{e(task.mode)} · {e(', '.join(task.languages) or '—')} · {task.diff_lines} diff lines"
                 + "".join(f' <span class="tag">{e(f)}</span>' for f in flags) + "</p>")
        b += ["<h2>Prompt</h2>", pre(task.prompt, CAPS.prompt, "tasks.jsonl", "wrap")]
        b += ["<h2>Spec score</h2>", *spec_parts(task)]
        b.append(f"<h2>Hidden tests</h2><p>FAIL_TO_PASS ({len(task.FAIL_TO_PASS)}): "
                 + ", ".join(f"<code>{e(i)}</code>" for i in task.FAIL_TO_PASS[:50])
                 + f"</p><p>PASS_TO_PASS: {plural(len(task.PASS_TO_PASS), 'id')}. Excluded: {len(task.excluded)}.</p>")
    b.append('<h2>Side by side</h2><p><label><input type="checkbox" id="wrap"> wrap long lines</label></p>')
    cols: list[str | Redacted] = ['<div class="side">']  # whole elements, and Redacted diffs (clean_join)
    gold_files = diff_files(task.gold_patch) if task else []
    if task is not None:
        cols += ['<section id="reference"><h3>Reference fix</h3>'
                 f'<p class="muted">{len(gold_files)} file(s): '
                 + ", ".join(f"<code>{e(f)}</code>" for f in gold_files[:10]) + "</p>",
                 diff_block(task.gold_patch, CAPS.gold, "tasks.jsonl (gold_patch)"), "</section>"]
    n_attempts = sum(len(v) for v in refs.values()) or 1
    each = max(CAPS.side_min, CAPS.side_total // n_attempts)
    for agent in agents:
        attempts = refs.get(agent) or []
        if not attempts:
            continue
        cols.append(f'<section data-agent="{e(agent)}"><h3><code>{e(agent)}</code></h3>')
        f1s = row.similarity.get(agent, []) if row else []
        # the report's flags (``tasks[].suspicious``, in attempt order as ``attempts``); else the records'
        marks = row.suspicious.get(agent, []) if row else [bool(x.result.suspicious) for x in attempts]
        for i, ref in enumerate(attempts):
            r = ref.result
            flagged_solve = r.outcome == "solved" and i < len(marks) and marks[i]
            s = summaries.get(ref.key) or AttemptSummary((), Redacted(""), False)
            link = "../" + attempt_page_name(r.task_id, r.agent, r.attempt)
            f1 = f1s[i] if i < len(f1s) else None
            head = (f'<a class="att-link" data-outcome="{e(r.outcome)}" href="{e(link)}">attempt {r.attempt}</a>: '
                    f"{outcome_span(r.outcome, SYMBOLS.get(r.outcome, ''), flagged_solve=flagged_solve)} · "
                    f"{e(fmt_usd(r.cost_usd, r.cost_partial))}"
                    + (f" ({COST_REPORTED})" if r.cost_usd is not None and not cost_measured((specs or {}).get(agent))
                       else "")
                    + (f" · edit-F1 {f1:.2f}" if isinstance(f1, float) else ""))
            lines = [f"<div>{head}</div>"]
            if r.error:
                lines.append(f'<div class="muted">{e(r.error)}</div>')
            if s.failing:
                lines.append('<div class="bad">failed: ' + ", ".join(f"<code>{e(x)}</code>" for x in s.failing[:20])
                             + (f" … {len(s.failing) - 20} more" if len(s.failing) > 20 else "") + "</div>")
            elif s.graded:
                lines.append('<div class="t-passed">every hidden test passed</div>')
            vs = _files_vs_gold(s.diff.text, gold_files)
            if vs:
                lines.append(f"<div>{vs}</div>")
            cols += [f'<div class="att-card">{"".join(lines)}', diff_block(s.diff, each, f"the attempt page ({link})"),
                     "</div>"]
        cols.append("</section>")
    cols.append("</div>")
    b.append(clean_join(cols))
    return frame(f"{task_id}: {subject}", b, depth=1, nav=nav)
