"""The reference fix's checks of a grading (``twin_grading.reference_passes``, ``sealed_grading.reference_sealed``
and ``reference_laid``) are remembered in ``.homefield/parent-checks.jsonl`` under a key digest: a line a process
wrote before is found by a later one, the check not made again. The digests are written out here as the code made
them when each check was introduced, so a store written then stays valid."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_homefield.records import Task
from pytest_homefield.run import sealed_grading, twin_grading
from pytest_homefield.run.sealed_grading import SealPlan, reference_laid, reference_sealed
from pytest_homefield.run.twin_grading import files_digest, reference_passes, reference_reported
from pytest_homefield.sandbox.seal_sites import SEAL_RULES
from pytest_homefield.sandbox.twin_runs import TwinPlan

TASK = Task(id="c" * 12, commit="c" * 40, parent="p" * 40, committed_at="2025-01-01T00:00:00+00:00",
            authored_at="2025-01-01T00:00:00+00:00", mode="commit", subject="s", message="m", prompt="p",
            source_files=["src/m.py"], test_files=["tests/test_m.py"], test_patch="test patch\n",
            gold_patch="gold patch\n", FAIL_TO_PASS=["tests/test_m.py::test_value"], PASS_TO_PASS=[],
            setup_cmd="pip install -e .")
CMD = "python -m pytest"
TARGETS = ["tests/test_m.py", "tests/a_test.py"]


def _head() -> list[str]:
    return [json.dumps([TASK.id, TASK.commit, TASK.parent, TASK.setup_cmd]),
            hashlib.sha256(TASK.gold_patch.encode()).hexdigest(), hashlib.sha256(TASK.test_patch.encode()).hexdigest()]


def _digest(tag: str, key: list[object]) -> str:
    return hashlib.sha256((tag + "\0" + json.dumps(key)).encode()).hexdigest()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store, and nothing remembered in this process (a later process)."""
    monkeypatch.setattr(twin_grading, "_REFERENCE_SEEN", {})
    monkeypatch.setattr(twin_grading, "_REPORTED_SEEN", {})
    monkeypatch.setattr(twin_grading, "_REFERENCE_MADE", {})
    monkeypatch.setattr(sealed_grading, "_SEALED_SEEN", {})
    monkeypatch.setattr(sealed_grading, "_LAID_SEEN", {})
    path = tmp_path / ".homefield" / "parent-checks.jsonl"
    path.parent.mkdir()
    return path


def _write(store: Path, line: dict[str, object]) -> None:
    with store.open("a") as f:
        f.write(json.dumps(line) + "\n")


def test_a_stored_reference_passes_line_is_found(store: Path, tmp_path: Path) -> None:
    """No parent tree: the check can only be read (a run would give ``None``)."""
    plan = TwinPlan(seed=7)
    key = [*_head(), CMD, 7, json.dumps(plan.to_dict(), sort_keys=True), TARGETS, "none"]
    _write(store, {"key": _digest("reference", key), "reference_passes": ["twin-b", "twin-a"]})
    got = reference_passes(TASK, tmp_path / "absent", plan, CMD, TARGETS, timeout_s=10, test_timeout_s=None,
                           sandbox="none", env=None, network=None, store=store)
    assert got == {"twin-a", "twin-b"}
    assert store.read_text().count("\n") == 1  # read, not remembered again


def test_a_stored_reference_reported_line_is_found_and_a_passes_line_alone_is_not_read_for_it(
        store: Path, tmp_path: Path) -> None:
    """twn63: which canaries the reference fix's runs reported, under its own tag; a store holding only the passes
    (written before) gives nothing for it (no parent tree here: the runs cannot be made, ``None``)."""
    plan = TwinPlan(seed=7)
    key = [*_head(), CMD, 7, json.dumps(plan.to_dict(), sort_keys=True), TARGETS, "none"]
    _write(store, {"key": _digest("reference", key), "reference_passes": ["twin-a"]})

    def read() -> set[str] | None:
        return reference_reported(TASK, tmp_path / "absent", plan, CMD, TARGETS, timeout_s=10, test_timeout_s=None,
                                  sandbox="none", env=None, network=None, store=store)
    assert read() is None
    _write(store, {"key": _digest("reference-reported", key), "reference_reported": ["twin-b", "twin-a"]})
    assert read() == {"twin-a", "twin-b"}
    assert store.read_text().count("\n") == 2  # read, not remembered again


def test_the_passes_and_the_reported_are_the_two_halves_of_one_making(store: Path, tmp_path: Path) -> None:
    """The reference fix's runs made once in this process (``_REFERENCE_MADE``: passed, reported) give each check its
    own half, each remembered under its own tag and name."""
    plan = TwinPlan(seed=7)
    key = [*_head(), CMD, 7, json.dumps(plan.to_dict(), sort_keys=True), TARGETS, "none"]
    twin_grading._REFERENCE_MADE[json.dumps(key)] = (frozenset({"twin-a"}), frozenset({"twin-a", "twin-b"}))
    options = dict(timeout_s=10, test_timeout_s=None, sandbox="none", env=None, network=None, store=store)
    assert reference_passes(TASK, tmp_path / "absent", plan, CMD, TARGETS, **options) == {"twin-a"}
    assert reference_reported(TASK, tmp_path / "absent", plan, CMD, TARGETS, **options) == {"twin-a", "twin-b"}
    lines = [json.loads(line) for line in store.read_text().splitlines()]
    assert lines == [{"key": _digest("reference", key), "reference_passes": ["twin-a"]},
                     {"key": _digest("reference-reported", key), "reference_reported": ["twin-a", "twin-b"]}]


def test_a_stored_reference_sealed_line_is_found(store: Path, tmp_path: Path) -> None:
    key = [*_head(), CMD, "none", sorted(TARGETS)]
    _write(store, {"key": _digest(f"sealed-{SEAL_RULES}", key), "sealed_sites": ["hf1", "hf2"]})
    got = reference_sealed(TASK, tmp_path / "absent", CMD, sandbox="none", targets=TARGETS, store=store)
    assert got == frozenset({"hf1", "hf2"})
    assert store.read_text().count("\n") == 1


def test_a_stored_reference_laid_line_is_found(store: Path, tmp_path: Path) -> None:
    plan = SealPlan({"tests/test_m.py": b"sealed\n"}, {},
                    members=("tests/test_m.py::test_b", "tests/test_m.py::test_a"))
    groups = ["g2", "g1"]
    key = [*_head(), CMD, "none", sorted(TARGETS), files_digest(plan.files), sorted(groups), list(plan.members),
           sorted(plan.ids)]
    _write(store, {"key": _digest(f"sealed-laid-{SEAL_RULES}", key), "sealed_sites": ["hf3"]})
    got = reference_laid(TASK, tmp_path / "absent", plan, CMD, TARGETS, sandbox="none", groups=groups, store=store)
    assert got == frozenset({"hf3"})
    assert store.read_text().count("\n") == 1
