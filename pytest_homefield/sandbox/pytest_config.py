"""Which configuration file pytest reads for a run, and its rootdir (conf42): one reading of pytest's
``determine_setup`` (``_pytest/config/findpaths.py``, pytest 8 and 9) for a tree, a test command and its targets.

Two callers read it: the softener (:func:`pytest_homefield.sandbox.canary_soft.function_patterns`: the
``python_functions`` and ``addopts`` a canary run's configuration sets) and the pin a test run is given
(:func:`pytest_homefield.sandbox.testrun.pinned_config`: ``-c``, ``--rootdir``, ``--confcutdir`` when pytest's search
would leave the tree, so nothing planted above it is read). Before (soft41, hatk41) each had its own reading and they
disagreed (``tests/sandbox/test_pytest_config.py`` holds the cases, each against real pytest).

The search, as pytest does it: the folders of the run's paths (the command's positional words, then the targets; a
file's folder; a path that does not exist is left out, but a target is taken to exist), their common folder (the
working folder with none), and in it, then each folder above it, the first of :data:`CONFIG_NAMES` that is pytest's
(the first ``pyproject.toml`` met is taken when no folder up to the file system's root holds one); with none, the
first folder from there up holding a ``setup.py`` is the rootdir, else the same search from each path's folder in
turn, else the rootdir is the working folder. Here the search stops at the tree's top (``root``): what pytest would
find above it is a file of another owner, and :attr:`Setup.leaves` says when pytest would look there. Each file is
read without following a link: a link, or a file that cannot be read, among :data:`CONFIG_NAMES` counts as pytest's
configuration setting nothing known (the widest reading: pytest follows it). Nothing here imports pytest.

The pytest that runs reads by its version (conf43; ``version``, ``None`` when unknown: pytest 9's reading):
pytest < 9 knows no ``pytest.toml``/``.pytest.toml`` (:data:`CONFIG_NAMES_8`), reads a ``.toml`` file only through
its ``[tool.pytest.ini_options]`` table (a ``pytest.toml`` given with ``-c`` is read as an empty ``pyproject.toml``,
and ``[tool.pytest]`` alone is no configuration) and a ``.pytest.ini`` only with its ``[pytest]`` section; pytest <
8.1 takes no ``pyproject.toml`` without its table (no fallback).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import posixpath
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import iniconfig

from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.uv_bin import uv_binary

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_NAMES", "CONFIG_NAMES_8", "CONFIG_BYTES", "Setup", "setup_for", "config_options", "pytest_args",
           "all_values", "last_value", "positional", "split_args", "split_words", "TestCommand", "parse_command",
           "config_at", "module_pytest", "PYTHON_VALUED", "from_top", "UvRun", "uv_run", "launched_at", "program_at",
           "command_problem", "tree_install", "rootdir_problem", "env_file_addopts", "env_files_of",
           "uv_script_of", "uv_run_files", "uv_config_top", "uv_dotenv_addopts", "UV_OPTIONS_OF", "UV_RUN_SOURCES",
           "uv_run_of"]

#: The files pytest takes its configuration from, in the order it looks for them in a folder (its
#: ``CONFIG_LOADERS_BY_NAME``): the first found in the nearest folder wins; the first four are pytest's whatever they
#: say, the others only with pytest's table or section.
CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
#: Those pytest < 9 looks for (its ``locate_config``: no TOML file of its own).
CONFIG_NAMES_8 = CONFIG_NAMES[2:]
#: The first pytest that reads ``pytest.toml`` and ``[tool.pytest]`` (pytest 9.0), and the first that takes the
#: first ``pyproject.toml`` met when no file is pytest's (8.1).
NATIVE_TOML, PYPROJECT_FALLBACK = (9, 0), (8, 1)
#: A configuration file larger than this (bytes) is not parsed: pytest's, setting nothing known.
CONFIG_BYTES = 1 << 20
#: What a configuration sets that is read here: its ``python_functions`` and its ``addopts`` (each an ``args`` value
#: as pytest splits it).
Options = tuple[tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class Setup:
    """pytest's choice for a run in a tree (:func:`setup_for`). Paths are ``/``-separated, relative to the tree
    (``.`` its top). ``config``: the configuration file pytest reads, ``None`` with none in the tree. ``rootdir``:
    its rootdir (``None`` when a path of the run lies outside the tree: pytest's choice is not read then).
    ``leaves``: pytest's search passes the tree's top before it finds ``config`` (or finds none): a file above the
    tree, found first, would be taken instead (``config`` and ``rootdir`` are then its choice when nothing above
    holds one). ``given``: the command names the configuration (``-c``/``--config-file``). ``python_functions``,
    ``addopts``: what ``config`` sets (``()`` when it sets none, or it cannot be read). ``version``: the ``(major,
    minor)`` of the pytest whose reading this is (:func:`setup_for`'s; ``None``: unknown, pytest 9's reading): a run
    of another pytest reads again (soft44). ``asked``: the test command and ``PATH`` ``version`` was asked for
    (:func:`~pytest_homefield.sandbox.testrun.pytest_setup`; ``None``: not asked for a run): a run of the same two
    takes it as its answer instead of asking again (ops46), and ``python`` too, the interpreter it found there (the
    command's, else its ``uv run``'s; ``None``: unknown), which the run shows its sandbox. ``env_addopts``: the
    words of the ``PYTEST_ADDOPTS`` a ``uv run --env-file FILE`` of the command gives pytest
    (:func:`env_file_addopts`; ``()`` with none), read before the command's own arguments (:meth:`args`)."""

    config: str | None
    rootdir: str | None
    leaves: bool
    given: bool = False
    python_functions: tuple[str, ...] = ()
    addopts: tuple[str, ...] = ()
    version: tuple[int, int] | None = None
    asked: tuple[str, str | None] | None = None
    env_addopts: tuple[str, ...] = ()
    python: str | None = None

    def args(self, command: str) -> list[str]:
        """The arguments ``command`` (the test command this setup was read for) gives pytest: :func:`pytest_args`,
        after the ``PYTEST_ADDOPTS`` of its ``uv run --env-file`` (``env_addopts``) when it names pytest."""
        parsed = parse_command(command)
        return [*self.env_addopts, *parsed.args] if parsed.at else []


def from_top(rootdir: str | None, nodeid: str) -> str:
    """``nodeid`` (a node id as pytest reports it, its path relative to pytest's ``rootdir``: :attr:`Setup.rootdir`,
    ``/``-separated, relative to the tree; ``None`` or ``.``: the tree's top) as a path of the tree, which a run
    started at the tree's top can be given as a target (root47: with a ``tests/pytest.ini`` the id
    ``test_a.py::test_x`` is ``tests/test_a.py::test_x`` there)."""
    base = posixpath.normpath(rootdir or ".")
    return nodeid if base == "." else posixpath.join(base, nodeid)


def setup_for(root: Path, command: str, targets: Sequence[str], version: tuple[int, int] | None = None) -> Setup:
    """pytest's configuration file and rootdir for ``command`` (a test command, :func:`pytest_args`) run in
    ``root`` (its working folder, the tree's top) on ``targets`` (files or node ids, ``/``-separated, taken to exist),
    as the module docstring describes. A ``-c FILE`` of the command (its last) is the configuration, read by its
    suffix as pytest does (``.ini`` as a ``pytest.ini``, ``.cfg`` as a ``setup.cfg``, ``.toml`` as a
    ``pyproject.toml`` but for a ``pytest.toml`` / ``.pytest.toml`` from pytest 9), none looked for, its folder the
    rootdir. ``version``: the ``(major, minor)`` of the pytest that runs (``None``: unknown, pytest 9's reading;
    the module docstring), kept as the setup's ``version``. A ``--rootdir`` the command names (its last, in the
    ``PYTEST_ADDOPTS`` it sets too) is pytest's rootdir (gatk48: the ids are relative to it; it was read as the
    configuration's folder or the tree's top, and grading planned the twins from there), when it lies inside
    ``root`` (outside, the setup's ``rootdir`` is left as read); a ``--rootdir`` in a configuration's ``addopts`` moves
    nothing, as pytest reads the rootdir before them."""
    setup = _setup_for(root, command, targets, version)
    named = last_value(setup.args(command), "", "--rootdir")
    inside = _inside(root, os.path.expandvars(named)) if named is not None and setup.rootdir is not None else None
    return dataclasses.replace(setup, version=version, rootdir=setup.rootdir if inside is None else inside)


def _setup_for(root: Path, command: str, targets: Sequence[str], version: tuple[int, int] | None) -> Setup:
    """:func:`setup_for` but its ``version`` kept; ``env_addopts`` read (ops48: a ``uv run --env-file``'s
    ``PYTEST_ADDOPTS`` was not, and its ``-c``, ``--rootdir``, ``-o python_functions=…`` went unseen)."""
    env_addopts = env_file_addopts(root, command)
    return dataclasses.replace(_setup_read(root, command, targets, version, env_addopts), env_addopts=env_addopts)


def _setup_read(root: Path, command: str, targets: Sequence[str], version: tuple[int, int] | None,
                env_addopts: tuple[str, ...]) -> Setup:
    """:func:`_setup_for` of the arguments ``env_addopts`` then ``command`` give pytest."""
    native = version is None or version >= NATIVE_TOML
    args = Setup(None, None, False, env_addopts=env_addopts).args(command)
    given = last_value(args, "-c", "--config-file")
    if given is not None:
        rel = _inside(root, given)
        if rel is None:
            return Setup(config=None, rootdir=None, leaves=True, given=True)
        name = PurePosixPath(given).name
        suffix = PurePosixPath(given).suffix
        kind = ("pytest.ini" if suffix == ".ini" else "setup.cfg" if suffix == ".cfg" else
                name if native and name in ("pytest.toml", ".pytest.toml") else "pyproject.toml" if suffix == ".toml"
                else "")
        data = _read(root, rel)
        found = (config_options(kind, data, native) or ((), ())) if kind and data is not None else ((), ())
        return Setup(config=rel, rootdir=posixpath.dirname(rel) or ".", leaves=False, given=True,
                     python_functions=found[0], addopts=found[1])
    dirs = _dirs(root, positional(args), targets)
    if dirs is None:
        return Setup(config=None, rootdir=None, leaves=True)
    ancestor = posixpath.commonpath(dirs) if dirs and "." not in dirs else "."
    ancestor = ancestor or "."
    hit = _locate(root, [ancestor], version)
    if hit is not None and not hit[1]:
        return _setup(hit, leaves=False)
    if hit is not None:  # a pyproject.toml without pytest's table: taken after nothing up to the fs root holds one
        return _setup(hit, leaves=True)
    for folder in _upward(ancestor):
        if _exists(root, _join(folder, "setup.py")):
            return Setup(config=None, rootdir=folder, leaves=True)
    if dirs != [ancestor]:
        hit = _locate(root, dirs, version)
        if hit is not None:
            return _setup(hit, leaves=True)
    return Setup(config=None, rootdir=".", leaves=True)


#: A configuration file :func:`_locate` found: its path, whether it is the fallback ``pyproject.toml`` (without
#: pytest's table), and what it sets.
_Hit = tuple[str, bool, Options]


def _setup(hit: _Hit, *, leaves: bool) -> Setup:
    path, _, (functions, addopts) = hit
    return Setup(config=path, rootdir=posixpath.dirname(path) or ".", leaves=leaves, python_functions=functions,
                 addopts=addopts)


def _locate(root: Path, folders: Sequence[str], version: tuple[int, int] | None = None) -> _Hit | None:
    """pytest's ``locate_config`` inside the tree: for each of ``folders`` in turn, in it and each folder above it,
    the first of :data:`CONFIG_NAMES` (:data:`CONFIG_NAMES_8` for a pytest ``version`` < 9) that is pytest's; else
    the first ``pyproject.toml`` met (fallback, from pytest 8.1); else ``None``."""
    native = version is None or version >= NATIVE_TOML
    fallback: str | None = None
    for start in folders:
        for base in _upward(start):
            for name in CONFIG_NAMES if native else CONFIG_NAMES_8:
                rel = _join(base, name)
                if not _exists(root, rel):
                    continue
                found = config_at(root, rel, native)
                if name == "pyproject.toml" and fallback is None and (version is None or version >= PYPROJECT_FALLBACK):
                    fallback = rel
                if found is not None:
                    return rel, False, found
    return (fallback, True, ((), ())) if fallback is not None else None


def _dirs(root: Path, words: Sequence[str], targets: Sequence[str]) -> list[str] | None:
    """The folders (in ``root``, ``/``-separated, each once, in order) of ``words`` (the command's positional words:
    left out when they do not exist) and then ``targets`` (taken to exist), as pytest's ``get_dirs_from_args`` takes
    them (a file's folder); ``None`` when one lies outside ``root`` (``..``, an absolute path elsewhere)."""
    top = root.resolve()
    dirs: list[str] = []
    for n, arg in enumerate([*words, *targets]):
        path = arg.partition("::")[0]
        given = n >= len(words)
        if not path:
            continue
        if posixpath.isabs(path):
            try:
                path = Path(path).relative_to(top).as_posix()
            except ValueError:
                if given or Path(path).exists():
                    return None
                continue
        rel = posixpath.normpath(path)
        if rel == ".." or rel.startswith("../"):
            if given or (root / path).exists():
                return None
            continue
        full = root / rel
        if not (given or full.exists() or full.is_symlink()):
            continue
        folder = rel if full.is_dir() else posixpath.dirname(rel) or "."
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def _inside(root: Path, path: str) -> str | None:
    """``path`` (relative to ``root`` or absolute) relative to ``root``, normalized; ``None`` when outside it."""
    if posixpath.isabs(path):
        try:
            path = Path(path).relative_to(root.resolve()).as_posix()
        except ValueError:
            try:
                path = Path(path).relative_to(Path(posixpath.abspath(root))).as_posix()
            except ValueError:
                return None
    rel = posixpath.normpath(path)
    return None if rel == ".." or rel.startswith("../") else rel


def _upward(folder: str) -> list[str]:
    """``folder`` (``/``-separated, in the root) and each folder above it, ``.`` last."""
    return [folder, *(str(p) for p in PurePosixPath(folder).parents)] if folder != "." else ["."]


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _exists(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is there as pytest's ``is_file`` sees it (a link followed: a dangling one is passed by,
    as pytest does, hatk42)."""
    return (root / rel).is_file()


def _read(root: Path, rel: str) -> bytes | None:
    """The bytes of ``rel`` in ``root`` (at most :data:`CONFIG_BYTES` and one), read without following a link;
    ``None`` when it cannot be read so."""
    with contextlib.suppress(OSError, ValueError):
        return nofollow.read_bytes(root, rel, limit=CONFIG_BYTES + 1)
    return None


def config_at(root: Path, rel: str, native: bool = True) -> Options | None:
    """What the file ``root/rel`` (``/``-separated, its name one of :data:`CONFIG_NAMES`) sets as pytest's
    configuration (:func:`config_options`), read without following a link: a link, or a file that cannot be read,
    is pytest's setting nothing known (the widest reading: pytest follows it); ``None`` when it is not there as a
    file (a dangling link neither, as pytest passes it by) or is no pytest configuration. The one reading of a
    configuration file, in a tree (:func:`setup_for`) and in the folders above a grading copy
    (:func:`pytest_homefield.run.carried.config_above`, twin43: its own before)."""
    if not _exists(root, rel):
        return None
    data = _read(root, rel)
    return config_options(posixpath.basename(rel), data, native) if data is not None else ((), ())


@functools.lru_cache(maxsize=64)
def config_options(name: str, data: bytes, native: bool = True) -> Options | None:
    """What configuration file ``name`` (one of :data:`CONFIG_NAMES`) holding ``data`` sets: its ``python_functions``
    patterns and ``addopts`` (each ``()`` when it sets none), ``None`` when it is no pytest configuration (a
    ``pyproject.toml``, ``tox.ini`` or ``setup.cfg`` without pytest's table or section). A file that cannot be
    parsed, or is too large, is pytest's but sets none. ``native``: read as pytest 9 does; else as pytest < 9 (a
    ``pyproject.toml`` only through ``[tool.pytest.ini_options]``, a ``.pytest.ini`` only with ``[pytest]``)."""
    none: Options = ((), ())
    if len(data) > CONFIG_BYTES:
        return none
    try:
        text = data.decode("utf-8-sig")
    except UnicodeError:
        return none
    options: dict[str, object] = {}
    if name.endswith(".toml"):
        try:
            # line ends as pytest's read_text gives them (gatk45: a lone \r ends a line; tomllib refuses it)
            doc = tomllib.loads(text.replace("\r\n", "\n").replace("\r", "\n"))
        except (tomllib.TOMLDecodeError, RecursionError):  # pytest stops on it (hatk42: a RecursionError too)
            return none
        if name == "pyproject.toml":
            tool = doc.get("tool", {})
            table = tool.get("pytest") if isinstance(tool, dict) else None
            if not isinstance(table, dict) or not table:  # hatk42: pytest 9 passes an empty [tool.pytest] by
                return None
            ini = table.get("ini_options")
            if not native and not isinstance(ini, dict):  # pytest < 9 reads [tool.pytest.ini_options] only
                return None
            options = ini if isinstance(ini, dict) else table
        else:
            table = doc.get("pytest")
            options = table if isinstance(table, dict) else {}
    else:
        section = {"setup.cfg": "tool:pytest"}.get(name, "pytest")
        try:  # pytest's own reader (twin43: configparser reads a header apart, gatk34: ``[pytest] #]`` was none)
            parser = iniconfig.IniConfig(name, data=text).sections
        except iniconfig.ParseError:
            return none
        if section not in parser:
            # pytest stops on a setup.cfg's [pytest] section with an error (hatk42): its configuration, naming none
            return none if (name == "pytest.ini" or (native and name == ".pytest.ini")
                            or (name == "setup.cfg" and "pytest" in parser)) else None
        options = {k: parser[section].get(k) for k in ("python_functions", "addopts")}
    return split_args(options.get("python_functions")), split_args(options.get("addopts"))


#: The white space :func:`shlex.split` splits on (not ``\\v`` nor ``\\f``).
_SHELL_SPACE = " \t\r\n"
#: A run of a word's characters that neither quote nor escape.
_PLAIN_RUN = re.compile(r"[^ \t\r\n'\"\\]+")
#: A run inside double quotes that neither ends them nor escapes.
_DOUBLE_RUN = re.compile(r'[^"\\]+')


def split_words(value: str) -> list[str]:
    """``value`` split as :func:`shlex.split` splits it (POSIX rules, no comments): white space (space, tab, CR,
    LF) between words; ``'…'`` literal; ``"…"`` with ``\\"`` and ``\\\\`` escaped, any other backslash kept; a
    backslash outside quotes escapes the next character; ``''`` an empty word. Linear in ``len(value)``: a run of
    characters is taken whole (:mod:`re`, ``str.find``) and the words are joined once, where :class:`shlex.shlex`
    adds a word's characters one at a time, quadratic on one long word (twin43: an ``addopts`` of one 1 MB word, in
    a configuration file graded code or an agent wrote, cost 21 s of CPU). Raises ``ValueError`` where
    :func:`shlex.split` does (a quotation not closed, a backslash at the end)."""
    words: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _SHELL_SPACE:
            i += 1
        if i >= n:
            return words
        parts: list[str] = []
        while i < n and value[i] not in _SHELL_SPACE:
            c = value[i]
            if c == "'":
                end = value.find("'", i + 1)
                if end < 0:
                    raise ValueError("No closing quotation")
                parts.append(value[i + 1:end])
                i = end + 1
            elif c == '"':
                i += 1
                while True:
                    if run := _DOUBLE_RUN.match(value, i):
                        parts.append(run.group())
                        i = run.end()
                    if i >= n:
                        raise ValueError("No closing quotation")
                    if value[i] == '"':
                        i += 1
                        break
                    if i + 1 >= n:  # a backslash, the last character
                        raise ValueError("No escaped character")
                    escaped = value[i + 1]
                    parts.append(escaped if escaped in '"\\' else "\\" + escaped)
                    i += 2
            elif c == "\\":
                if i + 1 >= n:
                    raise ValueError("No escaped character")
                parts.append(value[i + 1])
                i += 2
            else:
                run = _PLAIN_RUN.match(value, i)
                assert run is not None  # c is none of the characters the run stops at
                parts.append(run.group())
                i = run.end()
        words.append("".join(parts))


def split_args(value: object) -> tuple[str, ...]:
    """An ``args`` option's value as pytest reads it: a string split as a shell splits it (on white space when it
    cannot), a list of strings as it is; ``()`` for anything else. Split by :func:`split_words` (what
    :func:`shlex.split`, pytest's reader, gives), in time linear in the value's length."""
    if isinstance(value, str):
        try:
            return tuple(split_words(value))
        except ValueError:
            return tuple(value.split())
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


@dataclass(frozen=True)
class TestCommand:
    """A test command as it starts pytest (:func:`parse_command`): the one reading of where pytest's words are in it,
    for the options pytest reads (:func:`pytest_args`: the softener, the pin's reading) and for where the pin goes
    (:func:`pytest_homefield.sandbox.testrun.pytest_words`; twin43: two readers of it, by different rules, before).

    ``words``: its words, split as a shell splits it (on white space when it cannot: ``split`` false). ``at``: how
    many words come before pytest's own arguments, those of its first word naming pytest included (``pytest``,
    ``py.test`` or a path ending so; a Python's flags running it, :func:`module_pytest`: ``-m pytest``, ``-mpytest``,
    ``-Bm pytest``), 0 when no word names pytest (a custom command, ``sh -c '…'``). ``launched``: pytest is the
    program the command starts, so a word put at ``at`` reaches pytest: a Python's ``-m`` runs it (wherever it is:
    ``coverage run -m pytest``, ``python -I -m pytest``), or the words before a word naming pytest are none, or an
    ``env`` program's name and ``NAME=VALUE`` words (``env PYTEST_ADDOPTS=-q pytest``: ``env`` runs its program with
    the words after it), or ``uv run`` and its options (:func:`launched_at`; ops46: ``uv run --with pytest
    pytest``, ``uv run python -m pytest``); with another program before such a word (``tox -e pytest``, ``uv run
    --directory d pytest``) the words after are read as pytest's, but a word put there may reach that program.
    ``addopts``: the words of the ``PYTEST_ADDOPTS`` the words before pytest's set (:func:`_env_addopts`)."""

    __test__ = False  # no test class of pytest's

    words: tuple[str, ...]
    at: int
    launched: bool
    addopts: tuple[str, ...]
    split: bool = True

    @property
    def args(self) -> list[str]:
        """The arguments the command gives pytest, as it reads them: ``addopts`` (pytest reads ``PYTEST_ADDOPTS``
        before its command line; soft41, gatk41) then the words after ``at``; none when no word names pytest."""
        return [*self.addopts, *self.words[self.at:]] if self.at else []


def parse_command(command: str) -> TestCommand:
    """``command`` (a test command) read as :class:`TestCommand` describes: pytest's word is its first word naming
    pytest, wherever it is (the widest reading of the options it gives pytest); ``launched`` says whether that word
    is the program's."""
    try:
        words, split = shlex.split(command), True
    except ValueError:
        words, split = command.split(), False
    start = launched_at(words)  # ops46: the words uv run's options are read past first (--with pytest is a value)
    for n in [*range(start, len(words)), *range(min(start, len(words)))]:
        word = words[n]
        plain = PurePosixPath(word).name in ("pytest", "py.test")
        end = n + 1 if plain else module_pytest(words, n)
        if end is None:
            continue
        before = words[:n]
        # a word naming pytest is the program's after env and NAME=VALUE words, or uv run and its options, only (uv
        # run --directory d pytest: not read); a Python's -m running pytest is pytest's start wherever it is
        # (gatk43: coverage run -m pytest, python -I -m pytest, /usr/bin/env python3 -m pytest)
        launched = not plain or start == n
        return TestCommand(words=tuple(words), at=end, launched=launched, addopts=tuple(_env_addopts(before)),
                           split=split)
    return TestCommand(words=tuple(words), at=0, launched=False, addopts=(), split=split)


def program_at(words: Sequence[str]) -> int:
    """The index in ``words`` (a command's) of the program it starts: past an ``env`` program's name and its
    ``NAME=VALUE`` words (``env`` runs the word after them), else 0; ``len(words)`` when none follows. The one
    reading of it, for :func:`parse_command`'s ``launched`` and the interpreter a run's pytest is asked of
    (:func:`pytest_homefield.sandbox.testrun.run_python`; gatk45: ``env A=1 python -m pytest`` asked none, and a
    pytest 8 run was pinned by pytest 9's reading)."""
    if not words or PurePosixPath(words[0]).name != "env":
        return 0
    n = 1
    while n < len(words) and "=" in words[n] and not words[n].startswith("-"):
        n += 1
    return n


#: The uv whose ``uv run`` options are read here: the newest the ``env`` extra allows (``uv>=0.6.7``) when they were
#: taken (ops48: each name asked of its binary, ``uv run --NAME=x``, hidden options and aliases included, the names
#: from its ``uv run --help`` and the field names of its ``uv-cli`` crate; r37's lists were 0.13's ``--help`` only).
UV_OPTIONS_OF = "0.13.9"
#: ``uv run``'s options that take a value, but ``--directory``, which moves the run out of the working folder the
#: pin's paths are relative to (``-w``, ``-i``, ``-f``, ``-P``, ``-C``, ``-p`` short).
UV_RUN_VALUED = frozenset({
    "--extra", "--no-extra", "--group", "--no-group", "--only-group", "--no-editable-package", "--env-file", "--with",
    "--with-editable", "--with-requirements", "--package", "--python-platform", "--index", "--default-index",
    "--index-url", "--extra-index-url", "--find-links", "--index-strategy", "--keyring-provider", "--upgrade-package",
    "--upgrade-group", "--resolution", "--prerelease", "--prerelease-package", "--fork-strategy", "--exclude-newer",
    "--exclude-newer-package", "--no-sources-package", "--reinstall-package", "--link-mode", "--config-setting",
    "--config-settings-package", "--no-build-isolation-package", "--no-build-package", "--no-binary-package",
    "--cache-dir", "--refresh-package", "--python", "--color", "--allow-insecure-host", "--project", "--config-file",
    # hidden, or another name of one above (ops48)
    "--config-settings", "--max-recursion-depth", "--preview-feature", "--preview-features", "--python-fetch",
    "--python-preference", "--trusted-host"})
#: ``uv run``'s options that take none (``--module``: the program is a module, run by the environment's Python), but
#: ``--script`` and ``--gui-script`` (the program is a script file) and ``--help`` (nothing runs).
UV_RUN_FLAGS = frozenset({
    "--all-extras", "--no-dev", "--only-dev", "--no-default-groups", "--all-groups", "--module", "--no-editable",
    "--exact", "--no-env-file", "--isolated", "--active", "--no-sync", "--locked", "--frozen", "--all-packages",
    "--no-project", "--no-index", "--upgrade", "--no-sources", "--reinstall", "--compile-bytecode",
    "--no-build-isolation", "--no-build", "--no-binary", "--require-build-hashes", "--no-require-build-hashes",
    "--no-cache", "--refresh", "--managed-python", "--no-managed-python", "--no-python-downloads", "--quiet",
    "--verbose", "--system-certs", "--offline", "--no-progress", "--no-config",
    # hidden, or another name of one above (ops48)
    "--allow-python-downloads", "--binary", "--build", "--build-isolation", "--compile", "--dev", "--editable",
    "--force-reinstall", "--inexact", "--native-tls", "--no-active", "--no-all-extras", "--no-color", "--no-compile",
    "--no-compile-bytecode", "--no-exact", "--no-installer-metadata", "--no-native-tls", "--no-offline",
    "--no-preview", "--no-reinstall", "--no-system-certs", "--no-upgrade", "--pre", "--preview", "--show-resolution",
    "--show-settings"})
#: ``uv run``'s options read but whose program a word put after it may not reach in the working folder: the run
#: moved (``--directory``), a script file run (``--script``, ``-s``, ``--gui-script``), nothing run (``--help``).
UV_RUN_ASIDE = frozenset({"--directory", "--script", "--gui-script", "--help"})
#: ``uv run``'s short options: those that take a value, those that take none (``-m`` is ``--module``), those
#: :data:`UV_RUN_ASIDE` names (``-s`` is ``--script``, ``-h`` ``--help``).
UV_RUN_SHORT_VALUED, UV_RUN_SHORT_FLAGS, UV_RUN_SHORT_ASIDE = "wifPCp", "mUnqv", "sh"
#: The long name of each of ``uv run``'s short options.
UV_RUN_SHORT_NAMES = {"w": "--with", "i": "--index-url", "f": "--find-links", "P": "--upgrade-package",
                      "C": "--config-setting", "p": "--python", "m": "--module", "U": "--upgrade", "n": "--no-cache",
                      "q": "--quiet", "v": "--verbose", "s": "--script", "h": "--help"}


@dataclass(frozen=True)
class UvRun:
    """A command's ``uv run`` and its options, as uv reads them (:func:`uv_run`). ``program``: the index in the
    command's words of the program uv runs (``len(words)`` when none follows, or when the options are not all read).
    ``read``: every option is one of uv's (:data:`UV_OPTIONS_OF`) and none of :data:`UV_RUN_ASIDE`. ``unknown``: the
    first option that is none of uv's, ``None`` with none. ``env_files``: the values of its ``--env-file`` options,
    in order (uv reads each, a later file's variable over an earlier's, ops48); ``()`` after a ``--no-env-file``.
    ``options``: the words of its options (those before ``program``). ``given``: its options read, in order, each
    by its long name with its value (``None`` for a flag; ``-p 3.12`` is ``("--python", "3.12")``)."""

    program: int
    read: bool
    unknown: str | None
    env_files: tuple[str, ...]
    options: tuple[str, ...]
    given: tuple[tuple[str, str | None], ...] = ()


def uv_run(words: Sequence[str]) -> UvRun | None:
    """``words`` (a command's) read for the ``uv run`` its program is (past an ``env`` prefix, :func:`program_at`), as
    uv's option parser (clap) reads them: a long option ``--NAME=VALUE`` or ``--NAME VALUE`` (:data:`UV_RUN_VALUED`),
    a flag (:data:`UV_RUN_FLAGS`), a group of short flags whose first valued one takes the rest of the group, else
    the next word; ``--`` ends them. ``None`` when the program is not ``uv run``. An option that is none of uv's stops
    the reading (``unknown``): where its program starts is not known then (ops48: ``--python-preference``, ``-p``'s
    kin, hidden in ``--help``, were read as unknown and the run was left unpinned)."""
    n = program_at(words)
    if not (n + 1 < len(words) and PurePosixPath(words[n]).name == "uv" and words[n + 1] == "run"):
        return None
    first = n = n + 2
    files: list[str] = []
    given: list[tuple[str, str | None]] = []
    no_files = aside = False

    def stop(unknown: str | None) -> UvRun:
        return UvRun(len(words), False, unknown, (), tuple(words[first:n]), tuple(given))

    while n < len(words) and words[n].startswith("-") and words[n] != "-":
        word = words[n]
        if word == "--":
            n += 1
            break
        name, eq, value = word.partition("=")
        if word.startswith("--"):
            if name in UV_RUN_VALUED or name == "--directory":
                if not eq:
                    value = words[n + 1] if n + 1 < len(words) else ""
                if name == "--env-file":
                    files.append(value)
                given.append((name, value))
                aside = aside or name == "--directory"
                n += 1 if eq else 2
            elif word in UV_RUN_FLAGS or word in UV_RUN_ASIDE:
                given.append((word, None))
                no_files = no_files or word == "--no-env-file"
                aside = aside or word in UV_RUN_ASIDE
                n += 1
            else:
                return stop(name)
            continue
        for i, flag in enumerate(word[1:], 2):  # a group of short flags, as clap reads it
            if flag in UV_RUN_SHORT_VALUED:
                rest = word[i:].removeprefix("=") if i < len(word) else words[n + 1] if n + 1 < len(words) else ""
                given.append((UV_RUN_SHORT_NAMES[flag], rest))
                n += 1 if i < len(word) else 2  # the rest of the group, else the next word
                break
            if flag in UV_RUN_SHORT_FLAGS or flag in UV_RUN_SHORT_ASIDE:
                given.append((UV_RUN_SHORT_NAMES[flag], None))
            if flag in UV_RUN_SHORT_ASIDE:
                aside = True
            elif flag not in UV_RUN_SHORT_FLAGS:
                return stop("-" + flag)
        else:
            n += 1
    n = min(n, len(words))
    return UvRun(len(words) if aside else n, not aside, None, () if no_files else tuple(files), tuple(words[first:n]),
                 tuple(given))


def launched_at(words: Sequence[str]) -> int:
    """The index in ``words`` (a command's) of the program a word put after it reaches: :func:`program_at`'s, and past
    ``uv run`` and its options there (:func:`uv_run`; ops46: ``uv run --with pytest pytest``, ``uv run -m pytest``,
    ``uv run -- pytest``: uv runs that word with the rest of the command's words after it); ``len(words)`` for a ``uv
    run`` whose options are not all read (one not uv's, ``--directory``, ``--script``: a word put after them may not
    reach a pytest run in the working folder)."""
    found = uv_run(words)
    return program_at(words) if found is None else found.program


#: Programs a pytest test command (no ``{junit}``) cannot start (:func:`command_problem`; ops56, measured: ``make
#: test`` stopped at ``make: unrecognized option '--continue-on-collection-errors'``, ``tox -e py`` read ``-p
#: homefield_reporter`` as its ``--parallel``, and ``tox -e py --`` ran pytest in its environment, whose
#: ``PYTHONPATH`` it drops: ``Error importing plugin "homefield_reporter"``; ``hatch run test`` (a script ``pytest
#: {args}``) ran the tests in an environment it made and synced, and no outcome came back: ``no outcome was written
#: (exit status 0)``; under bubblewrap none of them started).
NOT_PYTEST = frozenset({"make", "tox", "hatch"})


#: ``uv run``'s options whose value names what uv installs, or where it looks for it (ops58): one naming a file or
#: folder of the tree under test installs what the graded copy holds (:func:`tree_install`).
UV_RUN_SOURCES = frozenset({"--with", "--with-editable", "--with-requirements", "--find-links", "--index",
                            "--index-url", "--extra-index-url", "--default-index"})


def _in_tree(place: str, root: Path | None) -> bool:
    """Whether ``place`` (a path, or a URL) names the tree a run's working folder is: a ``file:`` URL's path or a
    path, relative (to that folder), or absolute inside ``root`` (the repository's top, when known); never a URL of
    another scheme."""
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", place)
    if scheme and len(scheme.group(1)) > 1:  # c:, a drive letter, is none
        if scheme.group(1).lower() != "file":
            return False
        place = re.sub(r"^file:(//[^/]*)?", "", place) or "/"
    if not posixpath.isabs(place):
        return True
    return root is not None and _inside(root, place) is not None


def tree_install(found: UvRun, root: Path | None = None) -> str | None:
    """The first option of ``found`` (a command's ``uv run``) that has uv install from the tree under test (ops58):
    ``--with-editable``, ``--with-requirements``, a ``--with`` requirement that is a path or a ``file:`` URL
    (``packaging`` reads each comma-separated one: a name with a version specifier is a registry's), a
    ``--find-links`` or index naming a folder of it (:func:`_in_tree`), as ``"--option value"``; ``None`` with
    none. An agent's change to what it names is installed in the run's environment (measured: ``uv run --active
    --no-sync --with-editable .`` installed the copy's project, its entry points)."""
    from packaging.requirements import InvalidRequirement, Requirement

    for name, value in found.given:
        if name not in UV_RUN_SOURCES or value is None:
            continue
        if name in ("--with-editable", "--with-requirements"):
            return f"{name} {value}"
        places = [value.split("=", 1)[1] if name == "--index" and "=" in value.split(":", 1)[0] else value]
        if name == "--with":
            places = []
            for one in (v.strip() for v in value.split(",") if v.strip()):
                try:
                    url = Requirement(one).url
                except InvalidRequirement:
                    url = one
                if url is not None:
                    places.append(url)
        if any(_in_tree(place, root) for place in places):
            return f"{name} {value}"
    return None


def command_problem(command: str, root: Path | None = None) -> str | None:
    """Why ``command`` (a test command) cannot be run as read here, one line; ``None`` when it can: a ``uv run``
    option that is none of uv's (:data:`UV_OPTIONS_OF`: uv refuses it, and where its program starts, so where the
    pin goes and which words are pytest's, is not known; ops48: such a command was read as pytest's from its first
    word naming pytest, a value of the option's, too); with the repository's top ``root``, a ``--rootdir`` outside
    the tree too (:func:`rootdir_problem`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None  # split on white space, a custom command: as before
    found = uv_run(words)
    if found is not None and found.unknown is not None:
        return (f"test command {command!r}: {found.unknown} is no option of uv run (uv {UV_OPTIONS_OF}'s): where the "
                "program it runs starts is not known; spell the option as uv does, or move it to the environment "
                "(UV_... variables)")
    if found is not None and (named := tree_install(found, root)) is not None:
        return (f"test command {command!r}: uv run {named} installs what the tree under test holds, which an agent's "
                "change edits (its pyproject.toml, a requirements file, a wheel): install it in the environment "
                "homefield runs in (uv sync; uv run homefield …) and drop the option")
    at = program_at(words)
    runner = PurePosixPath(words[at]).name if at < len(words) else ""
    if runner in NOT_PYTEST and "{junit}" not in command:
        return (f"test command {command!r}: {runner} does not run pytest as homefield runs it (the options and test "
                f"files homefield adds go to {runner}, or pytest runs in an environment {runner} makes, without "
                "homefield's reporter or its channel: no outcome comes back); name the command that runs pytest "
                "itself (python -m pytest, .venv/bin/pytest, uv run pytest), or a custom command with {junit}")
    return None if root is None else rootdir_problem(command, root)


def rootdir_problem(command: str, root: Path) -> str | None:
    """Why the ``--rootdir`` ``command`` gives pytest (its last; in the ``PYTEST_ADDOPTS`` the command sets, or its
    ``uv run --env-file`` files', too: :meth:`Setup.args`) cannot be run, one line; ``None`` when it names none,
    or a folder relative to the tree's top (``root``) that stays in it. Every test run is in a copy of the tree
    elsewhere (a scratch folder, the sandbox), so a folder outside the tree (``../elsewhere``) is not there (pytest
    stops: ``--confcutdir must be a directory``), one above it (``..``) names the copy's own folder in every id,
    and an absolute path names the user's checkout, never the copy (ops52: mining dropped every candidate as
    ``reference fails`` with a hint to install what the tests import). A value holding ``$`` is left alone (what
    it names is the shell's, in the copy)."""
    named = last_value(Setup(None, None, False, env_addopts=env_file_addopts(root, command)).args(command), "",
                       "--rootdir")
    if named is None or "$" in named:
        return None
    if posixpath.isabs(named):
        return (f"test command {command!r}: --rootdir {named} is an absolute path: every test run is in a copy of "
                "the repository elsewhere, which it does not name; give the folder relative to the repository's top "
                "(or drop the option)")
    rel = posixpath.normpath(named)
    if rel == ".." or rel.startswith("../"):
        return (f"test command {command!r}: --rootdir {named} lies outside the repository: every test run is in a "
                "copy of the tree elsewhere, where that folder is not (and pytest's node ids would not be the "
                "tree's); name a folder inside the repository, relative to its top (or drop the option)")
    return None


#: The program :func:`env_file_addopts` has uv run (``-I``: nothing of the tree's on its path): what
#: ``PYTEST_ADDOPTS`` it was given, ``=`` then its value, nothing when it was given none.
_PRINT_ADDOPTS = "import os, sys; v = os.environ.get('PYTEST_ADDOPTS'); sys.stdout.write('' if v is None else '=' + v)"


def uv_run_of(command: str) -> UvRun | None:
    """:func:`uv_run` of ``command``'s words (``None`` for one that cannot be split, or another program)."""
    try:
        return uv_run(shlex.split(command))
    except ValueError:
        return None


def env_files_of(root: Path, command: str) -> frozenset[str]:
    """The files of the tree at ``root`` (the run's working folder) that ``command``'s ``uv run`` reads as env files
    (:attr:`UvRun.env_files`), each relative to ``root``, normalized (``/``-separated); one outside the tree is none
    of them. ``frozenset()`` for any other command, or one that cannot be split. What they set reaches the program
    uv runs (``PYTEST_PLUGINS``, ``PYTHONPATH``): grading holds them back as test configuration (ops58)."""
    found = uv_run_of(command)
    if found is None:
        return frozenset()
    return frozenset(rel for name in found.env_files if name and (rel := _inside(root, name)) is not None)


#: The endings of a program word ``uv run`` runs as a script file, reading its inline metadata (PEP 723): uv's own
#: test of the word (a file by another name runs as a script only after ``--script``/``--gui-script``).
UV_SCRIPT_SUFFIXES = (".py", ".pyw")


def uv_script_of(root: Path, command: str) -> frozenset[str]:
    """The file of the tree at ``root`` (the run's working folder) that ``command``'s ``uv run`` runs as a script,
    relative to ``root``, normalized (``/``-separated): its program word when it ends with :data:`UV_SCRIPT_SUFFIXES`,
    or the word after its options with ``--script``/``-s``/``--gui-script``; ``frozenset()`` for any other command,
    a program elsewhere (an absolute path outside the tree, ``..``), one that cannot be split, or a ``uv run`` moved
    by ``--directory`` (its script is read there, not at ``root``). uv reads the script's inline metadata (PEP 723,
    ``# /// script``: its ``dependencies``, its ``[tool.uv]`` indexes and ``find-links``) and installs what it names
    before the program starts (ops60, measured: ``--no-sync`` is no-op for such a script, and ``--active`` installs
    there): grading holds it back as test configuration."""
    try:
        words = shlex.split(command)
    except ValueError:
        return frozenset()
    found = uv_run(words)
    if found is None or found.unknown is not None:
        return frozenset()
    names = {name for name, _ in found.given}
    if "--directory" in names or "--help" in names:
        return frozenset()
    at = program_at(words) + 2 + len(found.options)  # found.program when read; past --script's options too
    if at >= len(words) or not (names & {"--script", "--gui-script"} or words[at].endswith(UV_SCRIPT_SUFFIXES)):
        return frozenset()
    rel = _inside(root, words[at])
    return frozenset() if rel is None or rel == "." else frozenset({rel})


def uv_config_top(root: Path) -> bool:
    """Whether the tree at ``root`` holds uv configuration at its top, where uv's discovery from ``root`` stops: a
    ``uv.toml`` (any entry of that name), or a ``pyproject.toml`` with a ``[tool.uv]`` table (read without following
    a link; one that is a link, cannot be read or parsed counts as holding one: uv stops there, or refuses it)."""
    if os.path.lexists(root / "uv.toml"):
        return True
    if not os.path.lexists(root / "pyproject.toml"):
        return False
    data = _read(root, "pyproject.toml")
    if data is None:
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return uv_table_of(text) is not None


def uv_table_of(text: str | None) -> object:
    """A ``pyproject.toml`` text's ``[tool.uv]`` table (``None`` without one), ``text`` itself when it is no TOML,
    ``False`` for no text: what :func:`uv_config_top` and :func:`~pytest_homefield.run.carried.uv_held_back` read.
    Also run, by its source, in every exported ``eval.sh`` (run/eval_undo.py)."""
    if text is None:
        return False
    try:
        doc = tomllib.loads(text.replace("\r\n", "\n").replace("\r", "\n"))
    except (tomllib.TOMLDecodeError, RecursionError):
        return text
    tool = doc.get("tool")
    return tool.get("uv") if isinstance(tool, dict) else None


def uv_run_files(root: Path, command: str) -> frozenset[str] | None:
    """The files of the tree at ``root`` that ``command``'s ``uv run`` reads as its configuration besides the uv
    configuration at the top (``carried.uv_held_back``): its env files (:func:`env_files_of`) and its script
    (:func:`uv_script_of`); ``None`` when ``command`` is no ``uv run`` (nothing of uv's is read)."""
    if uv_run_of(command) is None:
        return None
    return env_files_of(root, command) | uv_script_of(root, command)


def env_file_addopts(root: Path, command: str) -> tuple[str, ...]:
    """The words of the ``PYTEST_ADDOPTS`` that the ``--env-file`` files of ``command``'s ``uv run``
    (:attr:`UvRun.env_files`, relative to ``root``, the run's working folder) give the program uv runs, as pytest
    splits it (:func:`split_args`); ``()`` with none, or when the words before ``uv`` set ``PYTEST_ADDOPTS`` (uv
    keeps a variable its own environment has; a test run's never has it, :mod:`.dropped_env`). Each file is read
    without following a link, inside ``root`` only (at most :data:`CONFIG_BYTES`; one elsewhere, or that cannot be
    read so, is passed by), and the copies are parsed by uv itself (:func:`uv_dotenv_addopts`: its dotenv reading,
    quotes, ``export``, comments, a later file over an earlier)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    found = uv_run(words)
    if found is None or not found.env_files or found.program >= len(words):
        return ()
    if any(w.startswith("PYTEST_ADDOPTS=") for w in words[:program_at(words)]):
        return ()
    datas: list[bytes] = []
    for name in found.env_files:
        rel = _inside(root, name) if name else None
        data = _read(root, rel) if rel is not None else None
        if data is not None and len(data) <= CONFIG_BYTES:
            datas.append(data)
    value = uv_dotenv_addopts(tuple(datas)) if datas else None
    return split_args(value) if value is not None else ()


@functools.lru_cache(maxsize=32)
def uv_dotenv_addopts(files: tuple[bytes, ...]) -> str | None:
    """The ``PYTEST_ADDOPTS`` that env files of contents ``files`` (in the order ``--env-file`` names them) give the
    program ``uv run`` starts, as uv reads them: the files written to a private folder and named to ``uv run
    --no-project --no-config --offline``, which runs this interpreter (``-I``) printing it, in an environment of
    ``PATH`` alone. ``None`` when they set none, or uv cannot tell (no uv, a file it refuses, 30 s). Cached by the
    files' contents (a grading reads its setup a few times)."""
    uv = uv_binary()
    if uv is None:
        return None
    with tempfile.TemporaryDirectory(prefix="homefield-envfile-") as tmp:
        names: list[str] = []
        for i, data in enumerate(files):
            path = Path(tmp) / f"{i}.env"
            path.write_bytes(data)
            names += ["--env-file", str(path)]
        argv = [uv, "run", "--no-project", "--no-config", "--offline", "--no-cache", "--no-python-downloads",
                "--python", sys.executable, *names, "--", sys.executable, "-I", "-c", _PRINT_ADDOPTS]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                                 cwd=tmp, env={"PATH": os.environ.get("PATH", os.defpath), "HOME": tmp})
        except (OSError, subprocess.SubprocessError):
            return None
    if out.returncode != 0 or not out.stdout.startswith("="):
        return None
    return out.stdout[1:]


def pytest_args(command: str) -> list[str]:
    """The arguments ``command`` (a test command) gives pytest: :attr:`TestCommand.args` of :func:`parse_command`
    (those after its first word naming pytest, after those of the ``PYTEST_ADDOPTS`` the words before it set: ``env
    PYTEST_ADDOPTS='-o python_functions=check_*' pytest``); none when no word names pytest (a custom command, ``sh
    -c '…'``: its options are not read)."""
    return parse_command(command).args


#: Python's own short options that take a value: the rest of their group, else the next word (``-c`` a program,
#: ``-m`` a module, ``-W`` a warning filter, ``-X`` an implementation option).
PYTHON_VALUED = "cmWX"


def module_pytest(words: Sequence[str], n: int) -> int | None:
    """Where pytest's own arguments start (an index of ``words``) when ``words[n]`` is a group of a Python's short
    flags whose ``-m`` runs pytest, read as Python reads a group (gatk43): ``-m pytest``, ``-mpytest``, ``-Bm pytest``,
    ``-Bmpytest`` (``py.test`` too), the first flag of :data:`PYTHON_VALUED` taking the rest of the group, else the
    next word; ``None`` for any other word (``-Wm`` is a warning filter ``m``)."""
    word = words[n]
    if not word.startswith("-") or word.startswith("--"):
        return None
    for i, flag in enumerate(word[1:], 2):
        if flag in PYTHON_VALUED:
            if flag != "m":
                return None
            if word[i:]:
                return n + 1 if word[i:] in ("pytest", "py.test") else None
            return n + 2 if n + 1 < len(words) and words[n + 1] in ("pytest", "py.test") else None
    return None


def _env_addopts(words: Sequence[str]) -> list[str]:
    """The words of the ``PYTEST_ADDOPTS`` that ``words`` (a command's words before its program's) set, as pytest
    splits it (:func:`split_args`): the last ``PYTEST_ADDOPTS=…`` among the ``NAME=VALUE`` words, after an ``env``
    program's name or alone (a test command runs with no shell, so only ``env`` sets a variable so; a shell's
    assignment is read alike, gatk41); none without."""
    rest = words[1:] if words and PurePosixPath(words[0]).name == "env" else words
    values = [w.partition("=")[2] for w in rest if w.startswith("PYTEST_ADDOPTS=")]
    return list(split_args(values[-1])) if values else []


#: pytest's own options that take a value (its parser's, pytest 8 and 9, before any plugin is loaded: what it knows
#: when it looks for its configuration), whose value is no path of the run (:func:`positional`); an option a plugin
#: adds (``-n 2``, ``--cov src``) is not known then, and pytest takes its value for a path too.
VALUED = frozenset({
    "--assert", "--basetemp", "--cache-show", "--capture", "--code-highlight", "--color", "--confcutdir",
    "--config-file", "--debug", "--deselect", "--doctest-glob", "--doctest-report", "--durations", "--durations-min",
    "--ignore", "--ignore-glob", "--import-mode", "--junit-prefix", "--junit-xml", "--junitprefix", "--junitxml",
    "--last-failed-no-failures", "--lfnf", "--log-auto-indent", "--log-cli-date-format", "--log-cli-format",
    "--log-cli-level", "--log-date-format", "--log-disable", "--log-file", "--log-file-date-format",
    "--log-file-format", "--log-file-level", "--log-file-mode", "--log-format", "--log-level", "--max-warnings",
    "--maxfail", "--override-ini", "--pastebin", "--pdbcls", "--pythonwarnings", "--report-chars", "--rootdir",
    "--show-capture", "--tb", "--verbosity", "-W", "-c", "-k", "-m", "-o", "-p", "-r"})


def positional(args: Sequence[str]) -> list[str]:
    """The words of ``args`` (pytest's arguments) pytest takes for paths when it looks for its configuration: those
    that are no option nor the value of one of :data:`VALUED` given apart (``-k expr``), all after a ``--``."""
    out: list[str] = []
    n = 0
    while n < len(args):
        arg = args[n]
        if arg == "--":
            return out + list(args[n + 1:])
        if arg.startswith("-"):
            n += 2 if arg in VALUED and n + 1 < len(args) and not (
                arg in ("--debug", "--cache-show") and args[n + 1].startswith("-")) else 1
            continue
        out.append(arg)
        n += 1
    return out


#: The short options of pytest (those of :data:`VALUED`, and pytest-xdist's ``-n``) that take a value: in a group of
#: short flags (``-qo X``, ``-qoX``, ``-qc FILE``) the first of them takes the rest of the group, else the next word,
#: as pytest's option parser (argparse) reads it; every other letter of a group is a flag (gatk41).
VALUED_SHORT = frozenset({o[1] for o in VALUED if len(o) == 2} | {"n"})


def all_values(args: Sequence[str], short: str, long: str) -> list[str]:
    """The values ``args`` gives option ``short`` (``-o X``, ``-oX``, ``-o=X``, and in a group of short flags, gatk41:
    ``-qo X``, ``-qoX``; :data:`VALUED_SHORT`) or ``long`` (``--override-ini X``, ``--override-ini=X``), in order,
    read as pytest's option parser reads them (a short option's value is no flag of a group: ``-ko`` is ``-k o``);
    none after a ``--``."""
    out: list[str] = []
    n = 0
    while n < len(args):
        arg = args[n]
        n += 1
        if arg == "--":
            break
        if arg == long:
            if n < len(args):
                out.append(args[n])
            n += 1
            continue
        if arg.startswith(long + "="):
            out.append(arg[len(long) + 1:])
            continue
        if arg.startswith("--") or not arg.startswith("-"):
            continue
        for i in range(1, len(arg)):
            if arg[i] not in VALUED_SHORT:
                continue  # a flag of the group
            rest = arg[i + 1:]
            if i == 1 and rest.startswith("="):  # ``-o=X``: argparse splits an option's own ``=`` off
                rest = rest[1:]
            value = rest if rest else args[n] if n < len(args) else None
            n += 0 if rest else 1
            if value is not None and "-" + arg[i] == short:
                out.append(value)
            break
    return out


def last_value(args: Sequence[str], short: str, long: str) -> str | None:
    """The last value of option ``short``/``long`` in ``args`` (:func:`all_values`), ``None`` when none."""
    values = all_values(args, short, long)
    return values[-1] if values else None
