"""Copies of the project under benchmark are found by their content, however they were installed (atk15
F1–F1f): an egg (zipped or a folder), an ``*.egg-info`` + ``lib/`` layout, an environment under ``/usr``
outside the standard site folders, pip's VCS checkout ``<venv>/src/<name>/``, another clone on
``PYTHONPATH``. Each layout is built by hand in a tiny folder (no venv), against a real git repository;
the masks come from :func:`copies_of_protected`, what bubblewrap and Landlock hide."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.sandbox import copies_by_content, protected
from pytest_homefield.sandbox.project_copies import copies_of_protected

UTIL = "def words(text):\n    return text.split()\n"  # the parent's version, never changed
OLD = "from textkit.util import words\n\n\ndef top(text):\n    return words(text)\n"
FIX = "from textkit.util import words\n\n\ndef top(text):\n    return sorted(words(text))  # the fix\n"
TEST = "from textkit.core import top\n\n\ndef test_top():\n    assert top('b a') == ['a', 'b']\n"
#: HEAD's files as an install lays them out (``lib/`` stripped: ``package-dir = {"" = "lib"}``).
INSTALLED = {"textkit/__init__.py": "", "textkit/util.py": UTIL, "textkit/core.py": FIX}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A ``lib/`` layout project (no top-level name an install keeps) with one task: its parent has
    ``OLD``, HEAD the fix and a new test; ``.homefield/tasks.jsonl`` names the parent."""
    r = GitRepo.init(tmp_path_factory.mktemp("content") / "proj")
    r.write("pyproject.toml", '[project]\nname = "textkit"\nversion = "0.1"\n')
    r.write("lib/textkit/__init__.py", "")
    r.write("lib/textkit/util.py", UTIL)
    r.write("lib/textkit/core.py", OLD)
    parent = r.commit("textkit")
    r.write("lib/textkit/core.py", FIX)
    r.write("tests/test_core.py", TEST)
    commit = r.commit("top sorts")
    (r.path / ".homefield").mkdir()
    (r.path / ".homefield" / "tasks.jsonl").write_text(json.dumps({"commit": commit, "parent": parent}) + "\n")
    return r


Masks = Callable[..., list[str]]


@pytest.fixture
def masks(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> Masks:
    """``masks(*roots)``: what a sandbox showing ``roots`` hides, with ``repo`` protected."""
    monkeypatch.setattr(protected, "_PROTECTED", [repo.path.resolve()])
    return lambda *roots: list(copies_of_protected(roots))


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _site(root: Path) -> Path:
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return site


def test_a_zipped_egg(masks: Masks, tmp_path: Path) -> None:
    """F1: ``setup.py install`` with setuptools < 80 leaves ``textkit-0.1-py3.11.egg``, a zip on ``sys.path``."""
    site = _site(tmp_path / "venv")
    egg = site / "textkit-0.1-py3.11.egg"
    with zipfile.ZipFile(egg, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, text in {**INSTALLED, "EGG-INFO/top_level.txt": "textkit\n"}.items():
            zf.writestr(rel, text)
    with zipfile.ZipFile(site / "other-1.0-py3.11.egg", "w") as zf:  # same names, the parent's code
        zf.writestr("textkit/core.py", OLD)
    assert masks(tmp_path / "venv") == [str(egg)]


def test_a_zipped_egg_with_a_comment_or_bytes_before_it(masks: Masks, tmp_path: Path) -> None:
    """The archive's central directory found where :mod:`zipfile` finds it (speed23's pre-filter reads it
    with :mod:`struct`): behind an archive comment, and in an archive with bytes prepended (a launcher
    script, as a ``.pyz`` may have). Both are masked; an archive of other files beside them is not."""
    site = _site(tmp_path / "venv")
    commented, prepended, other = site / "textkit-0.1.egg", site / "textkit.pyz", site / "other.zip"
    with zipfile.ZipFile(commented, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, text in INSTALLED.items():
            zf.writestr(rel, text)
        zf.comment = b"an archive comment, " * 40
    body = tmp_path / "body.zip"
    with zipfile.ZipFile(body, "w") as zf:
        zf.writestr("textkit/core.py", FIX)
    prepended.write_bytes(b"#!/usr/bin/env python3\n" + b"x" * 5000 + body.read_bytes())
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("textkit/core.py", OLD)
        zf.writestr("README", FIX)  # the fix's bytes under another name: not a *.py member
    assert masks(tmp_path / "venv") == sorted([str(commented), str(prepended)])


def test_the_member_sums_are_zipfiles(tmp_path: Path) -> None:
    """:func:`copies_by_content._member_sums` (size, CRC-32 of every member, read with :mod:`struct`) is what
    :mod:`zipfile` reads, or ``None`` where it cannot tell; never a set that misses a member."""
    archives = []
    for i, (comment, before) in enumerate([(b"", b""), (b"note", b""), (b"", b"#!/bin/sh\n" * 300)]):
        plain = tmp_path / f"plain{i}.zip"
        with zipfile.ZipFile(plain, "w", zipfile.ZIP_DEFLATED) as zf:
            for k in range(50):
                zf.writestr(f"pkg/m{k}.py", f"X = {k}\n" * k)
            zf.comment = comment
        archive = tmp_path / f"a{i}.zip"
        archive.write_bytes(before + plain.read_bytes())
        archives.append(archive)
    for archive in archives:
        with zipfile.ZipFile(archive) as zf:
            assert copies_by_content._member_sums(str(archive)) == {(m.file_size, m.CRC) for m in zf.infolist()}
    (tmp_path / "not.zip").write_bytes(b"PK\x03\x04 not an archive")
    assert copies_by_content._member_sums(str(tmp_path / "not.zip")) is None
    truncated = tmp_path / "cut.zip"
    data = archives[0].read_bytes()
    truncated.write_bytes(data[:len(data) // 2] + data[-22:])  # the end record names a directory not there
    assert copies_by_content._member_sums(str(truncated)) is None


def test_a_folder_egg(masks: Masks, tmp_path: Path) -> None:
    """F1 with ``zip_safe=False``: the egg is a folder; masked whole (its ``EGG-INFO`` too)."""
    site = _site(tmp_path / "venv")
    egg = site / "textkit-0.1-py3.11.egg"
    _tree(egg, {**INSTALLED, "EGG-INFO/PKG-INFO": "Name: textkit\n"})
    assert masks(tmp_path / "venv") == [str(egg)]


def test_an_egg_info_with_a_lib_layout(masks: Masks, tmp_path: Path) -> None:
    """F1b: today's ``setup.py install``: a flat ``textkit/`` and an ``*.egg-info`` (no dist-info, no RECORD);
    HEAD's ``lib/textkit`` installed as ``textkit``. Its bytecode goes with the folder."""
    site = _site(tmp_path / "venv")
    _tree(site, {**INSTALLED, "textkit/__pycache__/core.cpython-311.pyc": "x",
                 "textkit-0.1-py3.11.egg-info/top_level.txt": "textkit\n", "requests/__init__.py": "X = 1\n"})
    assert masks(tmp_path / "venv") == [str(site / "textkit")]


def test_an_environment_under_usr_outside_the_site_folders(masks: Masks, tmp_path: Path) -> None:
    """F1d: ``/usr`` is shown whole; a Docker image's ``/usr/src/app/.venv`` is no standard site folder.
    A module copy takes its ``__pycache__`` bytecode with it."""
    usr = tmp_path / "usr"
    site = usr / "src" / "app" / ".venv" / "lib" / "python3.11" / "site-packages"
    _tree(site, {**INSTALLED, "core.py": FIX, "__pycache__/core.cpython-311.pyc": "x", "__pycache__/six.pyc": "x"})
    assert masks(usr) == [str(site / "__pycache__" / "core.cpython-311.pyc"), str(site / "core.py"),
                          str(site / "textkit")]


def test_a_standard_library_holding_a_project_file_is_not_masked(masks: Masks, tmp_path: Path) -> None:
    """Python 3.11's ``tomllib/_types.py`` is a file hukkin/tomli wrote: masking it broke every test run
    of tomli (nu34). A standard library (``lib/python3.X`` holding ``os.py``) is never masked, its
    ``site-packages`` is searched as before, and a venv's ``lib/python3.X`` (no ``os.py``) is no stdlib."""
    lib = tmp_path / "prefix" / "lib" / "python3.11"
    _tree(lib, {"os.py": "X = 1\n", "textkit/__init__.py": "", "textkit/core.py": FIX, "core.py": FIX,
                "site-packages/textkit/core.py": FIX})
    assert masks(tmp_path / "prefix") == [str(lib / "site-packages" / "textkit")]
    assert copies_by_content.stdlib_of(str(lib / "textkit" / "core.py")) == str(lib)
    assert copies_by_content.stdlib_of(str(lib / "site-packages" / "textkit" / "core.py")) is None
    venv = tmp_path / "venv" / "lib" / "python3.11"
    _tree(venv, {"textkit/__init__.py": "", "textkit/core.py": FIX})
    assert copies_by_content.stdlib_of(str(venv / "textkit" / "core.py")) is None
    assert masks(tmp_path / "venv") == [str(venv / "textkit")]


def _clone(repo: GitRepo, dest: Path) -> Path:
    GitRepo.init(dest)  # a real git folder, then HEAD's objects fetched into it
    GitRepo(dest).git("fetch", "-q", str(repo.path), "HEAD")
    GitRepo(dest).git("checkout", "-q", "FETCH_HEAD")
    return dest


def test_pips_vcs_checkout_inside_the_venv(masks: Masks, repo: GitRepo, tmp_path: Path) -> None:
    """F1e: ``pip install -e git+URL#egg=textkit`` clones the project into ``<venv>/src/textkit/``: its
    whole work tree is masked (history and hidden tests)."""
    venv = tmp_path / "venv"
    _site(venv)
    clone = _clone(repo, venv / "src" / "textkit")
    assert (clone / "tests" / "test_core.py").is_file()
    assert masks(venv) == [str(clone)]


def test_an_unrelated_checkout_is_not_masked(masks: Masks, repo: GitRepo, tmp_path: Path) -> None:
    """Another project's checkout (it even ships a file identical to the parent's) is left alone; the
    project's own clone beside it is masked."""
    venv = tmp_path / "venv"
    other = GitRepo.init(venv / "src" / "other")
    other.write("lib/textkit/util.py", UTIL)
    other.write("mod.py", "X = 2\n")
    other.commit("another project")
    clone = _clone(repo, venv / "src" / "textkit")
    assert masks(venv) == [str(clone)]


def test_another_clone_on_pythonpath(masks: Masks, repo: GitRepo, tmp_path: Path) -> None:
    """F1f: the user's other checkout on ``PYTHONPATH`` (bound into test runs) is masked whole; a copy of
    its files without ``.git`` is masked by content, folder by folder (``lib/``, ``tests/``)."""
    clone = _clone(repo, tmp_path / "clone2")
    assert masks(clone) == [str(clone)]
    plain = tmp_path / "export"
    shutil.copytree(clone, plain, ignore=shutil.ignore_patterns(".git"))
    assert masks(plain) == [str(plain / "lib"), str(plain / "tests")]
    assert masks(plain / "lib") == [str(plain / "lib")]  # an entry inside the copy: the entry itself


def test_a_dependency_sharing_a_parent_file_is_not_masked(masks: Masks, tmp_path: Path) -> None:
    """A file identical to the parent's version (the agent has it) is no leak, nor a file of a leak
    blob's size with other bytes, nor an empty file: ``dep`` stays, the copy beside it is masked. The
    run's own folder (the copy under test) is never searched."""
    site = _site(tmp_path / "venv")
    _tree(site, {"dep/util.py": UTIL, "dep/core.py": OLD, "dep/__init__.py": "", "same.py": FIX.replace("#", "!"),
                 "textkit/core.py": FIX})
    assert masks(tmp_path / "venv") == [str(site / "textkit")]
    own = tmp_path / "grading-copy"
    _tree(own, INSTALLED)
    assert masks(own) == [str(own / "textkit")]
    assert copies_of_protected([own], skip=[own]) == ()


_FIND = """
import json, sys
from pathlib import Path
from pytest_homefield.sandbox import copies_by_content, protected
from pytest_homefield.sandbox.project_copies import copies_of_protected
protected._PROTECTED = [Path(sys.argv[1]).resolve()]
if sys.argv[3] != "-":
    copies_by_content.adopt(json.loads(sys.argv[3]))
print(json.dumps([list(copies_of_protected([sys.argv[2]])), copies_by_content.found_so_far()]))
"""


def _find(repo: GitRepo, root: Path, found: str = "-") -> tuple[list[str], list[list[object]]]:
    """``(masks, found_so_far())`` of a fresh process that protects ``repo`` and searches ``root``, having
    first adopted ``found`` (JSON) unless ``"-"``."""
    out = subprocess.run([sys.executable, "-c", _FIND, str(repo.path), str(root), found], capture_output=True,
                         text=True, check=True).stdout
    masks, so_far = json.loads(out)
    return masks, so_far


def test_a_local_worker_takes_the_controllers_masks_without_walking(repo: GitRepo, tmp_path: Path) -> None:
    """A controller's walk serves its local xdist workers (plugin.XdistHooks): the masks it found, handed
    over, are the worker's without a walk of its own. Shown by removing the copy between the two processes:
    a worker that walked would find nothing; and one that did not adopt them does find nothing."""
    site = _site(tmp_path / "venv")
    _tree(site, INSTALLED)
    masks, found = _find(repo, tmp_path / "venv")
    assert masks == [str(site / "textkit")]
    shutil.rmtree(site / "textkit")
    site.joinpath("textkit").mkdir()  # still a folder to mask (a mask of a missing path is left out)
    assert _find(repo, tmp_path / "venv", json.dumps(found))[0] == masks
    assert _find(repo, tmp_path / "venv")[0] == []


def test_a_worker_that_adopted_every_roots_masks_asks_the_repository_nothing(repo: GitRepo, tmp_path: Path) -> None:
    """The leak (git ls-tree, log, cat-file of every new ``*.py`` blob, …) is only for matching a walk: a
    local worker given its controller's masks for every root it searches computes none. Shown by hiding
    the repository's ``.git`` between the two processes: a worker that asked it would have no leak and so
    no masks (as one that did not adopt them shows)."""
    site = _site(tmp_path / "venv")
    _tree(site, INSTALLED)
    masks, found = _find(repo, tmp_path / "venv")
    assert masks == [str(site / "textkit")]
    (repo.path / ".git").rename(repo.path / "hidden.git")
    try:
        assert _find(repo, tmp_path / "venv", json.dumps(found))[0] == masks
        assert _find(repo, tmp_path / "venv")[0] == []
    finally:
        (repo.path / "hidden.git").rename(repo.path / ".git")


_LAZY = """
import json, os, subprocess, sys
from pathlib import Path
from pytest_homefield.sandbox import bwrap, copies_by_content, protected
protected._PROTECTED = [Path(sys.argv[1]).resolve()]
venv, work, first = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
if first == "probe":
    bwrap.probe()
walked = sorted(copies_by_content._INDEXES)
handed = []
if first == "controller":  # a controller that probed starts a local xdist worker
    import execnet
    from pytest_homefield.plugin import XdistHooks
    node = type("Node", (), {"gateway": type("Gateway", (), {"spec": execnet.XSpec("popen")})(), "workerinput": {}})()
    bwrap.probe()
    XdistHooks(type("Mode", (), {"workerinput": lambda self: {}})()).pytest_configure_node(node)
    handed = [root for root, _, _ in node.workerinput["homefield_copies"]]
argv = bwrap.bwrap_argv(["/bin/sh", "-c", "cat " + sys.argv[5]], bwrap.Policy(cwd=work, rw=[work], ro=[venv]),
                        bwrap=bwrap.probe())
out = subprocess.run(argv, capture_output=True, text=True)
# the empty file bound over /proc/locks (and masked module files) is this process's own: named alike
empty = str(bwrap._empty_file())
print(json.dumps([walked, handed, ["EMPTY" if a == empty else a for a in argv], out.returncode, out.stdout]))
"""


@pytest.mark.slow
def test_the_probe_walks_nothing_and_the_first_sandbox_masks_as_before(repo: GitRepo, tmp_path: Path) -> None:
    """speed25: bubblewrap's probe builds no masks, so a session that builds no other sandbox never walks
    the host for copies (0.3–0.5 s of CPU each). The first sandbox that shows a task does: in a fresh
    process that probed first, the installed copy of the project is an empty folder inside, and that
    sandbox's options are exactly those of a process that never probed. A controller of local workers
    walks the system folders (``bwrap.system_masks``) before it starts them and hands its findings over."""
    from helpers.bwrap import bwrap_works

    if not bwrap_works():
        pytest.skip("bubblewrap does not work here")
    site = _site(tmp_path / "venv")
    _tree(site, INSTALLED)
    (tmp_path / "work").mkdir()
    core = site / "textkit" / "core.py"

    def fresh(first: str) -> tuple[list[str], list[str], list[str], int, str]:
        out = subprocess.run([sys.executable, "-c", _LAZY, str(repo.path), str(tmp_path / "venv"),
                              str(tmp_path / "work"), first, str(core)], capture_output=True, text=True, check=True)
        walked, handed, argv, code, text = json.loads(out.stdout)
        return walked, handed, argv, code, text

    walked, handed, after_probe, code, text = fresh("probe")
    assert walked == [] and handed == []  # the probe walked nothing, found nothing to hand over
    assert code != 0 and "sorted(words(text))" not in text  # the copy is masked all the same
    assert "--tmpfs" in after_probe and str(site / "textkit") in after_probe
    assert fresh("nothing")[2] == after_probe  # the same sandbox as without a probe before it
    walked, handed, _, code, text = fresh("controller")
    assert walked == [] and "/usr" in handed and code != 0 and "sorted(words(text))" not in text
