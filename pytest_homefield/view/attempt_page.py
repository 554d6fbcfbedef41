"""The page of one attempt: what the agent was told, what it did, what it changed, how it was graded.

Sections, in order: the outcome and its reason (error, suspicious reason, the canary that passed);
the numbers (cost USD, the four token counts, turns, wall and grading time in s, model, version,
exit status) and the sandboxes (the agent's and the tests', with the run's network); the hidden
tests (each FAIL_TO_PASS and PASS_TO_PASS id with pass/fail and its failure text from ``tests.log``,
PASS_TO_PASS regressions first, collection errors); the canaries (``canaries.json`` and how each
ran: a passing one is forged only when the record says so) and the grading's separate test runs
(twin runs, the confirmation run); the diff; the prompt exactly as sent (``prompt.txt``); the transcript
(:func:`~.transcript.parse_transcript` of ``agent.out``); ``agent.err`` and ``proxy.log``.
Everything shown is redacted (:mod:`.redact`: the agent's texts once, before they are rendered, the
rest by the page frame) and capped (:data:`~.common.CAPS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_homefield.records import Result, Task
from pytest_homefield.report.compute import SYMBOLS
from pytest_homefield.report.family import COST_REPORTED, cost_measured, is_reference_spec
from pytest_homefield.report.fmt import fmt_secs, fmt_tokens, fmt_usd
from pytest_homefield.view.attempt_files import AttemptFiles, IdStatus, failure_sections, headline_of, id_statuses
from pytest_homefield.view.common import CAPS, Nav, diff_block, e, frame, outcome_span, pre, task_page_name
from pytest_homefield.view.data import AttemptRef
from pytest_homefield.view.highlight import diff_stats, text_html
from pytest_homefield.view.redact import Redacted, cap, redact
from pytest_homefield.view.transcript import Transcript, parse_transcript

__all__ = ["AttemptSummary", "render_attempt", "hidden_tests", "transcript_html"]


@dataclass(frozen=True)
class AttemptSummary:
    """What the task page shows of an attempt: the hidden ids it did not pass (FAIL_TO_PASS not
    passed, PASS_TO_PASS failed), its diff (redacted: :class:`~.redact.Redacted` when it came from
    :func:`render_attempt`), and whether its tests ran at all."""

    failing: tuple[str, ...]
    diff: Redacted
    graded: bool


def summarize(task: Task | None, statuses: Mapping[str, IdStatus], diff: Redacted) -> AttemptSummary:
    """The :class:`AttemptSummary` of an attempt's test statuses and diff."""
    if task is None or not statuses:
        return AttemptSummary((), diff, bool(statuses))
    failing = [i for i in task.FAIL_TO_PASS if (statuses.get(i) or IdStatus(i, "not run")).status != "passed"]
    failing += [i for i in task.PASS_TO_PASS if statuses.get(i) and statuses[i].status in ("failed", "error")]
    return AttemptSummary(tuple(failing), diff, True)

_WHO = {"system": "system", "user": "user", "assistant": "assistant", "thinking": "thinking", "tool_call": "tool call",
        "tool_result": "tool result", "result": "result", "usage": "usage", "error": "error", "stdout": "stdout"}


def transcript_html(t: Transcript, where: str) -> Redacted:
    """The entries of ``t`` as ``<div class="entry e-KIND">`` blocks, each capped at ``CAPS.entry``
    characters, all at ``CAPS.transcript``; past it one marker names ``where`` (the file). The HTML
    is redacted whole, once (an entry that is cut is redacted before the cut)."""
    if not t.entries:
        return Redacted('<p class="muted">(nothing recorded)</p>')
    out = [f'<p class="muted">{e(t.format)} · {len(t.entries)} entries · {t.tool_calls} tool calls</p>']
    budget = CAPS.transcript
    for i, entry in enumerate(t.entries):
        if budget <= 0:
            left = len(t.entries) - i
            out.append(f'<p class="cap">[homefield view: transcript capped at {CAPS.transcript:,} characters; '
                       f"{left} more entries not shown: see {e(where)}]</p>")
            break
        limit = min(CAPS.entry, max(budget, 200))
        text, _ = cap(redact(entry.text) if len(entry.text) > limit else entry.text, limit, where=where)
        budget -= len(text)
        bad = " bad" if entry.is_error else ""
        title = f" · {e(entry.title)}" if entry.title else ""
        body = f"<pre>{escape_r(text)}</pre>" if text.strip() else ""
        out.append(f'<div class="entry e-{entry.kind}{bad}"><div class="who">{_WHO.get(entry.kind, entry.kind)}'
                   f"{title}</div>{body}</div>")
    return Redacted(redact("\n".join(out)))


def escape_r(text: str) -> str:
    """Escaped text for inside a ``<pre>`` (redacted by the caller, or by :func:`~.common.frame`)."""
    return text_html(text)


def hidden_tests(task: Task | None, statuses: Mapping[str, IdStatus], sections: Mapping[str, str],
                 where: str) -> list[str]:
    """The hidden-tests section: PASS_TO_PASS regressions first, then a table of every FAIL_TO_PASS
    and PASS_TO_PASS id (status, one-line message, failure text in a ``<details>``)."""
    if task is None:
        return ['<p class="muted">The task is not in tasks.jsonl: its hidden test ids are unknown.</p>']
    if not statuses:
        return ['<p class="muted">The hidden tests did not run for this attempt (see its outcome).</p>']
    out: list[str] = []
    regressions = [i for i in task.PASS_TO_PASS if statuses.get(i) and statuses[i].status in ("failed", "error")]
    if regressions:
        out.append(f'<p class="bad" id="regressions"><b>PASS_TO_PASS regressions ({len(regressions)}):</b> '
                   + ", ".join(f"<code>{e(i)}</code>" for i in regressions) + "</p>")
    budget = CAPS.tests
    rows = []
    quiet = []  # PASS_TO_PASS ids that passed: listed folded
    f2p_ok = sum((statuses.get(i) or IdStatus(i, "not run")).status == "passed" for i in task.FAIL_TO_PASS)
    p2p_ok = sum((statuses.get(i) or IdStatus(i, "not run")).status == "passed" for i in task.PASS_TO_PASS)
    out.append(f'<p id="tests-summary">FAIL_TO_PASS: {f2p_ok} of {len(task.FAIL_TO_PASS)} passed · '
               f"PASS_TO_PASS: {p2p_ok} of {len(task.PASS_TO_PASS)} passed.</p>")
    for kind, ids in (("FAIL_TO_PASS", task.FAIL_TO_PASS), ("PASS_TO_PASS", task.PASS_TO_PASS)):
        for nodeid in ids:
            if kind == "PASS_TO_PASS" and (statuses.get(nodeid) or IdStatus(nodeid, "")).status == "passed":
                quiet.append(nodeid)
                continue
            st = statuses.get(nodeid) or IdStatus(nodeid, "not run")
            text = ""
            if st.status in ("failed", "error") and budget > 0:
                section = sections.get(headline_of(nodeid)) or sections.get(nodeid.rpartition("::")[2]) or ""
                if section:  # redacted with the page, or here when it is cut
                    shown, _ = cap(redact(section) if len(section) > CAPS.log else section, CAPS.log, where=where)
                    budget -= len(shown)
                    text = f"<details><summary>failure</summary><pre>{escape_r(shown)}</pre></details>"
            css = "t-" + st.status.replace(" ", "")
            msg = e(st.message) if st.message else ""
            timeout = " (timeout)" if st.timeout else ""
            rows.append(f'<tr data-id="{e(nodeid)}"><td>{kind}</td><td><code>{e(nodeid)}</code></td>'
                        f'<td class="{css}">{e(st.status)}{timeout}</td><td>{msg}{text}</td></tr>')
    out.append("<table><thead><tr><th>List</th><th>Test id</th><th>Result</th><th>Failure</th></tr></thead><tbody>"
               + "".join(rows) + "</tbody></table>")
    if quiet:
        items = e("\n".join(quiet)).split("\n")  # escaped once: the list can be long
        out.append(f"<details><summary>{len(quiet)} PASS_TO_PASS ids passed</summary><ul>"
                   + "".join(f"<li><code>{i}</code></li>" for i in items) + "</ul></details>")
    flaky = [i for i, why in (task.excluded or {}).items() if why == "flaky"]
    if flaky:
        out.append(f'<p class="muted">Left out as flaky at mining: {len(flaky)} id(s).</p>')
    return out


def _instances(statuses: Mapping[str, IdStatus], node: str) -> list[IdStatus]:
    """The statuses of test id ``node`` and of its parametrized instances (``node[...]``)."""
    return [st for nid, st in statuses.items() if nid == node or (nid.startswith(node) and nid[len(node):][:1] == "[")]


def _canary_cell(c: Mapping[str, object], ran: list[IdStatus], r: Result, confirmed: bool) -> tuple[str, str]:
    """``(css class, text)`` of how canary ``c`` ran: a passing canary is ``forged`` only when the record
    says so; one that passed beside its failing original without a forged verdict was excused (§7):
    honest code computing a wrong value passes it too."""
    if not ran:
        return "", "not run"
    passed = sum(st.status == "passed" for st in ran)
    counted = f"{passed} of {len(ran)} passed" if len(ran) > 1 else ran[0].status
    if not passed:
        return "t-passed", e(counted)
    if r.outcome == "forged":
        return "bad", ("PASSED" if len(ran) == 1 else e(counted)) + ": forged"
    why = " beside its failing original: excused as a wrong value (§7)" if c.get("excusable") else ": excused (§7)"
    if confirmed:
        why += ", confirmed in one run holding both (confirm.log)"
    return "muted", e(counted) + why


def _canaries(files: AttemptFiles, statuses: Mapping[str, IdStatus], r: Result) -> list[str]:
    data = files.canaries
    if not data:
        return ['<p class="muted">No canaries.json (no grading run, or a run made before canaries).</p>']
    confirmed = any(run.name == "confirm" for run in files.runs) and r.outcome != "forged"
    rows, any_passed = [], False
    for c in data.get("canaries") or []:
        if not isinstance(c, dict):
            continue
        node = str(c.get("node", ""))
        ran = _instances(statuses, node)
        any_passed = any_passed or any(st.status == "passed" for st in ran)
        cls, text = _canary_cell(c, ran, r, confirmed)
        rows.append(f'<tr><td><code>{e(node)}</code></td><td><code>{e(c.get("source", ""))}</code></td>'
                    f'<td>{e(c.get("kind", ""))}</td><td>{e(c.get("how", ""))}</td>'
                    f'<td class="{cls}">{text}</td></tr>')
    head = f'<p>Seed {e(data.get("seed", "?"))}; a canary must fail. '
    if r.canary:
        head += f'<b class="bad">Canary passed: <code>{e(r.canary)}</code></b>'
    elif rows and not any_passed:
        head += "None passed."
    head += "</p>"
    return [head, "<table><thead><tr><th>Canary</th><th>Copy of</th><th>Kind</th><th>Rewrite</th><th>Ran</th>"
                  "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"]


def _runs(files: AttemptFiles, where: str) -> list[str | Redacted]:
    """The grading's test runs kept apart (twin runs, the confirmation run): each run's counts and log."""
    if not files.runs:
        return []
    out: list[str | Redacted] = ['<h2 id="runs">Grading runs</h2>',
                                 '<p class="muted">Each test run of the grading as its process saw it; the hidden '
                                 "tests above merge the twin runs (§7).</p>"]
    for run in files.runs:
        statuses, _collect, finished = id_statuses(run.outcomes or "")
        counts: dict[str, int] = {}
        for st in statuses.values():
            counts[st.status] = counts.get(st.status, 0) + 1
        told = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no test reported"
        label = {"confirm": "confirmation run", "confirm-parent": "confirmation run on the untouched parent",
                 "rows": "run of the rows set apart, with the test files unmodified",
                 "originals": "originals run, the hidden tests as written with no twin",
                 "sealed": "sealed run, the sealed expected values in no file of it (made first)"}.get(
            run.name, f"twin run {run.name[5:]}")
        told += "" if finished else ", did not finish"
        out += [f"<details><summary>{label}: {e(told)} <code>{run.name}.log</code></summary>",
                pre(run.log or "", CAPS.err, f"{where}/{run.name}.log"), "</details>"]
    return out


#: The network of a reference agent (oracle, noop, ``sim:P``): it runs inside homefield, starts no process and
#: opens no connection, whatever the session's ``--sandbox-network`` (ux63: its page said "allowlist").
REFERENCE_NETWORK = "none (a reference agent: it runs inside homefield and opens no connection)"


def _network(sandbox: Mapping[str, object], spec: str | None) -> str:
    """The attempt page's "Network" row: :data:`REFERENCE_NETWORK` for a reference agent's ``spec``, else the
    session's ``--sandbox-network`` as ``meta.json``'s ``sandbox`` records it (``—`` when it does not)."""
    return REFERENCE_NETWORK if is_reference_spec(spec) else str(sandbox.get("network") or "—")


def _numbers(r: Result, meta: Mapping[str, object], spec: str | None) -> str:
    sandbox = meta.get("sandbox") if isinstance(meta.get("sandbox"), dict) else {}
    assert isinstance(sandbox, dict)
    rows = [
        ("Cost", fmt_usd(r.cost_usd, r.cost_partial)
         + (f" ({COST_REPORTED})" if r.cost_usd is not None and not cost_measured(spec) else "")),
        ("Tokens in / out", f"{fmt_tokens(r.input_tokens)} / {fmt_tokens(r.output_tokens)}"),
        ("Cache read / write", f"{fmt_tokens(r.cache_read_tokens)} / {fmt_tokens(r.cache_write_tokens)}"),
        ("Turns", "—" if r.turns is None else str(r.turns)),
        ("Wall time (agent)", fmt_secs(r.wall_s)), ("Grading time", fmt_secs(r.test_s)),
        *([("Waited for the phase lock", fmt_secs(r.wait_s))] if r.wait_s else []),
        *([("Host time (homefield's copies, diff, clean-up)", fmt_secs(r.host_s))] if r.host_s else []),
        ("Model", r.model or "—"), ("Agent version", r.agent_version or "—"),
        ("Exit status", "—" if r.exit_code is None else str(r.exit_code)),
        ("Agent sandbox", r.sandbox or "—"), ("Test sandbox", r.test_sandbox or "—"),
        ("Network", _network(sandbox, spec)),
        ("Started / finished", f"{r.started_at or '—'} / {r.finished_at or '—'}"),
        ("Run", r.run_id),
    ]
    return '<table class="kv">' + "".join(f"<tr><th>{k}</th><td>{e(v)}</td></tr>" for k, v in rows) + "</table>"


def render_attempt(ref: AttemptRef, task: Task | None, spec: str | None, nav: Nav) -> tuple[str, AttemptSummary]:
    """The whole attempt page (``attempts/<task>--<agent>--<n>.html``) and the attempt's summary for
    its task page."""
    r, folder = ref.result, ref.folder
    files = AttemptFiles.read(folder)
    statuses, collect, _finished = id_statuses(files.outcomes or "")
    sections = failure_sections(files.tests_log or "")
    title = f"{r.task_id} · {r.agent} · attempt {r.attempt}"
    where = str(folder)
    head = outcome_span(r.outcome, SYMBOLS.get(r.outcome, ""), flagged_solve=r.outcome == "solved" and r.suspicious)
    b: list[str | Redacted] = [f"<h1>{e(title)}: {head}</h1>"]
    subject = task.subject if task else "(task not in tasks.jsonl)"
    b.append(f'<p><a href="../{task_page_name(r.task_id)}">{e(r.task_id)}</a> {e(subject)} · agent '
             f"<code>{e(r.agent)}</code> <span class=\"muted\">{e(spec or '')}</span></p>")
    reasons = []
    if r.error:
        reasons.append(f"<li>Reason: {e(r.error)}</li>")
    if r.suspicious:
        reasons.append(f'<li class="bad">Suspicious: {e(r.suspicious_reason or "yes")}</li>')
    if r.touched_tests:
        reasons.append('<li class="bad">The agent edited test files (not carried into grading).</li>')
    if r.canary:
        reasons.append(f'<li class="bad">Forged: canary <code>{e(r.canary)}</code> passed.</li>')
    if reasons:
        b.append(f'<ul id="reason">{"".join(reasons)}</ul>')
    b += ["<h2>Numbers</h2>", _numbers(r, ref.meta, spec)]
    b.append("<h2 id=\"tests\">Hidden tests</h2>")
    b += hidden_tests(task, statuses, sections, f"{where}/tests.log")
    if collect:
        b.append("<p class=\"bad\">Collection errors:</p><ul>" + "".join(
            f"<li><code>{e(n)}</code>: {e(m)}</li>" for n, m in collect) + "</ul>")
    b.append("<h2 id=\"canaries\">Canaries</h2>")
    b += _canaries(files, statuses, r)
    b += _runs(files, where)
    diff = Redacted(redact(files.diff or ""))  # once: shown here and on the task page
    nfiles, added, removed = diff_stats(diff.text)
    b.append(f'<h2 id="diff">Diff <small class="muted">{nfiles} file(s), +{added} −{removed}</small></h2>')
    b.append(diff_block(diff, CAPS.diff, f"{where}/diff.patch"))
    if files.others:
        b.append('<p class="muted">Other files: ' + ", ".join(f"<code>{e(n)}</code>" for n in files.others) + "</p>")
    b.append('<h2 id="prompt">Prompt</h2>')
    if files.prompt is not None:
        b += ['<p class="muted">Exactly as sent (prompt.txt).</p>',
              pre(files.prompt, CAPS.prompt, f"{where}/prompt.txt", "wrap")]
    elif task is not None:
        b += ['<p class="muted">No prompt.txt (a run made before <code>homefield view</code>): the task\'s '
              "prompt below, without the template around it.</p>", pre(task.prompt, CAPS.prompt, "tasks.jsonl", "wrap")]
    b.append('<h2 id="transcript">Transcript</h2>')
    out_text = files.agent_out or ""
    size = files.sizes.get("agent.out", 0)
    if size > len(out_text.encode("utf-8", errors="replace")) + 16:
        b.append(f'<p class="cap">agent.out is {size:,} bytes: its first part is shown.</p>')
    b.append(transcript_html(parse_transcript(out_text, spec=spec), f"{where}/agent.out"))
    for name, text in (("agent.err", files.agent_err), ("proxy.log", files.proxy_log),
                       ("grading.err", files.grading_err)):
        if (text or "").strip():
            b += [f"<details><summary>{name}</summary>", pre(text or "", CAPS.err, f"{where}/{name}"), "</details>"]
    b.append(f'<p class="muted">Files: <code>{e(where)}</code></p>')
    return frame(title, b, depth=1, nav=nav), summarize(task, statuses, diff)
