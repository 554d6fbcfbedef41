"""A test run's own Python environment under ``--sandbox none`` (docs/contracts.md §7 "Editable installs", ops54).

Without a sandbox nothing can be bound over the user's checkout, so an editable install of the repository (a
``.pth`` path line naming ``/repo/src``, setuptools' ``__editable___<name>_finder`` naming ``/repo/pkg``) made every
interpreter a test run starts import the user's checkout, HEAD's fix included, wherever its ``sys.path`` did not put
the copy first: a test's child started as ``[sys.executable, ...]`` with its own ``PYTHONPATH`` (ops52: a ``cmd:``
agent appending a comment was ``solved``).

So a test run whose interpreter's environment has such an install runs in an environment of its own, made in
the run's private folder (:func:`own_environment`): a virtual environment (PEP 405: ``pyvenv.cfg`` naming the
same base interpreter, ``bin/python`` a link to it) whose one site folder holds a ``.pth`` that adds the
environment's site folders in their order, each ``.pth`` file of theirs processed by :func:`site.addpackage` as
Python would, but those naming the repository, whose steps name the copy under test instead
(:mod:`._editable_site`, run in the test's interpreter). Its interpreter is the one the test command starts (in
the command's ``python``'s place, or before its ``pytest`` script's path), so ``sys.executable`` and ``python -m``
children import the copy too. What is asked of the interpreter (its base executable, version and site folders) is
asked once per interpreter and process (:func:`interpreter_facts`); the plan (the ``.pth`` files and finders read)
is made for each run, as the copy is each run's.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import functools
import json
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pytest_homefield.sandbox.editable import (
    FINDER_IMPORT,
    MODULE_IMPORT,
    PTH_MAX_BYTES,
    _module_text,
    _tree_of,
    finder_literals,
    read_own,
    redirector_map,
)
from pytest_homefield.sandbox.protected import in_copy, protected, touches_protected

__all__ = ["InterpreterFacts", "OwnEnvironment", "interpreter_facts", "site_plan", "own_environment",
           "rewritten_script", "SITE_MODULE", "PTH_NAME", "SCRIPT_MAX_BYTES"]

#: The module :mod:`._editable_site` is written as, in the run's environment's site folder (:data:`_PROBE` names it).
SITE_MODULE = "_homefield_editable_site"
#: The one ``.pth`` file of that site folder.
PTH_NAME = "_homefield_editable.pth"
#: The variables of the test run's environment that change which site folders an interpreter adds (the probe gets
#: them, nothing else of it; ``HOME`` is the run's own, empty: no user site of the user's).
_SITE_VARIABLES = ("PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONHOME", "PYTHONPLATLIBDIR")

#: Asked of the interpreter (``python -c``, from ``/``; the standard library only): its base executable, version,
#: the site folders its :mod:`site` adds, in order (the user's first, as ``site.main`` adds them), and the bytecode of
#: :mod:`._editable_site` (its text on stdin) as its import system would cache it (a checked hash-based ``.pyc``,
#: PEP 552, base64, and its ``__pycache__`` name): test runs set ``PYTHONDONTWRITEBYTECODE``, and compiling it at
#: every interpreter start was 12 ms of each (median of 41, a loaded machine; 2 ms from the ``.pyc``).
_PROBE = (
    "import base64, importlib.util, json, marshal, os, site, sys\n"
    "sites = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []\n"
    "sites += site.getsitepackages()\n"
    "base = getattr(sys, '_base_executable', None) or sys.executable\n"
    "source = sys.stdin.buffer.read()\n"
    "pyc = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, 'little') + importlib.util.source_hash(source)\n"
    "pyc += marshal.dumps(compile(source, '_homefield_editable_site.py', 'exec', dont_inherit=True))\n"
    "cached = os.path.basename(importlib.util.cache_from_source('/_homefield_editable_site.py'))\n"
    "print(json.dumps({'base': os.path.realpath(base), 'version': '%d.%d' % sys.version_info[:2],\n"
    "                  'prefix': sys.prefix, 'sites': [s for s in sites if os.path.isdir(s)],\n"
    "                  'pyc': base64.b64encode(pyc).decode(), 'cached': cached}))\n"
)


@dataclass(frozen=True)
class InterpreterFacts:
    """An interpreter as a test run would start it: ``base`` its base executable (real path: what the run's own
    environment's ``bin/python`` links to), ``version`` ``"3.12"``, ``prefix`` its ``sys.prefix``, ``sites`` the
    site folders its :mod:`site` adds, in order (existing folders only), ``pyc`` the bytecode of
    :mod:`._editable_site` it caches and ``cached`` that file's name in ``__pycache__`` (``""``: none)."""

    base: str
    version: str
    prefix: str
    sites: tuple[str, ...]
    pyc: bytes = b""
    cached: str = ""


@functools.lru_cache(maxsize=16)
def _facts(python: str, variables: tuple[tuple[str, str], ...]) -> InterpreterFacts | None:
    env = {"PATH": os.defpath, "HOME": "/nonexistent", **dict(variables)}
    try:
        proc = subprocess.run([python, "-c", _PROBE], capture_output=True, timeout=30, cwd="/", env=env,
                              input=_site_source().encode("utf-8"))
        found = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
        if not isinstance(found, dict) or not os.path.isabs(str(found.get("base", ""))):
            return None
        cached = str(found["cached"])
        return InterpreterFacts(base=str(found["base"]), version=str(found["version"]), prefix=str(found["prefix"]),
                                sites=tuple(str(s) for s in found.get("sites", ())),
                                pyc=base64.b64decode(str(found["pyc"])),
                                cached=cached if cached == os.path.basename(cached) else "")
    except (OSError, subprocess.SubprocessError, ValueError, IndexError, KeyError):
        return None


def interpreter_facts(python: str, env: Mapping[str, str] | None = None) -> InterpreterFacts | None:
    """:class:`InterpreterFacts` of the interpreter at ``python`` (an absolute path) with the site variables of
    ``env`` (the test run's), asked once per interpreter, variables and process (30 s), again when the base
    executable it named is gone; ``None`` when it does not run or answer."""
    variables = tuple((k, (env or {})[k]) for k in _SITE_VARIABLES if k in (env or {}))
    facts = _facts(python, variables)
    if facts is not None and not os.path.exists(facts.base):  # replaced since it was asked: asked again
        _facts.cache_clear()
        facts = _facts(python, variables)
    return facts


#: One step of a ``.pth`` file's plan (:mod:`._editable_site`): ``("path", folder)``, ``("finder", module,
#: mapping, namespaces)`` or ``("exec", line)``.
Step = tuple[object, ...]
_K = TypeVar("_K")


def _to_copy(entry: str, base: Path) -> str | None:
    """The copy's (``base``, resolved) counterpart of ``entry`` (a path inside a protected folder), when it lies
    inside ``base`` and touches no protected folder (whether it exists or not: a folder the change removed imports
    nothing); else ``None``."""
    target = in_copy(entry, base)
    if target is None:
        return None
    real = Path(os.path.realpath(target))
    return str(target) if real.is_relative_to(base) and not touches_protected(real) else None


def _retarget(value: str, base: Path) -> tuple[str | None, bool]:
    """``(what a hook's path ``value`` becomes, whether it names the repository)``: a path inside a protected folder
    its copy's counterpart (:func:`_to_copy`; ``None``: none, left out), any other as it is."""
    if touches_protected(value):
        return _to_copy(value, base), True
    return value, False


def _retarget_all(pairs: Iterable[tuple[_K, str]], base: Path) -> tuple[list[tuple[_K, str]], bool]:
    """Each ``(key, path)`` of ``pairs`` with its path retargeted (:func:`_retarget`; one with no counterpart in the
    copy left out), and whether any of them named the repository."""
    named = False
    kept: list[tuple[_K, str]] = []
    for key, value in pairs:
        moved, by_repo = _retarget(value, base)
        named = named or by_repo
        if moved is not None:
            kept.append((key, moved))
    return kept, named


def _finder_step(site: str, module: str, base: Path) -> tuple[Step, bool]:
    """The step for setuptools' finder ``module`` of ``site`` and whether it names the repository: its ``MAPPING``
    and ``NAMESPACES`` (parsed, never imported) with each path inside a protected folder taken from the copy, a
    path with no counterpart there left out."""
    found = finder_literals(os.path.join(site, module + ".py"))
    mapping, spaces = found.get("MAPPING"), found.get("NAMESPACES")
    kept, named = _retarget_all([(k, v) for k, v in (mapping.items() if isinstance(mapping, dict) else ())
                                 if isinstance(k, str) and isinstance(v, str)], base)
    new_map = dict(kept)
    new_spaces: dict[str, list[str]] = {}
    for key, paths in (spaces.items() if isinstance(spaces, dict) else ()):
        if not (isinstance(key, str) and isinstance(paths, list)):
            continue
        moved, by_repo = _retarget_all([(None, p) for p in paths if isinstance(p, str)], base)
        named = named or by_repo
        new_spaces[key] = [value for _, value in moved]
    return ("finder", module, new_map, new_spaces), named


def hook_names_repository(path: str) -> bool:
    """Whether the module file ``path`` (a site hook a ``.pth`` line imports) names the repository under benchmark: a
    string in its code (any depth: a call's argument, a literal's item) that is an absolute path inside a protected
    folder (meson-python's ``_<name>_editable_loader``, its build folder and ninja run in the checkout;
    scikit-build-core's ``_<name>_editable``, its modules' files there). Parsed, never imported; a file unreadable
    as a regular file, larger than :data:`~.editable.FINDER_MAX_BYTES` or not Python names nothing (read and parsed
    as :func:`~.editable.redirector_map` reads and parses it: the parse shared through its cache)."""
    data = _module_text(path)
    tree = _tree_of(data) if data is not None else None
    if tree is None or not (folders := protected()):
        return False
    return any(isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/")
               and "\0" not in node.value and any(Path(os.path.realpath(node.value)).is_relative_to(f) for f in folders)
               for node in ast.walk(tree))


def _import_step(site: str, line: str, base: Path) -> tuple[Step | None, bool]:
    """The step for an ``import`` line of a ``.pth`` file of ``site`` that imports no setuptools finder, and whether
    it names the repository: for an ``editables`` redirector module (:func:`~.editable.redirector_map`: hatchling's
    ``import _editable_impl_<name>``, ops56) ``("redirect", pairs)``, each module's file inside a protected folder
    taken from the copy (one with no counterpart there left out); ``None`` (left out) for a module whose code names
    the repository otherwise (:func:`hook_names_repository`: meson-python's and scikit-build-core's loaders, which
    rebuild in the checkout and import its files; ops58: under ``--sandbox none`` the tests imported the user's
    checkout, HEAD's code, whatever the change); any other ``("exec", line)``."""
    hook = MODULE_IMPORT.match(line)
    module = os.path.join(site, hook.group(1) + ".py") if hook else None
    pairs = redirector_map(module) if module else None
    if pairs is None:
        if module is not None and hook_names_repository(module):
            return None, True
        return ("exec", line), False
    kept, named = _retarget_all(pairs, base)
    return ("redirect", kept), named


def _pth_steps(site: str, name: str, base: Path) -> list[Step] | None:
    """The steps of the ``.pth`` file ``name`` of ``site`` when it names the repository (a path line inside a
    protected folder, or setuptools' finder import line whose finder maps there), read as :mod:`site` reads it
    (a comment or empty line nothing, an ``import`` line run, any other line a path joined to ``site``); ``None``
    when it names none (it is processed as it is). A file homefield cannot read as a regular file (through a link,
    its target; a fifo, a device) or larger than :data:`~.editable.PTH_MAX_BYTES` gets no step: it is left out."""
    try:
        data = read_own(os.path.realpath(os.path.join(site, name)), PTH_MAX_BYTES + 1)
    except OSError:
        return []
    if len(data) > PTH_MAX_BYTES:
        return []
    steps: list[Step] = []
    named = False
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith(("import ", "import\t")):
            hook = FINDER_IMPORT.match(line)
            step, by_finder = _finder_step(site, hook.group(1), base) if hook else _import_step(site, line, base)
            named = named or by_finder
            if step is not None:
                steps.append(step)
            continue
        moved, by_repo = _retarget(os.path.normpath(os.path.join(site, line.rstrip())), base)
        named = named or by_repo
        if moved is not None:
            steps.append(("path", moved))
    return steps if named else None


def site_plan(sites: tuple[str, ...] | list[str], copy: Path) -> tuple[list[tuple[str, list[tuple[str, object]]]],
                                                                         bool]:
    """``(plan, named)``: for each site folder of ``sites``, in order, its ``.pth`` files in the order :mod:`site`
    reads them (sorted, not hidden) with their steps (:func:`_pth_steps`; ``None``: processed as they are), the
    plan :func:`._editable_site.apply` takes; ``named``: whether any of them names the repository (a protected
    folder) and so has steps naming ``copy`` instead. Reads the site folders, their ``.pth`` files and the finder
    modules these import; raises nothing (an unreadable folder adds no file)."""
    base = Path(os.path.realpath(copy))
    plan: list[tuple[str, list[tuple[str, object]]]] = []
    named = False
    for site in sites:
        try:
            names = sorted(n for n in os.listdir(site) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            names = []
        files: list[tuple[str, object]] = []
        for name in names:
            steps = _pth_steps(site, name, base)
            named = named or steps is not None
            files.append((name, steps))
        plan.append((site, files))
    return plan, named


@functools.cache
def _site_source() -> str:
    return (Path(__file__).parent / "_editable_site.py").read_text(encoding="utf-8")


#: The most of one script of the environment's ``bin`` read to give it the run's interpreter (an entry point's is
#: a few hundred bytes); a larger one is left out of the run's ``bin``.
SCRIPT_MAX_BYTES = 64 * 1024
#: The second line of pip's (distlib's) launcher for an interpreter path too long for a ``#!`` line:
#: ``'''exec' "/venv/bin/python" "$0" "$@"``.
_SH_LAUNCHER = re.compile(rb"^'''exec' \"([^\"\n]+)\"")


def _is_python_of(word: bytes, folder: str) -> bool:
    """Whether ``word`` (a script's interpreter) names a Python of ``folder`` (``<folder>/python3``)."""
    text = os.fsdecode(word)
    return os.path.dirname(text) == folder and os.path.basename(text).startswith("python")


def rewritten_script(data: bytes, folder: str, python: str) -> bytes | None:
    """The script ``data`` (a file of the environment's ``bin`` folder ``folder``) with the run's interpreter
    ``python`` in place of the one of ``folder`` it names: on its ``#!`` line (``#!/venv/bin/python3``), or in pip's
    ``/bin/sh`` launcher's second line (:data:`_SH_LAUNCHER`, for a path too long for ``#!``); ``None`` for a
    script that names no Python of ``folder`` (``activate``, a shell script, a binary)."""
    if not data.startswith(b"#!"):
        return None
    first, _, rest = data.partition(b"\n")
    words = first[2:].split(maxsplit=1)
    if words and _is_python_of(words[0], folder):
        return b"#!" + os.fsencode(python) + (b" " + words[1] if len(words) > 1 else b"") + b"\n" + rest
    launcher = _SH_LAUNCHER.match(rest)
    if words == [b"/bin/sh"] and launcher is not None and _is_python_of(launcher.group(1), folder):
        return first + b"\n" + rest[:launcher.start(1)] + os.fsencode(python) + rest[launcher.end(1):]
    return None


def _scripts(folder: str, python: str, into: Path) -> None:
    """Into ``into`` (the run's own ``bin``): each script of ``folder`` (a regular file, not a ``python*`` name,
    read without following a link, at most :data:`SCRIPT_MAX_BYTES`) that names a Python of ``folder``, as
    :func:`rewritten_script` gives it (mode 0755). Raises nothing (an unreadable folder or script adds nothing)."""
    try:
        entries = [e for e in os.scandir(folder) if not e.name.startswith("python")
                   and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        try:
            data = read_own(entry.path, SCRIPT_MAX_BYTES + 1)
        except OSError:
            continue
        new = rewritten_script(data, folder, python) if len(data) <= SCRIPT_MAX_BYTES else None
        if new is not None:
            target = into / entry.name
            target.write_bytes(new)
            target.chmod(0o755)


#: The entries of a run's own environment that are its own (:func:`_prefix_links` links no entry of these names).
_OWN_ENTRIES = frozenset({"bin", "lib", "lib64", "pyvenv.cfg"})


def _prefix_links(prefix: str, folder: Path) -> None:
    """Into ``folder`` (the run's own environment): a link to each entry of ``prefix`` (the interpreter's
    ``sys.prefix``) but :data:`_OWN_ENTRIES`, one that lies in a protected folder (a ``.venv`` inside the
    repository: none of it is shown to a test run) and a hidden one, so that what a project reads under its
    environment's prefix (``sysconfig.get_path('data')``, ``sys.prefix + '/share/…'``: a wheel's data files) is
    there under the run's (ops56: ``FileNotFoundError`` under ``--sandbox none``, found under bubblewrap). Raises
    nothing (an unreadable prefix links nothing)."""
    if touches_protected(prefix) or os.path.realpath(prefix) == os.path.realpath(folder):
        return
    try:
        names = [n for n in os.listdir(prefix) if n not in _OWN_ENTRIES and not n.startswith(".")]
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            (folder / name).symlink_to(os.path.join(prefix, name))


@dataclass(frozen=True)
class OwnEnvironment:
    """A test run's own environment: ``python`` its interpreter (``<folder>/bin/python``), ``bin`` its ``bin``."""

    python: str
    bin: str


def own_environment(python: str, copy: Path, folder: Path, env: Mapping[str, str] | None = None,
                    scripts: str | None = None) -> OwnEnvironment | None:
    """The run's own environment for a test run of ``copy`` with the interpreter ``python`` (an absolute path; with
    the site variables of the run's ``env``), made at ``folder`` (which must not exist; in the run's private
    folder) when the site folders of that interpreter have an editable install naming the repository under
    benchmark (:func:`site_plan`), else ``None`` (nothing is made; the run keeps its interpreter). ``folder``
    holds ``pyvenv.cfg`` (``home``: the base executable's folder, no system site packages), ``bin/python``,
    ``bin/python3`` and ``bin/python<version>`` (links to the base executable) and
    ``lib/python<version>/site-packages/`` with :data:`PTH_NAME` and :data:`SITE_MODULE`; with ``scripts`` (the
    folder of ``python`` as the command named it, ``/venv/bin``) its ``bin`` also holds the scripts of that folder
    that run its Python (an entry point of the project: a test that runs it by name runs the copy's), that Python
    replaced by the run's (:func:`rewritten_script`); and a link to each other entry of the interpreter's prefix
    (:func:`_prefix_links`: its ``share``, ``include``, ``etc``). Raises ``OSError`` when ``folder`` cannot be made."""
    facts = interpreter_facts(python, env)
    if facts is None:
        return None
    plan, named = site_plan(facts.sites, copy)
    if not named:
        return None
    bin_dir = folder / "bin"
    site = folder / "lib" / f"python{facts.version}" / "site-packages"
    site.mkdir(parents=True)
    bin_dir.mkdir()
    (folder / "pyvenv.cfg").write_text(f"home = {os.path.dirname(facts.base)}\ninclude-system-site-packages = false\n"
                                       f"version = {facts.version}\n", encoding="utf-8")
    for name in ("python", "python3", f"python{facts.version}"):
        (bin_dir / name).symlink_to(facts.base)
    (site / f"{SITE_MODULE}.py").write_text(_site_source(), encoding="utf-8")
    if facts.cached:
        (site / "__pycache__").mkdir()
        (site / "__pycache__" / facts.cached).write_bytes(facts.pyc)
    (site / PTH_NAME).write_text(f"import {SITE_MODULE}; {SITE_MODULE}.apply({plan!r})\n", encoding="utf-8")
    if scripts is not None:
        _scripts(scripts, str(bin_dir / "python"), bin_dir)
    _prefix_links(facts.prefix, folder)
    return OwnEnvironment(python=str(bin_dir / "python"), bin=str(bin_dir))
