"""What a tree declares about its Python environment, and the content key of that environment.

A *declaration* is the set of files at the top of a tree that say which packages its tests need:
``pyproject.toml``, ``uv.lock``, ``setup.py``, ``setup.cfg`` and ``requirements*.txt``, and the test
requirements of a ``requirements/`` folder (``requirements/test*.txt``: the pallets projects keep their
pinned test tools in ``requirements/tests.txt``). It is read
from a folder (:func:`read_declaration`) or straight from a commit without a checkout
(:func:`declaration_at`). The key (:func:`env_key`) hashes those files' bytes with the chosen
interpreter's version and the extras and groups, so every commit with the same declaration shares
one environment (docs/contracts.md §6 ``env``).

The interpreter comes from the ones already installed (:func:`installed_pythons`: ``python3`` and
``python3.N`` on ``PATH``, and ``$PYENV_ROOT/versions/*/bin/python3``); ``requires-python`` chooses
the newest that satisfies it (:func:`choose_python`). None is ever downloaded.
"""

from __future__ import annotations

import concurrent.futures
import fnmatch
import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from pytest_homefield.sandbox.snapshot import git, git_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "DECLARATION_FILES",
    "KEY_VERSION",
    "Declaration",
    "Interpreter",
    "NoPythonError",
    "is_declaration_file",
    "read_declaration",
    "declaration_at",
    "installed_pythons",
    "choose_python",
    "env_key",
]

#: Top-level file names (and ``requirements*.txt``, ``requirements/test*.txt``) that make up a declaration.
DECLARATION_FILES = ("pyproject.toml", "uv.lock", "setup.py", "setup.cfg")
_REQUIREMENTS = "requirements*.txt"
#: The test requirements of a ``requirements/`` folder (not its docs, typing or build ones).
_FOLDER = "requirements"
_FOLDER_REQUIREMENTS = "requirements/test*.txt"
#: Bumped when the way environments are built or declarations read changes, so old ones are not reused
#: (2: ``requirements/test*.txt`` joined the declaration).
KEY_VERSION = 2


def is_declaration_file(path: str) -> bool:
    """``path`` (repository-relative) is a declaration file: a top-level one, or ``requirements/test*.txt``."""
    if "/" not in path:
        return path in DECLARATION_FILES or fnmatch.fnmatch(path, _REQUIREMENTS)
    return path.count("/") == 1 and fnmatch.fnmatch(path, _FOLDER_REQUIREMENTS)


@dataclass(frozen=True)
class Declaration:
    """The declaration files of one tree: ``files`` maps a top-level name to its bytes."""

    files: Mapping[str, bytes]

    @property
    def pyproject(self) -> dict[str, Any]:
        """``pyproject.toml`` parsed (``{}`` when absent or not valid TOML)."""
        raw = self.files.get("pyproject.toml")
        if raw is None:
            return {}
        try:
            data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
        return data

    @property
    def has_project(self) -> bool:
        """The tree is an installable project (a ``[project]`` table, ``setup.py`` or ``setup.cfg``)."""
        return "project" in self.pyproject or "setup.py" in self.files or "setup.cfg" in self.files

    @property
    def requires_python(self) -> str | None:
        """``[project] requires-python``, or ``None``."""
        value = self.pyproject.get("project", {}).get("requires-python")
        return str(value) if value else None

    @property
    def requirements(self) -> list[str]:
        """The requirements files (``requirements*.txt``, ``requirements/test*.txt``), sorted."""
        return sorted(n for n in self.files if n.endswith(".txt") and is_declaration_file(n))

    @property
    def is_empty(self) -> bool:
        """Nothing declares any dependency."""
        return not self.files

    def default_extras(self) -> list[str]:
        """The test extra the project uses: ``test`` or ``tests`` from ``[project.optional-dependencies]``."""
        extras = self.pyproject.get("project", {}).get("optional-dependencies") or {}
        return [e for e in ("test", "tests") if e in extras][:1]

    def default_groups(self) -> list[str]:
        """The dependency group holding the test tools: ``test``, ``tests`` or ``dev`` (PEP 735)."""
        groups = self.pyproject.get("dependency-groups") or {}
        return [g for g in ("test", "tests", "dev") if g in groups][:1]


def read_declaration(tree: Path) -> Declaration:
    """The declaration files at the top of the folder ``tree``."""
    files: dict[str, bytes] = {}
    found = [*Path(tree).glob(_REQUIREMENTS), *Path(tree).glob(_FOLDER_REQUIREMENTS)]
    for name in [*DECLARATION_FILES, *sorted(p.relative_to(tree).as_posix() for p in found)]:
        path = Path(tree) / name
        if path.is_file():
            files[name] = path.read_bytes()
    return Declaration(files)


def declaration_at(repo: Path, commit: str, *, isolated: bool = False) -> Declaration:
    """The declaration files of ``commit`` read from git (no checkout). ``isolated``: ``repo`` is a repository
    homefield made (:func:`~pytest_homefield.sandbox.snapshot.make_snapshot`'s ``isolated``: no configuration
    outside it is read). Git runs without the caller's ``GIT_*`` variables. Raises ``SnapshotError`` for an unknown
    commit."""
    listed = git("ls-tree", "--name-only", "-z", commit, cwd=repo, isolated=isolated).split("\0")
    if _FOLDER in listed:
        listed += git("ls-tree", "--name-only", "-z", commit, f"{_FOLDER}/", cwd=repo, isolated=isolated).split("\0")
    names = [n for n in listed if is_declaration_file(n)]
    files: dict[str, bytes] = {}
    for name in names:
        out = subprocess.run(["git", "cat-file", "blob", f"{commit}:{name}"], cwd=repo, capture_output=True,
                             env=git_env(isolated=isolated), stdin=subprocess.DEVNULL, check=False)
        if out.returncode == 0:
            files[name] = out.stdout
    return Declaration(files)


@dataclass(frozen=True)
class Interpreter:
    """An installed Python: ``path`` (the real executable) and ``version`` (``3.11.7``)."""

    path: str
    version: str


class NoPythonError(RuntimeError):
    """No installed interpreter satisfies ``requires-python``; the message names the ones found."""


_PROBE = "import os, sys; print(os.path.realpath(sys.executable)); print('%d.%d.%d' % sys.version_info[:3])"


@functools.lru_cache(maxsize=8)
def installed_pythons(path_var: str | None = None) -> tuple[Interpreter, ...]:
    """Every distinct interpreter found (``python3``, ``python3.N`` for N in 6..15 on ``PATH``
    (``path_var``, default ``$PATH``), ``$PYENV_ROOT`` or ``~/.pyenv`` versions), in that order.
    Pyenv shims on ``PATH`` are not run: their pyenv root's versions are taken instead."""
    path_var = os.environ.get("PATH", "") if path_var is None else path_var
    names = ["python3", *(f"python3.{n}" for n in range(6, 16))]
    on_path = [p for p in (shutil.which(n, path=path_var) for n in names) if p]
    roots = [os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")]
    # a pyenv shim is a shell script that starts pyenv (~0.2 s of CPU each, eleven names): never run one,
    # take its root's versions instead (what the shims would select among)
    roots += [str(Path(p).parent.parent) for p in on_path if _is_pyenv_shim(p)]
    found = [p for p in on_path if not _is_pyenv_shim(p)]
    for root in dict.fromkeys(roots):
        found += sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python3")))
    out: dict[str, Interpreter] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:  # each probe waits on a process
        probes = list(pool.map(_probe, found))
    for found_one in probes:
        if found_one is not None:
            out.setdefault(found_one.path, found_one)
    return tuple(out.values())


def _is_pyenv_shim(exe: str) -> bool:
    """Whether ``exe`` is in a pyenv ``shims`` folder (one that has a ``versions`` folder beside it)."""
    folder = Path(exe).parent
    return folder.name == "shims" and (folder.parent / "versions").is_dir()


def _probe(exe: str) -> Interpreter | None:
    try:
        proc = subprocess.run([exe, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = proc.stdout.split()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    return Interpreter(lines[0], lines[1])


def choose_python(requires_python: str | None, interpreters: Sequence[Interpreter]) -> Interpreter:
    """The newest of ``interpreters`` satisfying ``requires_python`` (any when ``None`` or not a
    valid specifier: then the newest). Raises :class:`NoPythonError` when none fits."""
    try:
        spec = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        spec = SpecifierSet("")
    fits = [i for i in interpreters if spec.contains(Version(i.version), prereleases=True)]
    if not fits:
        seen = ", ".join(f"{i.version} ({i.path})" for i in interpreters) or "none"
        raise NoPythonError(f"no installed Python satisfies requires-python {requires_python!s}; found: {seen} "
                            "(homefield never downloads one)")
    return max(fits, key=lambda i: Version(i.version))


def env_key(decl: Declaration, python: Interpreter, *, extras: Sequence[str], groups: Sequence[str],
            as_of: str | None = None) -> str:
    """The environment's content key: 16 hex digits of SHA-256 over :data:`KEY_VERSION`, the
    interpreter's version, the sorted extras and groups, each declaration file's SHA-256 and, when
    resolution is limited to packages published before a date, that date (``as_of``)."""
    blob = json.dumps({
        **({"as_of": as_of} if as_of else {}),
        "v": KEY_VERSION,
        "python": python.version,
        "extras": sorted(extras),
        "groups": sorted(groups),
        "files": {n: hashlib.sha256(b).hexdigest() for n, b in sorted(decl.files.items())},
    }, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
