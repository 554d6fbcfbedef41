"""The first step of an exported ``eval.sh``: undo what homefield's grading would not carry (contracts §2, §7).

homefield grades an attempt on a fresh copy of the base commit that receives only the *carried*
changes (:func:`pytest_homefield.run.carried.carried_changes`). A SWE-bench harness instead applies
the model patch to ``/testbed`` and runs ``eval.sh`` there, so without this step a patch that only
adds a root ``conftest.py`` rewriting every report to ``passed`` would be resolved (atk11 E1).
:func:`undo_lines` are the shell lines of that step (``homefield export`` puts them first in
:func:`pytest_homefield.export.taskrepo.eval_script`; they live here, with grading's rules): a
Python program (:data:`PROGRAM` plus grading's own helpers, by their source: the pytest-section
compare, the module stem and the import-root and link checks) run with ``python -I -S`` (no folder of
the checkout on ``sys.path``; ``-S``: no path file of the site folders read and no ``sitecustomize`` imported, the
site folders put on ``sys.path`` by the program itself, atk46: an editable install's path file names the checkout's
``src/``, and a ``sitecustomize`` the patch added there ran before the program and ended it, every file kept; the
check of a moved setup looks for a pytest the site folders lack in the folders their path files name outside the
checkout, none of their import lines run: git66),
which lists every path that differs from ``base_commit`` (``git diff`` for tracked paths,
``git ls-files -o`` for untracked ones, ignored ones included) and puts back as at ``base_commit``,
or removes, each one grading drops: a test file (the base tree's test-class files, named one by one
or by their folder when every file in it is a test file, and the task's hidden test paths),
``conftest.py`` and grading's other blocked names, an entry below a hidden test file's path, ``*.pth``,
a changed pytest section of ``pyproject.toml`` / ``setup.cfg``, for a ``uv run`` test command what it reads as
its configuration (its env files and script, ``uv.toml``, a changed ``[tool.uv]`` table), anything in distribution
metadata,
caches and compiled files (``__pycache__``, ``*.pyc``: never part of a change), a symlink leading out
of the checkout, and an added module shadowing one from outside the checkout (the image's stdlib and installed
distributions, and pytest's own modules) unless the reference fix adds it too. Each is named on
stderr before the test output starts.

Not exported: the canaries (an exported score is not forgery-checked), and an *added* file that
grading would class as a test outside those folders is kept (the eval runs only the hidden tests).
"""

from __future__ import annotations

import inspect
import json
import shlex
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pytest_homefield.paths import classify_path, runnable_tests
from pytest_homefield.records import Task
from pytest_homefield.run import carried
from pytest_homefield.run.changes import IGNORED_DIRS, IGNORED_SUFFIXES
from pytest_homefield.sandbox import pytest_config

__all__ = ["PROGRAM", "split_test_paths", "undo_config", "undo_lines"]

_HEREDOC = "EOF_HOMEFIELD_UNDO_5c2e"

#: The program's own part (grading's helpers are put before it, by their source, see :func:`undo_lines`).
PROGRAM = r'''
def is_link(root, rel):
    return os.path.islink(os.path.join(root, rel))


def link_target(root, rel):
    return os.readlink(os.path.join(root, rel)) if is_link(root, rel) else None


def resolves_inside(root, rel):
    top = os.path.realpath(root)
    return os.path.realpath(os.path.join(root, rel)).startswith(top + os.sep)


def section(rel, text):
    if text is None:
        return None
    if tomllib is None and rel.endswith("pyproject.toml"):
        return text  # no TOML parser here: any change of the file counts
    return _section_of(os.path.basename(rel), text)


def uv_table(text):
    return text if tomllib is None else uv_table_of(text)  # no TOML parser here: any change of the file counts


def git(*args):
    out = subprocess.run(("git",) + args, stdout=subprocess.PIPE, check=True).stdout
    return out.decode("utf-8", "surrogateescape")


def base_text(rel):
    proc = subprocess.run(("git", "show", C["base"] + ":" + rel), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def outside():
    names = set(C["runner_modules"]) | set(getattr(sys, "stdlib_module_names", C["stdlib"]))
    try:
        import importlib.metadata
        names |= set(importlib.metadata.packages_distributions())
    except Exception:
        pass
    import pkgutil
    # every top-level module of the site folders, those no distribution names too: a .pth file there may import
    # one at every start, as setuptools' editable finder (__editable___<dist>_finder) is (gatk55)
    names |= {m.name for m in pkgutil.iter_modules(SITE_FOLDERS)}
    return names


def dropped(rel, added):
    parts = rel.split("/")
    name = parts[-1]
    if any(p in C["ignored_dirs"] or p.lower().endswith(tuple(C["metadata"])) for p in parts[:-1]):
        return True
    if name.endswith(tuple(C["ignored_suffixes"])) or name in C["blocked"] or name.endswith(".pth"):
        return True
    if rel in C["test_files"] or rel in C["hidden_dirs"] or rel.startswith(tuple(C["test_dirs"])):
        return True
    if rel.startswith(tuple(h + "/" for h in C["hidden"])):  # a folder where a hidden test file goes (atk20 F1)
        return True
    if C["uv"] and (rel in C["uv_files"] or rel == "uv.toml"):  # a uv run command's own configuration (ops60)
        return True
    if name in ("pyproject.toml", "setup.cfg"):
        here = open(rel, encoding="utf-8", errors="replace").read() if os.path.isfile(rel) else None
        base = base_text(rel)
        if section(rel, base) != section(rel, here):
            return True
        if C["uv"] and rel == "pyproject.toml" and uv_table(base) != uv_table(here):
            return True
    if not os.path.lexists(rel):
        return False
    if _escapes(rel, "."):
        return True
    return added and any(m in OUTSIDE and m not in C["own"] for m in _top_modules(rel, "."))


def path_lines():
    """The folders the path files of the site folders name outside the checkout, as site.addpackage reads them (a line
    not starting with "import", joined to its site folder, that exists), none of their import lines run (git66: under
    -S a pytest reached only through one, an editable install's, was not found and the gatk48 check skipped)."""
    found = []
    for folder in SITE_FOLDERS:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.rstrip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.abspath(os.path.join(folder, line))
                real, top = os.path.realpath(path), os.path.realpath(".")
                inside = real == top or real.startswith(top + os.sep)  # an editable install of the checkout
                if os.path.exists(path) and not inside and path not in sys.path + found:
                    found.append(path)
    return found


def setup_of(ref):
    """pytest's (rootdir, configuration file) for the task's run, relative to the checkout, as this image's pytest
    determines it (its own determine_setup) in a copy of every file its search reads by name (C["setup_names"]) of
    the working tree (ref None) or of commit ref, the targets there (empty files where none is); None without pytest
    (looked for in the site folders, then in the folders their path files name: path_lines)."""
    try:
        import inspect, tempfile
        from pathlib import Path
        try:
            from _pytest.config.findpaths import determine_setup
        except ImportError:
            sys.path.extend(path_lines())
            from _pytest.config.findpaths import determine_setup
    except Exception:
        return None
    if ref is None:
        paths = [p for p in git("ls-files", "-c", "-o", "-z").split("\0") if p and os.path.isfile(p)]
    else:
        paths = [p for p in git("ls-tree", "-r", "-z", "--name-only", ref).split("\0") if p]
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as top:
        for rel in sorted({p for p in paths if p.rsplit("/", 1)[-1] in C["setup_names"]}):
            data = open(rel, "rb").read() if ref is None else subprocess.run(
                ("git", "show", ref + ":" + rel), stdout=subprocess.PIPE, check=True).stdout
            os.makedirs(os.path.join(top, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(top, rel), "wb") as fh:
                fh.write(data)
        for rel in C["targets"]:
            os.makedirs(os.path.join(top, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(top, rel), "ab").close()
        given = {"inifile": C["inifile"], "override_ini": None, "args": C["args"], "rootdir_cmd_arg": C["rootdir"],
                 "invocation_dir": Path(top), "config": None}
        os.chdir(top)
        try:
            found = determine_setup(**{k: v for k, v in given.items()
                                       if k in inspect.signature(determine_setup).parameters})
            real = os.path.realpath(top)
            out = tuple(None if p is None else os.path.relpath(os.path.realpath(str(p)), real) for p in found[:2])
        except Exception as exc:
            out = ("error", str(exc))
        finally:
            os.chdir(here)
    return out


C = json.loads(sys.stdin.readline())
IMPORT_ROOTS = tuple(C["import_roots"])
OUTSIDE = outside()
tracked = [p for p in git("diff", "--no-renames", "--name-only", "-z", C["base"]).split("\0") if p]
untracked = [p.rstrip("/") for p in git("ls-files", "-o", "-z").split("\0") if p]
known = set(tracked)
toggled = []
for rel in untracked + tracked:  # an untracked link or file where a tracked folder was goes first
    if not dropped(rel, rel not in known):
        if rel.rsplit("/", 1)[-1] in C["setup_names"] and (rel not in known or not os.path.lexists(rel)):
            toggled.append(rel)  # added or deleted: it may move pytest's rootdir (gatk48, below)
        continue
    sys.stderr.write("homefield: undo " + rel + " (homefield's grading does not carry it)\n")
    if os.path.isdir(rel) and not os.path.islink(rel):
        shutil.rmtree(rel, ignore_errors=True)
    elif os.path.lexists(rel):
        os.unlink(rel)
    if rel in known:
        subprocess.run(("git", "checkout", "-q", C["base"], "--", rel), stderr=subprocess.DEVNULL)
# gatk48, as grading holds them back (run.carried.setup_moved): a setup.py or configuration file the patch added or
# deleted, when pytest's rootdir or configuration for the task's tests is not the base commit's with them
moved = False
if toggled:
    here = setup_of(None)
    moved = here is not None and here != setup_of(C["base"])
    if here is None:  # said, not silent (git66): this image's python imports no pytest, as the step runs it
        sys.stderr.write("homefield: no pytest to ask whether " + ", ".join(toggled) + " moves pytest's rootdir: "
                         "kept\n")
if moved:
    for rel in toggled:
        sys.stderr.write("homefield: undo " + rel + " (it moves pytest's rootdir or configuration from the base "
                         "commit's: homefield's grading holds it back)\n")
        if os.path.lexists(rel):
            os.unlink(rel)
        if rel in known:
            subprocess.run(("git", "checkout", "-q", C["base"], "--", rel), stderr=subprocess.DEVNULL)
'''

_PRELUDE = """from __future__ import annotations
import configparser, importlib.machinery, json, os, shutil, site, subprocess, sys


def site_folders():
    # the interpreter's site folders, as site.venv() finds them, without site.main(): run with -S, no path file is
    # read and no sitecustomize imported (atk46: an editable install's path file names the checkout's src/)
    here = os.path.dirname(os.path.abspath(sys.executable))
    prefixes = [sys.prefix, sys.exec_prefix]
    for cfg in (os.path.join(here, "pyvenv.cfg"), os.path.join(os.path.dirname(here), "pyvenv.cfg")):
        if os.path.isfile(cfg):
            with open(cfg, encoding="utf-8", errors="replace") as fh:
                keys = dict((k.strip().lower(), v.strip().lower()) for k, _, v in (ln.partition("=") for ln in fh))
            system = keys.get("include-system-site-packages") == "true"
            prefixes = [os.path.dirname(here)] + (prefixes if system else [])
            break
    return [f for f in site.getsitepackages(prefixes) if os.path.isdir(f)]


SITE_FOLDERS = site_folders()
sys.path.extend(f for f in SITE_FOLDERS if f not in sys.path)
try:
    import tomllib
except ImportError:
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None
"""


def split_test_paths(tracked: Sequence[str], test_globs: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """``(folders, files)``: the test-class paths of ``tracked`` (:func:`classify_path`), the ones in a
    folder whose every tracked file is a test file given by that folder (``tests/``, the topmost
    such), the others one by one. Both sorted."""
    total: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    is_test = {p: classify_path(p, list(test_globs)) == "test" for p in tracked}
    for p, t in is_test.items():
        for i in range(1, p.count("/") + 1):
            folder = "/".join(p.split("/")[:i]) + "/"
            total[folder] += 1
            tests[folder] += t
    folders: set[str] = set()
    files: list[str] = []
    for p, t in is_test.items():
        if not t:
            continue
        whole = [f for f in ("/".join(p.split("/")[:i]) + "/" for i in range(1, p.count("/") + 1))
                 if tests[f] == total[f]]
        if whole:
            folders.add(whole[0])
        else:
            files.append(p)
    return sorted(folders), sorted(files)


def undo_config(task: Task, tracked: Sequence[str], test_globs: Sequence[str] = (),
                python: str | None = None) -> dict[str, object]:
    """The program's settings for ``task``: grading's constants, the test paths of the base tree
    ``tracked`` (:func:`split_test_paths`), the hidden test files (also apart: an entry below one is undone, as
    grading drops it) and their folders, the top-level modules
    the reference fix defines, and the stdlib's names when the image's ``python`` (``X.Y``) is older
    than 3.10 (which has no ``sys.stdlib_module_names``). And for the check of a moved setup (gatk48,
    :func:`~pytest_homefield.run.carried.setup_moved`): the names pytest's rootdir search reads, the task's runnable
    test files (``targets``, grading's), and of its test command the paths, ``-c`` and ``--rootdir`` it gives
    pytest (``args``: the paths then the targets, ``inifile``, ``rootdir``). For a ``uv run`` test command
    (``uv``), the files it reads as its configuration (``uv_files``:
    :func:`~pytest_homefield.sandbox.pytest_config.uv_run_files`; with ``uv.toml`` and the top ``pyproject.toml``'s
    ``[tool.uv]``, ``carried_changes``' ``command``, ops60)."""
    folders, files = split_test_paths(tracked, test_globs)
    hidden = sorted(task.test_files)
    hidden_dirs = sorted({"/".join(p.split("/")[:i]) for p in hidden for i in range(1, p.count("/") + 1)})
    with tempfile.TemporaryDirectory() as empty:  # no entry is a link there: N.py / N/__init__.py count
        own = sorted({m for p in task.source_files for m in carried._top_modules(p, Path(empty))})
    old = python is not None and tuple(int(x) for x in python.split(".")[:2]) < (3, 10)
    args = pytest_config.pytest_args(task.test_cmd or "python -m pytest")
    targets = runnable_tests(task.test_files, list(test_globs))
    uv_files = pytest_config.uv_run_files(Path("/testbed"), task.test_cmd or "python -m pytest")
    return {"uv": uv_files is not None, "uv_files": sorted(uv_files or ()),
            "setup_names": sorted({"setup.py", *pytest_config.CONFIG_NAMES}), "targets": targets,
            "args": [*pytest_config.positional(args), *targets],
            "inifile": pytest_config.last_value(args, "-c", "--config-file"),
            "rootdir": pytest_config.last_value(args, "", "--rootdir"),
            "base": task.parent, "test_dirs": folders, "test_files": sorted(set(files) | set(hidden)),
            "hidden": hidden, "hidden_dirs": hidden_dirs, "blocked": sorted(carried.BLOCKED_NAMES | {"conftest.py"}),
            "metadata": list(carried.METADATA_SUFFIXES), "ignored_dirs": sorted(IGNORED_DIRS),
            "ignored_suffixes": list(IGNORED_SUFFIXES), "import_roots": list(carried.IMPORT_ROOTS),
            "runner_modules": sorted(carried.RUNNER_MODULES), "own": own,
            "stdlib": sorted(sys.stdlib_module_names) if old else []}


def program() -> str:
    """The whole program: :data:`_PRELUDE`, grading's helpers by their source, :data:`PROGRAM`."""
    helpers = "\n\n".join(inspect.getsource(f) for f in (carried._section_of, carried._ini_pytest_lines,
                                                          carried._module_stem, carried._top_modules,
                                                          carried._escapes, pytest_config.uv_table_of))
    bounds = f"SECTION_MAX_CHARS = {carried.SECTION_MAX_CHARS}\nSECTION_MAX_LINE = {carried.SECTION_MAX_LINE}\n"
    return _PRELUDE + bounds + "\n\n" + helpers + PROGRAM


def undo_lines(task: Task, tracked: Sequence[str], test_globs: Sequence[str] = (), python: str | None = None) -> str:
    """The ``eval.sh`` lines of the undo step: the program reading its settings (:func:`undo_config`,
    one JSON line) from a heredoc. When it fails (no ``python``, no git repository) ``eval.sh`` exits
    1 before any test runs: nothing is resolved on a checkout it could not clean."""
    config = json.dumps(undo_config(task, tracked, test_globs, python), ensure_ascii=True)
    fail = "{ echo 'homefield: the undo step failed: no test is run' >&2; exit 1; }"
    return f"python -I -S -c {shlex.quote(program())} <<'{_HEREDOC}' || {fail}\n{config}\n{_HEREDOC}"
