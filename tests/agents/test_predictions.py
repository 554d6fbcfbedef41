"""The ``preds:FILE`` agent (issue 19): another harness's patches graded like any agent's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.e2e_repo import homefield

from pytest_homefield.agents.predictions import load_predictions
from pytest_homefield.agents.registry import parse_spec
from pytest_homefield.errors import AgentSpecError, PredictionsError
from pytest_homefield.records import load_tasks
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
    proc = homefield(repo, "run", "--agent", f"preds:{gold}", "--agent", f"preds:{mixed}", "--attempts", "2", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = next((repo / ".homefield" / "runs").iterdir())
    res = {(r["agent"], r["task_id"], r["attempt"]): r for r in read_jsonl(run / "results.jsonl")}
    for t in tasks:
        assert res[("gold", t.id, 1)]["outcome"] == "solved"
        assert res[("gold", t.id, 2)]["outcome"] == "empty_patch"  # one prediction = one attempt
    bad = res[("mixed", first.id, 1)]
    assert bad["outcome"] == "agent_error" and bad["error"].startswith("patch does not apply: ")
    assert "\n" not in bad["error"]
    assert res[("mixed", first.id, 2)]["outcome"] == "solved"
    assert res[("mixed", first.id, 2)]["touched_tests"] is True
    assert res[("mixed", second.id, 1)]["outcome"] == "empty_patch"
    for t in tasks[2:]:
        assert res[("mixed", t.id, 1)]["outcome"] == "empty_patch"  # missing instance
