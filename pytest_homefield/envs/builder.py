"""Build, reuse, list and prune per-declaration Python environments with the real ``uv`` binary.

An environment lives at ``<cache>/<key>/`` (:func:`cache_root`: ``$HOMEFIELD_ENV_CACHE``, else
``$XDG_CACHE_HOME/pytest-homefield/envs``, else ``~/.cache/pytest-homefield/envs``) — outside the
repository, so a sandbox can bind it read-only. It is usable only when ``<key>/homefield-env.json``
exists; that file is written last, inside a temporary folder ``.<key>.tmp-<pid>-<rand>`` next to the
final one, which is then renamed into place (``os.rename``, atomic on one filesystem). A build killed
at any point leaves only a temporary folder, never a ``<key>/`` that a later run would use.
Concurrent builders of one key (xdist workers, several ``homefield`` processes) take an exclusive
``flock`` on ``.<key>.lock`` and re-check after getting it, so the key is built once; one that waits
takes the environment as soon as another has finished it, without the lock (:func:`_locked_unless`); the holder
also removes temporary folders that killed builders left. A process using an environment holds a
shared ``flock`` on the same lock file until it exits (:func:`release_envs` drops them earlier), so
:func:`prune_envs` never removes an environment a running mine or run is testing in; each user
repository is noted in ``.users/<key>/`` so that a prune from one repository keeps the environments
another repository uses.

How a tree is installed (``how`` in the record), in ``uv venv --relocatable`` (entry-point scripts
keep working after the rename):

- ``uv.lock`` with a ``[project]``: ``uv sync --frozen --no-editable`` (with ``--extra``/``--group``);
- otherwise one ``uv pip install`` of ``-r pyproject.toml`` (with ``--extra``/``--group``), each
  ``requirements*.txt`` and, for ``setup.py``/``setup.cfg`` projects, the tree itself; then the project
  itself with ``--no-deps`` (so entry points and metadata exist);
- ``pytest`` is added when the declaration did not bring it (``+pytest``).

The project is installed non-editable, then its code is removed from the environment (metadata and
entry-point scripts stay, ``(its code removed)``): the test run puts the snapshot first on
``PYTHONPATH`` (:mod:`pytest_homefield.sandbox.testrun`), so the code tested is always the
snapshot's, and a module the snapshot lacks is not found elsewhere.
``uv`` runs with ``UV_PYTHON_DOWNLOADS=never`` and ``--python-preference only-system``; the caller's
``UV_*`` settings (``UV_OFFLINE``, ``UV_FIND_LINKS``, ``UV_INDEX_URL``, ``UV_CACHE_DIR``) are kept.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.envs.declaration import Declaration, Interpreter, choose_python, env_key, installed_pythons
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.uv_bin import uv_binary
from pytest_homefield.store import NotOwnFile, open_own_file

__all__ = [
    "MARKER",
    "EnvBuildError",
    "Environment",
    "cache_root",
    "find_uv",
    "uv_error",
    "resolve_env",
    "ensure_env",
    "list_envs",
    "prune_envs",
    "release_envs",
]

#: The file whose presence makes ``<key>/`` a finished environment.
MARKER = "homefield-env.json"


class EnvBuildError(RuntimeError):
    """An environment could not be built; ``str(err)`` is one line (uv's error, :func:`uv_error`,
    or why no interpreter fits)."""


@dataclass
class Environment:
    """A finished environment. ``path``: its folder; ``python``: ``<path>/bin/python`` (bind it and
    ``interpreter`` into a sandbox); ``interpreter``: the base interpreter's real path;
    ``python_version``: ``3.11.7``; ``how``: the uv commands in short; ``built``: built by this call
    (else reused); ``build_s``: seconds this call spent building (0 when reused)."""

    key: str
    path: Path
    python_version: str
    interpreter: str
    how: str
    extras: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    as_of: str | None = None
    built: bool = False
    build_s: float = 0.0

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def record(self) -> dict[str, Any]:
        """The task record's ``env`` object (docs/contracts.md §6)."""
        return {"key": self.key, "how": self.how, "python": self.python_version,
                "extras": list(self.extras), "groups": list(self.groups),
                **({"as_of": self.as_of} if self.as_of else {})}

    def apply(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default ``os.environ``) with this environment first on ``PATH`` and
        ``VIRTUAL_ENV`` set, so ``python -m pytest`` runs its interpreter."""
        out = dict(os.environ if base is None else base)
        out["PATH"] = os.pathsep.join([str(self.path / "bin"), out.get("PATH", "")])
        out["VIRTUAL_ENV"] = str(self.path)
        out.pop("PYTHONHOME", None)
        return out


def cache_root() -> Path:
    """Where environments live (module docstring)."""
    if os.environ.get("HOMEFIELD_ENV_CACHE"):
        return Path(os.environ["HOMEFIELD_ENV_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "pytest-homefield" / "envs"


def find_uv() -> str:
    """The ``uv`` binary (:func:`~pytest_homefield.sandbox.uv_bin.uv_binary`). Raises :class:`EnvBuildError` when
    there is none."""
    found = uv_binary()
    if not found:
        raise EnvBuildError("uv is not installed: pip install 'pytest-homefield[env]'")
    return found


def resolve_env(decl: Declaration, *, extras: Sequence[str] = (), groups: Sequence[str] = (),
                as_of: str | None = None, interpreters: Sequence[Interpreter] | None = None
                ) -> tuple[str, Interpreter, list[str], list[str]]:
    """``(key, interpreter, extras, groups)`` for ``decl``: empty ``extras``/``groups`` mean the
    declaration's defaults (:meth:`Declaration.default_extras`, :meth:`Declaration.default_groups`).
    Raises :class:`EnvBuildError` when no installed interpreter fits ``requires-python``."""
    ex = list(extras) or decl.default_extras()
    gr = list(groups) or decl.default_groups()
    try:
        py = choose_python(decl.requires_python, installed_pythons() if interpreters is None else interpreters)
    except RuntimeError as exc:
        raise EnvBuildError(str(exc)) from None
    return env_key(decl, py, extras=ex, groups=gr, as_of=as_of), py, ex, gr


def _load(path: Path) -> Environment | None:
    try:
        data = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return Environment(key=data["key"], path=path, python_version=data["python"], interpreter=data["interpreter"],
                       how=data["how"], extras=list(data.get("extras", [])), groups=list(data.get("groups", [])),
                       as_of=data.get("as_of"))


#: Shared locks this process holds on the environments it uses: ``(root, key)`` → lock file fd.
_HELD: dict[tuple[str, str], int] = {}


def _hold(root: Path, key: str) -> None:
    """Take (once per process) a shared ``flock`` on ``.<key>.lock``: the environment is in use."""
    if (str(root), key) in _HELD:
        return
    fd = os.open(root / f".{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _HELD[(str(root), key)] = fd


def release_envs() -> None:
    """Drop this process's shared locks (they go at exit anyway); the environments may then be pruned."""
    while _HELD:
        os.close(_HELD.popitem()[1])


def _user_dir(root: Path, key: str) -> Path:
    return root / ".users" / key


def _note_user(root: Path, key: str, user: str | None) -> None:
    """Record that repository ``user`` (its path) uses ``key``: ``.users/<key>/<sha256(user)[:16]>``."""
    if not user:
        return
    with contextlib.suppress(OSError):  # never through a link put in its place (link46): the entry is replaced
        root.mkdir(parents=True, exist_ok=True)
        nofollow.write_bytes(root, f".users/{key}/{hashlib.sha256(user.encode()).hexdigest()[:16]}",
                             (user + "\n").encode("utf-8", "surrogateescape"), make_parents=True)


def _users(root: Path, key: str) -> set[str]:
    """The repositories :func:`_note_user` recorded for ``key``; an entry that is a link, a fifo or a device is
    never read (link46: a fifo blocked the host, a link read another file as a user's path)."""
    folder = _user_dir(root, key)
    found: set[str] = set()
    try:
        names = [f.name for f in folder.iterdir()]
    except OSError:
        return found
    for name in names:
        with contextlib.suppress(OSError):
            found.add(nofollow.read_bytes(folder, name, limit=1 << 16).decode("utf-8", "surrogateescape").strip())
    return found


#: Seconds between two looks at a key another process is building (:func:`_locked_unless`).
POLL_S = 0.2


@contextlib.contextmanager
def _locked_unless(root: Path, key: str, ready: Callable[[], Environment | None],
                   timeout_s: float) -> Iterator[Environment | None]:
    """The exclusive ``flock`` on ``.<key>.lock``, to build ``key`` (yields ``None``), or, as soon as
    ``ready()`` gives the environment another process finished meanwhile, that environment, unlocked. A
    blocking ``flock`` waited for ever: the builder takes its shared lock (in use) the moment it has
    finished and holds it for its whole session, and ``flock`` wakes no waiter in order (two xdist
    workers mining pallets-eco/blinker with ``--env uv``: one stuck for good, the mine with it). Raises
    :class:`EnvBuildError` after ``timeout_s`` seconds with neither."""
    fd = os.open(root / f".{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                env = ready()
                if env is not None:
                    yield env
                    return
                if time.monotonic() > deadline:
                    raise EnvBuildError(f"environment {key}: another process held it for {timeout_s:g} s "
                                        "without finishing it") from None
                time.sleep(POLL_S)
        yield None
    finally:
        os.close(fd)


def ensure_env(decl: Declaration, tree: Callable[[], contextlib.AbstractContextManager[Path]], *,
               extras: Sequence[str] = (), groups: Sequence[str] = (), as_of: str | None = None,
               root: Path | None = None, timeout_s: float = 1800, log: Path | None = None,
               user: str | None = None) -> Environment:
    """The environment for ``decl``: reused when ``<root>/<key>/`` is finished, else built from the
    tree ``tree()`` yields (called only when a build is needed; the tree holding ``decl``'s files).

    ``as_of``: an ISO 8601 time; uv then resolves only packages uploaded before it
    (``--exclude-newer``), so an old commit gets the versions of its day instead of today's (drift).
    ``timeout_s``: seconds for the whole build. ``log``: also copy uv's output there. ``user``: the
    repository (path) using it, noted for :func:`prune_envs`. The environment returned is held in use
    (shared lock) until this process exits or calls :func:`release_envs`. Raises
    :class:`EnvBuildError` (one line) when no interpreter fits or uv fails or times out; nothing is
    left behind then.
    """
    root = cache_root() if root is None else Path(root)
    for _ in range(3):  # a prune may remove it between the look-up and the shared lock: look again
        env = _ensure(decl, tree, extras=extras, groups=groups, as_of=as_of, root=root, timeout_s=timeout_s, log=log)
        _hold(root, env.key)
        if _load(root / env.key) is not None:
            _note_user(root, env.key, user)
            return env
        release_envs()
    raise EnvBuildError(f"environment {env.key} keeps being removed while it is set up (a prune loop?)")


def _ensure(decl: Declaration, tree: Callable[[], contextlib.AbstractContextManager[Path]], *,
            extras: Sequence[str], groups: Sequence[str], as_of: str | None, root: Path, timeout_s: float,
            log: Path | None) -> Environment:
    key, py, ex, gr = resolve_env(decl, extras=extras, groups=groups, as_of=as_of)
    final = root / key
    env = _load(final)
    if env is not None:
        return env
    root.mkdir(parents=True, exist_ok=True)
    with _locked_unless(root, key, lambda: _load(final), timeout_s) as built:
        if built is not None:
            return built
        env = _load(final)
        if env is not None:
            return env
        for stale in root.glob(f".{key}.tmp-*"):  # left by killed builders (we hold the lock)
            _remove(stale)
        if final.exists():  # a finished folder without its marker cannot happen; be safe anyway
            shutil.rmtree(final, ignore_errors=True)
        tmp = root / f".{key}.tmp-{os.getpid()}-{secrets.token_hex(3)}"
        started = time.monotonic()
        try:
            with tree() as src:
                how = _build(decl, Path(src), tmp, py, ex, gr, as_of=as_of, timeout_s=timeout_s, log=log)
            build_s = time.monotonic() - started
            marker = {"key": key, "python": py.version, "interpreter": py.path, "how": how, "extras": ex,
                      "groups": gr, "as_of": as_of, "files": sorted(decl.files), "build_s": round(build_s, 3),
                      "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            # the entry replaced, never written through a link the project's build left there (link48)
            nofollow.write_bytes(tmp, MARKER, json.dumps(marker, indent=1).encode(), sync=True)
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    env = _load(final)
    assert env is not None
    env.built, env.build_s = True, round(build_s, 3)
    return env


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _uv_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME")}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.setdefault("UV_NO_PROGRESS", "1")
    return env


def _run_uv(args: list[str], *, cwd: Path, env: Mapping[str, str], deadline: float, log: Path) -> None:
    """Run uv, appending its output to ``log``; raise :class:`EnvBuildError` with :func:`uv_error`.

    uv stays in the caller's process group (unlike test runs): when the builder is killed with its
    group (an xdist worker, a CI job), uv and the build backends it started die with it instead of
    writing on into a temporary folder that a later builder has cleared."""
    try:  # never through a link the project's build (its backend, its setup.py) put there (link48)
        out = open_own_file(log, "ab")
    except NotOwnFile as exc:
        raise EnvBuildError(f"cannot write the build log {exc}") from None
    with out:
        out.write(("$ " + " ".join(args) + "\n").encode())
        out.flush()
        start = out.tell()
        proc = subprocess.Popen(args, cwd=str(cwd), env=dict(env), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise EnvBuildError(f"uv timed out: {' '.join(args[1:3])}") from None
    try:
        fh = open_own_file(log, "rb")
    except NotOwnFile as exc:
        raise EnvBuildError(f"cannot read the build log {exc}") from None
    with fh:
        fh.seek(start)
        text = fh.read().decode(errors="replace")
    if code != 0:
        raise EnvBuildError(uv_error(text) or f"uv {args[1]} exited with status {code}")


#: How uv starts an error, a cause and a hint: ``error:``/``cause:``/``hint:`` since about 0.8,
#: ``×``/``╰─▶`` (``├─▶`` for one of several causes) before; either is wrapped onto indented lines.
_UV_MARKS = (("error", ("error:", "\u00d7")), ("cause", ("cause:", "\u2570\u2500\u25b6", "\u251c\u2500\u25b6")),
             ("hint", ("hint:",)))


def _uv_blocks(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of each message in uv's output: kind ``error``, ``cause``, ``hint`` or
    ``line`` (unmarked), wrapped continuation lines joined with spaces; a blank line ends a message."""
    blocks: list[tuple[str, str]] = []
    open_block = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            open_block = False
            continue
        kind = next((k for k, marks in _UV_MARKS for m in marks if line.startswith(m)), None)
        if kind is not None:
            mark = next(m for m in dict(_UV_MARKS)[kind] if line.startswith(m))
            blocks.append((kind, line[len(mark):].strip()))
            open_block = True
        elif open_block and raw[:1].isspace() and blocks:
            blocks[-1] = (blocks[-1][0], f"{blocks[-1][1]} {line}")
        else:
            blocks.append(("line", line))
            open_block = False
    return blocks


def uv_error(text: str) -> str:
    """One line from uv's output, in either of uv's formats (:data:`_UV_MARKS`): its last error joined
    with the last cause after it (``No solution found when resolving dependencies: Because hfmissing
    was not found …``), else the last message that is not a hint; ``""`` for empty output."""
    blocks = _uv_blocks(text)
    errors = [i for i, (kind, _) in enumerate(blocks) if kind == "error"]
    if errors:
        head = blocks[errors[-1]][1].rstrip(":")
        causes = [t for kind, t in blocks[errors[-1] + 1:] if kind == "cause"]
        return f"{head}: {causes[-1]}" if causes else head
    rest = [t for kind, t in blocks if kind != "hint"]
    return rest[-1] if rest else ""


def _build(decl: Declaration, src: Path, dest: Path, py: Interpreter, extras: list[str], groups: list[str], *,
           as_of: str | None, timeout_s: float, log: Path | None) -> str:
    """Create the environment in ``dest`` from the tree ``src``; returns ``how``."""
    uv = find_uv()
    env = _uv_env()
    deadline = time.monotonic() + timeout_s
    dest.parent.mkdir(parents=True, exist_ok=True)
    build_log = dest.parent / f"{dest.name}.log"
    nofollow.write_bytes(build_log.parent, build_log.name, b"")  # its own entry, whatever was there
    try:
        _run_uv([uv, "venv", "--relocatable", "--quiet", "--python", py.path, "--python-preference", "only-system",
                 str(dest)], cwd=dest.parent, env=env, deadline=deadline, log=build_log)
        dpy = str(dest / "bin" / "python")
        flags = [a for e in extras for a in ("--extra", e)]
        gflags = [a for g in groups for a in ("--group", g)]
        pyproject = decl.pyproject
        if "uv.lock" in decl.files and "project" in pyproject:
            sync_env = {**env, "UV_PROJECT_ENVIRONMENT": str(dest)}
            _run_uv([uv, "sync", "--frozen", "--no-editable", "--python", dpy, "--python-preference",
                     "only-system", *flags, *gflags], cwd=src, env=sync_env, deadline=deadline, log=build_log)
            how = "uv sync --frozen"
        else:
            args: list[str] = []
            parts: list[str] = []
            if "project" in pyproject:
                args += ["-r", "pyproject.toml", *flags]
                parts.append("pyproject.toml" + (f"[{','.join(extras)}]" if extras else ""))
            elif decl.has_project:
                args.append("." + (f"[{','.join(extras)}]" if extras else ""))
                parts.append("setup.py" if "setup.py" in decl.files else "setup.cfg")
            if groups and "dependency-groups" in pyproject:
                args += gflags
                parts.append(f"groups {','.join(groups)}")
            for req in decl.requirements:
                args += ["-r", req]
                parts.append(req)
            if as_of:
                args += ["--exclude-newer", as_of]
                parts.append(f"as of {as_of}")
            if args:
                _run_uv([uv, "pip", "install", "--python", dpy, *args], cwd=src, env=env, deadline=deadline,
                        log=build_log)
            if "project" in pyproject:
                _run_uv([uv, "pip", "install", "--python", dpy, "--no-deps", "."], cwd=src, env=env,
                        deadline=deadline, log=build_log)
                parts.append("project --no-deps")
            how = "uv pip install " + (" + ".join(parts) or "nothing declared")
        if decl.has_project and _strip_project_code(dest, src):
            how += " (its code removed)"
        probe = subprocess.run([dpy, "-c", "import pytest"], capture_output=True, check=False)
        if probe.returncode != 0:
            _run_uv([uv, "pip", "install", "--python", dpy, "pytest", *(["--exclude-newer", as_of] if as_of else [])],
                    cwd=src, env=env, deadline=deadline,
                    log=build_log)
            how += " +pytest"
        # copies replace their entries, never written through a link the project's build left (link48: before,
        # shutil.copyfile wrote the log into the file a link at <env>/build.log named)
        nofollow.write_bytes(dest, "build.log", _own_bytes(build_log))
        return how
    finally:
        if log is not None:
            with contextlib.suppress(FileNotFoundError, EnvBuildError):  # the build's own error said it
                data = _own_bytes(build_log)
                log.parent.mkdir(parents=True, exist_ok=True)
                nofollow.write_bytes(log.parent, log.name, data)
        nofollow.remove(build_log.parent, build_log.name)  # a link there removed as the link


def _own_bytes(path: Path) -> bytes:
    """The bytes of the build log ``path``, never read through a link (:func:`~pytest_homefield.store.open_own`).
    Raises ``FileNotFoundError``, :class:`EnvBuildError` (a link there, or not a regular file)."""
    try:
        with open_own_file(path, "rb") as fh:
            return fh.read()
    except NotOwnFile as exc:
        raise EnvBuildError(f"cannot read the build log {exc}") from None


def _strip_project_code(env: Path, src: Path) -> bool:
    """Remove the installed copy of the project's own code (the files its ``RECORD`` lists outside
    its ``.dist-info`` and outside ``bin/``), keeping metadata and entry-point scripts: the code
    tested must be the snapshot's (first on ``PYTHONPATH``), and a module the snapshot lacks must
    not be found in the environment (the parent of a commit that adds it would pass). The project
    is the distribution whose ``direct_url.json`` names ``src``. Returns whether one was found."""
    url = src.resolve().as_uri()
    for direct in env.glob("lib/python*/site-packages/*.dist-info/direct_url.json"):
        try:
            if json.loads(direct.read_text()).get("url", "").rstrip("/") != url.rstrip("/"):
                continue
        except (OSError, ValueError):
            continue
        info = direct.parent
        site = info.parent
        parents: set[Path] = set()
        for line in (info / "RECORD").read_text().splitlines():
            rel = line.rsplit(",", 2)[0] if line.count(",") >= 2 else line
            if not rel or rel.startswith(("../", "/")) or rel.split("/", 1)[0] == info.name:
                continue
            target = site / rel
            with contextlib.suppress(OSError):
                target.unlink()
                parents.add(target.parent)
        for folder in sorted(parents, key=lambda p: -len(p.parts)):
            while folder != site and site in folder.parents:
                with contextlib.suppress(OSError):
                    shutil.rmtree(folder / "__pycache__", ignore_errors=True)
                    folder.rmdir()  # only an empty one
                folder = folder.parent
        return True
    return False


def list_envs(root: Path | None = None) -> list[dict[str, Any]]:
    """The finished environments under ``root`` (their marker records plus ``path`` and ``bytes``),
    newest first."""
    root = cache_root() if root is None else Path(root)
    out = []
    for marker in sorted(root.glob(f"*/{MARKER}")):
        try:
            data = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        data["path"] = str(marker.parent)
        data["bytes"] = _size(marker.parent)
        out.append(data)
    return sorted(out, key=lambda d: str(d.get("built_at", "")), reverse=True)


def _size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total


def prune_envs(root: Path | None = None, *, keep: Sequence[str] = (), user: str | None = None) -> list[str]:
    """Remove every environment under ``root`` whose key is not in ``keep``, and temporary folders
    of killed builds (those whose key lock is free). With ``user`` (a repository path) an
    environment another repository (that still exists) has used is kept. Returns the removed names. A key being built
    or used right now (its lock held, exclusive or shared) is skipped."""
    root = cache_root() if root is None else Path(root)
    removed: list[str] = []
    if not root.is_dir():
        return removed
    for entry in sorted(root.iterdir()):
        name = entry.name
        if name.endswith(".lock") or name == ".users" or not (entry.is_dir() or ".tmp-" in name):
            continue
        key = name[1:].split(".tmp-")[0] if name.startswith(".") else name
        if not name.startswith(".") and key in keep:
            continue
        others = {u for u in _users(root, key) if Path(u).exists()} - {user} if user is not None else set()
        if not name.startswith(".") and others:
            continue
        fd = os.open(root / f".{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    continue
                raise
            _remove(entry)
            if not name.startswith("."):
                shutil.rmtree(_user_dir(root, key), ignore_errors=True)
            removed.append(name)
        finally:
            os.close(fd)
    return removed


if sys.platform == "win32":  # pragma: no cover
    raise ImportError("pytest_homefield.envs needs POSIX (flock)")
