"""The probe's fixture repository: the demo's sample history (16 real commits) as ``homefield demo`` mined
it once per session (tests/helpers/demo_run.py): 8 tasks (the flaky commit is dropped)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.demo_run import DemoRun
from helpers.e2e_repo import homefield
from helpers.shared_repo import built_once

from pytest_homefield.probe.prompt import added_lines
from pytest_homefield.store import read_jsonl

RECITER = Path(__file__).resolve().parents[1] / "helpers" / "reciter.py"
#: The probe flags of the reciter's probes: the reciter and its answers lie outside what an agent's
#: sandbox binds (a probe's cmd: agent runs in bubblewrap: test_cmd_agent.py checks that)
UNBOXED = ("--sandbox", "none")

#: The tasks the scripted agent recites word for word (the first group of the acceptance test);
#: ids are the sample's pinned shas. All three were authored before CUTOFF.
MEMORIZED = ("a09b21d0761b", "f58a80da9ae4", "71254d078326")
CUTOFF = "2024-01-15"
#: What the scripted agent answers for every other task: plausible code, not the fix.
PLAUSIBLE = "def helper(value):\n    if value is None:\n        return None\n    return value\n"


@pytest.fixture(scope="session")
def sample_mined(demo_run: DemoRun) -> Path:
    """The sample as ``homefield demo`` mined it (helpers/demo_run.py, once per test session, which the
    demo's end-to-end test checks): 3 stability runs, the flaky commit dropped, 8 tasks."""
    tasks = demo_run.repo / ".homefield" / "tasks.jsonl"
    assert tasks.exists(), demo_run.stdout[-5000:] + demo_run.stderr[-3000:]
    return demo_run.repo


@dataclass(frozen=True)
class Probed:
    """The sample probed once: ``repo`` (read-only: copy it), the reciter's ``spec`` (its answers file
    lies beside ``repo``; the records name this spec, so a test that resumes or merges uses it) and the
    probe's ``stdout`` + ``stderr``."""

    repo: Path
    spec: str
    out: str


@pytest.fixture(scope="session")
def probed(sample_mined: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Probed:
    """The sample as :func:`sample_mined`, probed by the reciter once per test session (``homefield probe
    --fdr 0.3 --agent RECITER --samples 1 -n 0``, the probe several tests start from), shared by xdist
    workers (the first makes it, the others wait)."""

    def make(repo: Path) -> None:
        shutil.copytree(sample_mined, repo, symlinks=True)
        shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
        spec = reciter_spec(repo)
        proc = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "1", "-n", "0")
        (repo.parent / "probe.json").write_text(json.dumps({"spec": spec, "out": proc.stdout + proc.stderr,
                                                            "returncode": proc.returncode}))
        assert proc.returncode == 0, proc.stdout + proc.stderr

    repo = built_once(tmp_path_factory, testrun_uid, "probed", make)
    done = repo.parent / "probe.json"
    assert done.exists() and (repo / ".homefield" / "probe").is_dir(), "the shared probe failed in another worker"
    made = json.loads(done.read_text())
    assert made["returncode"] == 0, made["out"]
    return Probed(repo, made["spec"], made["out"])


def copy_probed(probed: Probed, dest: Path) -> Path:
    """A copy of the probed sample at ``dest`` (symlinks kept)."""
    shutil.copytree(probed.repo, dest, symlinks=True)
    return dest


@pytest.fixture
def repo(sample_mined: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(sample_mined, dest, symlinks=True)
    shutil.rmtree(dest / ".homefield" / "runs", ignore_errors=True)
    return dest


def slow_flag(repo: Path) -> Path:
    """While this file exists, a reciter made with ``sleep_s`` sleeps before each answer (helpers/reciter.py)."""
    return repo.parent / "answers.json.slow"


def reciter_spec(repo: Path, sleep_s: float | None = None, name: str = "reciter") -> str:
    """``NAME=cmd:…`` for the scripted agent: the gold lines for :data:`MEMORIZED`, :data:`PLAUSIBLE` else.
    With ``sleep_s`` it sleeps that long before each answer until :func:`slow_flag` is removed. The
    interpreter runs with ``-S`` (the reciter needs only the standard library): no site-packages
    initialisation in each of the hundred-odd calls the probe tests make."""
    answers = {}
    for t in read_jsonl(repo / ".homefield" / "tasks.jsonl"):
        recite = t["id"] in MEMORIZED
        answers[t["prompt"].strip()] = added_lines(t["gold_patch"], t["source_files"]) if recite else PLAUSIBLE
    path = repo.parent / "answers.json"
    path.write_text(json.dumps(answers))
    if sleep_s:
        slow_flag(repo).touch()
    cmd = f"{shlex.quote(sys.executable)} -S {shlex.quote(str(RECITER))} {shlex.quote(str(path))}"
    return f"{name}=cmd:{cmd}" + (f" {sleep_s}" if sleep_s else "")
