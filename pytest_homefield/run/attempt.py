"""One attempt of one agent on one task, without pytest: snapshot, agent, grading, result record.

:class:`SnapshotCache` extracts each task's parent tree once per process (a one-commit repository,
then ``setup_cmd``) and keeps it as the pristine copy outside any workspace; every attempt works in
its own copy (docs/contracts.md §7, §9). The pristine copy lives beside the workspaces, where an agent with a
shell can write to it, so its content digest (kept in this process's memory) is checked before every copy,
before grading and after grading, and a changed one is rebuilt from the parent tree's pack the cache made
from the repository's git objects before the session's first attempt (a file of no name, its digest in memory:
hatk40); a change made while the attempt was graded is the graded code's (``agent_error``, hatk34).
:func:`run_attempt` returns the :class:`Result`; it never raises for agent or grading failures (those become
outcomes).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import shlex
import shutil
import stat
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import (
    MAX_ATTEMPT_USD,
    Agent,
    AgentContext,
    AgentResult,
    believable,
    over_cost_cap,
    render_prompt,
)
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.agents.reference import sim_seed
from pytest_homefield.capabilities import Capabilities, capabilities_of
from pytest_homefield.envs.builder import EnvBuildError
from pytest_homefield.envs.stage import as_of_date, commit_env
from pytest_homefield.errors import SnapshotError
from pytest_homefield.layout import HomefieldDir, attempt_dir
from pytest_homefield.pins import pinned
from pytest_homefield.records import UNSCORED_OUTCOMES, Result, Task
from pytest_homefield.run.agent_sandbox import agent_sandbox
from pytest_homefield.run.canary_key import canary_key, task_seed
from pytest_homefield.run.changes import capped_diff
from pytest_homefield.run.grading import SPOILED_PRISTINE, Grade, grade, tree_changes
from pytest_homefield.run.twin_grading import checks_read, forget_checks, read_checks, read_checks_as
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.backends import (
    SandboxBackend,
    SandboxContext,
    Sandboxes,
    SandboxHook,
)
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.limits import (
    TEST_MEMORY_MB,
    TEST_WRITE_MB,
    AgentFolders,
    Baseline,
    DiskWatch,
    WriteLimits,
    check_folders,
    filled_by,
    free_bytes,
)
from pytest_homefield.sandbox.memory_budget import BudgetTooSmall, reserve, waited_s
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.phases import AGENT, GRADING, Kind, PhaseLock
from pytest_homefield.sandbox.proccap import agent_memory_bytes, load_per_cpu, memory_capped
from pytest_homefield.sandbox.services import ServiceError, TestNetwork, agent_lease
from pytest_homefield.sandbox.snapshot import (
    TreePack,
    copy_tree,
    make_snapshot,
    pack_trees,
    run_setup,
    setup_error_line,
    tree_of,
    unpack,
)
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp

__all__ = ["SnapshotCache", "AttemptSpec", "SandboxContext", "grading_env", "run_attempt", "latest_results",
           "result_key", "PROMPT_FILE"]

#: The file of an attempt's artifacts folder holding the prompt exactly as the agent got it.
PROMPT_FILE = "prompt.txt"


def _now() -> str:
    """Now, UTC, ISO 8601 to the millisecond (a rate limit is told apart from a session start in the same second)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class _Store:
    """Parent trees of one :meth:`SnapshotCache.keep`: their pack (a file of no name, its digest in memory), the
    tree of each parent commit, and the bare repository the pack is unpacked into (``folder``, ``None`` until
    first used) with its :func:`tree_digest` (this process's memory)."""

    pack: TreePack
    trees: dict[str, str]
    folder: Path | None = None
    digest: str = ""


@dataclass
class SnapshotCache:
    """Pristine parent snapshots per task, built lazily in a private temp folder of this process.

    ``setup`` maps a task to its setup command (or ``None``). Folders have random names: no task id or
    sha appears in any path an agent can see. Every snapshot of a kept parent is built from the host's own copy
    of its tree (hatk40): :meth:`keep`, before the session's first attempt, packs the parent trees of the
    session's tasks from the repository's objects into one
    :class:`~pytest_homefield.sandbox.snapshot.TreePack` (a file of no name this process holds open, its digest
    in memory; an object the trees share packed once), unpacked into a bare repository of the cache checked
    against its digest before each build and unpacked again when it changed: graded code that removes or changes
    the repository's objects later (``--sandbox none``) cannot keep the attempts after it from a pristine
    snapshot. A parent no :meth:`keep` packed is packed at its first snapshot. Under xdist the controller's cache
    packs them once and offers its pack (:meth:`offer`); each worker's :meth:`keep` takes it when intact (ops41).
    """

    repo: Path
    setup: Callable[[Task], str | None] = lambda task: task.setup_cmd
    run_timeout_s: float = 600.0
    root: Path = field(default_factory=hf_mkdtemp)
    _built: dict[str, Path] = field(default_factory=dict)
    _digests: dict[str, str] = field(default_factory=dict)
    _stores: list[_Store] = field(default_factory=list)
    _key: bytes | None = None
    _as_of: dict[str, str] = field(default_factory=dict)

    def key(self) -> bytes:
        """The repository's canary key (:func:`~pytest_homefield.run.canary_key.canary_key`), read (or made) once
        per cache and kept in memory: graded code under ``--sandbox none`` that changes ``.homefield/canary.key``
        changes no later grading of the session (hatk40). Raises ``OSError``, ``ValueError`` (read again on the
        next call)."""
        if self._key is None:
            self._key = canary_key(self.repo)
        return self._key

    def keep(self, tasks: Iterable[Task], *, offer: Mapping[str, Any] | None = None, envs: bool = False) -> None:
        """Pack the parent trees of ``tasks`` not kept yet (one pack for them all) from the repository's objects as
        they are now, and read the canary key (:meth:`key`): called before a session's first attempt, so no
        attempt's code can spoil what a later snapshot is built from, or the key a later grading uses. ``offer``: the
        pack of xdist's controller (:meth:`offer`, made before any worker started), taken first when it is intact
        (:meth:`TreePack.taken <pytest_homefield.sandbox.snapshot.TreePack.taken>`: its SHA-256 the controller's),
        so that a session packs its parent trees once, not once per worker (ops41); refused, this worker packs
        them itself, as before. The commit tree of each task graded in its commit's uv environment (``envs``: every
        task, ``--env uv``; else those with an ``env`` object) is packed too (when the offer lacks it), and its
        commit's ``as_of`` day read (:meth:`env_source`, :meth:`as_of`; hatk41). A commit that cannot be resolved or
        packed is left to its first use (whose :class:`SnapshotError` makes that attempt ``infra``), a key that
        cannot be read to each grading (``infra``, as before). The repository's parent-checks store is read now, for
        the session (:func:`~pytest_homefield.run.twin_grading.read_checks`: a line written after this is never
        read, hatk41), or, on a worker, taken from the offer's ``checks`` (the lines the controller read at the
        session's start: a worker xdist starts again after a crash, after attempts ran, reads no line written
        since, hatk43). Never raises."""
        if offer is not None:
            with contextlib.suppress(SnapshotError, OSError, KeyError, TypeError, ValueError):
                self._take(offer)
        tasks = list(tasks)
        commits = [task.commit for task in tasks if envs or task.env is not None]
        with contextlib.suppress(SnapshotError, OSError):
            self._add([*(task.parent for task in tasks), *commits])
        for commit in dict.fromkeys(commits):
            with contextlib.suppress(SnapshotError, OSError, ValueError):
                self.as_of(commit)
        with contextlib.suppress(OSError, ValueError):  # a bad key is each grading's infra, as before
            self.key()
        store = HomefieldDir(self.repo).parent_checks
        checks = offer.get("checks") if offer is not None else None
        if isinstance(checks, list):
            read_checks_as(store, checks)  # hatk43: the controller's, read at the session's start
        else:
            read_checks(store)  # hatk41: no line written after this is read

    def env_source(self, commit: str) -> tuple[Path, str]:
        """``(repository, tree)`` the uv environment of ``commit`` is found from (its declaration files, the tree
        its build installs): the host's own copy of the commit's tree, as for a parent's snapshot
        (:meth:`keep`), never the repository an attempt's code can change (hatk41). Raises
        :class:`SnapshotError`, ``OSError``."""
        return self._source(commit)

    def as_of(self, commit: str) -> str:
        """The end of ``commit``'s committer day (:func:`~pytest_homefield.envs.stage.as_of_date`), read from the
        repository once per cache (at :meth:`keep` for the commits it kept) and kept in memory. Raises
        :class:`SnapshotError`, ``ValueError``."""
        if commit not in self._as_of:
            self._as_of[commit] = as_of_date(self.repo, commit)
        return self._as_of[commit]

    def offer(self) -> dict[str, Any] | None:
        """This cache's first pack (the one :meth:`keep` made of the session's parent trees) as a worker of this host
        takes it (:meth:`keep`'s ``offer``; JSON-able): :meth:`TreePack.offer
        <pytest_homefield.sandbox.snapshot.TreePack.offer>` with ``parents``, ``{parent commit: tree}``, and
        ``checks``, the lines of the parent-checks store :meth:`keep` read (:func:`~pytest_homefield.run.twin_grading.
        checks_read`; absent when it read none). Only ``checks`` when nothing was packed; ``None`` when neither."""
        checks = checks_read(HomefieldDir(self.repo).parent_checks)
        extra: dict[str, Any] = {} if checks is None else {"checks": checks}
        if not self._stores:
            return extra or None
        store = self._stores[0]
        return {**store.pack.offer(), "parents": dict(store.trees), **extra}

    def _take(self, offer: Mapping[str, Any]) -> None:
        """A :class:`_Store` of the offered pack (:meth:`keep`). Raises :class:`SnapshotError` (refused),
        ``OSError``, ``KeyError``, ``TypeError``, ``ValueError`` (a bad offer)."""
        parents = {str(c): str(t) for c, t in dict(offer["parents"]).items()}
        pack = TreePack.taken(offer)
        if set(parents.values()) - set(pack.trees):
            pack.close()
            raise SnapshotError("the offered pack lacks trees its parents name")
        kept = {c for store in self._stores for c in store.trees}
        self._stores.append(_Store(pack, {c: t for c, t in parents.items() if c not in kept}))

    def _add(self, parents: Iterable[str]) -> None:
        """One :class:`_Store` of ``parents`` not in a store yet (those the repository resolves). Raises
        :class:`SnapshotError`, ``OSError``."""
        kept = {c for store in self._stores for c in store.trees}
        trees: dict[str, str] = {}
        for commit in dict.fromkeys(parents):
            if commit not in kept:
                with contextlib.suppress(SnapshotError):
                    trees[commit] = tree_of(self.repo, commit)
        if trees:
            self._stores.append(_Store(pack_trees(self.repo, trees.values()), trees))

    def _source(self, parent: str) -> tuple[Path, str]:
        """``(repository, tree)`` a snapshot of ``parent`` is built from: the intact bare repository of the store
        that holds it (unpacked again from its pack when it changed or is gone; the pack made again from the
        repository when it changed too), packed now when no store holds it. Raises :class:`SnapshotError`,
        ``OSError``."""
        store = next((s for s in self._stores if parent in s.trees), None)
        if store is None:
            self._add([parent])
            store = next((s for s in self._stores if parent in s.trees), None)
            if store is None:
                raise SnapshotError(f"{parent!r} is not a commit of {self.repo}")
        if store.folder is not None and self._intact(store):
            return store.folder, store.trees[parent]
        if store.folder is not None:
            nofollow.remove_tree(store.folder)
            store.folder = None
        if not store.pack.intact():  # unreadable (sealed: its bytes cannot change): packed again from the repository
            store.pack.close()
            store.pack = pack_trees(self.repo, store.trees.values())
        folder = unpack(store.pack, self.new_folder() / "g")
        store.folder, store.digest = folder, tree_digest(folder)
        return folder, store.trees[parent]

    @staticmethod
    def _intact(store: _Store) -> bool:
        assert store.folder is not None
        try:
            return tree_digest(store.folder) == store.digest
        except OSError:
            return False

    def pristine(self, task: Task) -> Path:
        """The pristine snapshot of ``task.parent`` (after setup). Raises :class:`SnapshotError`."""
        if task.id in self._built:
            return self._built[task.id]
        dest = self.new_folder()
        try:
            source, tree = self._source(task.parent)
            snap = make_snapshot(source, tree, dest=dest / "s", init_git=True, isolated=True)  # hatk43
        except Exception as exc:  # git failures: missing objects after a history rewrite, …
            raise SnapshotError(f"cannot extract the parent tree: {exc}") from exc
        cmd = self.setup(task)
        if cmd:
            log = dest / "setup.log"
            proc = run_setup(snap, cmd, env=_setup_env(), timeout_s=self.run_timeout_s, log_path=log)
            if proc.timed_out or proc.exit_code != 0:
                line = setup_error_line(log)
                last = f": {line}" if line else ""
                raise SnapshotError(f"setup_cmd failed (exit {proc.exit_code}, timed out: {proc.timed_out}){last}")
        self._built[task.id] = snap
        self._digests[task.id] = tree_digest(snap)
        return snap

    def new_folder(self) -> Path:
        """A new, empty folder of random name in :attr:`root`. A root that is no longer a folder (removed, or
        swapped for a link or a file: graded code under ``--sandbox none`` runs as the user, hatk39) is made
        again, elsewhere, for this and every later folder. Raises ``OSError``."""
        try:
            if stat.S_ISDIR(os.lstat(self.root).st_mode):
                return Path(tempfile.mkdtemp(dir=self.root))
        except OSError:
            pass
        self.root = hf_mkdtemp()
        return Path(tempfile.mkdtemp(dir=self.root))

    def changed(self, task: Task) -> bool:
        """Whether the pristine snapshot of ``task`` differs from the digest taken when it was built (kept in
        this process's memory), without rebuilding it: a snapshot swapped for a link, removed, or whose folder
        was removed, has changed. ``False`` for a task not built yet. Never raises (hatk39: the check after
        grading that rebuilt it to tell raised where graded code had removed the cache's folder, ``infra``)."""
        snap = self._built.get(task.id)
        if snap is None:
            return False
        try:
            return tree_digest(snap) != self._digests[task.id]
        except OSError:  # the snapshot folder itself swapped for a link (or removed): never followed
            return True

    def checked_pristine(self, task: Task) -> tuple[Path, bool]:
        """``(pristine snapshot, changed)``: the snapshot verified against the digest taken when it
        was built; one that changed since (an agent wrote outside its workspace, or swapped the
        snapshot folder itself for a link) is rebuilt, and
        ``changed`` is true. Raises :class:`SnapshotError` when the rebuild fails."""
        snap = self.pristine(task)
        if not self.changed(task):
            return snap, False
        del self._built[task.id]
        nofollow.remove_tree(snap.parent)
        return self.pristine(task), True

    def workspace(self, task: Task) -> Path:
        """A fresh copy of the (verified) pristine snapshot for one attempt (random path)."""
        snap, _ = self.checked_pristine(task)
        return copy_tree(snap, self.new_folder() / "work")

    def close(self) -> None:
        """Delete every snapshot of this cache."""
        nofollow.remove_tree(self.root)
        self._built.clear()
        self._digests.clear()
        for store in self._stores:
            store.pack.close()
        self._stores.clear()
        forget_checks(HomefieldDir(self.repo).parent_checks)


def tree_digest(root: Path) -> str:
    """SHA-256 over every entry under ``root`` (``.git`` and empty folders included): relative path, kind,
    mode, and the regular file's content or the symlink's target. Walked and read with
    :mod:`~pytest_homefield.sandbox.nofollow` (folder descriptors, ``O_NOFOLLOW``): a symlink is
    hashed as a link, never followed; a fifo or device is never opened (its mode counts), so nothing
    an agent planted in the snapshot can block the host or lead it elsewhere. An entry that cannot be
    read (swapped meanwhile) hashes as unreadable, so the digest differs."""
    h = hashlib.sha256()
    for rel, entry in sorted(nofollow.walk(root, dirs=True).items()):  # empty folders count too
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update(f"{entry.kind}\0{entry.mode:o}\0".encode())
        try:
            if entry.kind == "link":
                h.update(nofollow.read_link(root, rel).encode("utf-8", "surrogateescape"))
            elif entry.kind == "file":
                h.update(hashlib.sha256(nofollow.read_bytes(root, rel)).digest())
        except OSError:
            h.update(b"\0unreadable")
        h.update(b"\0")
    return h.hexdigest()


def swapped_root(folders: AgentFolders) -> str | None:
    """The fault when the agent replaced one of its folders itself (the workspace, ``TMPDIR``,
    ``HOME``) with a symlink or another kind of file, else ``None``: the host never follows it
    (grading would fail on it as ``ELOOP``), and the fault is the agent's (``agent_error``)."""
    for label, root in folders.roots():
        try:
            st = os.lstat(root)
        except FileNotFoundError:
            return f"the agent removed its {label} folder"
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(root)
            except OSError:
                target = "?"
            return f"the agent replaced its {label} folder with a symlink (to {target[:200]}): never followed"
        if not stat.S_ISDIR(st.st_mode):
            return f"the agent replaced its {label} folder with a file that is not a folder"
    return None


def _setup_env() -> dict[str, str]:
    drop = ("PYTEST_", "COV_CORE_", "HOMEFIELD_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@dataclass
class AttemptSpec:
    """What to run: ``task`` × ``agent`` × ``attempt`` (from 1) in ``variant``, with limits in
    seconds / USD, and where to record it."""

    task: Task
    agent: Agent
    attempt: int
    run_id: str
    run_dir: Path
    timeout_s: float = 900.0
    budget_usd: float | None = None
    allow_shell: bool = False
    run_timeout_s: float = 600.0
    test_timeout_s: float | None = None
    #: MiB of address space per hidden-test process (``max_test_memory_mb``)
    test_memory_mb: float | None = TEST_MEMORY_MB
    #: MiB the hidden tests may write, per file and in all (``max_test_write_mb``)
    test_write_mb: float | None = TEST_WRITE_MB
    test_cmd: str | None = None
    test_globs: list[str] = field(default_factory=list)
    env_passthrough: list[str] = field(default_factory=list)
    variant: str = "base"
    sandbox: SandboxChoice = field(default_factory=SandboxChoice)
    sandbox_hook: SandboxHook | None = None
    #: the session's backends, chosen once (:meth:`Sandboxes.choose`); ``None``: chosen for this
    #: attempt from ``sandbox`` and ``sandbox_hook``
    sandboxes: Sandboxes | None = None
    #: ``uv``: grade in the commit's environment (also whenever the task has an ``env`` object)
    env_kind: str = "current"
    env_extras: list[str] = field(default_factory=list)
    env_groups: list[str] = field(default_factory=list)
    env_as_of: bool = False
    #: PASS_TO_PASS ids of this task left out of the regression check (the run's frozen flaky ids)
    flaky_p2p: list[str] = field(default_factory=list)
    #: called with the :class:`~pytest_homefield.run.grading.Grade` when the attempt was graded
    graded: Callable[[Grade], None] | None = None
    #: what the agent may write (``--max-output-mb``, ``--max-file-mb``, ``--max-workspace-mb``)
    limits: WriteLimits = field(default_factory=WriteLimits)
    #: the services and ports of the hidden tests' runs (``services:``, ``--test-network``)
    network: TestNetwork | None = None
    #: the canary key (32 bytes) the session's controller sent (an ssh worker); ``None``: the repository's own
    #: (:func:`~pytest_homefield.run.canary_key.canary_key`)
    canary_key: bytes | None = None
    #: an attack agent's reference grading time, ``(seconds, where from)``
    #: (:func:`~pytest_homefield.run.hang_bound.attack_reference`): its grading's bound; ``None``: the run timeout
    grading_reference: tuple[float, str] | None = None

    @property
    def artifacts(self) -> Path:
        """``runs/<run_id>/attempts/<task_id>/<agent>/<attempt>/``."""
        return attempt_dir(self.run_dir, self.task.id, self.agent.name, self.attempt)


def _agent_env(spec: AttemptSpec, prompt: str, tmpdir: Path) -> dict[str, str]:
    passthrough = list(getattr(spec.agent, "env_passthrough", ()) or ()) + spec.env_passthrough
    return build_agent_env(prompt=prompt, attempt=spec.attempt, tmpdir=tmpdir, passthrough=passthrough)


def grading_env(spec: AttemptSpec, cache: SnapshotCache) -> dict[str, str] | None:
    """The process environment for the hidden tests: the commit's uv environment when the task was
    mined with one (its ``env`` extras and groups) or ``spec.env_kind`` is ``uv``; ``None`` (the
    current one) otherwise. The agent's own changes to declaration files are never installed. The environment
    is found from the cache's own copy of the commit's tree (:meth:`SnapshotCache.env_source`), never from the
    repository, which graded code under ``--sandbox none`` can change (hatk41). Raises :class:`EnvBuildError`,
    :class:`SnapshotError`."""
    env = spec.task.env
    if env is None and spec.env_kind != "uv":
        return None
    extras = list(env.get("extras") or []) if env else spec.env_extras
    groups = list(env.get("groups") or []) if env else spec.env_groups
    as_of = str(env.get("as_of") or "") if env else (cache.as_of(spec.task.commit) if spec.env_as_of else "")
    try:
        source, tree = cache.env_source(spec.task.commit)
    except OSError as exc:
        raise SnapshotError(f"cannot extract the commit's tree: {exc}") from exc
    return commit_env(source, tree, extras=extras, groups=groups, as_of=as_of, user=cache.repo,
                      isolated=True).apply(_setup_env())


def _fresh_folder(run_dir: Path, art: Path) -> int:
    """Make the attempt's folder ``art`` (below ``run_dir``) an empty folder of homefield's: a retried unscored
    attempt's old folder is removed by descriptor (:func:`~.nofollow.remove_tree`, any depth), a link left where it
    was (graded code of that attempt runs as the user under ``--sandbox none``) is removed as a link, and the
    folders from ``run_dir`` down are made without following a link (link46: before, ``shutil.rmtree`` refused the
    link, ``ignore_errors`` hid it, and ``mkdir(exist_ok=True)`` took the linked folder: the attempt's files were
    written wherever it pointed). Returns the folder's descriptor (``O_DIRECTORY | O_NOFOLLOW``, reached from
    ``run_dir`` without following a link), which :func:`run_attempt` pins (:func:`~pytest_homefield.pins.pinned`)
    for the attempt's host-side work (link48). Raises :class:`~.nofollow.LinkInTheWay` when a folder above it is a
    link."""
    rel = art.relative_to(run_dir)
    try:
        st = os.lstat(art)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        nofollow.remove_tree(art)
    elif st is not None:
        nofollow.remove(run_dir, rel.as_posix())  # a link or a file: the entry itself
    run_dir.mkdir(parents=True, exist_ok=True)
    nofollow.make_dirs(run_dir, rel.as_posix())
    return nofollow.open_folder(run_dir, rel.as_posix())


def _moved(run_dir: Path, art: Path, fd: int) -> str | None:
    """The fault when the attempt's folder ``art`` is no longer the folder ``fd`` pins, reached from ``run_dir``
    without following a link (a folder on the way swapped for a symlink or another folder, or removed: under
    ``--sandbox none`` the agent and the graded code run as the user), else ``None``. The host's own work in it went
    to the pinned folder, never through the link; what a test run was handed by path would not (link48)."""
    if nofollow.still_at(run_dir, art.relative_to(run_dir).as_posix(), fd):
        return None
    return f"a folder on the way to the attempt's folder {art} was replaced or moved: never followed"


def run_attempt(spec: AttemptSpec, cache: SnapshotCache) -> Result:
    """Run one attempt and grade it. Never raises for agent, snapshot or grading failures: those are
    recorded as outcomes (``infra`` for harness problems). Writes ``prompt.txt`` (the prompt exactly as
    sent), ``agent.out``/``agent.err`` (by the agent), ``diff.patch``, ``tests.log`` and
    ``outcomes.jsonl`` under ``spec.artifacts``. The workspace and the attempt's temp folder are removed
    on every way out."""
    started = time.monotonic()  # host_s: the attempt's seconds less the agent's, the test runs' and the waits
    load_then = load_per_cpu()  # the record's load_per_cpu: the mean of this and the reading at the end
    art = spec.artifacts
    base: dict[str, Any] = dict(run_id=spec.run_id, task_id=spec.task.id, agent=spec.agent.name,
                                attempt=spec.attempt, variant=spec.variant, started_at=_now())
    try:
        base["agent_version"] = spec.agent.version()
    except Exception:
        base["agent_version"] = None

    def infra(error: str) -> Result:
        return Result(**base, outcome="infra", error=error, finished_at=_now(),
                      host_s=round(time.monotonic() - started, 3))

    try:
        art_fd = _fresh_folder(spec.run_dir, art)
    except OSError as exc:  # a link above it (LinkInTheWay): nothing of the attempt is written there
        return infra(f"cannot make the attempt's folder {art}: {exc}")

    with contextlib.ExitStack() as cleanup:  # last out: the workspace and the temp folder, on every way out
        # every file of the attempt's folder the host opens, reached from its descriptor: a link swapped in for a
        # folder on the way while it runs is never followed (link48); released last
        cleanup.enter_context(pinned(art, art_fd))
        try:
            workspace = cache.workspace(spec.task)
            cleanup.callback(nofollow.remove_tree, workspace.parent)
            cache.pristine(spec.task)  # made before the agent starts: the grading checks it was not changed
        except Exception as exc:
            return infra(_one_line(exc))
        box = cache.new_folder()
        cleanup.callback(nofollow.remove_tree, box)
        caps = capabilities_of(spec.agent)
        prompt = render_prompt(spec.task.prompt, allow_shell=spec.allow_shell, shell_known=caps.shell_known)
        nofollow.write_bytes(art, PROMPT_FILE, prompt.encode("utf-8"))  # exactly as sent, for `homefield view`
        tmpdir = box / "tmp"
        sandboxes = spec.sandboxes or Sandboxes.choose(spec.sandbox, spec.sandbox_hook)
        try:  # with a hook these never raise: the hook over no sandbox
            backend = sandboxes.for_agent(spec.agent, spec.allow_shell)
            test_backend = sandboxes.for_tests()
        except BwrapUnavailable as exc:
            return infra(_one_line(exc))
        env = _agent_env(spec, prompt, tmpdir)
        # its turn of the machine's phase lock first (only an agent that runs commands can listen, §9), then its
        # memory (its sandbox's and its services': sandbox/memory_budget.py), never the reverse; both given back
        # after its services and its reapers (last in, first out)
        agent_phase = cleanup.enter_context(contextlib.ExitStack())
        try:
            waited = _enter_phase(agent_phase, AGENT, caps.runs_commands(spec.allow_shell) and not caps.modelless)
            # shared: an adapter that ran its program from another thread must draw on it, never wait for itself
            waited += agent_phase.enter_context(reserve(_agent_memory_mb(spec, caps, backend), shared=True)).wait_s
        except OSError as exc:
            return infra(f"phase lock: {_one_line(exc)}")
        except BudgetTooSmall as exc:
            return infra(str(exc))
        # an agent that runs commands gets service instances of its own; stopped after the agent, or on the way out;
        # their folders are its own (atk20 F4): judged with its others, removed on the way out (hatk35: removed when
        # the instances stopped, every such attempt was agent_error, "the agent removed its service1 folder")
        own_services = cleanup.enter_context(contextlib.ExitStack())

        def leave(folder: Path) -> None:
            cleanup.callback(nofollow.remove_tree, folder)

        try:
            lease = own_services.enter_context(agent_lease(spec.network, caps.runs_commands(spec.allow_shell),
                                                           relays=backend.relays and not spec.sandbox.shared_network,
                                                           leave=leave))
            env.update(lease.env)
            sb = agent_sandbox(spec.agent, backend, workspace=workspace, box=box, env=env, sandbox=spec.sandbox,
                               pythons=[_python_of(spec.test_cmd or spec.task.test_cmd)],
                               proxy_log=art / "proxy.log", tmpfs_bytes=spec.limits.total_bytes, services=lease)
        except (OSError, ServiceError) as exc:  # the client's configuration could not be copied, a service failed
            what = "the agent's services" if isinstance(exc, ServiceError) else "the sandbox"
            return infra(f"cannot prepare {what}: {_one_line(exc)}")
        cleanup.callback(sb.close)  # before the services (last in, first out); idempotent
        # what the agent may write: its workspace, TMPDIR and (when confined) its fresh HOME
        folders = AgentFolders(workspace, tmpdir=tmpdir, home=sb.home if backend.confines else None,
                               services=lease.folders)
        baseline = Baseline.measure(folders, spec.limits)
        watch = DiskWatch(folders, spec.limits, baseline)
        free_before = free_bytes(art)
        ctx = AgentContext(
            workspace=workspace, prompt=prompt, env=env, timeout_s=spec.timeout_s,
            artifacts=art, attempt=spec.attempt, budget_usd=spec.budget_usd, allow_shell=spec.allow_shell,
            seed=sim_seed(spec.task.id, spec.agent.name, spec.attempt), gold_patch=spec.task.gold_patch,
            hint_files=list(spec.task.source_files) if caps.hinted else [],
            task_id=spec.task.id,
            wrap=sb.wrap, sandbox=backend.configured, task=spec.task if caps.reference else None,
            limits=spec.limits, watch=watch,
        )
        t0 = time.monotonic()  # the wait is neither the agent's time nor its timeout's
        try:
            ar = believable(spec.agent.run(ctx))  # its numbers as a record may hold them, whoever made them
        except Exception as exc:
            nofollow.write_bytes(art, "agent.err", traceback.format_exc().encode())
            ar = AgentResult(outcome="infra", error=f"agent raised: {_one_line(exc)}")
        finally:
            sb.close()
            own_services.close()
            agent_phase.close()  # after its reapers reaped every process of it (sandbox/procs.py), and its services
        wall = time.monotonic() - t0
        for _, root in folders.roots():  # what it made unreadable is read, counted, graded and removed (atk19)
            with contextlib.suppress(OSError):
                nofollow.restore_access(root)
        ar, fault = _judged(ar, folders, spec.limits, baseline, watch, art, free_before,
                            moved=_moved(spec.run_dir, art, art_fd))
        base["sandbox"] = sb.recorded
        for name in ("agent.out", "agent.err"):  # every attempt folder has both, also for in-process agents
            if nofollow.lstat(art, name) is None:  # a link the agent left is its entry, never written through (link46)
                nofollow.write_bytes(art, name, f"({spec.agent.name} runs inside homefield and wrote nothing to "
                                                f"{name[6:]})\n".encode())
        fields: dict[str, Any] = dict(
            exit_code=ar.exit_code, cost_usd=ar.cost_usd, cost_partial=ar.cost_partial,
            input_tokens=ar.input_tokens, output_tokens=ar.output_tokens, cache_read_tokens=ar.cache_read_tokens,
            cache_write_tokens=ar.cache_write_tokens, turns=ar.turns, model=ar.model, wall_s=round(wall, 3),
        )
        verdict = _verdict(spec, cache, ar, fault, workspace, test_backend, modelless=caps.modelless)
        moved = _moved(spec.run_dir, art, art_fd)
        if moved is not None and verdict.outcome not in ("agent_error", "forged"):  # by the graded code (link48)
            verdict.outcome, verdict.error = "agent_error", f"hidden tests: {moved}"
    # after the workspace and the temp folder are removed (the ExitStack above): that is the host's work too
    host = time.monotonic() - started - wall - verdict.test_s - waited - verdict.wait_s
    return Result(**base, **fields, test_sandbox=verdict.test_sandbox, outcome=verdict.outcome, error=verdict.error,
                  test_s=round(verdict.test_s, 3), wait_s=round(waited + verdict.wait_s, 3),
                  host_s=round(max(0.0, host), 3), load_per_cpu=round((load_then + load_per_cpu()) / 2, 2),
                  touched_tests=verdict.touched, suspicious=verdict.suspicious,
                  suspicious_reason=verdict.why if verdict.suspicious else None, finished_at=_now(),
                  canary=verdict.canary, claimed=verdict.claimed, twin_hits=verdict.twin_hits)


def _judged(ar: AgentResult, folders: AgentFolders, limits: WriteLimits, baseline: Baseline, watch: DiskWatch,
            art: Path, free_before: int | None, *, moved: str | None = None) -> tuple[AgentResult, str | None]:
    """The agent's result as scored, and the fault of its own doing if any (``None``): a stopped disk
    watch, a workspace root swapped, a folder over its caps, a cost over the cap. A fault makes it
    ``agent_error`` whatever it reported (its cost believed up to the cap; ``moved``: :func:`_moved`'s fault); a run
    folder that filled up is ``agent_error`` when the agent filled it, else ``infra``."""
    fault = moved or watch.stopped or swapped_root(folders) \
        or getattr(check_folders(folders, limits, baseline), "reason", None) or over_cost_cap(ar.cost_usd)
    if fault is not None:  # the agent's own doing, whatever it reported: scored, never graded
        capped = None if ar.cost_usd is None else min(ar.cost_usd, MAX_ATTEMPT_USD)
        return replace(ar, outcome="agent_error", error=fault, cost_usd=capped), fault
    if ar.outcome is None and _out_of_space(art):
        filled = filled_by(folders, baseline, free_before, free_bytes(art))  # the agent's doing: scored
        return (AgentResult(outcome="agent_error", exit_code=ar.exit_code, error=filled) if filled else
                AgentResult(outcome="infra", exit_code=ar.exit_code, established=True,
                            error=f"no space left in {art}: the agent's output (and its usage line) may be cut "
                                  "short")), None
    return ar, None


@dataclass
class _Verdict:
    """How an attempt ends after its agent: ``outcome`` and ``error``, ``test_s`` and ``wait_s`` (seconds:
    its test runs, the wait for the grading phase), ``touched``/``suspicious``/``why``/``canary`` (§8),
    ``claimed`` (an unscored outcome at the agent's word) and ``test_sandbox`` (the backend of its test runs,
    ``None`` when no hidden test ran)."""

    outcome: str
    error: str | None
    test_s: float = 0.0
    wait_s: float = 0.0
    touched: bool = False
    suspicious: bool = False
    why: str | None = None
    canary: str | None = None
    claimed: bool = False
    test_sandbox: str | None = None
    twin_hits: int = 0


def _verdict(spec: AttemptSpec, cache: SnapshotCache, ar: AgentResult, fault: str | None, workspace: Path,
             test_backend: SandboxBackend, *, modelless: bool) -> _Verdict:
    """Grade the attempt (or not: a fault, an outcome the agent ended with), against a verified pristine
    copy. Never raises: a grading that fails is ``infra`` (its traceback in ``grading.err``)."""
    art = spec.artifacts
    graded = False
    try:
        # the agent may have written into the pristine copy: grade against a verified one
        pristine, tampered = cache.checked_pristine(spec.task)
        if fault is not None:  # nothing of the tree is read (a pipe would block, a huge file fill the run)
            v = _Verdict("agent_error", fault)
            nofollow.write_bytes(art, "diff.patch", b"")  # replaces a link the agent left there (link46)
        elif ar.outcome is not None:
            # the agent's word, §8; the change is kept for auditing, though not graded
            v = _Verdict(ar.outcome, ar.error, claimed=ar.outcome in UNSCORED_OUTCOMES and not ar.established)
            changes = tree_changes(pristine, workspace)
            nofollow.write_bytes(art, "diff.patch", capped_diff(pristine, workspace, list(changes), changes,
                                                                spec.limits.output_bytes).text.encode("utf-8"))
        else:
            test_env = grading_env(spec, cache)
            seed = task_seed(spec.canary_key or cache.key(), spec.task)
            graded = True  # from here on a spoiled snapshot is the graded code's, whatever grading then raised
            with contextlib.ExitStack() as grading_phase:  # oracle, noop, sim:P: the reference fix, not untrusted code
                waits: list[float] = []  # an empty patch runs no test: it takes no turn (atk16 F4)
                memory_wait = waited_s()  # and the waits for memory of its test runs (sandbox/memory_budget.py)
                g = grade(spec.task, workspace=workspace, pristine=pristine, out_dir=art, test_cmd=spec.test_cmd,
                          run_timeout_s=spec.run_timeout_s, test_timeout_s=spec.test_timeout_s,
                          memory_mb=spec.test_memory_mb, write_mb=spec.test_write_mb, test_globs=spec.test_globs,
                          sandbox=test_backend, env=test_env, flaky=frozenset(spec.flaky_p2p),
                          network=spec.network, canary_seed=seed, reference=spec.grading_reference,
                          parent_checks=HomefieldDir(cache.repo).parent_checks,
                          diff_limit=spec.limits.output_bytes,
                          before_tests=lambda: waits.append(_enter_phase(grading_phase, GRADING, not modelless)))
            if g.outcome not in ("agent_error", "forged") and cache.changed(spec.task):
                # hatk34: the graded code changed the snapshot every run of the parent is built from (--sandbox
                # none): what grading read of it after that (a control run's verdict, infra) is not the parent's;
                # the digest is this process's own. Told without rebuilding it (hatk39: a rebuild here raised
                # where the graded code had removed the cache's folder, infra); the next attempt rebuilds it
                g.outcome, g.error = "agent_error", f"hidden tests: {SPOILED_PRISTINE}"
                _rebuild(cache, spec.task)
            if spec.graded is not None:
                spec.graded(g)
            waits.append(waited_s() - memory_wait)
            v = _Verdict(g.outcome, g.error or ar.error, g.test_s, sum(waits), g.touched_tests, g.suspicious,
                         g.suspicious_reason, g.canary, test_sandbox=g.test_sandbox, twin_hits=g.twin_hits)
        if tampered:
            note = "the pristine snapshot changed during the attempt (rebuilt for grading)"
            v.suspicious = True
            v.error = f"{v.error}; {note}" if v.error else note
            v.why = f"{v.why}; pristine snapshot changed" if v.why else "pristine snapshot changed"
        return v
    except EnvBuildError as exc:
        return _Verdict("infra", f"environment: {exc}")
    except Exception as exc:
        try:  # never through a link the hidden tests may have left in the attempt's folder (issue 30)
            nofollow.write_bytes(art, "grading.err", traceback.format_exc().encode())
        except OSError:
            pass
        if graded and cache.changed(spec.task):  # hatk39: it removed the snapshot the control run is copied from
            _rebuild(cache, spec.task)
            return _Verdict("agent_error", f"hidden tests: {SPOILED_PRISTINE}")
        if graded and isinstance(exc, nofollow.LinkInTheWay):
            # link52: a link in the grading tree, on the way to a file grading writes (a run's twin file): the change's
            # or its tests' doing (--sandbox none: a test process swapped a folder of hidden tests), never infra
            return _Verdict("agent_error", f"hidden tests: {_one_line(exc)}")
        return _Verdict("infra", f"grading failed: {_one_line(exc)}")  # homefield's own failure, not the agent's word


def _rebuild(cache: SnapshotCache, task: Task) -> None:
    """Rebuild the spoiled pristine snapshot of ``task`` for the attempts after this one, now; a rebuild that
    fails is left to the next attempt's own check (its ``infra``), never this verdict's (hatk39)."""
    with contextlib.suppress(Exception):
        cache.checked_pristine(task)


def _agent_memory_mb(spec: AttemptSpec, caps: Capabilities, backend: SandboxBackend) -> float:
    """MiB of the machine's memory budget an attempt's agent reserves (sandbox/memory_budget.py): its sandbox's
    memory cgroup (``--max-agent-memory-mb``) and one per service instance of its own (``max_test_memory_mb``),
    where its sandbox gets memory cgroups and it runs as a process; 0 otherwise (an agent of homefield's own
    process, or no memory cgroup: nothing to count)."""
    if not (caps.process or caps.runs_commands(spec.allow_shell)) or not memory_capped(backend.name):
        return 0.0
    network = spec.network
    services = len(network.services) if network is not None and caps.runs_commands(spec.allow_shell) else 0
    return agent_memory_bytes() / (1 << 20) + services * (network.memory_mb or 0 if network is not None else 0)


def _enter_phase(stack: contextlib.ExitStack, kind: Kind, needed: bool) -> float:
    """Hold a phase of ``kind`` of the machine's phase lock (docs/contracts.md §9: no untrusted agent
    works while an untrusted attempt is graded) in ``stack`` when ``needed``; returns the seconds
    waited for it (0 when not needed). Raises :class:`OSError` (the lock's folder or files)."""
    if not needed:
        return 0.0
    return float(stack.enter_context(PhaseLock().hold(kind)).wait_s)


def _python_of(test_cmd: str) -> str | None:
    """The ``python`` a test command runs, or ``None`` (see :func:`pytest_homefield.mine.pipeline.python_of`)."""
    try:
        first = shlex.split(test_cmd)[0]
    except (ValueError, IndexError):
        return None
    return first if "python" in Path(first).name else None


#: Free bytes below which an attempt's artifacts folder counts as full (the agent's writes failed).
_FULL_DISK_BYTES = 64 * 1024


def _out_of_space(art: Path) -> bool:
    """Whether the file system of ``art`` is (nearly) full after the agent ran: its ``agent.out``
    may then have lost the usage line, so the attempt is ``infra`` (redone by ``--resume``), never
    scored without its cost, unless the agent's own folders filled it
    (:func:`~pytest_homefield.sandbox.limits.filled_by`: ``agent_error``, scored; attacker8's F2
    made 70,000 empty folders to turn the attempts it failed into ``infra``). An unreadable file
    system counts as not full."""
    try:
        return shutil.disk_usage(art).free < _FULL_DISK_BYTES
    except OSError:
        return False


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def result_key(record: Mapping[str, Any]) -> tuple[str, str, int, str]:
    """(task_id, agent, attempt, variant) of a result record; variant defaults to ``base``."""
    return (record.get("task_id", ""), record.get("agent", ""), int(record.get("attempt", 0)),
            record.get("variant", "base"))


def latest_results(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str, int, str], dict[str, Any]]:
    """Result records keyed by :func:`result_key`; the last line wins."""
    out: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for r in records:
        out[result_key(r)] = r
    return out
