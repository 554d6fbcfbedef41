"""hatk40, ``--sandbox none`` (graded code runs as the user): graded code that spoils the pristine snapshot *and*
what it used to be rebuilt from (the repository's git objects) no longer leaves the attempts after it ``infra``.
hatk39 made the spoiling attempt itself scored (tests/run/test_spoiled_rebuild.py); the rebuild for the next
attempt still read the repository's objects, which the same code had hidden: every later attempt of the task
(and the first of any task not built yet) was ``infra`` "cannot extract the parent tree", retried by
``--resume`` and unscored for good. Now the snapshot cache packs each task's parent tree once, into a file of no
name held open by the host process (its SHA-256 kept in memory), before the session's first attempt (one pack for
every task's parent), and builds every snapshot from it, through a bare repository of the cache it unpacks the
pack into, checked against its digest before each build and unpacked again when it changed."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    CALC_1,
    CALC_3,
    GOOD_CALC,
    WRONG_CALC,
    Fixture,
    build,
    task_for,
    unsandboxed_attempt,
    writes_calc,
)
from helpers.e2e_repo import cli_env, copy_mined

from pytest_homefield.agents.reference import NoopAgent
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import SnapshotCache
from pytest_homefield.run.grading import SPOILED_PRISTINE
from pytest_homefield.run.runner import AttemptRunner
from pytest_homefield.run.session import RunSession, select_tasks
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.snapshot import make_snapshot, pack_trees, tree_of, unpack
from pytest_homefield.settings import Settings
from pytest_homefield.store import write_jsonl_atomic


@pytest.fixture
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    """A repository of this test alone (its objects are hidden and put back)."""
    yield build(tmp_path_factory.mktemp("pack") / "repo")


def _writes(fix: str, code: str = "") -> str:
    """A ``cmd:`` agent's command writing ``fix`` followed by ``code`` (run at import, in the test process)."""
    return writes_calc(fix + "\n\nimport glob, os, shutil\n" + code)


def _spoiler(cache: SnapshotCache, objects: Path) -> str:
    """A wrong fix whose import appends a comment to the pristine snapshot's module, removes the cache's own
    repository of the parent trees and hides ``objects``."""
    return _writes(WRONG_CALC, f"ROOT = {str(cache.root)!r}\n"
                               "for d in glob.glob(ROOT + '/*/s/src/calc'):\n"
                               "    with open(d + '/__init__.py', 'a') as f:\n"
                               "        f.write('\\n# spoiled\\n')\n"
                               "for g in glob.glob(ROOT + '/*/g'):\n"
                               "    shutil.rmtree(g)\n"
                               f"if os.path.isdir({str(objects)!r}):\n"
                               f"    os.rename({str(objects)!r}, {str(objects) + '.hidden'!r})\n")


@pytest.mark.slow
def test_attempts_after_graded_code_hid_the_repository_objects_are_scored(own: Fixture, tmp_path: Path) -> None:
    """Attempt 1 spoils the snapshot and hides the repository's objects: ``agent_error`` (hatk39). Before: attempt
    2 (the reference fix) was ``infra`` "cannot extract the parent tree"; now ``solved``, its snapshot rebuilt
    from the host's own pack (its unpacked repository, which the fix removed too, unpacked again), the parent's
    tree; and so is the first snapshot of another parent, packed before the first attempt
    (:meth:`SnapshotCache.keep`)."""
    task = task_for(own)
    other = dataclasses.replace(task, id="other-parent", parent=own.c3)  # a parent built only after the spoiling
    objects = own.root / ".git" / "objects"
    cache = SnapshotCache(repo=own.root)
    try:
        cache.keep([task, other])  # what the runner does before the first attempt of the session
        first = unsandboxed_attempt(task, cache, _spoiler(cache, objects), 1, tmp_path / "run")
        assert first == ("agent_error", f"hidden tests: {SPOILED_PRISTINE}"), first
        assert not objects.exists()  # the repository cannot give the parent tree any more
        second = unsandboxed_attempt(task, cache, _writes(GOOD_CALC), 2, tmp_path / "run")
        assert second[0] == "solved", second
        snap = cache.checked_pristine(task)[0]
        assert (snap / "src" / "calc" / "__init__.py").read_text() == CALC_1  # the parent's, unspoiled
        # the other parent's first snapshot: built after the objects were hidden
        snap_other = cache.checked_pristine(other)[0]
        assert (snap_other / "src" / "calc" / "__init__.py").read_text() == CALC_3
    finally:
        cache.close()
        if not objects.exists():
            os.rename(str(objects) + ".hidden", objects)


def _entries(root: Path) -> dict[str, tuple[str, int, bytes | None]]:
    """Every entry under ``root`` but ``.git/index``: kind, mode, content."""
    return {rel: (e.kind, e.mode, nofollow.read_bytes(root, rel) if e.kind == "file" else None)
            for rel, e in nofollow.walk(root, dirs=True).items() if rel != ".git/index"}


def test_a_snapshot_built_from_the_pack_is_the_one_built_from_the_repository(fx: Fixture, tmp_path: Path) -> None:
    """Byte for byte (every path, kind, mode, content, the one-commit ``.git`` included; its index differs only in
    the files' stat data); one pack holds two parents' trees, each object once; and the pack is in no folder: a
    file of no name, mode 0400, that only this process holds."""
    trees = [tree_of(fx.root, fx.c1), tree_of(fx.root, fx.c3)]
    pack = pack_trees(fx.root, trees)
    try:
        store = unpack(pack, tmp_path / "g")
        for commit, tree in zip((fx.c1, fx.c3), trees, strict=True):
            from_pack = make_snapshot(store, tree, dest=tmp_path / f"p{commit}")
            from_repo = make_snapshot(fx.root, commit, dest=tmp_path / f"r{commit}")
            assert _entries(from_pack) == _entries(from_repo)
        alone = [pack_trees(fx.root, [t]) for t in trees]
        assert pack.size < sum(a.size for a in alone)  # the objects the trees share, once
        for a in alone:
            a.close()
        link = f"/proc/self/fd/{pack._file.fileno()}"
        assert os.readlink(link).endswith("(deleted)") or "/#" in os.readlink(link), os.readlink(link)
        assert os.stat(link).st_mode & 0o777 == 0o400 and os.stat(link).st_nlink == 0
    finally:
        pack.close()


def test_a_changed_pack_or_store_is_made_again(own: Fixture, task: Task) -> None:
    """The unpacked repository changed (a pack file of it cut): unpacked again from the pack. The pack's bytes
    cannot be changed (a process of the user reaches it through ``/proc/<pid>/fd``, hatk43: it is sealed); one that
    cannot be read any more (closed) fails its digest and is made again from the repository. A snapshot is never
    built from either."""
    cache = SnapshotCache(repo=own.root)
    try:
        cache.keep([task])
        cache.pristine(task)
        (store,) = cache._stores
        assert store.pack.intact() and store.folder is not None
        first = store.folder
        (packfile,) = (first / "objects" / "pack").glob("*.pack")
        os.truncate(packfile, 20)
        cache._built.clear()
        assert (cache.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
        assert store.folder != first and not first.exists()
        old = store.pack
        with pytest.raises(PermissionError), open(f"/proc/self/fd/{old._file.fileno()}", "r+b") as f:
            f.seek(old.size // 2)  # the seals stop the write (tests/run/test_pack_tamper.py)
            f.write(b"\0" * 8)
            f.flush()
        assert old.intact()
        old.close()
        assert not old.intact()
        nofollow.remove_tree(store.folder)
        cache._built.clear()
        assert (cache.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
        assert store.pack is not old and store.pack.intact()
    finally:
        cache.close()


def test_a_session_runner_packs_every_task_and_reads_the_key_before_its_first_attempt(own: Fixture,
                                                                                      tmp_path: Path) -> None:
    """The runner's cache, made at the first attempt, packs the parent tree of every task of the session (one pack
    per parent) and reads the canary key before the attempt runs: the repository's objects hidden then, a
    snapshot of a parent not yet built is built all the same."""
    task = task_for(own)
    tasks = [task, dataclasses.replace(task, id="again", parent=own.c1), dataclasses.replace(task, id="c3",
                                                                                             parent=own.c3)]
    runner = AttemptRunner(Settings(root=own.root, sandbox="none"), [], run_id="r", results=tmp_path / "r.jsonl",
                           folder=lambda variant: tmp_path / "run", session_start="2026-01-01T00:00:00+00:00",
                           budget_usd=None, tasks=tasks)
    objects = own.root / ".git" / "objects"
    try:
        cache = runner.cache
        assert [sorted(store.trees) for store in cache._stores] == [sorted({own.c1, own.c3})]
        assert cache._key is not None
        os.rename(objects, str(objects) + ".hidden")
        assert (cache.pristine(tasks[2]) / "src" / "calc" / "__init__.py").read_text() == CALC_3
    finally:
        runner.close()
        if not objects.exists():
            os.rename(str(objects) + ".hidden", objects)


def _inode(pack: object) -> tuple[int, int]:
    st = os.fstat(pack._file.fileno())  # type: ignore[attr-defined]
    return st.st_dev, st.st_ino


def test_a_worker_takes_the_controllers_pack_and_packs_nothing(own: Fixture) -> None:
    """ops41: each xdist worker packed every parent tree of the session before its first attempt (with ``-n 8``,
    eight packs of everything). The controller's cache packs them once and offers its pack (JSON, through
    ``workerinput``); a worker's cache takes it: the same file of no name (opened through ``/proc/<pid>/fd``, its
    SHA-256 the controller's), no pack of its own, and its snapshots built with the repository's objects gone."""
    task = task_for(own)
    other = dataclasses.replace(task, id="c3", parent=own.c3)
    controller, worker = SnapshotCache(repo=own.root), SnapshotCache(repo=own.root)
    objects = own.root / ".git" / "objects"
    try:
        controller.keep([task, other])
        offer = json.loads(json.dumps(controller.offer()))
        os.rename(objects, str(objects) + ".hidden")  # the worker cannot pack: the offer is all it has
        worker.keep([task, other], offer=offer)
        (store,) = worker._stores
        assert _inode(store.pack) == _inode(controller._stores[0].pack) and store.pack.intact()
        assert store.pack._file.fileno() != controller._stores[0].pack._file.fileno()  # its own descriptor
        assert (worker.pristine(other) / "src" / "calc" / "__init__.py").read_text() == CALC_3
        assert (worker.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
        store.pack.close()  # the worker's descriptor only: the controller's stays
        assert controller._stores[0].pack.intact()
    finally:
        worker.close()
        controller.close()
        if not objects.exists():
            os.rename(str(objects) + ".hidden", objects)


def test_an_offer_changed_or_not_of_this_host_is_refused_and_the_worker_packs_itself(own: Fixture,
                                                                                      tmp_path: Path) -> None:
    """The offered pack is not the one the controller made (its SHA-256 differs: hatk43 sealed the pack, so graded
    code of another worker reaching it through ``/proc/<pid>/fd`` under ``--sandbox none`` cannot change it any
    more, and a forged offer stands for that), another host's offer, an offer naming a fifo (never read: it would
    block) or a file of another size, a malformed one: each refused, and the worker packs the parent trees itself
    from the repository, as before ops41; :meth:`SnapshotCache.keep` never raises."""
    task = task_for(own)
    controller = SnapshotCache(repo=own.root)
    try:
        controller.keep([task])
        good = controller.offer()
        assert good is not None
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        held = os.open(fifo, os.O_RDWR)  # a reader and a writer: opening it never blocks, reading would
        small = tmp_path / "small"
        small.write_bytes(b"PACK")
        with open(small, "rb") as f:
            bad_offers = {
                "another host": {**good, "host": "another-boot-id"},
                "a fifo": {**good, "fd": held},
                "another size": {**good, "fd": f.fileno()},
                "no such fd": {**good, "fd": 10_000},
                "malformed": {**good, "pid": "x"},
                "no parents": {k: v for k, v in good.items() if k != "parents"},
                "a missing tree": {**good, "parents": {**good["parents"], "0" * 40: "1" * 40}},
            }
            for why, offer in bad_offers.items():
                worker = SnapshotCache(repo=own.root)
                try:
                    worker.keep([task], offer=offer)
                    (store,) = worker._stores
                    assert _inode(store.pack) != _inode(controller._stores[0].pack) and store.pack.intact(), why
                    if why == "another host":  # its own pack builds the parent's snapshot (once: 0.2 s of CPU)
                        assert (worker.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
                finally:
                    worker.close()
        os.close(held)
        pack = controller._stores[0].pack
        worker = SnapshotCache(repo=own.root)
        try:
            worker.keep([task], offer={**good, "sha256": "0" * 64})
            (store,) = worker._stores
            assert _inode(store.pack) != _inode(pack) and store.pack.intact()
        finally:
            worker.close()
    finally:
        controller.close()


def test_the_session_runner_offers_its_pack_to_the_workers_runners(own: Fixture, tmp_path: Path) -> None:
    """The plumbing: the controller's runner makes its cache (the pack of every task's parent) for the offer it
    puts in ``workerinput``; a worker's runner given it packs nothing and holds that same file."""
    task = task_for(own)
    tasks = [task, dataclasses.replace(task, id="c3", parent=own.c3)]

    def runner(offer: dict[str, object] | None) -> AttemptRunner:
        return AttemptRunner(Settings(root=own.root, sandbox="none"), [], run_id="r", results=tmp_path / "r.jsonl",
                             folder=lambda variant: tmp_path / "run", session_start="2026-01-01T00:00:00+00:00",
                             budget_usd=None, tasks=tasks, pack_offer=offer)

    controller = runner(None)
    try:
        offer = controller.pack_offer()
        assert offer is not None and sorted(offer["parents"]) == sorted({own.c1, own.c3})  # type: ignore[call-overload]
        worker = runner(json.loads(json.dumps(offer)))
        try:
            (store,) = worker.cache._stores
            assert _inode(store.pack) == _inode(controller.cache._stores[0].pack)
        finally:
            worker.close()
        controller.cache._stores[0].pack.close()
        assert controller.pack_offer() is None  # never raises: each worker then packs for itself
    finally:
        controller.close()


def test_a_worker_takes_the_pack_when_it_joins_before_any_attempt(own: Fixture, tmp_path: Path) -> None:
    """A worker's session takes the controller's pack when it joins (xdist schedules no item before every worker
    joined), not at its first attempt, when another worker's graded code (``--sandbox none``) may already have
    changed the pack or hidden the objects a refused offer is packed from (ops41 took it lazily): joined, the
    worker's cache holds the controller's file, with the repository's objects hidden right after the join."""
    task = task_for(own)
    write_jsonl_atomic(HomefieldDir(own.root).tasks, [task.to_dict()])
    s = Settings(root=own.root, agents=["noop"], attempts=1, sandbox="none")
    agents = [NoopAgent(name="noop", spec="noop")]
    objects = own.root / ".git" / "objects"
    controller = RunSession.start(s, select_tasks(s), agents, now="2026-03-01T10:00:00+00:00")
    try:
        wi = json.loads(json.dumps(controller.workerinput()))
        assert wi["homefield_pack"] is not None
        worker = RunSession.join(s, select_tasks(s), agents, wi)
        os.rename(objects, str(objects) + ".hidden")  # what any attempt might do after the workers joined
        try:
            assert worker.runner._cache is not None  # taken at the join
            (store,) = worker.runner.cache._stores
            assert _inode(store.pack) == _inode(controller.runner.cache._stores[0].pack) and store.pack.intact()
            assert (worker.runner.cache.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
        finally:
            worker.close()
    finally:
        controller.close()
        controller.release()
        if not objects.exists():
            os.rename(str(objects) + ".hidden", objects)


@pytest.mark.slow
def test_a_run_at_n2_packs_the_parent_trees_once(mined: Path, tmp_path: Path) -> None:
    """ops41, end to end: ``homefield run -n 2`` packs the tasks' parent trees from the repository once (the
    controller, before its workers start), not once per worker. Counted by a ``git`` first on ``PATH`` that notes
    each ``git pack-objects`` run in the repository (what :func:`pack_trees` runs) and runs git."""
    repo = copy_mined(mined, tmp_path / "repo")
    real, log, shim = shutil.which("git"), tmp_path / "packs.log", tmp_path / "bin"
    assert real is not None
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\n[ "$1" = pack-objects ] && pwd -P >> {shlex.quote(str(log))}\n'
                              f'exec {shlex.quote(real)} "$@"\n')
    (shim / "git").chmod(0o755)
    env = {**cli_env(), "PATH": f"{shim}:{os.environ['PATH']}"}
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "noop", "--attempts", "1",
                           "-n", "2"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "3 unsolved" in proc.stdout, proc.stdout
    in_repo = [line for line in log.read_text().splitlines() if Path(line) == repo.resolve()]
    assert len(in_repo) == 1, (in_repo, proc.stdout)
