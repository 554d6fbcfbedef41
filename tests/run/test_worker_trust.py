"""hatk36: the controller takes from an xdist worker only the records of the items it gave that worker.

The worker here is *changed*: a pytest plugin (``-p hf_forger``) runs in each worker process, as code a
changed worker runs: a ``.pth`` the graded code of an earlier attempt left in the worker's interpreter
under ``--sandbox none`` (docs/contracts.md §9 "Residual risk"), or a remote host someone else controls.
Such code sees everything the worker's homefield makes and can put anything on the reports the worker
sends; it cannot touch the controller's process. It forges what contracts §4 said it could (hatk35, not
closed then):

1. on the first report of its first attempt, next to the item's own records: a result line of *another*
   task saying ``solved``, a ``flaky.jsonl`` line, and a ``tasks.jsonl`` rewritten empty;
2. on its next attempt, an extra report sent on the worker's xdist channel (as xdist sends every report;
   xdist's own check that a report is the current item's runs in the worker, so it is passed by), for the
   attempt it had finished first (no longer the worker's to report), with a ``solved`` line of that key.

Measured on main before the fix: the forged line of 1 was appended to ``results.jsonl`` (``solved``, for an
agent that changes nothing), ``flaky.jsonl`` got the line, and ``tasks.jsonl`` was emptied on the controller's
machine (the session then ended in an INTERNALERROR before the replay of 2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined

from pytest_homefield.store import read_jsonl
from pytest_homefield.transport import EVENT_REFUSED

pytestmark = pytest.mark.slow

FORGER = '''
"""Loaded with -p in every process of the session; forges only in xdist workers."""
import json
from pathlib import Path

import pytest

from pytest_homefield.transport import REPORT_ATTR, append_message, file_message

_state = {"first": None, "replayed": False}


def _results(messages):
    return [m for m in messages if "append" in m and m["append"].endswith("results.jsonl")]


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: sees the messages homefield put on the report
def pytest_runtest_makereport(item, call):
    report = yield
    config = item.config
    messages = getattr(report, REPORT_ATTR, None)
    if not hasattr(config, "workerinput") or not messages or not _results(messages):
        return report
    own = _results(messages)[0]
    if _state["first"] is None:  # 1: another task's result, a flaky line, tasks.jsonl emptied
        _state["first"] = (report.nodeid, own["append"], dict(own["record"]))
        tasks = Path(str(config.rootpath), ".homefield", "tasks.jsonl")
        other = next(json.loads(ln)["id"] for ln in tasks.read_text().splitlines()
                     if json.loads(ln)["id"] != own["record"]["task_id"])
        messages.append(append_message(own["append"], {**own["record"], "task_id": other, "outcome": "solved"}))
        messages.append(append_message("flaky.jsonl", {"schema_version": 1, "task_id": other, "test_id": "t",
                                                        "run_id": own["record"]["run_id"], "agent": "noop",
                                                        "attempt": 1, "found_at": "2026-01-01T00:00:00+00:00"}))
        messages.append(file_message("tasks.jsonl", b""))
    elif not _state["replayed"]:  # 2: a report for the attempt it finished first, which is not its to send
        _state["replayed"] = True
        nodeid, target, record = _state["first"]
        forged = pytest.TestReport(nodeid=nodeid, location=report.location, keywords={}, outcome="passed",
                                   longrepr=None, when="setup")
        setattr(forged, REPORT_ATTR, [append_message(target, {**record, "outcome": "solved"})])
        # past the worker's own check (it sends reports of its current item only): its channel, directly
        interactor = next(p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor")
        data = config.hook.pytest_report_to_serializable(config=config, report=forged)
        interactor.sendevent("testreport", data=data)
    return report
'''


def test_a_changed_worker_cannot_write_another_items_records(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "hf_forger.py").write_text(FORGER)
    tasks_before = (repo / ".homefield" / "tasks.jsonl").read_bytes()
    n_tasks = len(tasks_before.splitlines())
    env = cli_env()
    env["PYTHONPATH"] = f"{plugins}:{env.get('PYTHONPATH', '')}"
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "noop", "--attempts", "2",
                           "--sandbox", "none", "--run-id", "r1", "-n", "2", "--", "-p", "hf_forger"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    home = repo / ".homefield"
    assert (home / "tasks.jsonl").read_bytes() == tasks_before, out  # not rewritten
    assert not (home / "flaky.jsonl").exists(), out
    results = list(read_jsonl(home / "runs" / "r1" / "results.jsonl"))
    assert results and not [r for r in results if r["outcome"] == "solved"], out  # nothing forged counted
    keys = [(r["task_id"], r["agent"], r["attempt"]) for r in results]
    assert len(keys) == len(set(keys)), out  # no key twice
    refused = list(read_jsonl(home / "refused.jsonl"))
    workers = {r["worker"] for r in refused}
    assert workers and workers <= {"gw0", "gw1"}, refused
    # each forging worker's first attempt: refused whole (its own line too: the worker is not trusted for it)
    firsts = [r for r in refused if "with task_id" in r["why"] or "tasks.jsonl" in r["why"]]
    assert len(firsts) == len(workers), refused
    assert len(keys) == 2 * n_tasks - len(firsts), (keys, refused)
    for r in firsts:
        _, task, name = r["nodeid"].split("::")
        agent, attempt = name[:-1].split("[")
        assert (task, agent, int(attempt)) not in keys  # unrecorded: --resume makes it again
    # the replay: an item the worker was not given (any more)
    assert any(r["why"].startswith("that worker was not given this item") for r in refused), refused
    assert proc.returncode != 0, out
    assert "homefield: refused what worker gw" in out, out
    lines = [ln for ln in out.splitlines() if "homefield: refused what worker" in ln]
    assert all(json.dumps(ln) and ("none of it written" in ln if " event: " not in ln else
                                   ln.endswith(EVENT_REFUSED)) for ln in lines), lines


STARTER = '''
"""Loaded with -p in every process of the session; in an xdist worker, at its first attempt item, says on the
worker's xdist channel that every other attempt item starts, twice, and ends once."""
import pytest

_done = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    config = item.config
    if hasattr(config, "workerinput") and not _done and item.nodeid.endswith("]"):
        _done.append(item.nodeid)
        interactor = next(p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor")
        for other in item.session.items:
            if other.nodeid != item.nodeid and other.nodeid.endswith("]"):
                for event in ("logstart", "logstart", "testreport"):
                    if event == "logstart":
                        interactor.sendevent(event, nodeid=other.nodeid, location=other.location)
                        continue
                    forged = pytest.TestReport(nodeid=other.nodeid, location=other.location, keywords={},
                                               outcome="passed", longrepr=None, when="teardown")
                    interactor.sendevent(event, data=config.hook.pytest_report_to_serializable(config=config,
                                                                                             report=forged))
    return (yield)
'''


def test_a_changed_worker_cannot_start_or_end_another_items_try(mined: Path, tmp_path: Path) -> None:
    """hatk37: ``tries.jsonl`` was made from xdist's ``logstart`` (which does not say which worker sent it) and from
    every report: a changed worker starting other attempts had tries of them cut short (a start without an end),
    which the report counts as failed attempts of their agent (contracts §10), and ending them hid a cut."""
    from pytest_homefield.report.runs import cut_short_by_key

    repo = copy_mined(mined, tmp_path / "repo")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "hf_starter.py").write_text(STARTER)
    env = cli_env()
    env["PYTHONPATH"] = f"{plugins}:{env.get('PYTHONPATH', '')}"
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "noop", "--attempts", "2",
                           "--sandbox", "none", "--run-id", "r1", "-n", "2", "--", "-p", "hf_starter"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    run = repo / ".homefield" / "runs" / "r1"
    keys = {(r["task_id"], r["agent"], r["attempt"]) for r in read_jsonl(run / "results.jsonl")}
    n_tasks = len((repo / ".homefield" / "tasks.jsonl").read_text().splitlines())
    assert len(keys) == 2 * n_tasks, out  # every attempt recorded: the forged events wrote nothing
    tries: dict[tuple[str, str, int], list[str]] = {}
    for r in read_jsonl(run / "tries.jsonl"):
        tries.setdefault((r["task_id"], r["agent"], r["attempt"]), []).append(r["event"])
    assert tries == {k: ["start", "end"] for k in keys}, out
    assert not cut_short_by_key([run]), out
    refused = list(read_jsonl(repo / ".homefield" / "refused.jsonl"))
    assert any(r["why"].startswith("a start event: ") for r in refused), refused
    assert any(not r["why"].startswith("a start event: ") for r in refused), refused
    assert proc.returncode == 1, out
