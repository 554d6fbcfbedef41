"""What agent runs will cost, before anything is spent: :func:`estimate` is the one estimator
(``homefield plan`` prints it, :mod:`pytest_homefield.commands.plan`; the ablation plan reads the same
history, :func:`history_averages`).

Per agent run, two parts (seconds, USD):

- **grading time**, per task, from the first source that has it: the mean ``test_s`` of earlier graded
  attempts on that task, each scaled down when it was timed on a busier machine than this one is now (its
  ``load_per_cpu`` over the load now, :func:`~pytest_homefield.sandbox.proccap.eased`, as ``homefield verify``'s
  line does: ops64, ux65), else the time measured when it was mined (``verify.commit_s`` /
  ``stability_runs``: one run of the commit's tests), scaled to an idle machine by the load per CPU it
  was measured at (``verify.load_per_cpu``, over 1: a test run of ``L`` processes wanting each CPU gets
  about ``1/L`` of one; usr63 on xmltodict: 7.5 s per run mined at a load average of 25-81, planned 432 s
  of oracle gradings that took 99 s, 1.75 s each), which is then a lower bound on an idle machine (grading
  also plants canaries, runs the whole hidden test files and, without an outcome, a control run; on
  more-itertools graded attempts took 1.7-2.7x the mined figure); a task mined before the load was recorded
  keeps its figure as measured, which the line says is no bound. That low figure is one end of a range, as in
  ``homefield verify``'s line (:class:`Estimate` ``grading_s_high``): the high end takes the mined seconds as measured
  × :data:`MINED_TO_GRADED` and earlier gradings' seconds as measured (plan66: more-itertools' plan said 1.3 s per
  oracle grading from its seconds mined at a load of 2.0-18.4 per CPU; its gradings took 12-24 s). Who wrote the
  change matters: the reference fix (``oracle``, a ``sim:P`` hit) is graded by one run, any other change by the
  task's runs with canary twins, at once (their attempt folders hold ``canaries.json``;
  :func:`~pytest_homefield.sandbox.twin_runs.grading_runs`: two, one more with a teardown twin or a plain run, a
  single one for sentinels only, as mining planned them; two for a task mined before it recorded them). An agent with a model is estimated from
  earlier gradings with twins, else from the others × the task's runs (nu27 on prettytable: oracle's
  gradings took 2.4-3.0 s, the attacks' 4-9 s, and verify's estimate from oracle's was half the time
  it took); ``oracle`` and ``sim:P`` from gradings without twins. ``noop`` is never graded (an empty
  patch is scored ``empty_patch`` without a test run): 0; nor is a ``sim:P`` miss: ``sim:P`` is P × the figure.
- **agent time and cost**, from the first source that has them:
  0. agents with no model (``oracle``, ``noop``, ``sim:P``: capabilities ``modelless``) spend nothing:
     exactly 0;
  1. ``--seconds-per-run`` / ``--cost-per-run`` given by the user;
  2. history: the mean ``wall_s`` / ``cost_usd`` of this agent's earlier scored attempts (any run);
  3. :data:`DEFAULTS`, a per-client table of *assumed* figures, shown as ``assumed`` (a cost capped by
     ``--attempt-budget`` when that is lower);
  4. unknown (``?``): a ``cmd:`` agent without flags or history.

Hours are sequential (agent plus grading time of every run); with ``-n N`` workers a run takes about
``1/N`` of that. USD are the agent's own costs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_homefield.agents.registry import kind_capabilities, parse_spec
from pytest_homefield.layout import HomefieldDir, attempt_dir, read_meta, results_path
from pytest_homefield.records import UNSCORED_OUTCOMES, Task
from pytest_homefield.run.twin_grading import CANARIES_FILE
from pytest_homefield.sandbox.proccap import eased, load_per_cpu
from pytest_homefield.sandbox.twin_runs import grading_runs
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl
from pytest_homefield.terminal.progress import plural

__all__ = ["DEFAULTS", "MINED_AS_MEASURED", "MINED_TO_GRADED", "Estimate", "assumed_per_run", "estimate",
           "graded_seconds_by_task", "grading_seconds", "eased_note", "history_averages"]

#: Assumed agent seconds and USD per run for clients without history, by (kind, model substring).
#: Not measured here: orders of magnitude for a small single-commit task with the client's defaults
#: (Claude Code: a few minutes and tens of turns; prices per docs/contracts and claude-cli notes:
#: sonnet 3/15, haiku 1/5, opus 5/25 USD per Mtok in/out). Reference agents are exact.
DEFAULTS: tuple[tuple[str, str, float, float | None], ...] = (
    ("oracle", "", 0.0, 0.0),
    ("noop", "", 0.0, 0.0),
    ("sim", "", 0.0, 0.0),
    ("claude", "haiku", 120.0, 0.15),
    ("claude", "opus", 300.0, 1.50),
    ("claude", "", 240.0, 0.50),  # sonnet and the CLI's default model
    ("openai", "", 60.0, 0.0),  # one completion from a local server; set prices for a paid one
    ("aider", "", 240.0, 0.30),
    ("codex", "", 240.0, None),  # codex prints no cost
    ("gemini", "", 240.0, None),  # gemini prints no cost
)


@dataclass
class Estimate:
    """One agent's share of a planned run. ``*_per_run`` are seconds or USD (``None`` = unknown);
    ``basis`` says where the agent figures came from; ``grading_basis`` likewise for grading.
    ``grading_s_high``: the grading seconds per run planned from the figures as measured (:func:`grading_seconds`
    ``as_measured``: a task's time at mining × :data:`MINED_TO_GRADED`, earlier gradings not eased by the load now;
    ``None``: unknown), as computed, so it may be below ``grading_s_per_run``: the range's high end, as ``homefield
    verify``'s, is the more of the two (:attr:`hours_high`; plan66: the plan of more-itertools' 8 oracle gradings
    said 1.3 s each from its mined seconds ÷ the load at mining, up to ÷18);
    ``grading_high_basis`` says where it came from, ``""`` when it is no more than ``grading_s_per_run``."""

    agent: str
    spec: str
    runs: int
    agent_s_per_run: float | None
    usd_per_run: float | None
    grading_s_per_run: float | None
    basis: str
    grading_basis: str
    history_n: int = 0
    grading_s_high: float | None = None
    grading_high_basis: str = ""

    @property
    def hours(self) -> float | None:
        """Sequential hours: runs × (agent + grading seconds) / 3600; ``None`` if the agent time is unknown."""
        if self.agent_s_per_run is None:
            return None
        return self.runs * (self.agent_s_per_run + (self.grading_s_per_run or 0.0)) / 3600

    @property
    def hours_high(self) -> float | None:
        """:attr:`hours` with ``grading_s_high`` (the more of it and ``grading_s_per_run``)."""
        if self.agent_s_per_run is None:
            return None
        high = max(self.grading_s_per_run or 0.0, self.grading_s_high or 0.0)
        return self.runs * (self.agent_s_per_run + high) / 3600

    @property
    def usd(self) -> float | None:
        """runs × USD per run, ``None`` when unknown."""
        return None if self.usd_per_run is None else self.runs * self.usd_per_run


def history_averages(runs_root: Path) -> dict[str, dict[str, float | int]]:
    """Per agent spec (and name): mean agent ``wall_s``, mean grading ``test_s`` and mean ``cost_usd``
    of every earlier scored attempt, and how many attempts back the means (``n``). ``nan`` when unknown."""
    walls: dict[str, list[float]] = defaultdict(list)
    tests: dict[str, list[float]] = defaultdict(list)
    costs: dict[str, list[float]] = defaultdict(list)
    for run_dir in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        meta_specs: dict[str, str] = {}
        try:
            meta = read_meta(run_dir)
            meta_specs = {a["name"]: a["spec"] for a in meta.get("agents", [])}
        except (OSError, ValueError, KeyError):
            pass
        for r in read_jsonl(results_path(run_dir)):
            if r.get("outcome") in UNSCORED_OUTCOMES:
                continue  # an infra error or rate limit says nothing about an agent's time or cost
            for key in {r.get("agent", ""), meta_specs.get(r.get("agent", ""), "")} - {""}:
                walls[key].append(float(r.get("wall_s") or 0.0))
                tests[key].append(float(r.get("test_s") or 0.0))
                if r.get("cost_usd") is not None:
                    costs[key].append(float(r["cost_usd"]))
    out: dict[str, dict[str, float | int]] = {}
    nan = float("nan")
    for key, w in walls.items():
        c, t = costs.get(key, []), tests.get(key, [])
        out[key] = {"wall_s": sum(w) / len(w), "test_s": (sum(t) / len(t)) if t else nan,
                    "cost_usd": (sum(c) / len(c)) if c else nan, "n": len(w)}
    return out


def assumed_per_run(kind: str, arg: str | None) -> tuple[float | None, float | None, str]:
    """``(seconds, USD, client)`` from :data:`DEFAULTS` for an agent of ``kind`` (``claude``, ``openai``,
    a recipe name …) and model ``arg``; ``(None, None, kind)`` when the table has no row."""
    model = (arg or "").lower()
    for k, sub, secs, usd in DEFAULTS:
        if k == kind and sub in model:
            return secs, usd, f"{k}:{sub}" if sub else k
    return None, None, kind


#: How many times one run of a commit's tests at mining (``verify.commit_s`` / ``stability_runs``, as measured) a
#: grading of the task takes, its host work included: a grading also plants canaries, streams every test's events
#: to the host and, without an outcome, makes a control run. Measured on more-itertools (eta46): its 8 oracle
#: gradings took 2.4× (r45's verify: 1.9×) the seconds of their commits' runs at mining in all, 0.7-6.0× per task,
#: whatever the load per CPU recorded at either (mined at 2.0-18.4, graded at 0.6-3.0): scaling the mined seconds
#: by the load they were timed at (÷14 for one task) made the first verify say "about 7s" of 77 s.
MINED_TO_GRADED = 3.0

#: How a figure planned from a task's time at mining as measured is said (``homefield plan``'s high end,
#: ``verify``'s line): what it is, on whatever repository (plan66: it named the one it was measured on).
_AS_MEASURED = (f"seconds at mining as measured ×{MINED_TO_GRADED:g}, since a grading runs more than mining's one "
                "run of the commit's tests")
MINED_AS_MEASURED = f"its {_AS_MEASURED}"


def _gradings(runs_root: Path, canaries: bool | None) -> Iterator[tuple[str, float, float | None]]:
    """``(task id, seconds, load per CPU then)`` of every earlier attempt under ``runs_root`` that was graded (see
    :func:`graded_seconds_by_task`); the load is the record's ``load_per_cpu``, ``None`` when it has none."""
    for run_dir in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        for r in read_jsonl(results_path(run_dir)):
            if r.get("outcome") in UNSCORED_OUTCOMES or not r.get("task_id"):
                continue
            test_s = float(r.get("test_s") or 0.0)
            if test_s <= 0:
                continue
            if canaries is not None:
                attempt = r.get("attempt")
                planted = isinstance(attempt, int) and (attempt_dir(
                    run_dir, str(r["task_id"]), str(r.get("agent")), attempt) / CANARIES_FILE).is_file()
                if planted != canaries:
                    continue
            load = r.get("load_per_cpu")
            measured = isinstance(load, (int, float)) and not isinstance(load, bool) and load == load
            then = float(load) if measured else None
            yield str(r["task_id"]), test_s + max(0.0, float(r.get("host_s") or 0.0)), then


def graded_seconds_by_task(runs_root: Path, *, canaries: bool | None = None,
                           now: float | None = None) -> dict[str, list[float]]:
    """Task id → ``test_s`` plus ``host_s`` (s: the test runs and the host's copies, diffs and clean-up of the
    grading; exc35: tomli's 129 attack gradings spent 1573 s on the host besides 1461 s of test runs, and the
    estimate counted the test runs alone) of every earlier attempt that was graded (a test run happened:
    ``test_s > 0``, scored), over every run folder under ``runs_root``. ``canaries``: ``True`` keeps only
    the gradings that planted canary twins (the attempt folder holds ``canaries.json``: a change other than
    the reference fix, the task's runs at once), ``False`` only the others (one run), ``None`` all. ``now``: the
    machine's load per CPU now; given, each figure is scaled by
    :func:`~pytest_homefield.sandbox.proccap.eased` of it and the record's ``load_per_cpu`` (a grading timed on a
    busier machine than this one counts the seconds it would take now; ux65), else taken as measured."""
    out: dict[str, list[float]] = defaultdict(list)
    for task_id, seconds, then in _gradings(runs_root, canaries):
        out[task_id].append(seconds * (1.0 if now is None else eased(now, then)))
    return out


def eased_note(runs_root: Path, now: float) -> str | None:
    """``'timed at a load of 3.0-6.5 per CPU, scaled to 1.2 now'`` when any earlier grading under
    ``runs_root`` was timed on a busier machine than ``now`` (its figure scaled down by
    :func:`graded_seconds_by_task`), else ``None``."""
    thens = sorted(then for _, _, then in _gradings(runs_root, None) if then is not None and eased(now, then) < 1.0)
    if not thens:
        return None
    at = f"{thens[0]:.1f}" if thens[0] == thens[-1] else f"{thens[0]:.1f}-{thens[-1]:.1f}"
    return f"timed at a load of {at} per CPU, scaled to {max(1.0, now):.1f} now"


def grading_seconds(tasks: Sequence[Task], hist_test_s: float | None,
                    graded: dict[str, list[float]] | None = None, *,
                    canaried: dict[str, list[float]] | None = None,
                    eased_by: str | None = None, as_measured: bool = False) -> tuple[float | None, str]:
    """Mean seconds to grade one attempt over ``tasks`` and how it was known: per task the mean of its
    earlier graded attempts (``graded``, :func:`graded_seconds_by_task`), else its time at mining
    (``verify.commit_s`` over ``stability_runs``, over ``verify.load_per_cpu`` when recorded and over 1: scaled to an
    idle machine, a lower bound there), else the agent's mean ``hist_test_s``; ``(None, "unknown")`` when none is known.
    ``canaried`` (given for a change other than the reference fix, graded with canary twins): a task's
    earlier gradings with twins (:func:`graded_seconds_by_task` ``canaries=True``) come first, and a
    figure from ``graded`` or mining counts as many times as the task's grading makes runs at once
    (:func:`~pytest_homefield.sandbox.twin_runs.grading_runs`; ``hist_test_s``, the agent's own, as it is).
    ``eased_by``: how earlier gradings' seconds were scaled to the load now (:func:`eased_note`), said with them.
    ``as_measured``: a task's time at mining as it was measured (not scaled to an idle machine) times
    :data:`MINED_TO_GRADED`, a figure a grading's seconds can be planned by rather than a lower bound (eta46), and
    ``how`` says only what differs from the low end's ``how`` it is said beside (:data:`MINED_AS_MEASURED`, earlier
    gradings' seconds as measured; ux67: the plan's line said "measured at mining" three times)."""
    per_task: list[float] = []
    n_twins = n_hist = n_mined = 0
    factors: set[int] = set()
    loads: list[float] = []  # verify.load_per_cpu of the tasks taken from mining that have one
    for t in tasks:
        twins = (canaried or {}).get(t.id)
        earlier = (graded or {}).get(t.id)
        v = t.verify or {}
        factor = 1 if canaried is None else grading_runs(v)
        runs = int(v.get("stability_runs") or 0)
        if twins:
            per_task.append(sum(twins) / len(twins))
            n_twins += 1
        elif earlier:
            per_task.append(factor * sum(earlier) / len(earlier))
            n_hist += 1
            factors.add(factor)
        elif runs and v.get("commit_s") is not None:
            load = v.get("load_per_cpu")
            crowd = 1.0
            if isinstance(load, (int, float)) and not isinstance(load, bool) and load == load:
                loads.append(float(load))
                crowd = max(1.0, float(load))
            per_task.append(factor * float(v["commit_s"]) / runs * (MINED_TO_GRADED if as_measured else 1 / crowd))
            n_mined += 1
            factors.add(factor)
        elif hist_test_s is not None:
            per_task.append(hist_test_s)
    if not per_task:
        return None, "unknown"
    lo, hi = min(factors, default=1), max(factors, default=1)
    span = f"{lo}" if lo == hi else f"{lo}-{hi}"
    times = "" if canaried is None else f" × {span}"
    if as_measured:  # the high end of a plan's range, said beside the low end's basis: only what differs (ux67)
        differs = (["earlier gradings' seconds as measured"] if n_twins + n_hist else []) + (
            [f"each task's {_AS_MEASURED}"] if n_mined else [])
        return sum(per_task) / len(per_task), "; ".join(differs)
    parts = []
    scaled = f"; {eased_by}" if eased_by else ""
    if n_twins:
        parts.append(f"earlier gradings with canary twins ({plural(n_twins, 'task')}{scaled})")
    if n_hist:
        parts.append(f"earlier graded attempts ({plural(n_hist, 'task')}{scaled}){times}")
    if loads:
        at = f"{min(loads):.1f}" if min(loads) == max(loads) else f"{min(loads):.1f}-{max(loads):.1f}"
        parts.append(f"measured at mining ({plural(len(loads), 'task')}; at a load of {at} per CPU, scaled to an "
                     "idle machine: a lower bound there, grading also runs canaries and the whole hidden test "
                     f"files){times}")
    if n_mined > len(loads):
        parts.append(f"measured at mining ({plural(n_mined - len(loads), 'task')}; at a load not recorded, so no "
                     "bound: grading also runs canaries and the whole hidden test files, a busier machine at mining "
                     f"ran them slower){times}")
    if len(per_task) > n_twins + n_hist + n_mined:
        parts.append(f"this agent's earlier attempts ({plural(len(per_task) - n_twins - n_hist - n_mined, 'task')})")
    how = ", ".join(parts)
    if times and n_hist + n_mined:  # said once, with the low figure
        how += f": a change other than the reference fix is graded by {span} {'run' if hi == 1 else 'runs'} at once"
    return sum(per_task) / len(per_task), how


def estimate(settings: Settings, tasks: Sequence[Task], agent_specs: Sequence[str], runs_per_agent: int, *,
             seconds_per_run: float | None = None, cost_per_run: float | None = None,
             load_now: float | None = None) -> list[Estimate]:
    """One :class:`Estimate` per agent spec for ``runs_per_agent`` agent runs each over ``tasks``
    (module docstring for the sources). ``load_now``: the machine's load per CPU now, which earlier gradings'
    seconds are scaled to (:func:`graded_seconds_by_task`); ``None``: read it
    (:func:`~pytest_homefield.sandbox.proccap.load_per_cpu`). Raises ``AgentSpecError`` for a bad spec."""
    hist = history_averages(HomefieldDir(settings.root).runs)
    runs_root = HomefieldDir(settings.root).runs
    now = load_per_cpu() if load_now is None else load_now
    plain = graded_seconds_by_task(runs_root, canaries=False, now=now)
    canaried = graded_seconds_by_task(runs_root, canaries=True, now=now)
    plain_raw = graded_seconds_by_task(runs_root, canaries=False)  # as measured: the high end's (eta46, plan66)
    canaried_raw = graded_seconds_by_task(runs_root, canaries=True)
    note = eased_note(runs_root, now)
    out = []
    for text in agent_specs:
        p = parse_spec(text, named=settings.agent_defs)
        spec = settings.agent_defs[p.arg]["spec"] if p.kind == "named" and p.arg else p.spec
        h = hist.get(spec) or hist.get(p.name)
        hist_test = h["test_s"] if h and h["test_s"] == h["test_s"] else None
        kind, arg = (p.arg or "", None) if p.kind == "named" else (p.kind, p.arg)
        grading: float | None
        high: float | None = None
        high_basis = ""
        caps = kind_capabilities(kind)
        if kind == "noop":
            grading, grading_basis = 0.0, "exact: an empty patch is not graded"
        else:  # a modelless agent's change is the reference fix (no twins), a model's is not
            agent_test = float(hist_test) if hist_test is not None else None
            twins = caps is None or not caps.modelless
            grading, grading_basis = grading_seconds(tasks, agent_test, plain, canaried=canaried if twins else None,
                                                     eased_by=note)
            high, high_how = grading_seconds(tasks, agent_test, plain_raw, canaried=canaried_raw if twins else None,
                                             as_measured=True)
            share = float(arg or 0) if kind == "sim" else 1.0  # a sim:P miss is an empty patch, never graded (nu27)
            grading, high = (None if g is None else g * share for g in (grading, high))
            if kind == "sim":
                grading_basis += f" × {share:g}: sim:P applies the fix in that share of its runs"
            high_basis = high_how if high is not None and high > (grading or 0.0) * 1.01 else ""
        secs: float | None
        usd: float | None
        if caps is not None and caps.modelless:
            secs, usd, basis = 0.0, 0.0, "exact: a reference agent spends nothing"
        elif seconds_per_run is not None or cost_per_run is not None:
            a_secs, a_usd, _ = assumed_per_run(kind, arg)
            secs = seconds_per_run if seconds_per_run is not None else (float(h["wall_s"]) if h else a_secs)
            usd = cost_per_run if cost_per_run is not None else (
                float(h["cost_usd"]) if h and h["cost_usd"] == h["cost_usd"] else a_usd)
            given = [f for f, v in ((option("seconds-per-run"), seconds_per_run),
                                    (option("cost-per-run"), cost_per_run)) if v is not None]
            basis = " and ".join(given) + " given"
        elif h:
            secs = float(h["wall_s"])
            usd = float(h["cost_usd"]) if h["cost_usd"] == h["cost_usd"] else None
            basis = f"{int(h['n'])} earlier attempts"
        else:
            secs, usd, client = assumed_per_run(kind, arg)
            if secs is None:
                basis = f"unknown: give {option('seconds-per-run')} and {option('cost-per-run')}"
            else:
                basis = f"assumed ({client} default; no earlier attempts)"
                if usd is None:
                    basis += "; the client reports no cost"
                if usd is not None and kind == "claude" and settings.attempt_budget is not None \
                        and settings.attempt_budget < usd:
                    usd = settings.attempt_budget
                    basis += f"; USD capped by {option('attempt-budget')}"
        out.append(Estimate(agent=p.name, spec=spec, runs=runs_per_agent, agent_s_per_run=secs, usd_per_run=usd,
                            grading_s_per_run=grading, basis=basis, grading_basis=grading_basis,
                            history_n=int(h["n"]) if h else 0, grading_s_high=high,
                            grading_high_basis=high_basis))
    return out
