"""Which of an agent's changes are carried into its grading copy (docs/contracts.md §7,
:mod:`pytest_homefield.run.grading`): no test file, ``conftest.py``, test configuration,
``sitecustomize.py``, ``usercustomize.py`` or ``.pth`` file; nor anything else that the interpreter or
pytest would load without a test importing it: a module or package that shadows one from outside the
workspace (``sitecustomize/``, ``pytest.py``, ``homefield_reporter.py``, a stdlib or installed module) added
at an import root (the workspace and its ``src/``), distribution metadata (``*.dist-info``,
``*.egg-info``: ``pytest11`` entry points), a symlink that leads out of the workspace, or an entry that
replaces a folder holding hidden tests or lies below a hidden test file's path.
"""

from __future__ import annotations

import configparser
import functools
import importlib.machinery
import importlib.metadata
import os
import pkgutil
import site
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pytest_homefield.paths import classify_path
from pytest_homefield.run.changes import is_link, link_target, read_text, resolves_inside
from pytest_homefield.sandbox.editable_env import interpreter_facts
from pytest_homefield.sandbox.pytest_config import CONFIG_NAMES, Setup, config_at, setup_for, uv_run_files, uv_table_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

__all__ = ["TaskFiles", "BLOCKED_NAMES", "METADATA_SUFFIXES", "IMPORT_ROOTS", "RUNNER_MODULES", "SECTION_MAX_CHARS",
           "SECTION_MAX_LINE", "carried_changes", "config_above", "pytest_section_changed", "uv_held_back",
           "blocked_name", "in_metadata", "setup_moved", "setup_toggles"]

#: Basenames the agent may never carry into grading.
BLOCKED_NAMES = {"conftest.py", "pytest.ini", "tox.ini", "sitecustomize.py", "usercustomize.py", ".pytest.ini",
                 "pytest.toml", ".pytest.toml", "noxfile.py"}
#: Folder suffixes of distribution metadata: ``importlib.metadata`` reads them from every ``sys.path``
#: entry, so an ``entry_points.txt`` there registers a ``pytest11`` plugin that pytest autoloads. Matched
#: lower-cased, as ``importlib.metadata`` matches them (a ``zzhf.DIST-INFO`` folder is found too).
METADATA_SUFFIXES = (".dist-info", ".egg-info")
#: Folders of the grading copy that are on ``sys.path`` before the stdlib and site-packages (the
#: test command's ``PYTHONPATH``, see :func:`pytest_homefield.sandbox.testrun.scrubbed_env`; ``""`` = root).
IMPORT_ROOTS = ("", "src")
#: Modules the test process loads from outside the workspace before any test runs; with the stdlib
#: and the top-level modules of installed distributions, a change may not add a module shadowing them.
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "homefield_reporter", "homefield_seal",
                            "homefield_keyword", "sitecustomize", "usercustomize", "xdist", "execnet", "iniconfig",
                            "packaging", "pytest_timeout"})


class TaskFiles(Protocol):
    """What :func:`carried_changes` reads of a task: its hidden test files and the reference fix's source
    files (a :class:`~pytest_homefield.records.Task`, or mining's candidate before it is one)."""

    @property
    def test_files(self) -> Sequence[str]: ...

    @property
    def source_files(self) -> Sequence[str]: ...


def _two_texts(pristine: Path, workspace: Path, rel: str) -> tuple[str | None, str | None]:
    """``rel``'s text in ``pristine`` and in ``workspace`` (:func:`~pytest_homefield.run.changes.read_text`)."""
    return read_text(pristine, rel), read_text(workspace, rel)


def uv_held_back(rel: str, uv_files: frozenset[str], texts: Callable[[], tuple[str | None, str | None]]) -> bool:
    """The one rule of what a ``uv run`` test command's grading holds back of a change to ``rel`` (a ``/``-separated
    path of the tree's top): a file ``uv_files`` names (:func:`~pytest_homefield.sandbox.pytest_config.uv_run_files`:
    its env files and script), ``uv.toml`` at the top, or the top ``pyproject.toml`` when its ``[tool.uv]`` table
    differs between the two texts ``texts()`` gives (before, after; ``None``: absent, a link or unreadable), asked
    only for that file. Grading (:func:`carried_changes`) reads the texts from the two trees, mining's scan
    (:func:`pytest_homefield.mine.scan._held_back`, ops61) from the commit's blobs."""
    if rel in uv_files or rel == "uv.toml":
        return True
    if rel != "pyproject.toml":
        return False
    before, after = texts()
    return uv_table_of(before) != uv_table_of(after)


def pytest_section_changed(rel: str, texts: Callable[[], tuple[str | None, str | None]]) -> bool:
    """The one rule of what grading holds back of a change to ``rel`` (a ``/``-separated path) by its content: a
    ``pyproject.toml`` or ``setup.cfg`` whose pytest section differs between the two texts ``texts()`` gives
    (before, after; ``None``: absent, a link or unreadable), asked only for such a file. Grading
    (:func:`carried_changes`, the reference fix's too: ``run.grading.is_reference_fix``, nub60) reads the texts
    from the two trees, mining's scan (:func:`pytest_homefield.mine.scan._held_back`) from the commit's blobs."""
    name = os.path.basename(rel)
    if name not in ("pyproject.toml", "setup.cfg"):
        return False
    before, after = (None if text is None else _section_of(name, text) for text in texts())
    return before != after


#: Longest text, and longest line, of a ``pyproject.toml`` / ``setup.cfg`` whose pytest section is parsed:
#: configparser's option pattern is quadratic in a line's length (a 40,000-character line of an agent's
#: ``setup.cfg`` took 11 s of CPU on the host, 50 MB hours). Past either bound the text is compared whole.
SECTION_MAX_CHARS = 100_000
SECTION_MAX_LINE = 300
# _section_of, _ini_pytest_lines, _module_stem, _top_modules and _escapes also run, by their source, in every
# exported eval.sh (run/eval_undo.py): they use only the stdlib and these module names, which the program defines too.


def _section_of(name: str, text: str) -> str | None:
    """The pytest section(s) of a ``pyproject.toml`` (``tool.pytest*``) or ``setup.cfg``-like text
    (``[tool:pytest]``, ``[pytest]``) as a comparable string, or ``text`` itself when it does not parse, is over
    :data:`SECTION_MAX_CHARS` or has a line over :data:`SECTION_MAX_LINE` (then any change of the file counts as a
    change of its pytest section). Read as pytest reads it: a ``pyproject.toml``'s line ends translated (pytest's
    ``read_text``: a lone ``\r`` ends a line), a ``setup.cfg``'s BOM dropped (iniconfig). gatk45: a text neither
    reader here could parse was ``"<unparseable>"`` before and after any change, so with a repository's
    ``setup.cfg`` starting with a BOM (configparser's ``MissingSectionHeaderError``) or a ``pyproject.toml`` with
    ``\r`` line ends (tomllib's invalid character), both of which pytest reads, an agent's ``addopts = -p …`` added
    there was carried into grading and loaded."""
    if len(text) > SECTION_MAX_CHARS or max(map(len, text.splitlines()), default=0) > SECTION_MAX_LINE:
        return text
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text.replace("\r\n", "\n").replace("\r", "\n"))
            tool = data.get("tool", {})
            return repr({k: v for k, v in tool.items() if k.startswith("pytest")} if isinstance(tool, dict) else tool)
        except Exception:
            return text
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string(text[1:] if text.startswith("\ufeff") else text)
    except configparser.Error:
        return text
    view = repr({s: dict(cp[s]) for s in cp.sections() if s in ("tool:pytest", "pytest")})
    lines = _ini_pytest_lines(text)
    return view if not lines else repr((view, lines))


def _ini_pytest_lines(text: str) -> list[str]:
    """The lines pytest's own reader of ``setup.cfg`` / ``tox.ini`` (iniconfig) puts in a ``[tool:pytest]`` or
    ``[pytest]`` section, headers included, in order (``[]``: none); compared beside configparser's view by
    :func:`_section_of`. gatk34: configparser and iniconfig read a header apart: ``[tool:pytest];]`` and
    ``[tool:pytest] #]`` are a section ``tool:pytest];`` to configparser and ``tool:pytest`` to iniconfig (which
    cuts a header at ``#``/``;``), and a form feed, ``\\r`` or U+2028 ends a line for iniconfig
    (``str.splitlines``) and not for configparser; so an agent's ``addopts = -p its_module`` under such a header
    was carried into grading and loaded. iniconfig's rule, widened: a BOM dropped, a blank or comment line skipped,
    a line starting with ``[`` cut at the first ``#`` and ``;`` and stripped on the right is a header when it ends
    with ``]``, its name stripped (newer iniconfig may strip it)."""
    out: list[str] = []
    inside = False
    for line in (text[1:] if text.startswith("\ufeff") else text).splitlines():
        if line.lstrip()[:1] in ("#", ";") or not line.strip():
            continue
        if line[0] == "[":
            head = line.split("#")[0].split(";")[0].rstrip()
            if head.endswith("]"):
                inside = head[1:-1].strip() in ("tool:pytest", "pytest")
        if inside:
            out.append(line)
    return out


@functools.lru_cache(maxsize=1)
def _outside_modules() -> frozenset[str]:
    """Top-level module names importable from outside any workspace: :data:`RUNNER_MODULES`, the
    stdlib, the top-level modules of the distributions installed in this interpreter, and every top-level module
    of its site folders (gatk55: setuptools' editable finder ``__editable___<dist>_finder``, which a ``.pth`` file
    there imports at each interpreter's start, is no distribution's ``top_level.txt`` name)."""
    names = set(RUNNER_MODULES) | set(sys.stdlib_module_names)
    try:
        names |= set(importlib.metadata.packages_distributions())
    except Exception:  # broken metadata of some distribution: the fixed names still hold
        pass
    folders = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    names |= {m.name for m in pkgutil.iter_modules([f for f in folders if os.path.isdir(f)])}
    return frozenset(names)


@functools.lru_cache(maxsize=8)
def _python_site_modules(python: str) -> frozenset[str]:
    """Every top-level module of the site folders of the interpreter ``python`` (an absolute path: the test command's,
    :func:`~pytest_homefield.sandbox.testrun.command_python`), asked of it (:func:`~.editable_env.interpreter_facts`,
    once per interpreter and process); ``frozenset()`` when it does not answer."""
    facts = interpreter_facts(python)
    if facts is None:
        return frozenset()
    return frozenset(m.name for m in pkgutil.iter_modules([f for f in facts.sites if os.path.isdir(f)]))


def _module_stem(filename: str) -> str | None:
    """``"pytest"`` for ``pytest.py`` / ``pytest.cpython-311-x86_64-linux-gnu.so`` …, else ``None``."""
    for suffix in sorted(importlib.machinery.all_suffixes(), key=len, reverse=True):
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return None


def _top_modules(rel: str, workspace: Path) -> list[str]:
    """The top-level modules that the entry ``rel`` defines at an :data:`IMPORT_ROOTS` folder:
    ``N`` for ``N.py`` (any import suffix), ``N/__init__.py`` or a symlink ``N`` to a folder."""
    parts = rel.split("/")
    out: list[str] = []
    for root in IMPORT_ROOTS:
        if root:
            if parts[0] != root or len(parts) < 2:
                continue
            inner = parts[1:]
        else:
            inner = parts
        if len(inner) == 1:
            stem = _module_stem(inner[0])
            if stem is None and is_link(workspace, rel):
                stem = inner[0]
            if stem:
                out.append(stem)
        elif len(inner) == 2 and _module_stem(inner[1]) == "__init__":
            out.append(inner[0])
    return out


def _escapes(rel: str, workspace: Path) -> bool:
    """Whether ``rel`` is a symlink whose target is absolute or lies outside the tree."""
    target = link_target(workspace, rel)
    if target is None:
        return False
    if os.path.isabs(target):
        return True
    norm = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return norm == ".." or norm.startswith("../") or not resolves_inside(workspace, rel)


def config_above(path: Path) -> Path | None:
    """The first ``conftest.py`` or pytest configuration file in a folder above ``path`` (in each folder, nearest
    first: a ``conftest.py``, then :data:`~pytest_homefield.sandbox.pytest_config.CONFIG_NAMES` in pytest's order,
    each pytest's as pytest reads it: :func:`~pytest_homefield.sandbox.pytest_config.config_at`, the reader of the
    test runs' pin; twin43: a ``pytest*`` table or section of its own reading before, which took a
    ``[tool.pytest_cov]`` table or a ``tox.ini``'s ``[tool:pytest]`` for pytest's and passed a linked ``setup.cfg``
    by), else ``None``. Such a file is outside the grading copy (an agent with a shell can plant one in the temp dir)
    and pytest would load it for a repository without pytest configuration (a custom command of another program
    only: a pytest command's configuration is pinned)."""
    for folder in path.resolve().parents:
        if (folder / "conftest.py").is_file():
            return folder / "conftest.py"
        for name in CONFIG_NAMES:
            if config_at(folder, name) is not None:
                return folder / name
    return None


def blocked_name(rel: str) -> bool:
    """Whether grading leaves every change to ``rel`` (a ``/``-separated path) out by its name alone: one of
    :data:`BLOCKED_NAMES` or a ``.pth`` file (:func:`carried_changes`; the scan's own question,
    ``mine/scan.py`` ``_held_back``)."""
    name = rel.rsplit("/", 1)[-1]
    return name in BLOCKED_NAMES or name.endswith(".pth")


def in_metadata(rel: str) -> bool:
    """Whether ``rel`` (a ``/``-separated path) is inside distribution metadata: a folder of it ends with one of
    :data:`METADATA_SUFFIXES`, lower-cased."""
    return any(part.lower().endswith(METADATA_SUFFIXES) for part in rel.split("/")[:-1])


def carried_changes(changes: dict[str, str], task: TaskFiles, pristine: Path, workspace: Path,
                    test_globs: Sequence[str] = (), python: str | None = None,
                    command: str | None = None) -> tuple[list[str], list[str], bool]:
    """Split the agent's changes into (carried, dropped, touched_tests).

    Dropped: test files (by class or listed in the task), ``conftest.py``, test configuration
    (``pytest.ini``, ``pytest.toml``, ``tox.ini``, a ``pyproject.toml`` / ``setup.cfg`` whose pytest
    section changed), ``sitecustomize.py``, ``usercustomize.py`` and ``*.pth`` files; anything
    inside ``*.dist-info`` / ``*.egg-info``; an added module or package that shadows one from outside
    the workspace (:func:`_outside_modules`) at an import root, unless the task's reference fix
    defines it too (``source_files``); a symlink leading out of the tree;
    and an entry at the path of a folder that holds hidden tests, or below the path of a hidden test file
    (a folder where the test patch writes a file; both count as touching tests). ``python``: the interpreter the
    test command runs (an absolute path; ``None``: this one's only), whose site folders' top-level modules are
    outside ones too (ops56: another venv's setuptools finder ``__editable___<dist>_finder``, imported by its
    ``.pth`` at every start, was carried when that venv was not homefield's). ``command``: the test command; for a
    ``uv run`` one, the files it reads as its configuration are dropped too when changed
    (:func:`~pytest_homefield.sandbox.pytest_config.uv_run_files` of ``pristine``: its env files, ops58, and the
    script it runs, whose inline metadata uv installs from, ops60) and the uv configuration at the top
    (:func:`uv_held_back`, ops58; the rule mining's scan applies too, ops61). Every list in ``changes``' order.
    """
    hidden = set(task.test_files)
    hidden_dirs = {"/".join(p.split("/")[:i]) for p in hidden for i in range(1, p.count("/") + 1)}
    # a top-level module the reference fix itself adds (installed from the user's checkout) is no shadow
    own_modules = {m for p in task.source_files for m in _top_modules(p, workspace)}
    outside = _outside_modules() | (_python_site_modules(python) if python is not None else frozenset())
    uv_files = uv_run_files(pristine, command) if command else None
    carried: list[str] = []
    dropped: list[str] = []
    touched = False
    for rel in changes:
        name = os.path.basename(rel)
        # an entry below a hidden test file's path (a folder planted where the test patch writes a file,
        # atk20 F1) would keep the hidden tests from being applied: it touches them too
        is_test = (rel in hidden or rel in hidden_dirs or any(rel.startswith(h + "/") for h in hidden)
                   or classify_path(rel, list(test_globs)) == "test" or name == "conftest.py")
        touched = touched or is_test
        blocked = is_test or blocked_name(rel)
        texts = functools.cache(functools.partial(_two_texts, pristine, workspace, rel))  # each tree's read once
        if not blocked:
            blocked = pytest_section_changed(rel, texts)
        if not blocked and uv_files is not None:  # a uv run's own configuration, the parent's kept (ops58, ops60)
            blocked = uv_held_back(rel, uv_files, texts)
        if not blocked and changes[rel] != "deleted":
            blocked = (in_metadata(rel) or _escapes(rel, workspace)
                       or (changes[rel] == "added"
                           and any(m in outside and m not in own_modules
                                   for m in _top_modules(rel, workspace))))
        (dropped if blocked else carried).append(rel)
    return carried, dropped, touched


def setup_toggles(carried: Sequence[str], changes: Mapping[str, str]) -> list[str]:
    """The entries of ``carried`` (of ``changes``: ``rel`` → ``"added"``/``"modified"``/``"deleted"``) whose being
    there or not pytest's rootdir search reads by name: a ``setup.py`` or one of
    :data:`~pytest_homefield.sandbox.pytest_config.CONFIG_NAMES` the change added or deleted, in order
    (:func:`setup_moved`'s candidates)."""
    names = {"setup.py", *CONFIG_NAMES}
    return [r for r in carried if r.rsplit("/", 1)[-1] in names and changes.get(r) != "modified"]


def setup_moved(before: Setup, tree: Path, carried: Sequence[str], changes: Mapping[str, str],
                command: str, targets: Sequence[str]) -> list[str]:
    """The carried changes (``carried``, of ``changes``: ``rel`` → ``"added"``/``"modified"``/``"deleted"``) to be
    held back because pytest's setup moved (gatk48): ``tree`` holds them, and pytest's configuration file or rootdir
    for ``command`` on ``targets`` (the task's test files; :func:`~pytest_homefield.sandbox.pytest_config.setup_for`)
    there is not ``before``'s (the parent's tree with the task's test files, as the commit runs have it: gatk49); then
    every one of them that pytest's rootdir search reads by
    name, a ``setup.py`` or one of :data:`~pytest_homefield.sandbox.pytest_config.CONFIG_NAMES` the change added or
    deleted (a file's text alone never moves it: a configuration whose pytest section changed is held back already),
    else ``[]``. The task's ids are pytest's, relative to the rootdir the reference was mined with: in a repository
    with no pytest configuration a real fix adding ``pkg/setup.py`` made ``pkg/`` the rootdir of ``pkg/tests/``, no
    id of the task was reported and the fix was ``tests_failed``."""
    toggled = setup_toggles(carried, changes)
    if not toggled:
        return []
    after = setup_for(Path(os.path.abspath(tree)), command, targets)
    return toggled if (before.config, before.rootdir) != (after.config, after.rootdir) else []
