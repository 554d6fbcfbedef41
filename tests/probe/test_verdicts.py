"""The control, the exceedance p-values, the Benjamini-Hochberg flags and the verdicts, on hand-made records."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_homefield.errors import ProbeError, RecordError
from pytest_homefield.probe.verdicts import (
    Verdict,
    bh_adjusted,
    bh_flags,
    control_pairs,
    exceedance_p,
    judge,
    min_control,
    mismatched_pairs,
    percentile,
    verdict_lines,
    write_verdict,
)
from pytest_homefield.probe_records import latest, load_probe, load_verdict, probe_path
from pytest_homefield.records import Task
from pytest_homefield.run.memorized import excluded_for_run
from pytest_homefield.store import append_jsonl, read_jsonl


def task(tid: str, day: int) -> Task:
    return Task(id=tid, commit=tid * 3, parent="p", committed_at="", authored_at=f"2024-01-{day:02d}T12:00:00+00:00",
                mode="commit", subject=f"subject {tid}", message="m", prompt="m", source_files=["a.py"], test_files=[],
                test_patch="", gold_patch="", FAIL_TO_PASS=[], PASS_TO_PASS=[])


def rec(kind: str, tid: str, sample: int, score: float | None, **kw: object) -> dict:
    return {"kind": kind, "task_id": tid, "sample": sample, "score": score, "agent": "m", "spec": "cmd:x", **kw}


@pytest.mark.parametrize("values", [[0.3], [0.1, 0.2], [0.5, 0.1, 0.9, 0.3], list(np.linspace(0, 1, 13) ** 2)])
def test_percentile_is_hyndman_fan_7_like_numpy(values: list[float]) -> None:
    assert percentile(values) == pytest.approx(float(np.percentile(values, 95)))
    assert percentile(values, 0.5) == pytest.approx(float(np.percentile(values, 50)))
    assert percentile([]) is None


def test_mismatched_pairs_never_pair_a_task_with_itself() -> None:
    pairs = mismatched_pairs(["c", "a", "b", "a"])
    assert pairs == {"a": "b", "b": "c", "c": "a"}
    assert mismatched_pairs(["only"]) == {}


def task_on(tid: str, files: list[str]) -> Task:
    """A task changing ``files``, authored on the 1st."""
    return Task(**{**task(tid, 1).to_dict(), "source_files": files})


def test_no_control_pair_asks_its_task_question_again() -> None:
    """atk17: a task paired with one changing the same files sent the same question as its own call (10 of
    the 20 controls of the demo's copies): an endpoint that remembers its calls tells the control by the
    repetition. Each task is now paired with one changing other files, every gold used once when it can be."""
    files = {"a": ["x.py"], "b": ["x.py"], "c": ["y.py"], "d": ["y.py"], "e": ["z.py"], "f": ["w.py", "x.py"]}
    pairs = control_pairs([task_on(t, f) for t, f in files.items()])
    assert set(pairs) == set(files) and all(files[t] != files[g] for t, g in pairs.items())
    assert sorted(pairs.values()) == sorted(files)  # every gold once
    assert pairs == control_pairs([task_on(t, f) for t, f in reversed(files.items())])  # the same ids: the same pairs
    # every task changing its own files: each sorted id with the next, as before
    assert control_pairs([task_on(t, [f"{t}.py"]) for t in "cab"]) == {"a": "b", "b": "c", "c": "a"}
    # more than half of the tasks change the same files: each of them is paired with another task in turn
    crowd = control_pairs([task_on(t, ["x.py"]) for t in "abc"] + [task_on("d", ["y.py"]), task_on("e", ["z.py"])])
    assert crowd == {"a": "d", "b": "e", "c": "d", "d": "a", "e": "b"}
    assert control_pairs([task_on(t, ["x.py"]) for t in "ab"]) == {}  # no other files: no pair


def test_a_task_without_a_control_pair_owes_none_and_the_verdict_says_so() -> None:
    tasks = [task_on(t, ["x.py"]) for t in "abc"] + [task_on(t, [f"{t}.py"]) for t in "de"]
    pairs = {**control_pairs(tasks)}
    del pairs["c"]  # as when every other task changed c's files
    records = [rec("task", t, 1, 0.2) for t in "abcde"] + [rec("control", t, 1, 0.1) for t in "abde"]
    records.append(rec("control", "c", 1, 0.9))  # an older session's control of c (its own question): not counted
    v = judge("m", records, tasks, pairs=pairs)
    assert v.unjudged == 0 and v.control_n == 4 and v.control_p95 == pytest.approx(0.1)
    assert "1 task without a control pair: every other probed task changes the same files, so its control would " \
           "ask its own question again: c" in " ".join(v.notes)
    alone = judge("m", records[:3], tasks[:3], pairs=control_pairs(tasks[:3]))  # all on x.py
    assert alone.unjudged == 0 and alone.control_n == 0 and "3 tasks without a control pair" in " ".join(alone.notes)


def test_judge_with_mismatched_control() -> None:
    tasks = [task(t, i + 1) for i, t in enumerate("abcdef")]
    records = [rec("task", "a", 1, 0.95), rec("task", "a", 2, 0.85), rec("task", "b", 1, 0.2), rec("task", "b", 2, 0.1),
               rec("task", "c", 1, 0.31), rec("task", "d", 1, None, outcome="infra"), rec("task", "e", 1, 0.0),
               rec("task", "f", 1, 0.28)]
    records += [rec("control", t, 1, s) for t, s in zip("abcdef", [0.1, 0.3, 0.2, 0.15, 0.05, 0.25], strict=True)]
    # issue 32: six control values cannot reach a 10 % false discovery rate (p >= 1/7): nothing flagged, and why
    small = judge("m", records, tasks)
    assert small.flagged == [] and small.judged == 5 and small.fdr == 0.1
    assert any("no task can have an exceedance p below 1/7 = 0.14, above the 10% false discovery rate, so nothing "
               "is flagged (at least 9 are needed)" in n for n in small.notes)
    v = judge("m", records, tasks, fdr=0.4, floor=0.0)  # Benjamini-Hochberg alone (the floor: below)
    assert v.control == "mismatched" and v.control_n == 6
    assert v.control_p95 == pytest.approx(float(np.percentile([0.1, 0.3, 0.2, 0.15, 0.05, 0.25], 95)))  # 0.2875
    # exceedance p = (1 + #control >= best) / 7: a 1/7, c 1/7, f 2/7, b 4/7, e 1; BH at 40 % over 5 tasks
    # flags ranks 1-2 (1/7 <= 2 * 0.4 / 5 = 0.16) and not f (2/7 > 0.24); highest first
    assert v.flagged == [{"task_id": "a", "best": 0.95, "mean": 0.9}, {"task_id": "c", "best": 0.31, "mean": 0.31}]
    assert v.tasks["f"]["memorized"] is False and v.tasks["f"]["p"] == pytest.approx(2 / 7, abs=1e-6)
    assert v.tasks["a"] == {"best": 0.95, "mean": 0.9, "samples": 2, "p": pytest.approx(1 / 7, abs=1e-6),
                            "memorized": True}
    assert v.tasks["b"]["memorized"] is False
    assert v.tasks["d"] == {"best": None, "mean": None, "samples": 0, "memorized": None}  # failed call: no verdict
    assert v.judged == 5
    assert any("no scored sample" in n for n in v.notes)


def test_a_flag_needs_the_recite_floor_whatever_the_control() -> None:
    """atk17 P1: a model that remembers its calls answers each control (the same prompt again, another task's
    files) with junk and the tasks it picks with one made-up function (scores 0.13-0.2 here, as measured):
    every pick beat the whole control, so Benjamini-Hochberg flagged exactly those (and ``--exclude-memorized``
    dropped them for every agent). Below ``--recite-floor`` (0.5) nothing is flagged, and a note says why; a
    real recital (0.9) still is."""
    ids = [f"t{i:02d}" for i in range(20)]
    tasks = [task(t, i + 1) for i, t in enumerate(ids)]
    picked = set(ids[:15])
    records = [rec("task", t, 1, 0.13 + 0.005 * i if t in picked else 0.0) for i, t in enumerate(ids)]
    records += [rec("control", t, 1, 0.0) for t in ids]
    bought = judge("m", records, tasks, floor=0.0)  # main before the floor
    assert {f["task_id"] for f in bought.flagged} == picked
    v = judge("m", records, tasks)
    assert v.flagged == [] and v.floor == 0.5 and v.to_record("t")["recite_floor"] == 0.5
    assert any("15 tasks beat the control but scored below the recite floor 0.50: not flagged" in n for n in v.notes)
    recited = judge("m", [*records, rec("task", "t19", 2, 0.9)], tasks)
    assert [f["task_id"] for f in recited.flagged] == ["t19"]


def test_judge_with_cutoff_uses_later_tasks_as_control() -> None:
    tasks = [task(t, d) for t, d in [("a", 1), ("b", 2), ("c", 3), ("x", 20), ("y", 21), ("z", 22)]]
    records = [rec("task", t, 1, s) for t, s in [("a", 0.9), ("b", 0.05), ("c", 0.26), ("x", 0.1), ("y", 0.25),
                                                  ("z", 0.3)]]
    records.append(rec("control", "a", 1, 0.99))  # control records of an earlier session without cutoff: unused
    v = judge("m", records, tasks, cutoff="2024-01-10", fdr=0.75, floor=0.0)  # three control values: p >= 1/4
    assert v.control == "cutoff" and v.control_n == 3
    assert v.control_p95 == pytest.approx(float(np.percentile([0.1, 0.25, 0.3], 95)))
    # p: a 1/4, c 2/4 (0.26 < 0.3 only), b 1; BH at 75 % over 3 flags ranks 1-2 (2/4 <= 2 * 0.75 / 3)
    assert [f["task_id"] for f in v.flagged] == ["a", "c"]
    assert v.tasks["x"]["memorized"] is False and v.tasks["x"].get("control") is True
    assert v.judged == 3
    empty = judge("m", records, tasks, cutoff="2024-02-01")
    assert empty.control_n == 0 and not empty.flagged and empty.tasks["a"]["memorized"] is None
    assert "no control" in empty.notes[0]


def test_retry_line_wins_and_verdict_rewrite_keeps_every_line(tmp_path: Path) -> None:
    path = probe_path(tmp_path, "m")
    tasks = [task("a", 1), task("b", 2)]
    for r in [rec("task", "a", 1, None, outcome="rate_limited", cost_usd=0.01), rec("task", "a", 1, 0.9, cost_usd=0.02),
              rec("task", "b", 1, 0.1), rec("control", "a", 1, 0.2), rec("control", "b", 1, 0.1)]:
        append_jsonl(path, r)
    assert latest(read_jsonl(path))[("task", "a", 1)]["score"] == 0.9
    v = judge("m", read_jsonl(path), tasks, fdr=0.7)  # two control values: a's p is 1/3, b's 1
    write_verdict(path, v, "2026-01-01T00:00:00+00:00")
    write_verdict(path, v, "2026-01-02T00:00:00+00:00")  # a second session replaces the verdict line
    lines = list(read_jsonl(path))
    assert [r["kind"] for r in lines] == ["task", "task", "task", "control", "control", "verdict"]
    assert lines[0]["cost_usd"] == 0.01  # the failed call's spend is kept
    assert [r.get("memorized") for r in lines[:3]] == [True, True, False]
    verdict = load_verdict(path)
    assert verdict is not None and verdict["at"].startswith("2026-01-02")
    assert verdict["flagged"] == [{"task_id": "a", "best": 0.9, "mean": 0.9}]


def test_excluded_for_run(tmp_path: Path) -> None:
    tasks = [task("a", 1), task("b", 2)]
    for name, scores in (("m", (0.9, 0.1)), ("n", (0.1, 0.9))):
        path = probe_path(tmp_path, name)
        for t, s in zip("ab", scores, strict=True):
            append_jsonl(path, {**rec("task", t, 1, s), "agent": name})
        for t in "ab":
            append_jsonl(path, {**rec("control", t, 1, 0.2), "agent": name})
        write_verdict(path, judge(name, read_jsonl(path), tasks, fdr=0.7), "t")  # 2 control values: p >= 1/3
    agents = [SimpleNamespace(name="m", spec="cmd:x"), SimpleNamespace(name="n", spec="cmd:x"),
              SimpleNamespace(name="oracle", spec="oracle")]
    out = excluded_for_run(tmp_path, agents)
    assert out["tasks"] == ["a", "b"]  # flagged for any agent: dropped for all
    assert out["by_agent"]["m"]["tasks"] == ["a"] and "oracle" not in out["by_agent"]
    with pytest.raises(ProbeError, match="no probe results for agent 'claude'"):
        excluded_for_run(tmp_path, [SimpleNamespace(name="claude", spec="claude")])
    with pytest.raises(ProbeError, match="was probed as cmd:x, the run uses cmd:y"):
        excluded_for_run(tmp_path, [SimpleNamespace(name="m", spec="cmd:y")])
    append_jsonl(probe_path(tmp_path, "u"), rec("task", "a", 1, 0.5))
    with pytest.raises(ProbeError, match="did not finish"):
        excluded_for_run(tmp_path, [SimpleNamespace(name="u", spec="cmd:x")])
    assert json.dumps(out)  # frozen into meta.json as is


def test_a_verdict_with_unanswered_calls_is_not_finished(tmp_path: Path) -> None:
    """atk11 P1, measured on main: an agent that claimed a rate limit on its first probe call had every
    other call skipped; the verdict judged nothing (``judged: 0``) and ``--exclude-memorized`` took it as
    a clean bill ("recites 0 of 0 tasks")."""
    tasks = [task("a", 1), task("b", 2), task("c", 3)]
    path = probe_path(tmp_path, "mem")
    append_jsonl(path, {**rec("task", "a", 1, None), "agent": "mem", "outcome": "rate_limited"})
    verdict = judge("mem", read_jsonl(path), tasks)
    write_verdict(path, verdict, "t")
    with pytest.raises(ProbeError, match=r"agent 'mem' left 6 task\(s\) or control\(s\) without a scored sample"):
        excluded_for_run(tmp_path, [SimpleNamespace(name="mem", spec="cmd:x")])
    assert (verdict.judged, verdict.unjudged) == (0, 6)
    assert "incomplete: 6 of 6 tasks and controls have no scored sample" in " ".join(verdict.notes)
    for t in "abc":  # every task and every control pair answered: finished, and accepted
        append_jsonl(path, {**rec("task", t, 1, 0.1), "agent": "mem"})
        append_jsonl(path, {**rec("control", t, 1, 0.1), "agent": "mem"})
    write_verdict(path, judge("mem", load_probe(path), tasks), "t")
    assert excluded_for_run(tmp_path, [SimpleNamespace(name="mem", spec="cmd:x")])["tasks"] == []


def test_a_task_never_answered_is_not_judged_clean(tmp_path: Path) -> None:
    """r17's open finding: a call the agent never answers is scored, on its last try, as an empty answer, so
    never as memorized: a model that declines exactly the tasks it remembers got a clean bill on them. Such a
    task is now unjudged (``unanswered``), the verdict unfinished, and ``--exclude-memorized`` refuses it;
    one answered sample of the task (even a poor one) judges it again."""
    tasks = [task("a", 1), task("b", 2), task("c", 3)]
    path = probe_path(tmp_path, "shy")
    for t in "abc":
        append_jsonl(path, {**rec("control", t, 1, 0.1), "agent": "shy"})
    for t in "bc":
        append_jsonl(path, {**rec("task", t, 1, 0.1), "agent": "shy"})
    declined = {**rec("task", "a", 1, 0.0), "agent": "shy", "outcome": "agent_error",
                "error": "rate limited 3 times (--max-retries 2): 429"}
    append_jsonl(path, declined)
    verdict = judge("shy", read_jsonl(path), tasks)
    assert verdict.tasks["a"] == {"best": 0.0, "mean": 0.0, "samples": 1, "memorized": None, "unanswered": True}
    assert (verdict.judged, verdict.unjudged) == (2, 1)
    assert any(n.startswith("1 task never answered (every call failed until its last try") and n.endswith(": a")
               for n in verdict.notes), verdict.notes
    write_verdict(path, verdict, "t")
    with pytest.raises(ProbeError, match="did not finish|without a scored sample"):
        excluded_for_run(tmp_path, [SimpleNamespace(name="shy", spec="cmd:x")])
    append_jsonl(path, {**rec("task", "a", 2, 0.05), "agent": "shy"})  # a second sample, answered
    again = judge("shy", load_probe(path), tasks)
    assert (again.judged, again.unjudged) == (3, 0) and "unanswered" not in again.tasks["a"]


# -- every record read is validated (issue 21) ------------------------------------------------------

def _call(**kw: object) -> dict[str, object]:
    return {"schema_version": 1, "kind": "task", "task_id": "t1", "sample": 1, "agent": "a", "spec": "cmd:x",
            "score": 0.5, "outcome": None, "cost_usd": 0.01, **kw}


@pytest.mark.parametrize(("record", "message"), [
    (_call(schema_version=2), "field 'schema_version' is 2; this version of homefield reads 1 only"),
    (_call(kind="answer"), "field 'kind' is 'answer'; expected task, control or verdict"),
    ({k: v for k, v in _call().items() if k != "sample"}, "field 'sample' is missing"),
    (_call(sample=0), "field 'sample' must be an integer at least 1, got number 0"),
    (_call(score=1.5), "field 'score' must be a number in [0, 1] or null, got number 1.5"),
    (_call(score="high"), "field 'score' must be a number in [0, 1] or null, got string 'high'"),
    (_call(cost_usd=[1]), "field 'cost_usd' must be a number or null, got array [1]"),
    (_call(kind="control", gold_task_id=3), "field 'gold_task_id' must be a string on a control record, got number 3"),
    ({"kind": "verdict", "flagged": [{"best": 1}]}, "field 'flagged' must be a list of {task_id, …} objects, "
                                                    "got array [{'best': 1}]"),
])
def test_a_bad_probe_record_is_refused_naming_file_line_and_field(tmp_path: Path, record: dict[str, object],
                                                                  message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(_call()) + "\n" + '{"torn": ' + "\n" + json.dumps(record) + "\n")
    with pytest.raises(RecordError) as err:
        load_probe(path)
    assert str(err.value) == f"{path}: line 3: {message}"


def test_probe_records_load_in_order_and_a_torn_append_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    good = [_call(), _call(kind="control", gold_task_id="t2", score=None, outcome="timeout", cost_usd=None),
            {"kind": "verdict", "flagged": [{"task_id": "t1", "best": 0.9, "mean": 0.8}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in good) + '{"kind": "ta')
    assert load_probe(path) == good
    assert load_probe(tmp_path / "missing.jsonl") == []


# -- exceedance p-values and Benjamini-Hochberg (issue 32) -----------------------------------------

def test_exceedance_p_and_the_smallest_useful_control() -> None:
    assert exceedance_p(0.9, [0.1, 0.2, 0.3]) == 1 / 4
    assert exceedance_p(0.2, [0.1, 0.2, 0.3]) == 3 / 4  # a tie counts as exceeding
    assert min_control(0.1) == 9 and min_control(0.05) == 19 and min_control(0.5) == 1
    with pytest.raises(ValueError):
        exceedance_p(0.5, [])


@pytest.mark.slow
def test_bh_flags_match_scipy_and_a_four_task_control_flags_nothing() -> None:
    from scipy.stats import false_discovery_control

    rng = np.random.default_rng(32)
    control = rng.beta(2, 5, 100).tolist()
    # three recited tasks beat the whole control: p = 1/101 each, within BH's 3 * 0.1 / 23 = 0.013
    best = [1.0, 0.99, 0.97, *rng.beta(2, 5, 20).tolist()]
    flags = bh_flags(best, control)
    ps = [exceedance_p(b, control) for b in best]
    assert flags == [bool(x) for x in false_discovery_control(ps) <= 0.1]
    assert flags[:3] == [True, True, True] and sum(flags) == 3
    # issue 32: with a 4-task --cutoff control a task that was not recited got flagged above the 95th
    # percentile; no p-value can be below 1/5 = 0.2 there, so at 10 % nothing is flagged
    assert bh_flags([0.9, 0.1], [0.1, 0.2, 0.3, 0.4]) == [False, False]
    with pytest.raises(ValueError, match="fdr"):
        bh_flags([0.5], control, fdr=0.0)


def test_bh_adjusted_equals_scipys_values_with_ties_and_one_value() -> None:
    """The probe computes Benjamini–Hochberg itself (importing ``scipy.stats`` cost each probe session a
    second of CPU); its adjusted values are scipy's, to the bit."""
    from scipy.stats import false_discovery_control

    rng = np.random.default_rng(35)
    for k in range(300):
        m = int(rng.integers(1, 30))
        ps = (rng.integers(1, 10, m) / 9).tolist() if k % 2 else rng.random(m).tolist()  # odd k: many ties
        assert bh_adjusted(ps) == false_discovery_control(ps, method="bh").tolist(), ps
    assert bh_adjusted([]) == [] and bh_adjusted([0.3]) == [0.3] and bh_adjusted([0.04, 0.01]) == [0.04, 0.02]


def test_a_flagged_tasks_subject_reaches_the_terminal_as_escapes() -> None:
    """host29: the probe's summary printed a memorized task's commit subject raw (its ESC sequences played)."""
    t = task("a", 1)
    t.subject = t.prompt = "Fix\x1b[2J\x1b[Hnothing\u202e memorized\r"
    v = Verdict(agent="m", control="cutoff", cutoff=None, control_n=20, control_p95=0.3,
                tasks={"a": {"memorized": True, "best": 0.99, "mean": 0.9}})
    lines = [text for text, _ in verdict_lines("m", "cmd:x", v, {"a": t}, 0.0)]
    assert lines[-1].endswith("Fix\\x1b[2J\\x1b[Hnothing\\u202e memorized")
    assert [ln for ln in lines if "\x1b" in ln or "\r" in ln or "\u202e" in ln] == []


def test_a_flagged_task_is_named_as_the_report_names_it() -> None:
    """ux30: the probe's flagged tasks showed the raw commit subject (``Fix #218: …``) where the report, ``tasks``
    and ``run`` show the cleaned title (``display_subject``: the prompt's first line)."""
    t = task("a", 1)
    t.subject, t.prompt = "Fix #218: Handle maxsize overflow (closes #219)", "Handle maxsize overflow\n\nbody"
    v = Verdict(agent="m", control="cutoff", cutoff=None, control_n=20, control_p95=0.3,
                tasks={"a": {"memorized": True, "best": 0.99, "mean": 0.9}})
    lines = [text for text, _ in verdict_lines("m", "cmd:x", v, {"a": t}, 0.0)]
    assert lines[-1] == "  memorized a  best 0.99  mean 0.90  Handle maxsize overflow"
