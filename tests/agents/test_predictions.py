"""The ``preds:FILE`` agent (issue 19): another harness's patches graded like any agent's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.e2e_repo import homefield

from pytest_homefield.agents.base import AgentContext
from pytest_homefield.agents.predictions import (
    PredictionsAgent,
    apply_like_swebench,
    check_predictions,
    load_predictions,
    pick,
)
from pytest_homefield.agents.registry import parse_spec
from pytest_homefield.errors import AgentSpecError, PatchError, PredictionsError, PredictionsSpecError
from pytest_homefield.records import SCORED_OUTCOMES, load_tasks
from pytest_homefield.store import read_jsonl


def test_formats(tmp_path: Path) -> None:
    preds = [{"instance_id": "calc__aaaaaaaaaaaa", "model_name_or_path": "m1", "model_patch": "P1"},
             {"instance_id": "calc__aaaaaaaaaaaa", "model_name_or_path": "m1", "model_patch": "P2"},
             {"instance_id": "other__bbbbbbbbbbbb", "model_name_or_path": "m1", "model_patch": None}]
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text("".join(json.dumps(p) + "\n" for p in preds))
    array = tmp_path / "p.json"
    array.write_text(json.dumps(preds))
    keyed = tmp_path / "preds.json"  # mini-swe-agent
    keyed.write_text(json.dumps({"calc__aaaaaaaaaaaa": {"model_name_or_path": "m1", "model_patch": "P1"}}))
    expected = ({"aaaaaaaaaaaa": ["P1", "P2"], "bbbbbbbbbbbb": [""]}, "m1")
    assert load_predictions(jsonl) == expected
    assert load_predictions(array) == expected
    assert load_predictions(keyed) == ({"aaaaaaaaaaaa": ["P1"]}, "m1")


@pytest.mark.parametrize(("text", "message"), [
    ('{"instance_id": "x"}\n', "entry 1: missing 'model_patch'"),
    ('{"instance_id": "x", "model_patch": ""}\nnot json\n', "line 2: not JSON"),
    ('[1]', "entry 1: expected an object"),
])
def test_bad_files_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(text)
    with pytest.raises(PredictionsError, match=message):
        load_predictions(path)
    with pytest.raises(AgentSpecError, match=message):
        parse_spec(f"preds:{path}")


def test_spec_names(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"instance_id": "x__y", "model_name_or_path": "org/My Model", "model_patch": ""}))
    assert parse_spec(f"preds:{path}").name == "org-My-Model"
    assert parse_spec(f"mine=preds:{path}").name == "mine"
    with pytest.raises(AgentSpecError, match="no such file|No such file"):
        parse_spec(f"preds:{tmp_path / 'missing.jsonl'}")


CORRUPT = ("diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n"
           "@@ -1,2 +1,2 @@\n-nothing like this\n+x\n")


@pytest.mark.slow
def test_predictions_graded_like_any_agent(mined: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
    tasks = load_tasks(repo / ".homefield" / "tasks.jsonl")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"instance_id": f"calc__{t.id}", "model_name_or_path": "gold",
                                        "model_patch": t.gold_patch}) + "\n" for t in tasks))
    first, second = tasks[0], tasks[1]
    # attempt 1: corrupt; attempt 2: the fix plus an edit of a hidden test file (not carried over)
    edit_test = first.gold_patch + first.test_patch.replace("assert", "assert True or", 1)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(json.dumps({"instance_id": f"calc__{first.id}", "model_name_or_path": "mixed",
                                           "model_patch": p}) for p in (CORRUPT, edit_test)) + "\n"
                     + json.dumps({"instance_id": f"calc__{second.id}", "model_name_or_path": "mixed",
                                   "model_patch": ""}) + "\n")
    stray = tmp_path / "stray.jsonl"  # an id no task has: refused like SWE-bench, unless --preds-partial
    stray.write_text(gold.read_text() + json.dumps({"instance_id": "calc__000000000000", "model_patch": ""}) + "\n")
    refused = homefield(repo, "run", "--agent", f"preds:{stray}", "--attempts", "1", "-n", "0")
    lines = [ln for ln in (refused.stdout + refused.stderr).splitlines() if ln.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and "calc__000000000000" in lines[0], lines
    garbled = tmp_path / "garbled.jsonl"  # a binary file: one line, exit 2 (was a 42-line INTERNALERROR)
    garbled.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    bad = homefield(repo, "run", "--agent", f"preds:{garbled}", "--attempts", "1", "-n", "0")
    lines = [ln for ln in (bad.stdout + bad.stderr).splitlines() if ln.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "not UTF-8" in lines[0], lines
    assert not (repo / ".homefield" / "runs").exists()  # nothing started
    proc = homefield(repo, "run", "--agent", f"preds:{gold}", "--agent", f"preds:{mixed}", "--attempts", "2", "-n", "0",
                     "--preds-policy", "attempts")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"homefield preds gold ({gold}): {len(tasks)} matched, 0 unknown, 0 missing, 0 duplicated" in proc.stdout
    assert f"homefield preds mixed ({mixed}): 2 matched, 0 unknown, {len(tasks) - 2} missing, 1 duplicated" \
        in proc.stdout
    run = next((repo / ".homefield" / "runs").iterdir())
    res = {(r["agent"], r["task_id"], r["attempt"]): r for r in read_jsonl(run / "results.jsonl")}
    for t in tasks:
        assert res[("gold", t.id, 1)]["outcome"] == "solved"
        assert res[("gold", t.id, 2)]["outcome"] == "missing"  # one prediction = one attempt
    bad = res[("mixed", first.id, 1)]
    assert bad["outcome"] == "agent_error" and bad["error"].startswith("patch does not apply: ")
    assert "\n" not in bad["error"]
    assert res[("mixed", first.id, 2)]["outcome"] == "solved"
    assert res[("mixed", first.id, 2)]["touched_tests"] is True
    assert res[("mixed", second.id, 1)]["outcome"] == "empty_patch"
    for t in tasks[2:]:
        assert res[("mixed", t.id, 1)]["outcome"] == "missing"  # missing instance: not an empty patch


# --- strict predictions (issue 33): plain unit tests ---------------------------------------------------

def _preds_file(tmp_path: Path, rows: list[tuple[str, str | None]]) -> Path:
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": p}) + "\n"
                            for i, p in rows))
    return path


def test_policies_pick_last_first_or_by_attempt() -> None:
    assert [pick(["A", "B"], n, "last") for n in (1, 2, 3)] == ["B", "B", "B"]  # SWE-bench: the last line wins
    assert [pick(["A", "B"], n, "first") for n in (1, 2)] == ["A", "A"]
    assert [pick(["A", "B"], n, "attempts") for n in (1, 2, 3)] == ["A", "B", None]
    assert pick([], 1, "last") is None


@pytest.mark.usefixtures("cli_spelling")
def test_summary_line_and_unknown_ids(tmp_path: Path) -> None:
    path = _preds_file(tmp_path, [("x__aaa", "P1"), ("x__aaa", "P2"), ("x__bbb", None), ("x__zzz", "P")])
    agent = PredictionsAgent(name="m", spec=f"preds:{path}", path=path)
    with pytest.raises(PredictionsSpecError, match=r"1 instance id\(s\) match no task of tasks.jsonl: x__zzz"):
        check_predictions([agent], lambda: {"aaa", "bbb", "ccc"}, ["aaa", "bbb", "ccc"], partial=False, attempts=1)
    lines = check_predictions([agent, object()], lambda: {"aaa", "bbb", "ccc"}, ["aaa", "bbb", "ccc"],
                              partial=True, attempts=3)
    assert lines == [f"homefield preds m ({path}): 2 matched, 1 unknown, 1 missing, 1 duplicated (the last "
                     "prediction of an instance kept, as SWE-bench: --preds-policy last); unknown ids ignored "
                     "(--preds-partial): x__zzz; each of the 3 attempts replays the same patch"]
    # no preds: agent, no tasks.jsonl read
    assert check_predictions([object()], lambda: pytest.fail("read"), ["aaa"], partial=False, attempts=1) == []


@pytest.mark.usefixtures("cli_spelling")
def test_missing_is_its_own_outcome(tmp_path: Path) -> None:
    path = _preds_file(tmp_path, [("x__aaa", "")])
    agent = PredictionsAgent(name="m", spec="preds:p", path=path, policy="attempts")
    ctx = AgentContext(workspace=tmp_path, prompt="", env={}, timeout_s=1, artifacts=tmp_path, task_id="bbb")
    res = agent.run(ctx)
    assert res.outcome == "missing" and res.error == "no prediction for this task in the file"
    res = agent.run(AgentContext(workspace=tmp_path, prompt="", env={}, timeout_s=1, artifacts=tmp_path,
                                 task_id="aaa", attempt=2))
    assert res.outcome == "missing" and "attempt 2" in (res.error or "")
    assert agent.run(AgentContext(workspace=tmp_path, prompt="", env={}, timeout_s=1, artifacts=tmp_path,
                                  task_id="aaa")).outcome is None  # an empty patch: grading says empty_patch
    assert "missing" in SCORED_OUTCOMES
    with pytest.raises(PredictionsSpecError, match="--preds-policy 'newest'"):
        PredictionsAgent(name="m", spec="preds:p", path=path, policy="newest")


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\xff", b'{"instance_id": "a", "model_patch": "\x00"}',
                                  b"[" * 100000, b'{"instance_id": 3, "model_patch": ""}\n'])
def test_garbled_files_are_one_line(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    with pytest.raises(PredictionsSpecError) as err:
        parse_spec(f"preds:{path}")
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def _repo(tmp_path: Path) -> Path:
    work = tmp_path / "w"
    work.mkdir()
    (work / "f.txt").write_text("a\nb\nc\n")
    return work


NO_NL_CONTEXT = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"  # ends on a context line
NO_NL_ADDED = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n b\n c\n+d"  # ends on an added line


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
def test_a_patch_without_final_newline_is_taken_as_swebench_takes_it(tmp_path: Path) -> None:
    work = _repo(tmp_path)
    apply_like_swebench(work, NO_NL_CONTEXT)  # git apply refuses it; patch --fuzz=5, SWE-bench's fallback, takes it
    assert (work / "f.txt").read_text() == "a\nB\nc\n"
    with pytest.raises(PatchError):  # neither takes it, so SWE-bench does not resolve it either
        apply_like_swebench(work, NO_NL_ADDED)
    assert (work / "f.txt").read_text() == "a\nB\nc\n"  # and nothing changed


def test_a_lone_surrogate_in_a_model_patch_is_applied_as_text_not_raised(tmp_path: Path) -> None:
    """host29: a ``model_patch`` holding JSON's ``\\ud800`` (no bytes stand for it) raised ``UnicodeEncodeError``
    out of the agent's run; ``run_attempt`` recorded ``agent raised: …``, an unscored ``infra`` that ``--resume``
    retries. It is written as ``?`` now, and the patch graded as any other."""
    work = _repo(tmp_path)
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+b \ud800\n c\n"
    agent = PredictionsAgent(name="m", spec="preds:p", path=_preds_file(tmp_path, [("x__aaa", patch)]))
    res = agent.run(AgentContext(workspace=work, prompt="", env={}, timeout_s=1, artifacts=tmp_path, task_id="aaa"))
    assert res.outcome is None, res
    assert (work / "f.txt").read_text() == "a\nb ?\nc\n"


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
def test_the_patch_fallback_writes_nothing_into_the_workspaces_git_folder(tmp_path: Path) -> None:
    """git66: ``git apply`` refuses a path in ``.git/`` (``invalid path``), so SWE-bench's fallback, GNU ``patch``,
    applies the whole prediction: before, it made ``.git/hooks/post-checkout`` and edited ``.git/config`` of the
    workspace (measured, patch 2.7.6), where ``apply_patch`` says git never writes. Now ``patch`` writes into a copy
    of that folder, removed after: the tree's change applied, the workspace's ``.git`` byte for byte as before."""
    work = _repo(tmp_path)
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n\tbare = false\n")
    before = {p.relative_to(work): p.read_bytes() for p in sorted((work / ".git").rglob("*")) if p.is_file()}
    hook = ("diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n"
            "+++ b/.git/hooks/post-checkout\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch planted\n")
    config = ("diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1,2 +1,3 @@\n"
              " [core]\n \tbare = false\n+\tfsmonitor = .git/hooks/post-checkout\n")
    fix = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    apply_like_swebench(work, fix + hook + config)
    assert (work / "f.txt").read_text() == "a\nB\nc\n"
    assert {p.relative_to(work): p.read_bytes() for p in sorted((work / ".git").rglob("*")) if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".hf-git-")] == []
