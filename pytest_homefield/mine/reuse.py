"""Incremental and resumable mining: a candidate already verified under the same verification inputs
is not run again; its earlier verification record is reused (docs/contracts.md §7).

The inputs (:func:`verify_inputs`) are everything a verification's outcome depends on: the commit
and its parent, the test files and the runnable test modules, ``test_cmd`` and ``setup_cmd``,
``stability_runs``, ``run_timeout`` and ``test_timeout``, the test sandbox, the environment (the
fingerprint of the test command's interpreter and the environment settings),
:data:`~pytest_homefield.mine.redgreen.VERIFY_VERSION` and :data:`REPORTER_DIGEST` (the outcome
reporter loaded into every test run is part of the measuring instrument: a fixed reporter verifies
again what it may have measured wrongly). Their sha256 (:func:`verify_key`, 24 hex
digits) is written into each frozen candidate (``candidates.jsonl`` ``verify_key``) and into each
verification record made from it, and beside it the inputs themselves (``verify_inputs``,
:func:`recorded_inputs`): a mine that verifies again a commit an earlier mine settled says which inputs
differ (:func:`reverified_line`; why66, more-itertools: ``reused 0, verified 8``, 27 minutes redone, the
cause, a reporter changed by a merge 34 s before the re-run, told by nothing on file).

:class:`ReuseIndex` reads the verification records of every earlier mining session
(``.homefield/mine/*/results.jsonl``, the newest session winning per key); a record of a session that
was killed is there as soon as its candidate finished, so running the same command again after
SIGKILL or Ctrl-C redoes only the candidates that were in flight. :func:`reused_record` turns an
earlier record into this session's: the verification fields as they were, the task's prompt, message
and scores from this scan's candidate, ``reused_from`` naming the session that verified it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_homefield.envs.declaration import KEY_VERSION
from pytest_homefield.layout import HomefieldDir, results_path
from pytest_homefield.mine.bounds import NOT_VERIFIED
from pytest_homefield.mine.message_score import message_fields
from pytest_homefield.mine.redgreen import ALL_SKIPPED, VERIFY_VERSION
from pytest_homefield.records import Task
from pytest_homefield.sandbox.limits import TEST_MEMORY_MB, TEST_WRITE_MB
from pytest_homefield.sandbox.proccap import DEFAULT_MAX_PROCS
from pytest_homefield.sandbox.testrun import REPORTER_DIR
from pytest_homefield.store import read_jsonl

__all__ = ["verify_inputs", "verify_key", "ReuseIndex", "reused_record", "ENV_SETTINGS", "REPORTER_DIGEST",
           "reporter_digest", "recorded_inputs", "inputs_differ", "earlier_settled", "reverified_line"]

#: Settings that choose the environment the tests run in (those this version of the package has).
ENV_SETTINGS = ("env", "env_extras", "env_groups", "env_as_of")

def reporter_digest(folder: Path) -> str:
    """12 hex digits of the sha256 of the ``*.py`` sources in ``folder`` (each its name and content, in name order).
    Raises :class:`OSError` when one cannot be read."""
    return hashlib.sha256(b"".join(
        p.name.encode() + b"\0" + p.read_bytes() + b"\0" for p in sorted(folder.glob("*.py")))).hexdigest()[:12]


#: :func:`reporter_digest` of what a test run loads from ``_reporter/`` (the outcome reporter, the seal call of a
#: sealed run, mining's stub of missing names: each decides what a verification records).
REPORTER_DIGEST = reporter_digest(REPORTER_DIR)


def verify_inputs(candidate: Mapping[str, Any], settings: Any, *, runnable: Iterable[str], sandbox: str,
                  env_fingerprint: str) -> dict[str, Any]:
    """The verification inputs of ``candidate`` (a ``candidates.jsonl`` record) under ``settings``
    (a :class:`~pytest_homefield.settings.Settings`), as a JSON-able dict: ``commit``, ``parent``,
    ``test_files`` and ``runnable`` (sorted), ``test_cmd``, ``setup_cmd``, ``stability_runs``,
    ``run_timeout`` / ``test_timeout`` (s), ``sandbox`` (``"bwrap"``/``"landlock"``/``"none"``), ``env``
    (``fingerprint``, the environment settings that exist, and with ``--env uv`` the environments'
    :data:`~pytest_homefield.envs.declaration.KEY_VERSION`), ``verify_version`` and ``reporter``
    (:data:`REPORTER_DIGEST`); with ``services:`` or ``--test-network`` ports also ``services`` (the
    entries) and ``test_network`` (so a changed service command verifies again; without them the key is
    what it was before services existed); ``max_test_memory_mb`` and ``max_test_write_mb`` each when it
    is not the default, and ``max_procs`` likewise."""
    env: dict[str, Any] = {"fingerprint": env_fingerprint}
    for name in ENV_SETTINGS:
        if hasattr(settings, name):
            value = getattr(settings, name)
            env[name] = list(value) if isinstance(value, list | tuple) else value
    if getattr(settings, "env", None) == "uv":  # environments read or built another way: verify again
        env["key_version"] = KEY_VERSION
    return {
        "commit": candidate["commit"],
        "parent": candidate["parent"],
        "test_files": sorted(candidate["test_files"]),
        "runnable": sorted(runnable),
        "test_cmd": settings.test_cmd,
        "setup_cmd": settings.setup_cmd,
        "stability_runs": int(settings.stability_runs),
        "run_timeout": float(settings.run_timeout),
        "test_timeout": None if settings.test_timeout is None else float(settings.test_timeout),
        "sandbox": sandbox,
        "env": env,
        "verify_version": VERIFY_VERSION,
        "reporter": REPORTER_DIGEST,
        **_services_inputs(settings),
        **_cap_inputs(settings),
    }


def _cap_inputs(settings: Any) -> dict[str, Any]:
    """``max_test_memory_mb``, ``max_test_write_mb`` and ``max_procs`` each when it is not the default (so that
    the keys of verifications made before the cap existed stay valid), else nothing."""
    out: dict[str, Any] = {}
    for name, default in (("max_test_memory_mb", TEST_MEMORY_MB), ("max_test_write_mb", TEST_WRITE_MB),
                          ("max_procs", DEFAULT_MAX_PROCS)):
        value = getattr(settings, name, default)
        if value != default:
            out[name] = float(value) if name != "max_procs" else int(value)
    return out


def _services_inputs(settings: Any) -> dict[str, Any]:
    """The verification inputs of the services and the test network (empty without them)."""
    services = [s.to_dict() for s in getattr(settings, "services", ())]
    network = getattr(settings, "test_network", "none") or "none"
    if not services and network == "none":
        return {}
    return {"services": services, "test_network": network}


def verify_key(inputs: Mapping[str, Any]) -> str:
    """24 hex digits of the sha256 of ``inputs`` as canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(_canonical(inputs).encode("utf-8")).hexdigest()[:24]


def _canonical(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys, no spaces): what :func:`verify_key` hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


#: An input whose canonical JSON is longer than this (characters) is recorded as its digest (:func:`recorded_inputs`).
INPUT_CHARS = 100


def recorded_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`verify_inputs` as a record keeps them (``verify_inputs`` of ``candidates.jsonl`` and
    ``results.jsonl``): one level, an input of a nested one named with a dot (``env.fingerprint``), each value as
    it is unless its canonical JSON is longer than :data:`INPUT_CHARS`, then ``sha256:`` and the first 12 hex
    digits of the sha256 of that JSON (a long list of test files or services). Shape: ``{"commit": "9ddc…",
    "test_files": ["tests/test_more.py"], "env.fingerprint": "eeab12700388e9a7", "reporter": "e3382eb10390",
    …}``."""
    flat: dict[str, Any] = {}
    for name, value in inputs.items():
        parts = value.items() if isinstance(value, Mapping) else [("", value)]
        for sub, v in parts:
            text = _canonical(v)
            flat[f"{name}.{sub}" if sub else name] = (
                v if len(text) <= INPUT_CHARS else "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12])
    return flat


def inputs_differ(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The names of the inputs (:func:`recorded_inputs`) whose values differ between ``old`` and ``new``, one
    there and not in the other included, in ``new``'s order, then ``old``'s."""
    return [name for name in dict.fromkeys([*new, *old]) if name not in old or name not in new
            or _canonical(old[name]) != _canonical(new[name])]


#: Drop reasons that say nothing of the commit: the environment could not run its tests. Verified again at
#: every mine (the summary tells the user to fix the environment and mine again; a fix outside the key's
#: inputs, such as a system file, an environment variable or a newer homefield, would otherwise be shown
#: the same failure again: hukkin/tomli, nu34).
NOT_SETTLED = ("max_tasks", NOT_VERIFIED, "setup_failed")


def _reusable(record: Mapping[str, Any]) -> bool:
    """A verification record that settled its candidate: it has a key and was verified (not skipped
    for ``--max-tasks`` or a bound, nor dropped as ``setup_failed``: :data:`NOT_SETTLED`), and a kept one
    carries a valid task record."""
    if not record.get("verify_key") or record.get("reason") in NOT_SETTLED or "reason" not in record:
        return False
    if record["reason"] is not None:
        return True
    task = record.get("task")
    if not isinstance(task, dict):
        return False
    try:  # a task that no longer validates is verified again, never copied into tasks.jsonl
        Task.from_dict(task)
    except (TypeError, ValueError, KeyError):
        return False
    return True


class ReuseIndex:
    """Earlier verification records by ``verify_key``; ``sources`` maps a key to the mine id of the
    session whose record it is (for a reused record: the session that verified it first)."""

    def __init__(self, records: Mapping[str, dict[str, Any]], sources: Mapping[str, str]) -> None:
        self.records = dict(records)
        self.sources = dict(sources)

    def __len__(self) -> int:
        return len(self.records)

    @classmethod
    def load(cls, home: HomefieldDir, *, keys: Iterable[str] | None = None,
             skip: Path | None = None) -> ReuseIndex:
        """Read ``mine/*/results.jsonl`` of every session but ``skip``, oldest first (later sessions
        win). ``keys``: keep only these keys (the frozen candidates'). Unreadable lines are skipped
        (:func:`~pytest_homefield.store.read_jsonl`)."""
        wanted = set(keys) if keys is not None else None
        records: dict[str, dict[str, Any]] = {}
        sources: dict[str, str] = {}
        for d, rec in _settled(home, skip):
            key = rec.get("verify_key")
            if wanted is None or key in wanted:
                records[str(key)] = rec
                sources[str(key)] = str(rec.get("reused_from") or d.name)
        return cls(records, sources)

    def get(self, key: str | None) -> dict[str, Any] | None:
        """The earlier record under ``key``, or ``None``."""
        return self.records.get(key) if key else None


def _settled(home: HomefieldDir, skip: Path | None) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(mine folder, record) for each settled record (:func:`_reusable`) in ``mine/*/results.jsonl`` of every
    session but ``skip``, oldest session first."""
    for d in home.mine_dirs():
        if skip is None or d.resolve() != skip.resolve():
            yield from ((d, rec) for rec in read_jsonl(results_path(d)) if _reusable(rec))


def earlier_settled(home: HomefieldDir, *, commits: Iterable[str],
                    skip: Path | None = None) -> dict[str, dict[str, Any]]:
    """The newest settled verification record (as :class:`ReuseIndex` takes them) of each of ``commits`` (full
    ids) in the ``results.jsonl`` of every session but ``skip``, by commit: what an earlier mine settled,
    whatever its key."""
    wanted = set(commits)
    return {str(rec["commit"]): rec for _, rec in _settled(home, skip) if str(rec.get("commit")) in wanted}


#: What a changed input means, said beside its name by :func:`reverified_line`.
INPUT_MEANINGS = {
    "reporter": "homefield's outcome reporter changed: a newer homefield",
    "verify_version": "homefield verifies otherwise: a newer homefield",
    "env.fingerprint": "the interpreter or the installed packages of the tests changed",
    "env.key_version": "environments are built otherwise: a newer homefield",
}
#: The name :func:`reverified_line` gives an earlier record made before records kept their inputs.
NOT_RECORDED = "the earlier inputs, not recorded (an older homefield)"


def reverified_line(records: Iterable[Mapping[str, Any]], earlier: Mapping[str, Mapping[str, Any]]) -> str | None:
    """One summary line for the candidates this mine verified again although an earlier mine settled them
    (``earlier``, :func:`earlier_settled`) under another ``verify_key``, naming the inputs that differ (each with
    how many, its values when every such candidate changed it alike, and what it means), or ``None`` when none:
    ``'Verified again: 8 of 8 candidates an earlier mine settled, under other verification inputs: reporter
    (8: e3382eb10390 -> aa8e91fae0f8, homefield's outcome reporter changed: a newer homefield)'``. ``records``:
    this mine's verification records (one per commit); those reused or not verified count in neither number."""
    reached = [r for r in records if r.get("reason") not in ("max_tasks", NOT_VERIFIED)]
    mine = [r for r in reached if str(r.get("commit")) in earlier]
    again = [r for r in mine if not r.get("reused_from") and r.get("verify_key")
             and r.get("verify_key") != earlier[str(r["commit"])].get("verify_key")]
    if not again:
        return None
    changes: dict[str, list[tuple[str, str]]] = {}
    for r in again:
        old, new = earlier[str(r["commit"])].get("verify_inputs"), r.get("verify_inputs")
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            changes.setdefault(NOT_RECORDED, []).append(("", ""))
            continue
        for name in inputs_differ(old, new):
            changes.setdefault(name, []).append((_shown(old, name), _shown(new, name)))
    said = []
    for name, pairs in changes.items():
        values = f": {pairs[0][0]} -> {pairs[0][1]}" if len(set(pairs)) == 1 and pairs[0] != ("", "") else ""
        if len(values) > 80:
            values = ""
        meaning = f", {INPUT_MEANINGS[name]}" if name in INPUT_MEANINGS else ""
        said.append(f"{name} ({len(pairs)}{values}{meaning})")
    return (f"Verified again: {len(again)} of {len(mine)} candidates an earlier mine settled, under other "
            f"verification inputs: {'; '.join(said)}")


def _shown(inputs: Mapping[str, Any], name: str) -> str:
    """The value of input ``name`` as :func:`reverified_line` shows it: a string as it is, else its JSON; ``none``
    when ``inputs`` has no such input."""
    if name not in inputs:
        return "none"
    value = inputs[name]
    return value if isinstance(value, str) else _canonical(value)


def reused_record(candidate: Mapping[str, Any], prior: Mapping[str, Any], *, source: str,
                  threshold: float = 0.5) -> dict[str, Any]:
    """This session's verification record for ``candidate`` from the earlier record ``prior`` verified
    under the same inputs in mining session ``source``: the verification fields (reason, detail,
    counts, excluded, seconds, ``verify_key``) as they were, ``subject`` from the candidate, and
    ``reused_from: source``. A kept candidate's task keeps what verification found (FAIL_TO_PASS,
    PASS_TO_PASS, excluded, patches, test and setup commands, environment, ``verify`` timings) and
    takes what the scan derives from the commit message from this candidate (subject, message,
    prompt, its sources, mode, dates, files, languages), with ``spec_score`` and ``well_specified``
    computed again at ``threshold`` (``spec_threshold``)."""
    record = {k: v for k, v in prior.items() if k not in ("task", "reused_from")}
    if record.get("reason") == "passes_without_change" and ALL_SKIPPED in str(record.get("detail") or ""):
        record["reason"] = "tests_skipped"  # verified before the reason existed: the same verdict, its own name
    record["subject"] = candidate["subject"]
    record["reused_from"] = source
    if candidate.get("verify_inputs"):  # the same key: the same inputs, recorded also when the earlier record did not
        record["verify_inputs"] = candidate["verify_inputs"]
    task = prior.get("task")
    if isinstance(task, dict):
        old = Task.from_dict(task)
        new = dataclasses.replace(old, **message_fields(candidate, test_patch=old.test_patch,
                                                        gold_patch=old.gold_patch, threshold=threshold,
                                                        hidden=old.FAIL_TO_PASS, test_files=old.test_files))
        record["task"] = new.to_dict()
    return record
