"""One attempt of one agent on one task, without pytest: snapshot, agent, grading, result record.

:class:`SnapshotCache` extracts each task's parent tree once per process (a one-commit repository,
then ``setup_cmd``) and keeps it as the pristine copy outside any workspace; every attempt works in
its own copy (docs/contracts.md §7, §9). The pristine copy lives beside the workspaces, where an agent with a
shell can write to it, so its content digest is checked before every copy and before grading, and a
changed one is rebuilt. :func:`run_attempt` returns the :class:`Result`; it never raises for agent or
grading failures (those become outcomes).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import shlex
import shutil
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import MAX_ATTEMPT_USD, Agent, AgentContext, AgentResult, over_cost_cap, render_prompt
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.agents.reference import sim_seed
from pytest_homefield.capabilities import capabilities_of, provider_hosts_of
from pytest_homefield.envs.builder import EnvBuildError
from pytest_homefield.envs.stage import commit_env
from pytest_homefield.errors import SnapshotError
from pytest_homefield.layout import attempt_dir
from pytest_homefield.records import UNSCORED_OUTCOMES, Result, Task
from pytest_homefield.run.canary_key import canary_key, task_seed
from pytest_homefield.run.grading import Grade, grade, render_diff, tree_changes
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.backends import (
    AgentBox,
    SandboxBackend,
    SandboxContext,
    Sandboxes,
    SandboxHook,
    backend_named,
)
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, package_paths, python_paths
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
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.phases import AGENT, GRADING, Kind, PhaseLock
from pytest_homefield.sandbox.proxy import FilteringProxy
from pytest_homefield.sandbox.relay import HostRelay
from pytest_homefield.sandbox.services import Lease, ServiceError, TestNetwork, agent_lease
from pytest_homefield.sandbox.snapshot import copy_tree, make_snapshot, run_setup
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp

__all__ = ["SnapshotCache", "AttemptSpec", "SandboxContext", "AgentSandbox", "grading_env", "run_attempt",
           "latest_results", "result_key", "agent_wrapper", "agent_sandbox", "PROMPT_FILE"]

#: The file of an attempt's artifacts folder holding the prompt exactly as the agent got it.
PROMPT_FILE = "prompt.txt"


def _now() -> str:
    """Now, UTC, ISO 8601 to the millisecond (a rate limit is told apart from a session start in the same second)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class SnapshotCache:
    """Pristine parent snapshots per task, built lazily in a private temp folder of this process.

    ``setup`` maps a task to its setup command (or ``None``). Folders have random names: no task id or
    sha appears in any path an agent can see.
    """

    repo: Path
    setup: Callable[[Task], str | None] = lambda task: task.setup_cmd
    run_timeout_s: float = 600.0
    root: Path = field(default_factory=hf_mkdtemp)
    _built: dict[str, Path] = field(default_factory=dict)
    _digests: dict[str, str] = field(default_factory=dict)

    def pristine(self, task: Task) -> Path:
        """The pristine snapshot of ``task.parent`` (after setup). Raises :class:`SnapshotError`."""
        if task.id in self._built:
            return self._built[task.id]
        dest = Path(tempfile.mkdtemp(dir=self.root))
        try:
            snap = make_snapshot(self.repo, task.parent, dest=dest / "s", init_git=True)
        except Exception as exc:  # git failures: missing objects after a history rewrite, …
            raise SnapshotError(f"cannot extract the parent tree: {exc}") from exc
        cmd = self.setup(task)
        if cmd:
            log = dest / "setup.log"
            proc = run_setup(snap, cmd, env=_setup_env(), timeout_s=self.run_timeout_s, log_path=log)
            if proc.timed_out or proc.exit_code != 0:
                try:
                    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
                except OSError:
                    lines = []
                last = f": {lines[-1].strip()[:200]}" if lines else ""
                raise SnapshotError(f"setup_cmd failed (exit {proc.exit_code}, timed out: {proc.timed_out}){last}")
        self._built[task.id] = snap
        self._digests[task.id] = tree_digest(snap)
        return snap

    def checked_pristine(self, task: Task) -> tuple[Path, bool]:
        """``(pristine snapshot, changed)``: the snapshot verified against the digest taken when it
        was built; one that changed since (an agent wrote outside its workspace, or swapped the
        snapshot folder itself for a link) is rebuilt, and
        ``changed`` is true. Raises :class:`SnapshotError` when the rebuild fails."""
        snap = self.pristine(task)
        try:
            same = tree_digest(snap) == self._digests[task.id]
        except OSError:  # the snapshot folder itself swapped for a link (or removed): never followed
            same = False
        if same:
            return snap, False
        del self._built[task.id]
        shutil.rmtree(snap.parent, ignore_errors=True)
        return self.pristine(task), True

    def workspace(self, task: Task) -> Path:
        """A fresh copy of the (verified) pristine snapshot for one attempt (random path)."""
        snap, _ = self.checked_pristine(task)
        return copy_tree(snap, Path(tempfile.mkdtemp(dir=self.root)) / "work")

    def close(self) -> None:
        """Delete every snapshot of this cache."""
        shutil.rmtree(self.root, ignore_errors=True)
        self._built.clear()
        self._digests.clear()


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

    @property
    def artifacts(self) -> Path:
        """``runs/<run_id>/attempts/<task_id>/<agent>/<attempt>/``."""
        return attempt_dir(self.run_dir, self.task.id, self.agent.name, self.attempt)


def agent_wrapper(backend: SandboxBackend, *, workspace: Path, tmpdir: Path, home: Path, network: bool,
                  ro_paths: list[Path], agent: str, used: list[str] | None = None,
                  relay: HostRelay | None = None,
                  proxy: FilteringProxy | None = None,
                  tmpfs_bytes: int | None = None, ports: tuple[int, ...] = ()) -> Callable[[list[str], Any], list[str]]:
    """The ``AgentContext.wrap`` of one attempt: ``backend``'s ``wrap_agent`` with ``workspace``,
    ``tmpdir`` and ``home`` read-write, ``ro_paths`` read-only and the network or not (a hook's argv
    when it returns one, else the configured backend; see :mod:`pytest_homefield.sandbox.backends`).
    The backend actually used is appended to ``used`` (``hook``, ``bwrap``, ``landlock`` or ``none``). With
    ``relay`` (``--sandbox-network loopback:…``; ``network`` is then false) bubblewrap's command runs
    behind the inside half of :mod:`pytest_homefield.sandbox.relay`, started on first use; with
    ``proxy`` too (``--sandbox-network allowlist``) the filtering proxy is relayed in beside it.
    ``tmpfs_bytes``: the size of the sandbox's private ``/tmp`` and ``/dev/shm`` (bubblewrap). ``ports``:
    the host's ``127.0.0.1`` ports a backend that confines TCP by port (Landlock) lets it reach."""
    box = AgentBox(workspace=workspace, tmpdir=tmpdir, home=home, ro_paths=list(ro_paths), network=network,
                   agent=agent, relay=relay, proxy=proxy, tmpfs_bytes=tmpfs_bytes, ports=ports)

    def wrap(argv: list[str], env: Any) -> list[str]:
        wrapped = backend.wrap_agent(argv, dict(env), box)
        if used is not None:
            used.append(wrapped.backend)
        return wrapped.argv

    return wrap


@dataclass
class AgentSandbox:
    """The sandbox of one agent attempt (:func:`agent_sandbox`): ``wrap`` for ``AgentContext.wrap``,
    ``home`` (the fresh ``HOME`` when sandboxed), ``used`` (the backends ``wrap`` applied), the
    loopback ``relay`` and the allowlist's filtering ``proxy`` if any. :meth:`close` stops both."""

    backend: SandboxBackend
    home: Path
    wrap: Callable[[list[str], Any], list[str]]
    used: list[str]
    relay: HostRelay | None = None
    proxy: FilteringProxy | None = None

    @property
    def recorded(self) -> str:
        """The result's ``sandbox`` field: the last backend applied, else ``none``."""
        return self.used[-1] if self.used else "none"

    def close(self) -> None:
        """Stop the filtering proxy and the loopback relay (those that were started)."""
        if self.proxy is not None:
            self.proxy.close()
        if self.relay is not None:
            self.relay.close()


def agent_sandbox(agent: Any, backend: str | SandboxBackend, *, workspace: Path, box: Path, env: dict[str, str],
                  sandbox: SandboxChoice, pythons: Iterable[str | None] = (),
                  hook: SandboxHook | None = None, proxy_log: Path | None = None,
                  tmpfs_bytes: int | None = None, services: Lease | None = None) -> AgentSandbox:
    """Prepare the sandbox of one attempt of ``agent`` (``backend``: from :meth:`Sandboxes.for_agent`,
    or a name from :meth:`SandboxChoice.for_agent`, then under ``hook`` when one is given) whose
    workspace is ``workspace``, in the attempt's private folder ``box`` (``box/tmp`` is its
    ``TMPDIR``; ``box/home`` becomes its ``HOME``, ``box/net`` holds the relay's sockets). When the
    backend confines it (bubblewrap, Landlock or a hook), the agent gets a fresh ``HOME``: the agent's
    ``sandbox_home(home, env)`` copies its client's configuration in from the user's (still
    ``env["HOME"]`` when it is called) and may re-point variables; then ``env["HOME"]`` is the fresh
    one (``env`` is changed in place). Read-only: the interpreters (this one, ``python`` and each of
    ``pythons``), this package, and the agent's ``sandbox_paths(env)`` (its client's install).
    Network: ``sandbox.network`` (:mod:`pytest_homefield.sandbox.modes`); under ``allowlist`` (the
    default) with a backend that relays (bubblewrap) or confines TCP by port (Landlock), a
    :class:`FilteringProxy` allowing the agent's ``provider_hosts(env)`` and ``sandbox.allow_hosts``,
    logging to ``proxy_log`` (the attempt's ``proxy.log``), with those of its hosts that are this
    machine's loopback ports relayed directly (Landlock: allowed by port).
    ``tmpfs_bytes``: the size of bubblewrap's private ``/tmp`` and ``/dev/shm``.
    ``services``: the agent's own service instances (:func:`~pytest_homefield.sandbox.services.agent_lease`),
    whose ports are relayed too when the agent has no shared network.
    Raises :class:`BwrapUnavailable` for the name ``bwrap`` where bubblewrap does not work."""
    chosen = backend_named(backend, hook)
    tmpdir, home = box / "tmp", box / "home"
    if chosen.confines:
        home.mkdir(parents=True, exist_ok=True)
        fill_home = getattr(agent, "sandbox_home", None)
        if callable(fill_home):
            fill_home(home, env)
        env["HOME"] = str(home)
    extra = getattr(agent, "sandbox_paths", None)
    ro_paths = [*python_paths([sys.executable, "python", *pythons]), *package_paths(),
                *(extra(env) if callable(extra) else [])]
    own = services if services is not None and not sandbox.shared_network else Lease()
    ports: tuple[int, ...] = tuple(sandbox.loopback_ports)
    proxy: FilteringProxy | None = None
    if sandbox.allowlist and (chosen.relays or chosen.by_port):
        allowed = sandbox.agent_allowlist(provider_hosts_of(agent, env))
        ports = tuple(allowed.loopback_ports())
        proxy = FilteringProxy(allowed, proxy_log)
    ports = tuple(dict.fromkeys([*ports, *own.ports]))
    relay = (HostRelay(ports, box / "net", fallback=lambda: hf_mkdtemp(dir="/tmp"),  # owner-named: swept
                       targets=own.targets)
             if (ports or proxy is not None) and chosen.relays else None)
    used: list[str] = []
    wrap = agent_wrapper(chosen, workspace=workspace, tmpdir=tmpdir, home=home, network=sandbox.shared_network,
                         ro_paths=ro_paths, agent=agent.name, used=used, relay=relay, proxy=proxy,
                         tmpfs_bytes=tmpfs_bytes, ports=ports)
    return AgentSandbox(backend=chosen, home=home, wrap=wrap, used=used, relay=relay, proxy=proxy)


def _agent_env(spec: AttemptSpec, prompt: str, tmpdir: Path) -> dict[str, str]:
    passthrough = list(getattr(spec.agent, "env_passthrough", ()) or ()) + spec.env_passthrough
    return build_agent_env(prompt=prompt, attempt=spec.attempt, tmpdir=tmpdir, passthrough=passthrough)


def grading_env(spec: AttemptSpec, repo: Path) -> dict[str, str] | None:
    """The process environment for the hidden tests: the commit's uv environment when the task was
    mined with one (its ``env`` extras and groups) or ``spec.env_kind`` is ``uv``; ``None`` (the
    current one) otherwise. The agent's own changes to declaration files are never installed.
    Raises :class:`EnvBuildError`."""
    env = spec.task.env
    if env is None and spec.env_kind != "uv":
        return None
    extras = list(env.get("extras") or []) if env else spec.env_extras
    groups = list(env.get("groups") or []) if env else spec.env_groups
    as_of: bool | str = str(env.get("as_of") or "") if env else spec.env_as_of
    return commit_env(repo, spec.task.commit, extras=extras, groups=groups, as_of=as_of).apply(_setup_env())


def run_attempt(spec: AttemptSpec, cache: SnapshotCache) -> Result:
    """Run one attempt and grade it. Never raises for agent, snapshot or grading failures: those are
    recorded as outcomes (``infra`` for harness problems). Writes ``prompt.txt`` (the prompt exactly as
    sent), ``agent.out``/``agent.err`` (by the agent), ``diff.patch``, ``tests.log`` and
    ``outcomes.jsonl`` under ``spec.artifacts``."""
    art = spec.artifacts
    if art.exists():  # a retried unscored attempt: start clean
        shutil.rmtree(art, ignore_errors=True)
    art.mkdir(parents=True, exist_ok=True)
    started_at = _now()
    base: dict[str, Any] = dict(run_id=spec.run_id, task_id=spec.task.id, agent=spec.agent.name,
                                attempt=spec.attempt, variant=spec.variant, started_at=started_at)
    try:
        agent_version = spec.agent.version()
    except Exception:
        agent_version = None
    base["agent_version"] = agent_version
    try:
        workspace = cache.workspace(spec.task)
        pristine = cache.pristine(spec.task)
    except Exception as exc:
        return Result(**base, outcome="infra", error=_one_line(exc), finished_at=_now())
    caps = capabilities_of(spec.agent)
    prompt = render_prompt(spec.task.prompt, allow_shell=spec.allow_shell, shell_known=caps.shell_known)
    (art / PROMPT_FILE).write_text(prompt, encoding="utf-8")  # exactly as sent, for `homefield view`
    box = Path(tempfile.mkdtemp(dir=cache.root))
    tmpdir = box / "tmp"
    sandboxes = spec.sandboxes or Sandboxes.choose(spec.sandbox, spec.sandbox_hook)
    try:  # with a hook these never raise: the hook over no sandbox
        backend = sandboxes.for_agent(spec.agent, spec.allow_shell)
        test_backend = sandboxes.for_tests()
    except BwrapUnavailable as exc:
        shutil.rmtree(workspace.parent, ignore_errors=True)
        shutil.rmtree(box, ignore_errors=True)
        return Result(**base, outcome="infra", error=_one_line(exc), finished_at=_now())
    env = _agent_env(spec, prompt, tmpdir)
    own_services = contextlib.ExitStack()  # an agent that runs commands gets service instances of its own
    try:
        lease = own_services.enter_context(agent_lease(spec.network, caps.runs_commands(spec.allow_shell),
                                                       relays=backend.relays and not spec.sandbox.shared_network))
        env.update(lease.env)
        sb = agent_sandbox(spec.agent, backend, workspace=workspace, box=box, env=env, sandbox=spec.sandbox,
                           pythons=[_python_of(spec.test_cmd or spec.task.test_cmd)], proxy_log=art / "proxy.log",
                           tmpfs_bytes=spec.limits.total_bytes, services=lease)
    except (OSError, ServiceError) as exc:  # the client's configuration could not be copied, a service failed
        own_services.close()
        shutil.rmtree(workspace.parent, ignore_errors=True)
        shutil.rmtree(box, ignore_errors=True)
        what = "the agent's services" if isinstance(exc, ServiceError) else "the sandbox"
        return Result(**base, outcome="infra", error=f"cannot prepare {what}: {_one_line(exc)}",
                      finished_at=_now())
    # what the agent may write: its workspace, TMPDIR and (when confined) its fresh HOME
    folders = AgentFolders(workspace, tmpdir=tmpdir, home=sb.home if backend.confines else None)
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
    agent_phase = contextlib.ExitStack()  # only an agent that runs commands can listen (§9)
    try:
        waited = _enter_phase(agent_phase, AGENT, caps.runs_commands(spec.allow_shell) and not caps.modelless)
    except OSError as exc:
        sb.close()
        own_services.close()
        shutil.rmtree(workspace.parent, ignore_errors=True)
        shutil.rmtree(box, ignore_errors=True)
        return Result(**base, outcome="infra", error=f"phase lock: {_one_line(exc)}", finished_at=_now())
    t0 = time.monotonic()  # the wait is neither the agent's time nor its timeout's
    try:
        ar = spec.agent.run(ctx)
    except Exception as exc:
        (art / "agent.err").write_text(traceback.format_exc())
        ar = AgentResult(outcome="infra", error=f"agent raised: {_one_line(exc)}")
    finally:
        sb.close()
        own_services.close()
        agent_phase.close()  # after its reapers reaped every process of it (sandbox/procs.py)
    wall = time.monotonic() - t0
    fault = watch.stopped or swapped_root(folders) \
        or getattr(check_folders(folders, spec.limits, baseline), "reason", None) or over_cost_cap(ar.cost_usd)
    if fault is not None:  # the agent's own doing, whatever it reported: scored, never graded
        capped = None if ar.cost_usd is None else min(ar.cost_usd, MAX_ATTEMPT_USD)  # a cost is believed up to the cap
        ar = replace(ar, outcome="agent_error", error=fault, cost_usd=capped)
    elif ar.outcome is None and _out_of_space(art):
        filled = filled_by(folders, baseline, free_before, free_bytes(art))  # the agent's doing: scored
        ar = AgentResult(outcome="agent_error", exit_code=ar.exit_code, error=filled) if filled else \
            AgentResult(outcome="infra", exit_code=ar.exit_code, established=True,
                        error=f"no space left in {art}: the agent's output (and its usage line) may be cut short")
    base["sandbox"] = sb.recorded
    for name in ("agent.out", "agent.err"):  # every attempt folder has both, also for in-process agents
        path = art / name
        if not path.exists():
            path.write_text(f"({spec.agent.name} runs inside homefield and wrote nothing to {name[6:]})\n")
    fields: dict[str, Any] = dict(
        exit_code=ar.exit_code, cost_usd=ar.cost_usd, cost_partial=ar.cost_partial, input_tokens=ar.input_tokens,
        output_tokens=ar.output_tokens, cache_read_tokens=ar.cache_read_tokens,
        cache_write_tokens=ar.cache_write_tokens, turns=ar.turns, model=ar.model, wall_s=round(wall, 3),
    )
    canary: str | None = None
    claimed = False
    try:
        # the agent may have written into the pristine copy: grade against a verified one
        pristine, tampered = cache.checked_pristine(spec.task)
        why: str | None = None
        if fault is not None:  # nothing of the tree is read (a pipe would block, a huge file fill the run)
            outcome, error, test_s, touched, suspicious = "agent_error", fault, 0.0, False, False
            (art / "diff.patch").write_text("")
        elif ar.outcome is not None:
            outcome, error, test_s, touched, suspicious = ar.outcome, ar.error, 0.0, False, False
            claimed = outcome in UNSCORED_OUTCOMES and not ar.established  # the agent's word, §8
            # keep the change for auditing, even though it is not graded
            changes = tree_changes(pristine, workspace)
            (art / "diff.patch").write_text(render_diff(pristine, workspace, list(changes), changes))
        else:
            test_env = grading_env(spec, cache.repo)
            seed = task_seed(spec.canary_key or canary_key(cache.repo), spec.task)
            with contextlib.ExitStack() as grading_phase:  # oracle, noop, sim:P: the reference fix, not untrusted code
                waits: list[float] = []  # an empty patch runs no test: it takes no turn (atk16 F4)
                g = grade(spec.task, workspace=workspace, pristine=pristine, out_dir=art, test_cmd=spec.test_cmd,
                          run_timeout_s=spec.run_timeout_s, test_timeout_s=spec.test_timeout_s,
                          memory_mb=spec.test_memory_mb, write_mb=spec.test_write_mb, test_globs=spec.test_globs,
                          sandbox=test_backend, env=test_env, flaky=frozenset(spec.flaky_p2p),
                          network=spec.network, canary_seed=seed,
                          before_tests=lambda: waits.append(_enter_phase(grading_phase, GRADING, not caps.modelless)))
                waited += sum(waits)
            if spec.graded is not None:
                spec.graded(g)
            base["test_sandbox"] = g.test_sandbox  # None when no hidden test ran (an empty patch)
            outcome, error, test_s, touched, suspicious = g.outcome, g.error or ar.error, g.test_s, \
                g.touched_tests, g.suspicious
            why, canary = g.suspicious_reason, g.canary
        if tampered:
            suspicious = True
            note = "the pristine snapshot changed during the attempt (rebuilt for grading)"
            error = f"{error}; {note}" if error else note
            why = f"{why}; pristine snapshot changed" if why else "pristine snapshot changed"
    except EnvBuildError as exc:
        outcome, error, test_s, touched, suspicious = "infra", f"environment: {exc}", 0.0, False, False
    except Exception as exc:
        try:  # never through a link the hidden tests may have left in the attempt's folder (issue 30)
            nofollow.write_bytes(art, "grading.err", traceback.format_exc().encode())
        except OSError:
            pass
        outcome, error, test_s, touched, suspicious = "infra", f"grading failed: {_one_line(exc)}", 0.0, False, False
        claimed = False  # homefield's own failure, not the agent's word
    finally:
        shutil.rmtree(workspace.parent, ignore_errors=True)
        shutil.rmtree(box, ignore_errors=True)
    return Result(**base, **fields, outcome=outcome, error=error, test_s=round(test_s, 3), wait_s=round(waited, 3),
                  touched_tests=touched,
                  suspicious=suspicious, suspicious_reason=why if suspicious else None, finished_at=_now(),
                  canary=canary, claimed=claimed)


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
