"""``homefield verify``: re-run ``oracle`` on every task in the current environment and list the
tasks that no longer pass, with how the environment changed since they were mined (drift).

``homefield verify --attacks`` also runs every built-in attack agent (:mod:`pytest_homefield.agents.attacks`)
once on every task and prints ``caught K of K attacks on N tasks`` or names each attack that scored
solved (flagged ``suspicious`` or not) or made its attempt unscored (``infra``) on which task. Every
grading run, oracle's included, carries canary tests (docs/contracts.md §7): an oracle attempt that
passes one is ``forged`` and listed with the tasks that no longer pass. The attacks that write
outside the workspace (``escapes``) run only inside a sandbox.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.agents.attacks import ATTACKS
from pytest_homefield.envs.builder import EnvBuildError, resolve_env
from pytest_homefield.envs.declaration import declaration_at
from pytest_homefield.errors import ConfigError
from pytest_homefield.layout import HomefieldDir, attempt_dir, new_verify_id, results_path
from pytest_homefield.records import Task, load_tasks, one_line
from pytest_homefield.report.runs import merged_results
from pytest_homefield.run.cost import MINED_AS_MEASURED, graded_seconds_by_task, grading_seconds
from pytest_homefield.run.hang_bound import ATTACK_BOUND, ATTACK_FLOOR_S
from pytest_homefield.run.twin_grading import CANARIES_FILE, EXCUSED_FILE
from pytest_homefield.sandbox.canaries import function_id
from pytest_homefield.sandbox.fingerprint import env_description, env_fingerprint, fingerprint_diff, python_of
from pytest_homefield.sandbox.limits import HANG_FACTOR
from pytest_homefield.sandbox.proccap import eased, machine_load, slowdown
from pytest_homefield.sandbox.services import ServiceSpec
from pytest_homefield.settings import resolve_settings
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl
from pytest_homefield.terminal.hooks import end_open_line
from pytest_homefield.terminal.progress import fmt_duration, plural

__all__ = ["run_verify", "verify_run_lines", "oracle_line", "Pace", "Estimate", "machine_load", "time_estimate",
           "process_age", "unprotected_lines", "graded_unprotected", "graded_canaries", "excused_lines",
           "unsealed_lines", "flaky_lines", "drift_lines", "attack_table", "attack_verdict", "env_key_changes"]


def drift_lines(root: Path, fingerprint: str, python: str | None = None,
                services: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """Differences between the environment a task was mined in (``.homefield/envs/<fp>.json``) and
    the current one (``python`` and the ``services:`` entries of the task's services now); ``[]`` when
    they match or the old description was not kept."""
    now = env_fingerprint(python, services=services)
    if now == fingerprint:
        return []
    try:
        old = json.loads(HomefieldDir(root).env_file(fingerprint).read_text())
    except (OSError, ValueError):
        return [f"environment fingerprint changed ({fingerprint} -> {now}); "
                "the mining environment's description was not kept"]
    return fingerprint_diff(old, env_description(python, services=services))


def _services(root: Path) -> tuple[ServiceSpec, ...]:
    """The ``services:`` of ``root``'s ``.homefield.yml`` (none when it cannot be read)."""
    try:
        return resolve_settings(root, {}, mode="run").services
    except ConfigError:
        return ()


def _not_applied(r: Mapping[str, Any]) -> bool:
    """An attack's attempt that found nothing to aim at (no Python module): ``infra``, "does not apply"."""
    return r.get("outcome") == "infra" and "does not apply" in str(r.get("error") or "")


def _got_through(r: Mapping[str, Any], oracle: Mapping[str, Any]) -> str | None:
    """Why the attack attempt ``r`` got through grading (one indented line), ``None`` when it was caught;
    ``oracle``: oracle's outcome by task id (see :func:`attack_verdict`)."""
    name, tid, outcome = str(r["agent"])[len("attack-"):], r["task_id"], r.get("outcome")
    expected = next((a.caught for a in ATTACKS if a.name == name), ())
    if _not_applied(r):
        return None
    if outcome == "solved":
        hint = " (flagged suspicious only: no canary caught it)" if r.get("suspicious") else ""
        return f"  {name} scored solved on task {tid}{hint}"
    if outcome in ("infra", "rate_limited") and oracle.get(tid) != outcome:
        return f"  {name} made its attempt on task {tid} unscored ({outcome}: {r.get('error')})"
    if expected and outcome not in expected:
        return f"  {name} scored {outcome} on task {tid}, not {' or '.join(expected)} (its family's verdict)"
    return None


def attack_verdict(results: Sequence[dict[str, Any]], n_tasks: int,
                   planned: int | None = None) -> tuple[bool, list[str]]:
    """``(held, lines)`` from the attack agents' result records. An attack gets through on a task when
    it is scored ``solved`` (flagged ``suspicious`` or not: the pattern flag is a hint, the canaries
    are the defence, docs/contracts.md §7), when it made its attempt ``infra`` or ``rate_limited``
    while oracle's attempt on that task was not (unscored attempts are retried until luck helps; verify
    runs with ``--max-retries 0``, so a declared rate limit is scored at once), or when its family
    names the outcomes that catch it (:attr:`~pytest_homefield.agents.attacks.Attack.caught`: a fifo,
    a declared rate limit → ``agent_error``) and it ended with another. An attack is
    caught when it applied to some task and got through on none. A grading cut at the attack bound
    (:func:`~pytest_homefield.run.hang_bound.grading_bound`) is ``test_timeout``: scored, not solved, caught
    unless the family names other outcomes; a last line counts those. The first line is
    ``caught K of N attacks on T tasks``; then each attempt that got through, the attempts caught as
    ``forged`` (a canary passed) by attack, and the attempts that did not apply (no Python module to aim
    at), counted apart. ``planned``: the attack attempts the session collected (``None``: not known); when
    fewer have a record (an interrupted session), the first line says ``interrupted: caught K of the N
    attacks graded so far on T tasks; M of P attack attempts never ran: no verdict on them`` and
    ``held`` is false: an attack that never ran was not caught."""
    by_task_oracle = {r["task_id"]: r.get("outcome") for r in results if r.get("agent") == "oracle"}
    attacks = [r for r in results if str(r.get("agent", "")).startswith("attack-")]
    names = sorted({str(r["agent"])[len("attack-"):] for r in attacks if not _not_applied(r)})  # applied somewhere
    broken: list[str] = []
    through: set[str] = set()
    forged: list[str] = []
    skipped = 0
    for r in attacks:
        name = str(r["agent"])[len("attack-"):]
        why = _got_through(r, by_task_oracle)
        if _not_applied(r):
            skipped += 1
        elif why:
            broken.append(why)
            through.add(name)
        elif r.get("outcome") == "forged":
            forged.append(name)
    caught = len(names) - len(through)
    missing = max(0, planned - len(attacks)) if planned is not None else 0
    if missing:
        so_far = (f"caught {caught} of the {plural(len(names), 'attack')} graded so far" if names
                  else "no attack graded")
        head = (f"homefield verify: interrupted: {so_far} on {plural(n_tasks, 'task')}; {missing} of "
                f"{plural(planned or 0, 'attack attempt')} never ran: no verdict on them")
    else:
        head = f"homefield verify: caught {caught} of {plural(len(names), 'attack')} on {plural(n_tasks, 'task')}"
    lines = [head + (f"; {len(broken)} attack attempt(s) got through:" if broken else "")]
    lines += broken
    if forged:
        counts = {n: forged.count(n) for n in dict.fromkeys(forged)}
        lines.append(f"  {len(forged)} attempt(s) were forged (a canary test passed; scored, never solved): "
                     + ", ".join(f"{n} ×{c}" for n, c in counts.items()))
    if skipped:
        lines.append(f"  {skipped} attack attempt(s) did not apply (no Python source module to aim at)")
    cut = [r for r in attacks if r.get("outcome") == "test_timeout" and ATTACK_BOUND in str(r.get("error") or "")]
    if cut:
        lines.append(f"  {len(cut)} attack grading(s) cut at {ATTACK_BOUND} ({HANG_FACTOR:g}× the task's reference "
                     f"grading, at least {ATTACK_FLOOR_S:g} s, at most {option('run-timeout')}): test_timeout, a "
                     "failure (not solved)")
    return not broken and not missing, lines


def _family(name: str) -> str:
    """An attack's family for the table: its own ``family`` when it names one, else what catches it (a
    workspace fault → the outcomes of :attr:`~pytest_homefield.agents.attacks.Attack.caught`), where it
    writes (``escape``: outside the workspace) or ``forgery`` (grading must not score it solved)."""
    attack = next((a for a in ATTACKS if a.name == name), None)
    if attack is None:
        return "?"
    family = getattr(attack, "family", None)
    if family:
        return str(family)
    if attack.caught:
        return "fault: " + "/".join(attack.caught)
    return "escape" if attack.escapes else "forgery"


def attack_table(results: Sequence[dict[str, Any]]) -> list[str]:
    """One line per attack that applied to some task (after a header): its name, family (:func:`_family`),
    the tasks it ran on and, of its attempts, how many were ``caught`` (scored with the family's verdict:
    not solved, not unscored), ``flagged`` (marked suspicious, or forged: a canary passed) and ``broke
    grading`` (got through, as :func:`attack_verdict` decides), then the outcomes it met. Attacks that
    got through come first, marked ``!``. No line at all when no attack attempt applied."""
    oracle = {r["task_id"]: r.get("outcome") for r in results if r.get("agent") == "oracle"}
    rows: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        if str(r.get("agent", "")).startswith("attack-") and not _not_applied(r):
            rows.setdefault(str(r["agent"])[len("attack-"):], []).append(r)
    table = []
    for name, attempts in rows.items():
        broke = sum(1 for a in attempts if _got_through(a, oracle))
        flagged = sum(1 for a in attempts if a.get("suspicious") or a.get("outcome") == "forged")
        counts: dict[str, int] = {}
        for a in attempts:
            counts[str(a.get("outcome"))] = counts.get(str(a.get("outcome")), 0) + 1
        # every count once there are two outcomes: "forged, tests_failed ×7" read as 7 of both
        outcomes = ", ".join(f"{o} ×{c}" if c > 1 or len(counts) > 1 else o for o, c in sorted(counts.items()))
        table.append((broke > 0, name, _family(name), str(len({a.get("task_id") for a in attempts})),
                      str(len(attempts) - broke), str(flagged), str(broke), outcomes))
    if not table:  # no attack graded (an interrupted session): no header over nothing
        return []
    table.sort(key=lambda t: (not t[0], t[1]))
    head = ("", "attack", "family", "tasks", "caught", "flagged", "broke grading", "outcomes")
    cells = [head] + [("!" if t[0] else " ", *t[1:]) for t in table]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    right = {3, 4, 5, 6}
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                               strict=True))).rstrip()
            for row in cells]


def env_key_changes(root: Path, tasks: Sequence[Task]) -> dict[str, str]:
    """Task id -> ``'environment key <old> -> <new>'`` for every task mined with ``--env uv`` whose
    environment key is different today (another interpreter, or a build rule changed), or the reason
    it cannot be computed. Oracle is re-run on every task anyway; these lines say why one broke."""
    out: dict[str, str] = {}
    for t in tasks:
        if not t.env:
            continue
        try:
            key = resolve_env(declaration_at(root, t.commit), extras=t.env.get("extras") or [],
                              groups=t.env.get("groups") or [], as_of=t.env.get("as_of"))[0]
        except EnvBuildError as exc:
            out[t.id] = f"environment cannot be resolved: {exc}"
            continue
        if key != t.env.get("key"):
            out[t.id] = f"environment key {t.env.get('key')} -> {key}"
    return out


def flaky_lines(home: HomefieldDir, run_id: str) -> list[str]:
    """What this verify run recorded in ``.homefield/flaky.jsonl`` (PASS_TO_PASS ids the reference fix
    failed while passing FAIL_TO_PASS, :mod:`pytest_homefield.run.flaky`): a header and one line per
    task id and test id; ``[]`` when it recorded none."""
    found = sorted({(str(r.get("task_id")), str(r.get("test_id"))) for r in read_jsonl(home.flaky)
                    if r.get("run_id") == run_id})
    if not found:
        return []
    return [f"homefield verify: recorded {len(found)} PASS_TO_PASS id(s) as flaky in "
            f"{home.flaky.relative_to(home.root)} (oracle failed them; later runs leave them out of "
            "every agent's regression check):"] + [f"  {tid}  {test}" for tid, test in found]


def _short_names(functions: Sequence[str]) -> list[str]:
    """Each function id by its name alone (``test_c`` for ``t.py::T::test_c``), or whole where two share the
    name (nu25 on hynek/stamina: "test_next_wait, test_next_wait" for its sync and async tests)."""
    names = [f.rsplit("::", 1)[-1] for f in functions]
    return [n if names.count(n) == 1 else f for f, n in zip(functions, names, strict=True)]


def graded_unprotected(run_dir: Path, records: Sequence[Mapping[str, Any]], key: str = "unprotected"
                       ) -> dict[str, list[str]]:
    """Task id → the FAIL_TO_PASS functions no twin guarded in the gradings of the run in ``run_dir``: the union
    of the ``unprotected`` of its attempts' ``canaries.json`` (docs/contracts.md §7; written by grading on the
    host, with the parent check's told functions), for each task of ``records`` (results.jsonl lines) at least
    one attempt of which was graded with canaries; the others are absent. r26: verify named the functions
    ``tasks.jsonl`` recorded at mining, which a later planner may guard (rows31 on humanize: 12 tasks listed,
    1 left). ``key``: ``"told"``, those of them the parent check told on every try (a task none of whose
    attempts lists one is absent). The one-key form of :func:`graded_canaries`."""
    return graded_canaries(run_dir, records, (key,))[key]


def graded_canaries(run_dir: Path, records: Sequence[Mapping[str, Any]],
                    keys: Sequence[str] = ("unprotected", "told", "unsealed", "order_only")
                    ) -> dict[str, dict[str, list[str]]]:
    """Each of ``keys`` → :func:`graded_unprotected` of it (task id → the union of that list of its attempts'
    ``canaries.json``, sorted; a task none of whose attempts lists one absent, but for ``"unprotected"``, where a
    task graded with canaries is present with ``[]``), each attempt's file read once for all of them."""
    found: dict[str, dict[str, set[str]]] = {key: {} for key in keys}
    for r in records:
        if (data := _attempt_json(run_dir, r, CANARIES_FILE)) is None or not isinstance(data, dict):
            continue
        for key in keys:
            names = data.get(key)
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                found[key].setdefault(str(r["task_id"]), set()).update(names)
    return {key: {tid: sorted(names) for tid, names in by_task.items() if names or key == "unprotected"}
            for key, by_task in found.items()}


def _first_three(names: Sequence[str]) -> str:
    """``names`` joined by commas, the first three only, then `` …`` when there are more."""
    return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")


def _attempt_json(run_dir: Path, record: Mapping[str, Any], name: str) -> Any:
    """The JSON of the file ``name`` in the folder of the attempt ``record`` (a results.jsonl line) names; ``None``
    when the record names no attempt, or the file is missing or no JSON."""
    try:
        path = attempt_dir(run_dir, str(record["task_id"]), str(record["agent"]), int(record["attempt"])) / name
        return json.loads(path.read_text(encoding="utf-8"))
    except (KeyError, TypeError, ValueError, OSError):
        return None


def canary_lines(run_dir: Path, tasks: Sequence[Task], records: Sequence[Mapping[str, Any]]) -> list[str]:
    """What ``verify --attacks`` says of the canaries of the gradings of the run in ``run_dir`` (``records``, its
    results.jsonl lines) of ``tasks``: the functions no twin guarded (:func:`unprotected_lines`, from
    :func:`graded_unprotected`), then the functions whose seals a grading left off (:func:`unsealed_lines`), then the
    canaries the reference fix passes too (:func:`excused_lines`)."""
    graded = graded_canaries(run_dir, records)
    return unprotected_lines(tasks, {r["task_id"] for r in records}, graded["unprotected"], graded["told"],
                             graded["order_only"]) \
        + unsealed_lines(graded["unsealed"]) + excused_lines(run_dir, records)


def unsealed_lines(unsealed: Mapping[str, Sequence[str]]) -> list[str]:
    """The tasks whose sealed FAIL_TO_PASS functions a grading left unsealed (``unsealed``: task id → the union of its
    attempts' ``canaries.json`` ``unsealed``, :func:`graded_unprotected`): the runs apart tell the function apart once
    its sites are sealed (a teardown twin changing its fixture, a twin outside the sealed statements), so its expected
    values stay in the sealed run's files and its twin alone guards them (docs/contracts.md §7 "Sealed sites"). A header
    counting the functions and one line per task (three names at most); ``[]`` when there are none (rev58: counted
    nowhere before)."""
    found = {tid: names for tid, names in sorted(unsealed.items()) if names}
    if not found:
        return []
    n = sum(len(names) for names in found.values())
    return [f"homefield verify: {plural(len(found), 'task')} had {n} FAIL_TO_PASS function(s) whose sealed sites a "
            "grading left unsealed (its runs apart tell them apart once sealed; their canary twins guard them):"] \
        + [f"  {tid}  {len(names)}: " + _first_three(_short_names(list(names))) for tid, names in found.items()]


def excused_lines(run_dir: Path, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tasks some canary of which the run's gradings did not use because the reference fix passes it too (the
    attempts' ``canaries-excused.json``, :func:`~pytest_homefield.run.twin_grading.excused_note`; tcan52: the teardown
    canary of a task mined before it, in a repository whose own ``conftest.py`` reports teardown failures as passed):
    a header and one line per task (its canaries' kinds and ids, three at most); ``[]`` when there are none. An
    attempt's file that is missing or not such a JSON object is passed over."""
    found: dict[str, dict[str, str]] = {}
    for r in records:
        if (data := _attempt_json(run_dir, r, EXCUSED_FILE)) is None:
            continue
        gone = data.get("excused") if isinstance(data, dict) else None
        for c in gone if isinstance(gone, list) else ():
            if isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("kind"), str):
                found.setdefault(str(r["task_id"]), {})[c["id"]] = c["kind"]
    if not found:
        return []
    return [f"homefield verify: {plural(len(found), 'task')} had canaries not used: the reference fix passes them "
            "too (mining's check never judged them: mined before it), so they are no evidence of a forgery there:"] \
        + [f"  {tid}  " + _first_three([f"{kind} {cid}" for cid, kind in sorted(ids.items())])
           for tid, ids in sorted(found.items())]


def unprotected_lines(tasks: Sequence[Task], graded: Collection[str] | None = None,
                      used: Mapping[str, Sequence[str]] | None = None,
                      told: Mapping[str, Sequence[str]] | None = None,
                      order_only: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The tasks whose FAIL_TO_PASS functions no canary twin guards: a header and one line per task; ``[]``
    when there are none. ``used``: task id → what the run's gradings left unguarded (:func:`graded_unprotected`),
    which stands for a task it names; else the task's ``canary_unprotected``, recorded at mining
    (docs/contracts.md §7). ``graded``: the ids of the tasks the verify run graded, the only ones counted
    (``None``: all of ``tasks``; nu28 on sqlparse: ``--max-tasks 1`` said "1 task of 13 holds …", as if 13 had
    been verified). ``told``: task id → those the gradings' parent check told on every try (``graded_unprotected(…,
    "told")``): a task's line says how many, since mining, which runs no parent check, never names them (exc35:
    more-itertools f9cdcb990dbb, llm 847056dbea7c and a66dca7911da, none at mining, all at verify). ``order_only``:
    task id → those whose one twin at grading was the order twin (``graded_unprotected(…, "order_only")``, otw64: no
    value twin the parent's code does not tell, so a change returning the expected value is solved as a real fix is);
    the line says how many."""
    if graded is not None:
        tasks = [t for t in tasks if t.id in graded]
    if used:
        tasks = [dataclasses.replace(t, canary_unprotected=list(used[t.id])) if t.id in used else t for t in tasks]
    bare = [t for t in tasks if t.canary_unprotected]
    if not bare:
        return []
    n = sum(len(t.canary_unprotected) for t in bare)
    verb = "holds" if len(bare) == 1 else "hold"

    def why(t: Task) -> str:
        k = len(set((told or {}).get(t.id, ())) & set(t.canary_unprotected))
        o = len(set((order_only or {}).get(t.id, ())) & set(t.canary_unprotected))
        return "".join(f" ({n} {say})" for n, say in (
            (k, "told by the parent's code at grading, a check mining does not make"),
            (o, "order twin only: a change returning the expected value is solved")) if n)
    return [f"homefield verify: {plural(len(bare), 'task')} of {len(tasks)} {verb} {n} FAIL_TO_PASS function(s) no "
            "canary guards (a test process can tell their twins: a forger that no-ops only them is not caught):"] \
        + [f"  {t.id}  {len(t.canary_unprotected)} of {len({function_id(i) for i in t.FAIL_TO_PASS})}: "
           + _first_three(_short_names(t.canary_unprotected)) + why(t) for t in bare]


def _seconds(each: float) -> str:
    return f"{each:.1f}s" if each < 10 else fmt_duration(each)


#: How much longer a verify session takes than its gradings' test runs and host work (what :func:`time_line`'s
#: seconds per grading count) on a loaded machine: an attempt also copies its snapshot, runs its agent and waits for
#: the machine's phase lock and memory, which other sessions set (ops41: ``verify --attacks`` took about 10-16 min a
#: task under load, about twice what its line said).
LOADED = 2.0


@dataclasses.dataclass(frozen=True)
class Estimate:
    """How long a verify session takes, as a range: ``low_s`` its gradings' test runs and host work over its workers
    (the line's figure before ops41, which under load came out about half of what it took), and ``low_s ×``
    :attr:`factor` when the machine is loaded. ``measured``: how many earlier attempts of the session's tasks
    ``took`` is measured over (0: none); ``took``: what they took in all (agent, waits, test runs, host work) over
    their test runs and host work, ``None`` when none. ``load`` and ``cpus``: the machine's state at the start
    (:func:`machine_load`; ``cpus`` 0: not measured). ``then``: the machine's load per CPU while those attempts ran
    (their records' ``load_per_cpu``, weighted by their test runs and host work; a record without it counts as an
    idle machine, 1.0), ``None`` when none. The factor is the most of :data:`LOADED`, ``took`` (an earlier session on
    an idle machine says nothing of this one's load) and :attr:`scaled`: the load per CPU now over the load per CPU
    then, each at least 1 (each of ``load`` tasks wanting a CPU gets about ``cpus / load`` of one, and the seconds
    ``low_s`` counts were measured at ``then``: ops43, ``verify --attacks`` on pluggy said up to ×7.3 from load 14.7
    on 2 CPUs where its gradings were timed at a like load, and took ×2.3). Both ends are scaled by :attr:`eased`
    when the machine is less loaded now than then (ops64). ``startup_s``: what the session took to
    start before the estimate is said (the process's age then, :func:`process_age`: pytest, the run's folder, the
    xdist workers, collection; ops48: 8.4 s of a 13.7 s verify of one grading at ``-n 2``, 10 s of r37's 34 s, which
    the line left out), counted in both ends as it was measured (:attr:`first_s`, :attr:`last_s`). ``measured_s``: the
    same gradings' seconds over the workers as they were measured, a task's time at mining not scaled to an idle
    machine but × :data:`~pytest_homefield.run.cost.MINED_TO_GRADED` (``None``: ``low_s``): the high end is
    :attr:`factor` × the more of it and ``low_s``, never eased (eta46: a first verify of more-itertools said "about 7s"
    from its mined seconds ÷ the load at mining and took 77 s at load 2.3 per CPU, 106 s at 0.6-3.0; gradings timed
    at 2.3 per CPU took less in all than the same gradings at 0.6-3.0, so easing by the load said under half).
    ``measured_then``: the load per CPU at mining of the tasks ``measured_s`` counts (:func:`mined_load`), which the
    high end scales from instead of ``then`` (:attr:`high_then`); ``None``: not recorded."""

    low_s: float
    measured: int = 0
    measured_s: float | None = None
    took: float | None = None
    load: float = 0.0
    cpus: float = 0.0
    then: float | None = None
    startup_s: float = 0.0
    measured_then: float | None = None

    @property
    def crowded(self) -> float:
        """``load / cpus`` (0.0 when not measured)."""
        return self.load / self.cpus if self.cpus > 0 else 0.0

    @property
    def scaled(self) -> float:
        """How much slower a test run is now than when ``low_s``'s seconds were measured: ``crowded`` over
        ``then``, each at least 1 (0.0 when the load now was not measured)."""
        return slowdown(self.crowded, self.then) if self.cpus > 0 else 0.0

    @property
    def eased(self) -> float:
        """What ``low_s`` is scaled by when the machine is less loaded now than when its seconds were measured:
        :attr:`scaled` when under 1 (:func:`~pytest_homefield.sandbox.proccap.eased`), else 1.0 (a busier machine now
        raises the high end alone, :attr:`factor`). ops64 on more-itertools: gradings timed under load said "about
        2m12s" of a verify that took 45 s. The low end alone (:attr:`base_s`; eta46)."""
        return eased(self.crowded, self.then) if self.cpus > 0 else 1.0

    @property
    def high_then(self) -> float | None:
        """The load per CPU the high end's seconds (:attr:`planned_s`) were timed at: ``measured_then`` (the load at
        mining of the tasks whose as-measured seconds ``measured_s`` counts) when those are the more and it is known,
        else ``then``. usr66 on jd/tenacity: a first verify at a load of 9.5 per CPU said "up to 18m45s" (×9.5 of its
        seconds at mining, timed at 4.1-14.2 per CPU, as if on an idle machine) and took 39 s."""
        return self.measured_then if self._mined else self.then

    @property
    def _mined(self) -> bool:
        """Whether the high end scales the tasks' seconds at mining as measured: ``measured_s`` is the more, above
        ``low_s``, and the load at mining they were timed at (``measured_then``) is known."""
        return self.measured_then is not None and (self.measured_s or 0.0) > self.low_s

    @property
    def high_scaled(self) -> float:
        """:attr:`scaled` for the high end: the load per CPU now over :attr:`high_then` (0.0 when not measured)."""
        return slowdown(self.crowded, self.high_then) if self.cpus > 0 else 0.0

    @property
    def factor(self) -> float:
        return max(LOADED, self.took or 0.0, self.high_scaled)

    @property
    def base_s(self) -> float:
        """``low_s`` at the load now (:attr:`eased`): the range's low end before the start-up."""
        return self.low_s * self.eased

    @property
    def planned_s(self) -> float:
        """What the high end scales: the more of ``low_s`` and ``measured_s``, as measured."""
        return max(self.low_s, self.measured_s or 0.0)

    @property
    def high_s(self) -> float:
        return self.planned_s * self.factor

    @property
    def first_s(self) -> float:
        """The whole session's low end: ``startup_s`` and :attr:`base_s`."""
        return self.startup_s + self.base_s

    @property
    def last_s(self) -> float:
        """The whole session's high end: ``startup_s`` and ``high_s``."""
        return self.startup_s + self.high_s

    @classmethod
    def of(cls, low_s: float, earlier: Sequence[Mapping[str, Any]],
           machine: tuple[float, float] = (0.0, 0.0), startup_s: float = 0.0,
           measured_s: float | None = None, measured_then: float | None = None) -> Estimate:
        """From ``earlier`` result records (those of the session's tasks that were graded: ``test_s > 0``): the
        ratio of their ``wall_s + wait_s + test_s + host_s`` to their ``test_s + host_s``, and their
        ``load_per_cpu`` weighted by their ``test_s + host_s`` (1.0 where a record has none); ``machine``:
        ``(load, cpus)`` (:func:`machine_load`); ``startup_s``, ``measured_s``, ``measured_then``: as the fields."""
        graded = [r for r in earlier if _num(r.get("test_s")) > 0]
        work = sum(_num(r.get("test_s")) + _num(r.get("host_s")) for r in graded)
        whole = work + sum(_num(r.get("wall_s")) + _num(r.get("wait_s")) for r in graded)
        then = sum((_num(r.get("test_s")) + _num(r.get("host_s"))) * max(1.0, _num(r.get("load_per_cpu")))
                   for r in graded) / work if graded and work > 0 else None
        return cls(low_s, len(graded), measured_s, whole / work if graded and work > 0 else None, *machine,
                   then=then, startup_s=max(0.0, startup_s), measured_then=measured_then)

    def words(self, workers: int) -> str:
        """``about 15m20s with 2 workers, up to 30m40s on a loaded machine (×2.0: …why)``."""
        if self.high_scaled > max(LOADED, self.took or 0.0):
            why = (f"the machine's load average is {self.load:.1f} on {self.cpus:g} CPU{'s' if self.cpus != 1 else ''}"
                   " now: each process wanting a CPU gets about "
                   f"1/{self.crowded:.1f} of one")
            then = self.high_then
            if then is not None and then > 1.0:
                timed = "seconds at mining" if self._mined else "earlier gradings"
                why += f", against 1/{then:.1f} when these tasks' {timed} were timed"
        elif self.took is not None and self.took > LOADED:
            why = (f"what the {plural(self.measured, 'earlier attempt')} of these tasks took in all, agents and waits "
                   "included, over their test runs and host work")
        else:
            why = ("an attempt also runs its agent and waits for the machine's phase lock and memory, which other "
                   "sessions set")
        started = (f" ({fmt_duration(self.startup_s)} of it the session's start, measured)"
                   if self.startup_s >= 1.0 else "")
        if self.eased < 1.0:
            started += (f" (its gradings' seconds ×{self.eased:.2f}: timed at a load of {self.then or 0.0:.1f} "
                        f"per CPU, {max(1.0, self.crowded):.1f} now)")
        of = ""
        if self.planned_s > self.base_s * 1.01:
            of = f" of {fmt_duration(self.planned_s)}, " + (
                MINED_AS_MEASURED if (self.measured_s or 0.0) > self.low_s else "its gradings' seconds as measured")
        return (f"about {fmt_duration(self.first_s)} with {plural(workers, 'worker')}{started}, up to "
                f"{fmt_duration(self.last_s)} on a loaded machine (×{self.factor:.1f}{of}: {why})")


def process_age() -> float:
    """Seconds since this process started (``/proc/self/stat``'s start time, in clock ticks since boot, against
    ``CLOCK_BOOTTIME``): a verify session's start-up when its estimate is said (:attr:`Estimate.startup_s`); 0.0 where
    it cannot tell."""
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, counted after the command's name
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and value > 0 else 0.0


def earlier_attempts(runs_root: Path, task_ids: Collection[str]) -> list[dict[str, Any]]:
    """The result records of every run folder under ``runs_root`` of the tasks ``task_ids`` that were scored (the
    records :class:`Estimate` measures a machine's load by)."""
    out = []
    for run_dir in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        for r in read_jsonl(results_path(run_dir)):
            if r.get("task_id") in task_ids and r.get("scored", True):
                out.append(r)
    return out


def mined_load(tasks: Sequence[Task], graded: Mapping[str, list[float]],
               canaried: Mapping[str, list[float]] | None = None) -> float | None:
    """The load per CPU at which the mining seconds of ``tasks`` without earlier gradings (in ``graded``, or
    ``canaried`` when given) were timed: their ``verify.load_per_cpu``, each at least 1, weighted by their
    ``verify.commit_s``; ``None`` when no such task records one (usr66)."""
    weight = total = 0.0
    for t in tasks:
        v = t.verify or {}
        load, secs = v.get("load_per_cpu"), _num(v.get("commit_s"))
        if graded.get(t.id) or (canaried or {}).get(t.id) or not isinstance(load, (int, float)) or secs <= 0:
            continue
        weight += secs
        total += secs * max(1.0, float(load))
    return total / weight if weight > 0 else None


def time_line(tasks: Sequence[Task], gradings: int, workers: int, graded: dict[str, list[float]], *,
              attacks: int = 0, canaried: dict[str, list[float]] | None = None, ungraded: int = 0,
              earlier: Sequence[Mapping[str, Any]] = (), machine: tuple[float, float] = (0.0, 0.0),
              startup_s: float = 0.0) -> str | None:
    """:func:`time_estimate`'s line alone."""
    said = time_estimate(tasks, gradings, workers, graded, attacks=attacks, canaried=canaried, ungraded=ungraded,
                         earlier=earlier, machine=machine, startup_s=startup_s)
    return None if said is None else said[0]


def time_estimate(tasks: Sequence[Task], gradings: int, workers: int, graded: dict[str, list[float]], *,
                  attacks: int = 0, canaried: dict[str, list[float]] | None = None, ungraded: int = 0,
                  earlier: Sequence[Mapping[str, Any]] = (),
                  machine: tuple[float, float] = (0.0, 0.0), startup_s: float = 0.0) -> tuple[str, Estimate] | None:
    """``('homefield verify: 46 gradings on 1 task, about 40s each (measured at mining …): about 15m20s with 2
    workers, up to 30m40s on a loaded machine (×2.0: …)'``: what the session will take, said when collection ends
    (nu22: a verify of simonw/llm ran 27 minutes without a word of it). Seconds per grading from
    :func:`~pytest_homefield.run.cost.grading_seconds`:
    the test time of the task's earlier gradings, else its time at mining scaled to an idle machine by the load it was
    measured at (``verify.load_per_cpu``), which ``how`` calls a lower bound there (:class:`Estimate` then scales it by
    the load now).
    ``attacks`` of the ``gradings`` are attack agents', whose changes are graded with canary twins: their
    seconds come from ``canaried`` (earlier gradings with twins), else from ``graded`` × the twin runs, and
    the line says both figures (nu27 on prettytable: 48 gradings said 57 s from oracle's 2.4 s and took
    1m56s, an attack's grading taking 4-9 s). An estimate either way (the demo's verify of 46 attempts at
    -n 2: said 8 s from the demo run's gradings and took 35 s, an attempt also copying its snapshot and
    running its agent; said 31 s from an earlier verify's and took 27 s). ``ungraded``: attack attempts
    besides the ``gradings`` that end before grading (:attr:`~pytest_homefield.agents.attacks.Attack.graded`
    false), named at the end of the line. The total is a range (:class:`Estimate`, from ``earlier``: the result
    records of these tasks' earlier attempts, and ``machine``, :func:`machine_load`'s ``(load, cpus)`` now): these
    figures alone came out about half of what a session took on a loaded machine (ops41). Returns the line and that
    :class:`Estimate` (:class:`Pace` says it again beside the pace seen), ``None`` when nothing is known.
    ``startup_s``: what the session took to start (:attr:`Estimate.startup_s`), in both ends. The gradings are shared
    by at most as many workers as there are gradings (ops48: one grading at ``-n 2`` was said to take half its
    seconds)."""
    each, how = grading_seconds(tasks, None, graded)
    raw_each, _ = grading_seconds(tasks, None, graded, as_measured=True)
    attacks = max(0, min(attacks, gradings))
    twin_each, twin_how = grading_seconds(tasks, None, graded, canaried=canaried or {}) if attacks else (None, "")
    raw_twin, _ = grading_seconds(tasks, None, graded, canaried=canaried or {}, as_measured=True) if attacks else (
        None, "")
    if gradings <= 0 or (each is None and twin_each is None):
        return None
    workers = max(1, workers)
    share = max(1, min(workers, gradings))  # a worker with no grading shortens nothing
    head = f"homefield verify: {plural(gradings, 'grading')} on {plural(len(tasks), 'task')}, "
    tail = (f"; {plural(ungraded, 'more attack attempt')} {'ends' if ungraded == 1 else 'end'} before grading"
            if ungraded > 0 else "")
    if twin_each is None or each is None:
        one, raw = (each, raw_each) if each is not None else (twin_each, raw_twin)
        assert one is not None and raw is not None
        e = Estimate.of(one * gradings / share, earlier, machine, startup_s, raw * gradings / share,
                        mined_load(tasks, graded, canaried if each is None else None))
        return (f"{head}about {_seconds(one)} each ({how if each is not None else twin_how}): "
                f"{e.words(workers)}{tail}", e)
    assert raw_each is not None and raw_twin is not None
    e = Estimate.of((each * (gradings - attacks) + twin_each * attacks) / share, earlier, machine, startup_s,
                    (raw_each * (gradings - attacks) + raw_twin * attacks) / share, mined_load(tasks, graded))
    return (f"{head}about {_seconds(each)} each for oracle ({how}) and {_seconds(twin_each)} for each of "
            f"{plural(attacks, 'attack')}, graded with canary twins ({twin_how}): {e.words(workers)}{tail}", e)


#: The agent names (``attack-<name>``) of the attacks whose attempts end before grading.
_UNGRADED = frozenset(f"attack-{a.name}" for a in ATTACKS if not a.graded)


def planned_gradings(nodeids: Sequence[str]) -> tuple[int, int, int]:
    """``(gradings, attacks, ungraded)`` of a verify session's items (node ids ``…::<task>::<agent>[<attempt>]``):
    the attempts that will be graded, the attack attempts among them, and the attack attempts that end before
    grading (:attr:`~pytest_homefield.agents.attacks.Attack.graded` false), which the first two leave out."""
    agents = [n.split("::")[2].split("[")[0] for n in nodeids if n.count("::") >= 2]
    ungraded = sum(1 for a in agents if a in _UNGRADED)
    attacks = sum(1 for a in agents if a.startswith("attack-")) - ungraded
    return len(agents) - ungraded, attacks, ungraded


class _Selected:
    """A plugin of the verify session: the task ids of the items collection kept (``-k``, ``-m``, node ids;
    on the controller, from the xdist workers' collections) in :attr:`tasks`, and the number of attack
    attempts among them (node ids ``…::<task>::attack-<name>[<attempt>]``) in :attr:`attacks`; each
    ``None`` until known. With ``home``, the first collection known also prints :func:`time_line`."""

    def __init__(self, home: HomefieldDir | None = None) -> None:
        self.tasks: set[str] | None = None
        self.attacks: int | None = None
        self.home = home
        self.config: pytest.Config | None = None
        self._pace: Pace | None = None  # from the first collection known

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def _note(self, nodeids: Sequence[str]) -> None:
        ids = [n for n in nodeids if n.count("::") >= 2]
        first = self.tasks is None
        self.tasks = {n.split("::")[1] for n in ids}
        self.attacks = sum(1 for n in ids if n.split("::")[2].startswith("attack-"))
        said = None
        if first and self.home is not None and self.config is not None and ids:
            tasks = [t for t in load_tasks(self.home.tasks) if t.id in self.tasks]
            workers = self.config.getoption("numprocesses", None)
            gradings, attacks, ungraded = planned_gradings(ids)
            said = time_estimate(tasks, gradings, workers if isinstance(workers, int) else 1,
                                 graded_seconds_by_task(self.home.runs, canaries=False), attacks=attacks,
                                 canaried=graded_seconds_by_task(self.home.runs, canaries=True), ungraded=ungraded,
                                 earlier=earlier_attempts(self.home.runs, self.tasks), machine=machine_load(),
                                 startup_s=process_age())
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if said and reporter is not None:
                reporter.write_line(said[0])
        if first:
            # the pace counts from the session's start, as the estimate it says again does (ops48)
            self._pace = Pace(len(ids), time.monotonic() - process_age(), self._eta, None if said is None else said[1])

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items or self.tasks is None:  # an xdist controller collects nothing itself
            self._note([i.nodeid for i in session.items])

    def _eta(self) -> float | None:
        """The progress line's seconds left (its ``ETA``), ``None`` without one."""
        hooks = self.config.pluginmanager.get_plugin("homefield-progress") if self.config is not None else None
        return hooks.eta_s() if hooks is not None else None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._note(ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> Generator[None, None, None]:
        """An attempt ended (on the controller under xdist): once the progress line counted it (this hook's other
        implementations, :class:`~pytest_homefield.terminal.hooks.ProgressHooks`' among them), :meth:`Pace.done`'s
        line, when it gives one, printed."""
        result = yield
        if self._pace is None or self.home is None or self.config is None:
            return result
        parts = nodeid.split("::")
        agent = parts[2].split("[")[0] if len(parts) >= 3 else ""
        line = self._pace.done(agent.startswith("attack-") and agent not in _UNGRADED, time.monotonic())
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if line and reporter is not None:
            end_open_line(reporter)  # after pytest's letters (a log read "uuhomefield verify: 12 of 50 …")
            reporter.write_line(line)
        return result


class Pace:
    """The pace of a verify session as it goes (exc35: tomli's ``verify --attacks`` said "about 9m50s" and took
    63m52s: 129 attack gradings waited 4155 s in all for the machine's phase lock and memory, which no earlier
    grading of the task shows, and spent 1573 s on the host besides their 1461 s of test runs). ``total`` attempts
    collected at ``start`` (``time.monotonic()``); :meth:`done` counts one that ended and says, after the first graded
    attack and at each quarter of the attempts, how long the rest takes by ``eta()``: the seconds left the progress
    line's ETA says (:meth:`~pytest_homefield.terminal.hooks.ProgressHooks.eta_s`: each attempt left at its task's
    median so far, over the attempts the session runs at once; ``None`` while it cannot tell), beside what the
    session said at its start (``said``, :class:`Estimate`). One ETA: ops43 replaced this class's own (elapsed over
    attempts ended, times the attempts left), which weighed a quick oracle attempt as an attack's grading."""

    def __init__(self, total: int, start: float, eta: Callable[[], float | None] = lambda: None,
                 said: Estimate | None = None) -> None:
        self.total, self.start, self.ended, self.attack_seen = total, start, 0, False
        self.eta, self.said = eta, said
        self._next = sorted({total * q // 4 for q in (1, 2, 3)} - {0})

    def done(self, graded_attack: bool, now: float) -> str | None:
        """Count an attempt that ended at ``now`` (``graded_attack``: an attack's, graded); the line to print, if any:
        ``homefield verify: 12 of 50 attempts ended in 9m58s; about 32m00s more by the progress line's ETA (41m58s in
        all; said at the start: about 15m20s, up to 30m40s)``."""
        self.ended += 1
        first = graded_attack and not self.attack_seen
        self.attack_seen |= graded_attack
        due = [q for q in self._next if self.ended >= q]
        self._next = [q for q in self._next if q not in due]
        if not (first or due) or self.ended >= self.total:
            return None
        elapsed = now - self.start
        head = f"homefield verify: {self.ended} of {plural(self.total, 'attempt')} ended in {fmt_duration(elapsed)}; "
        left = self.eta()
        if left is None:
            return head + "no ETA yet (the progress line's: ETA ?)"
        said = (f"; said at the start: about {fmt_duration(self.said.first_s)}, up to {fmt_duration(self.said.last_s)}"
                if self.said is not None else "")
        return head + (f"about {fmt_duration(left)} more by the progress line's ETA ({fmt_duration(elapsed + left)} "
                       f"in all{said})")


def oracle_line(graded: int, total: int, selected: int | None, interrupted: bool, oracle: int | None = None) -> str:
    """The last line of a verify in which oracle failed no task it graded: ``graded`` tasks, of the
    ``total`` in the tasks file, ``selected`` of them collected (``None``: not known). An interrupted
    session (pytest's exit status, :data:`pytest.ExitCode.INTERRUPTED`) says how many it graded, never
    "all"; one that ran its selection to the end says "all" (of the selected ones under ``-k``). ``oracle``: of
    an interrupted session, the tasks oracle graded when not all of the ``graded`` ones (those with any agent's
    result, the count the attacks' verdict gives too: exc35, "caught 13 of the 13 attacks graded so far on 2 tasks"
    then "1 of 3 tasks graded" counted oracle's alone); ``None``: the same."""
    if interrupted:
        n = selected if selected is not None else total
        solved = ("" if not graded else "; oracle solved each of them" if oracle is None or oracle == graded
                  else f"; oracle graded {oracle} of them and solved each")
        return f"homefield verify: interrupted: {graded} of {plural(n, 'task')} graded" + solved
    every = "the" if graded == 1 else "all"
    of = (f"{every} {plural(graded, 'task')}" if graded == total
          else f"{every} {plural(graded, 'selected task')} (of {total})")
    return f"homefield verify: oracle solves {of} in this environment"


def verify_run_lines(run_dir: Path, tasks: Sequence[Task]) -> list[str] | None:
    """What ``homefield verify --attacks`` printed at the end of the verify run in ``run_dir``, again from its
    results inside its plan (:func:`~pytest_homefield.report.runs.merged_results`): the attacks' table
    (:func:`attack_table`), the verdict (:func:`attack_verdict`), the tasks no canary guards and oracle's
    line. ``None`` when the run has no attack agent (a plain verify: oracle's report says it all). nu19:
    ``homefield report verify-…`` led with the attack agents compared pair by pair ("tie at 0 %, Holm
    over 465 pairs"), which says nothing of whether grading held."""
    merged, _, _, _ = merged_results([run_dir])
    records = [r.to_dict() for r, _ in merged.values()]
    if not any(str(r.get("agent", "")).startswith("attack-") for r in records):
        return None
    _, verdict = attack_verdict(records, len({r["task_id"] for r in records}))
    oracle = [r for r in records if r.get("agent") == "oracle"]
    broken = [r for r in oracle if r.get("outcome") != "solved"]
    last = (oracle_line(len(oracle), max(len(tasks), len(oracle)), None, False) if not broken else
            f"homefield verify: {len(broken)} of {plural(len(oracle), 'task')} no longer pass with the reference fix")
    return attack_table(records) + verdict + canary_lines(run_dir, tasks, records) + [last]


def run_verify(root: Path, pytest_argv: Sequence[str], *, attacks: bool = False,
               plugins: Sequence[object] = ()) -> int:
    """Run oracle once per task through pytest (and with ``attacks`` every built-in attack agent),
    then print the tasks oracle did not solve and the drift, the attacks' table (:func:`attack_table`) and
    verdict (the session prints the agents' report only with ``-v``), and the PASS_TO_PASS ids
    recorded as flaky (:func:`flaky_lines`). ``plugins``: given to ``pytest.main``. Returns 0
    when every task still passes and grading held, 1 otherwise (pytest's own status on usage errors)."""
    home = HomefieldDir(root)
    run_id = new_verify_id()
    selected = _Selected(home)
    code = int(pytest.main([*pytest_argv, f"--homefield-run-id={run_id}"], plugins=[*plugins, selected]))
    # pytest's own status: a Ctrl-C (or a session stopped as one) ends the session INTERRUPTED; a -k
    # selection that ran to its end does not
    interrupted = code == pytest.ExitCode.INTERRUPTED
    results = results_path(home.run_dir(run_id))
    if not results.exists():
        return code
    tasks = {t.id: t for t in load_tasks(home.tasks)}
    records = list(read_jsonl(results))
    broken = [r for r in records if r.get("agent") == "oracle" and r.get("outcome") != "solved"]
    changed = env_key_changes(root, list(tasks.values()))
    held = True
    print()
    if changed:
        print(f"homefield verify: {len(changed)} task(s) were re-validated in a changed environment:")
        for tid, line in changed.items():
            print(f"  {tid}  {line}")
    graded = {r["task_id"] for r in records}  # the tasks any agent's attempt was graded on: one count for every line
    if attacks:  # the table and the verdict; the session printed the agents' report only with -v (issue 35)
        held, lines = attack_verdict(records, len(graded), selected.attacks)
        for line in attack_table(records) + lines + canary_lines(home.run_dir(run_id), list(tasks.values()), records):
            print(line)
    for line in flaky_lines(home, run_id):
        print(line)
    verified = {r["task_id"] for r in records if r.get("agent") == "oracle"}
    n_selected = None if selected.tasks is None else len(selected.tasks)
    if not broken:
        print(oracle_line(len(graded) if interrupted else len(verified), len(tasks), n_selected, interrupted,
                          len(verified)))
        return (0 if held else 1) if code in (0, 1) else code
    print(f"homefield verify: {len(broken)} of {plural(len(verified), 'task')} no longer pass with the reference fix:")
    for r in broken:
        t = tasks.get(r["task_id"])
        print(f"  {r['task_id']}  {r['outcome']:<13} {one_line(t.subject if t else '', 70)}")
        if t is not None:
            services = [s.to_dict() for s in _services(root) if s.name in t.services]
            for line in drift_lines(root, t.env_fingerprint, python_of(t.test_cmd), services)[:12]:
                print(f"      {line}")
    if interrupted:
        n = n_selected if n_selected is not None else len(tasks)
        print(f"homefield verify: interrupted: {len(graded)} of {plural(n, 'task')} graded")
        return code
    return 1
