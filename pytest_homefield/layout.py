"""The ``.homefield/`` folder: every path in it, its ids, and ``meta.json`` (docs/contracts.md §4).

Like pytest's ``cacheprovider.Cache`` for ``.pytest_cache``, this module is the one place that knows
where things live; everything else asks :class:`HomefieldDir` or the run-folder helpers below::

    <root>/.homefield/
      tasks.jsonl                      HomefieldDir.tasks
      flaky.jsonl                      HomefieldDir.flaky
      canary.key                       HomefieldDir.canary_key
      parent-checks.jsonl              HomefieldDir.parent_checks
      envs/<fingerprint>.json          HomefieldDir.env_file(fp)
      mine/<mine_id>/                  HomefieldDir.mine_dir(id)
        candidates.jsonl  scan.jsonl  results.jsonl  reused.jsonl
      mine-runs/<verify_key>.json      HomefieldDir.mine_runs (a stopped candidate's finished runs)
      runs/<run_id>/                   HomefieldDir.run_dir(id)
        meta.json  results.jsonl  report.{md,json,html}  similarity.json
        attempts/<task_id>/<agent>/<attempt>/
      probe/  ablate/                  HomefieldDir.probe, HomefieldDir.ablate

Ids (:func:`new_id`) are UTC ``YYYYmmdd-HHMMSS`` plus 4 random hex digits; ``homefield verify`` runs
are named ``verify-<id>`` and are not agent runs (:meth:`HomefieldDir.newest_run` skips them).
No pytest here.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from pytest_homefield.errors import RecordError, RunError
from pytest_homefield.records import check_meta, json_type
from pytest_homefield.spelling import spell
from pytest_homefield.store import open_own, write_atomic

__all__ = [
    "services_dir",
    "DIRNAME",
    "VERIFY_PREFIX",
    "HomefieldDir",
    "new_id",
    "read_json_file",
    "new_verify_id",
    "newest_run",
    "meta_path",
    "results_path",
    "attempt_dir",
    "candidates_path",
    "scan_path",
    "reused_path",
    "similarity_path",
    "read_meta",
    "write_meta",
    "partial_mine_note",
    "partial_mine",
    "partial_mine_line",
    "max_tasks_note",
]

DIRNAME = ".homefield"
VERIFY_PREFIX = "verify-"
META_NAME = "meta.json"
RESULTS_NAME = "results.jsonl"


def new_id(now: _dt.datetime | None = None) -> str:
    """A run or mine id: UTC ``YYYYmmdd-HHMMSS`` (of ``now``, default the current time) plus ``-`` and
    a 4-hex random suffix, e.g. ``20261201-145501-3f9a``."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    import secrets  # hashlib, hmac and random: not for the many processes that never name a run

    return now.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def new_verify_id() -> str:
    """The id of a ``homefield verify`` run: ``verify-`` + :func:`new_id`."""
    return VERIFY_PREFIX + new_id()


# -- files inside one run or mine folder ------------------------------------------------------------


def meta_path(run_dir: Path) -> Path:
    """``<run_dir>/meta.json``."""
    return run_dir / META_NAME


#: A run folder's log of attempt tries (docs/contracts.md §4): a ``start`` line when the controller sees an
#: attempt item start, an ``end`` line when its first report arrives; a start without an end is a try an
#: interrupted session cut short, which left no result line and ``--resume`` made again.
TRIES_NAME = "tries.jsonl"


def tries_path(run_dir: Path) -> Path:
    """``<run_dir>/tries.jsonl`` (:data:`TRIES_NAME`)."""
    return run_dir / TRIES_NAME


def results_path(folder: Path) -> Path:
    """``<folder>/results.jsonl`` of a run folder (one line per attempt) or a mine folder (one line
    per verified candidate)."""
    return folder / RESULTS_NAME


def attempt_dir(run_dir: Path, task_id: str, agent: str, attempt: int) -> Path:
    """``<run_dir>/attempts/<task_id>/<agent>/<attempt>/``: the artifacts of one attempt."""
    return run_dir / "attempts" / task_id / agent / str(attempt)


def services_dir(folder: Path) -> Path:
    """``<folder>/services/``: the logs of the ``services:`` instances of a mine or run folder, written by
    the process that runs each instance (an xdist worker: in its own ``.homefield/``)."""
    return folder / "services"


def candidates_path(mine_dir: Path) -> Path:
    """``<mine_dir>/candidates.jsonl``: the frozen candidate commits of one mining session."""
    return mine_dir / "candidates.jsonl"


def scan_path(mine_dir: Path) -> Path:
    """``<mine_dir>/scan.jsonl``: the commits the scan rejected, with their reason."""
    return mine_dir / "scan.jsonl"


def reused_path(mine_dir: Path) -> Path:
    """``<mine_dir>/reused.jsonl``: the earlier verification records this mining session reuses
    (frozen with the candidates; docs/contracts.md §7)."""
    return mine_dir / "reused.jsonl"


def similarity_path(run_dir: Path) -> Path:
    """``<run_dir>/similarity.json``: each attempt's diff similarity to the gold patch, computed once
    by the report and kept (docs/contracts.md §4)."""
    return run_dir / "similarity.json"


def mde_path(run_dir: Path) -> Path:
    """``<run_dir>/mde.json``: the simulated minimum detectable effects the report computed, kept
    (docs/contracts.md §4; :class:`pytest_homefield.report.power.KeptGaps`)."""
    return run_dir / "mde.json"


#: Bytes of a ``.homefield/`` JSON file :func:`read_json_file` reads at most.
JSON_FILE_MAX_BYTES = 64 << 20


def read_own_file(path: Path, limit: int = JSON_FILE_MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, a file homefield writes in ``.homefield/`` (by
    :func:`~pytest_homefield.store.write_atomic`, never a link): opened without following a link as its last
    component (the folders above may be links: a ``.homefield`` linked elsewhere), never blocking on a fifo or a
    device, which are refused, and read to ``limit`` bytes at most (hatk41: under ``--sandbox none`` graded code
    runs as the user and can swap a run's ``meta.json`` for a fifo, a link or a huge file), by
    :func:`~pytest_homefield.store.open_own`, the one opener of homefield's own files. Raises
    ``FileNotFoundError``, :class:`~pytest_homefield.store.NotOwnFile` (a link, not a regular file), ``OSError``
    (``EFBIG``: over ``limit``; a read that would wait: ``BlockingIOError``), each with a ``strerror`` saying
    which."""
    fd = open_own(path, os.O_RDONLY, blocking=False)
    try:
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(errno.EFBIG, f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_json_file(path: Path, *, invalid_hint: str = "") -> Any:
    """The JSON value in ``path`` (a ``.homefield/`` file such as ``meta.json`` or an ablation's
    ``plan.json``); ``None`` when the file is absent. Read with :func:`read_own_file`: a link, a fifo, a device or
    a file over :data:`JSON_FILE_MAX_BYTES` cannot be read. Raises :class:`RunError`, one line naming the
    file: ``"<path>: cannot read: …"`` or ``"<path>: not valid JSON (…)"`` followed by ``invalid_hint``."""
    try:
        text = read_own_file(path, JSON_FILE_MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RunError(f"{path}: cannot read: {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise RunError(f"{path}: not valid JSON ({getattr(exc, 'msg', exc)}){invalid_hint}") from None


def read_meta(run_dir: Path, fields: dict[str, str] | None = None, *, complete: bool = False) -> dict[str, Any]:
    """``meta.json`` of a run as a dict; ``{}`` when the file is absent.

    Raises :class:`RunError` (one line naming the file and field) when it cannot be read, is not
    valid JSON, is not a JSON object, or fails :func:`pytest_homefield.records.check_meta`: always
    ``schema_version`` 1 and ``agents`` (when present) a list of ``{name, spec}``; ``fields``
    (``{name: type}``) required of their types, e.g. ``{"created_at": "str"}`` to pick the newest run;
    ``complete=True`` requires everything a resume needs (run id, created_at, attempts, tasks
    digest and ids, agents)."""
    path = meta_path(run_dir)
    meta = read_json_file(path, invalid_hint="; the run's results are kept in results.jsonl beside it")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise RunError(f"{path}: expected a JSON object, got {json_type(meta)}")
    try:
        check_meta(meta, None if complete else (fields or {}))
    except RecordError as exc:
        raise RunError(f"{path}: {exc}") from None
    return meta


def write_meta(run_dir: Path, meta: dict[str, Any]) -> None:
    """Write ``meta.json`` atomically (the controller only), indented by 2, UTF-8 kept readable."""
    write_atomic(meta_path(run_dir), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")


def newest_run(runs_root: Path) -> str | None:
    """The run in ``runs_root`` whose ``meta.json`` has the newest ``created_at`` (never the
    lexicographically last name, so named runs do not shadow newer ones); ``None`` when there is
    none. ``homefield verify`` runs (``verify-…``) are skipped: they check the environment, they are
    not agent runs. Raises :class:`RunError` for a ``meta.json`` without a valid ``created_at``."""
    best: tuple[str, str] | None = None
    for d in runs_root.iterdir() if runs_root.is_dir() else []:
        if d.name.startswith(VERIFY_PREFIX):
            continue
        meta = read_meta(d, fields={"created_at": "str"})  # the one field the choice needs
        if meta:
            key = (str(meta.get("created_at", "")), d.name)
            if best is None or key > best:
                best = key
    return best[1] if best else None


def partial_mine(home: HomefieldDir) -> dict[str, Any] | None:
    """What a run freezes in its ``meta.json`` as ``partial_mine`` (docs/contracts.md §4) when the newest mining
    session of ``home`` (by its ``meta.json`` ``created_at``) stopped before verifying every candidate
    (``stopped`` in its ``meta.json``): ``{"mine": <mine_id>, "why", "detail", "not_verified", "candidates",
    "continue"}`` (those of ``stopped`` it has), and ``"selection"`` (``"-k 'abc123'"``) for a mine whose ``-k`` /
    ``-m`` chose its candidates (its ``meta.json`` ``selection``). A ``-k`` / ``-m`` mine that verified every
    candidate it selected says nothing of the others, so the mine before it decides (nu54: after a mine stopped at
    ``--stop-after-tasks 2`` with 9 of 11 candidates not verified, a ``-k`` mine of one of them hid the note from
    plan and run, the 8 others still never verified). ``None`` otherwise, and when no ``meta.json`` can be read."""
    mines: list[tuple[str, str, dict[str, Any]]] = []
    for d in home.mine_dirs():
        try:
            meta = read_json_file(meta_path(d))
        except (ValueError, OSError):
            continue
        if isinstance(meta, dict):
            mines.append((str(meta.get("created_at", "")), d.name, meta))
    for _, name, meta in sorted(mines, key=lambda m: m[:2], reverse=True):
        stopped, selection = meta.get("stopped"), meta.get("selection")
        chosen = {"selection": selection} if isinstance(selection, str) and selection else {}
        if not isinstance(stopped, dict):
            if chosen:
                continue  # a -k / -m mine done with its selection: the others are as the mine before it left them
            return None
        return {"mine": name, **chosen, **{k: stopped[k] for k in ("why", "detail", "not_verified", "candidates",
                                                                    "continue") if k in stopped}}
    return None


def partial_mine_line(partial: Any) -> str | None:
    """``'Note: the task set is partial: mine M stopped (time budget 8m reached) with 2 of 9 candidates not
    verified; continue with: …'`` for a :func:`partial_mine` record (a run's ``meta.json`` ``partial_mine``); of a
    ``-k`` / ``-m`` mine: ``'… mine M (-k 'abc123') stopped (…) with 1 of the 1 candidate it selected not
    verified; …'`` (nu52: ``1 of 1 candidate not verified`` read as the whole task set's count); ``None`` for
    anything else."""
    if not isinstance(partial, dict) or not isinstance(partial.get("mine"), str):
        return None
    why = str(partial.get("detail") or partial.get("why") or "stopped early")
    again = f"; continue with: {partial['continue']}" if partial.get("continue") and partial.get("why") != \
        "fail_fast" else ""
    noun = f"candidate{'' if partial.get('candidates') == 1 else 's'}"
    selection = partial.get("selection")
    chosen = isinstance(selection, str) and bool(selection)
    who = f"{partial['mine']} ({selection})" if chosen else partial["mine"]
    of = f"the {partial.get('candidates', '?')} {noun} it selected" if chosen else \
        f"{partial.get('candidates', '?')} {noun}"
    return (f"Note: the task set is partial: mine {who} stopped ({why}) with {partial.get('not_verified', '?')} of "
            f"{of} not verified{again}")


def partial_mine_note(home: HomefieldDir) -> str | None:
    """:func:`partial_mine_line` of :func:`partial_mine` of ``home``: one line when the newest mining session
    stopped before verifying every candidate (the task set is partial), else ``None``."""
    return partial_mine_line(partial_mine(home))


def max_tasks_note(cut: Any) -> str | None:
    """One line for a run whose ``meta.json`` ``max_tasks`` (``{"n": N, "of": M}``) says ``--max-tasks N``
    ran the first N of the M tasks in ``tasks.jsonl``: the task set is partial. ``None`` for anything
    else (no cut, or a malformed value)."""
    if not isinstance(cut, dict):
        return None
    n, of = cut.get("n"), cut.get("of")
    if not isinstance(n, int) or not isinstance(of, int) or isinstance(n, bool) or isinstance(of, bool) or n >= of:
        return None
    return (f"Note: the task set is partial: {spell('max-tasks')} {n} ran the first {n} of the {of} tasks in "
            "tasks.jsonl (newest first); the others are in no rate here")


class HomefieldDir:
    """``<root>/.homefield`` and the paths in it. Building one touches nothing on disk; only
    :meth:`ensure` and :meth:`new_mine_dir` create folders."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DIRNAME

    def __repr__(self) -> str:
        return f"HomefieldDir({str(self.root)!r})"

    @property
    def tasks(self) -> Path:
        """``.homefield/tasks.jsonl``."""
        return self.path / "tasks.jsonl"

    @property
    def flaky(self) -> Path:
        """``.homefield/flaky.jsonl``: PASS_TO_PASS ids that failed when grading the oracle, one line
        per task id and test id (docs/contracts.md §7); appended by the controller, never rewritten."""
        return self.path / "flaky.jsonl"

    @property
    def canary_key(self) -> Path:
        """``.homefield/canary.key``: the secret every task's canary seed is drawn from
        (:mod:`pytest_homefield.run.canary_key`)."""
        return self.path / "canary.key"

    @property
    def parent_checks(self) -> Path:
        """``.homefield/parent-checks.jsonl``: which seed derived from a task's canary seed its gradings plant,
        once the untouched parent was run on the plans (:func:`~pytest_homefield.run.twin_grading.parent_checked_seed`),
        what the parent's run of confirmation files and the reference fix's runs of a plan showed (``_parent_gives``,
        ``reference_passes``), and which sites the reference fix passes sealed (``reference_sealed``); appended by any
        process that made one, the last line of a key wins."""
        return self.path / "parent-checks.jsonl"

    @property
    def runs(self) -> Path:
        """``.homefield/runs``: one folder per run id."""
        return self.path / "runs"

    @property
    def mine(self) -> Path:
        """``.homefield/mine``: one folder per mining session."""
        return self.path / "mine"

    @property
    def mine_runs(self) -> Path:
        """``.homefield/mine-runs``: ``<verify_key>.json`` per candidate whose verification was stopped, its
        finished test runs (:mod:`pytest_homefield.mine.run_journal`)."""
        return self.path / "mine-runs"

    @property
    def envs(self) -> Path:
        """``.homefield/envs``: environment descriptions by fingerprint."""
        return self.path / "envs"

    @property
    def probe(self) -> Path:
        """``.homefield/probe``."""
        return self.path / "probe"

    @property
    def ablate(self) -> Path:
        """``.homefield/ablate``."""
        return self.path / "ablate"

    @property
    def export(self) -> Path:
        """``.homefield/export``: tasks written in other harnesses' formats (``homefield export``)."""
        return self.path / "export"

    def run_dir(self, run_id: str) -> Path:
        """``.homefield/runs/<run_id>``."""
        return self.runs / run_id

    def mine_dir(self, mine_id: str) -> Path:
        """``.homefield/mine/<mine_id>``."""
        return self.mine / mine_id

    def probe_file(self, agent: str) -> Path:
        """``.homefield/probe/<agent>.jsonl``: the agent's probe calls and verdict."""
        return self.probe / f"{agent}.jsonl"

    def env_file(self, fingerprint: str) -> Path:
        """``.homefield/envs/<fingerprint>.json``."""
        return self.envs / f"{fingerprint}.json"

    def ensure(self) -> Path:
        """Create ``.homefield`` and list it in the repository's ``.git/info/exclude`` (once; a
        ``.git`` file of a worktree or submodule is followed). Returns :attr:`path`."""
        self.path.mkdir(exist_ok=True)
        git_dir = self.root / ".git"
        if git_dir.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = git_dir.read_text().strip()
            if text.startswith("gitdir:"):
                git_dir = (self.root / text.split(":", 1)[1].strip()).resolve()
        with contextlib.suppress(OSError):
            _exclude(git_dir, f"/{DIRNAME}/")
        return self.path

    def new_mine_dir(self) -> Path:
        """Create (after :meth:`ensure`) and return ``.homefield/mine/<new_id()>``."""
        self.ensure()
        d = self.mine_dir(new_id())
        d.mkdir(parents=True)
        return d

    def mine_dirs(self) -> list[Path]:
        """The mining sessions' folders, oldest first (by modification time); ``[]`` when none."""
        if not self.mine.is_dir():
            return []
        return sorted(self.mine.iterdir(), key=lambda d: d.stat().st_mtime)

    def has_run(self, run_id: str) -> bool:
        """True when ``runs/<run_id>/meta.json`` exists."""
        return meta_path(self.run_dir(run_id)).exists()

    def newest_run(self) -> str | None:
        """:func:`newest_run` of :attr:`runs`."""
        return newest_run(self.runs)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _exclude(git_dir: Path, line: str) -> None:
    """Append ``line`` to ``git_dir/info/exclude`` unless a line of it is ``line`` or ``line`` without its leading
    ``/``: ``info/`` (made when missing) and ``exclude`` (created when missing) are reached from the git folder's
    descriptor without following a link, and ``exclude`` must be a regular file (link48: under ``--sandbox none``
    graded code can write in the repository's ``.git``; before, ``open(exclude, "a")`` followed a link there and
    appended the line to the file it named, and a fifo blocked the host). Raises ``OSError`` (``ELOOP``/``ENOTDIR``:
    a link on the way; ``EINVAL``: not a regular file)."""
    gfd = os.open(git_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the user's git folder, as named
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("info", dir_fd=gfd)
        ifd = os.open("info", _DIR_FLAGS, dir_fd=gfd)
    finally:
        os.close(gfd)
    try:
        fd = os.open("exclude", os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o644, dir_fd=ifd)
    finally:
        os.close(ifd)
    with os.fdopen(fd, "r+b") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(git_dir / "info" / "exclude"))
        os.set_blocking(fd, True)
        lines = fh.read().decode(errors="replace").splitlines()
        if line not in lines and line.lstrip("/") not in lines:
            fh.write((("\n" if lines and lines[-1] else "") + line + "\n").encode())
