"""hatk41, ``--sandbox none`` (graded code runs as the user): ``.homefield/parent-checks.jsonl`` remembers what the
reference fix and the parent's code showed (which twins the reference fix passes too, which seed the parent check
chose, which sites are sealed, what the parent gives), keyed by digests any process of the user can compute, and
every grading read it from disk. Graded code that appended a line there changed the grading after it, its own
included: an always-equal fix of a task mined before canaries that wrote ``reference_passes`` naming the twins it
passes had them excused, no longer ``forged``. Now the store is read once, when the session's cache is made before
its first attempt (:func:`~pytest_homefield.run.twin_grading.read_checks`), and a line written after that by
another process is never read in that session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, build, script_agent, task_for

from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import Result, Task
from pytest_homefield.run import twin_grading
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.store import read_jsonl_tail

#: A fix of ``sub`` returning an object equal to anything: it passes every twin (a forgery).
ANYTHING_CALC = CALC_1 + ("\n\nclass _Any:\n    def __eq__(self, other):\n        return True\n\n\n"
                          "def sub(a, b):\n    return _Any()\n")


def _forging(store: Path, twins: list[str]) -> str:
    """The always-equal fix whose import appends, for every ``reference_passes`` line of ``store``, one of the same
    key saying the reference fix passes ``twins``."""
    return ANYTHING_CALC + (
        "\n\nimport json as _json\n"
        f"_lines = [_json.loads(x) for x in open({str(store)!r}).read().splitlines() if x.strip()]\n"
        f"with open({str(store)!r}, 'a') as _f:\n"
        "    for _r in _lines:\n"
        "        if 'reference_passes' in _r:\n"
        f"            _f.write(_json.dumps({{'key': _r['key'], 'reference_passes': {twins!r}}}) + '\\n')\n")


def _attempt(task: Task, code: str, n: int, tmp_path: Path, repo: Path) -> tuple[Result, Path]:
    cache = SnapshotCache(repo=repo)
    try:
        cache.keep([task])  # what a session's runner does before its first attempt
        spec = AttemptSpec(task=task, agent=script_agent(tmp_path / f"agent{n}", {"src/calc/__init__.py": code}),
                           attempt=n, run_id="r", run_dir=tmp_path / "run", timeout_s=60, run_timeout_s=120,
                           sandbox=SandboxChoice("none", "none"))
        return run_attempt(spec, cache), spec.artifacts
    finally:
        cache.close()


@pytest.mark.slow
def test_a_line_graded_code_appends_to_the_store_changes_no_grading_of_the_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first session grades the always-equal fix: ``forged``, the reference fix's runs remembered in the store
    (it passes no twin). A second (a new process: nothing in memory) grades the same fix, which now also appends
    lines saying the reference fix passes the twins. Before: its own grading read them and excused the twins
    (``tests_failed`` by its sealed run, no longer ``forged``); now ``forged`` again, the lines it wrote left on
    disk."""
    fx = build(tmp_path / "repo")
    task = task_for(fx)  # mined before canaries: the reference fix's runs decide whether a twin passed counts
    store = HomefieldDir(fx.root).parent_checks
    first, art = _attempt(task, ANYTHING_CALC, 1, tmp_path, fx.root)
    assert first.outcome == "forged", first
    twins = [c["node"] for c in json.loads((art / twin_grading.CANARIES_FILE).read_text())["canaries"]]
    assert twins and [r["reference_passes"] for r in read_jsonl_tail(store, 1 << 20)
                      if "reference_passes" in r] == [[]]
    monkeypatch.setattr(twin_grading, "_REFERENCE_SEEN", {})  # another process
    second, _ = _attempt(task, _forging(store, twins), 2, tmp_path, fx.root)
    forged = [r for r in read_jsonl_tail(store, 1 << 20) if r.get("reference_passes") == twins]
    assert forged, "the graded code did append its lines"
    assert (second.outcome, second.canary) == ("forged", first.canary), second


def test_the_store_is_read_once_and_bounded(tmp_path: Path) -> None:
    """What :func:`~pytest_homefield.run.twin_grading.read_checks` read is what later look-ups see, with this
    process's own lines (:func:`~pytest_homefield.run.twin_grading.remember_check`), never a line another process
    appended after; :func:`~pytest_homefield.run.twin_grading.forget_checks` reads the disk again. A store larger
    than the bound is read from its last bytes, a line cut by the bound left out; a fifo is read as empty, at
    once."""
    import os

    store = tmp_path / "parent-checks.jsonl"
    store.write_text(json.dumps({"key": "a", "reference_passes": []}) + "\n")
    twin_grading.read_checks(store)
    try:
        twin_grading.remember_check(store, {"key": "b", "reference_passes": ["x"]})
        with open(store, "a") as f:  # another process, after
            f.write(json.dumps({"key": "a", "reference_passes": ["forged"]}) + "\n")
        assert twin_grading._stored_passes(store, "a") == frozenset()
        assert twin_grading._stored_passes(store, "b") == frozenset({"x"})
    finally:
        twin_grading.forget_checks(store)
    assert twin_grading._stored_passes(store, "a") == frozenset({"forged"})
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"key": f"{i:03d}", "pad": "y" * 50}) + "\n" for i in range(100)))
    size = len(json.dumps({"key": "000", "pad": "y" * 50})) + 1  # one line
    got = read_jsonl_tail(big, size * 10 + 3)  # 10 whole lines and 3 bytes of the one before
    assert [r["key"] for r in got] == [f"{i:03d}" for i in range(90, 100)]
    assert [r["key"] for r in read_jsonl_tail(big, size * 10)] == [f"{i:03d}" for i in range(90, 100)]
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    twin_grading.read_checks(fifo)  # never blocks
    try:
        assert twin_grading._READ_CHECKS[os.path.abspath(fifo)] == []
    finally:
        twin_grading.forget_checks(fifo)
