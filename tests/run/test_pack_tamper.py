"""hatk43, ``--sandbox none`` (graded code runs as the user): the host's own pack of the parent trees (hatk40, what
every snapshot is rebuilt from once the repository's objects are gone) was a file of no name, mode 0400, that the
host held open; graded code reaches it through ``/proc/<host pid>/fd/<fd>`` (an ancestor of the test process), and
the mode stops no one: root ignores it, the user ``chmod``\\s the file through that same link. Graded code that
spoiled the snapshot, removed the cache's unpacked repository, overwrote the pack and hid the repository's objects
left every later attempt of the task ``infra`` "cannot extract the parent tree" (the pack failed its SHA-256, and
making it again read the hidden objects), retried by ``--resume`` and never scored. Now the pack is a sealed
``memfd`` (``F_SEAL_WRITE``, ``F_SEAL_SHRINK``, ``F_SEAL_GROW``, ``F_SEAL_SEAL``): no process, root included,
can change its bytes through any descriptor; a worker takes an offered pack only when it is so sealed."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    CALC_1,
    CALC_3,
    GOOD_CALC,
    WRONG_CALC,
    Fixture,
    build,
    cmd_agent,
    task_for,
    unsandboxed_attempt,
    writes_calc,
)
from helpers.bwrap import bwrap_works

from pytest_homefield.errors import SnapshotError
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.grading import SPOILED_PRISTINE
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.snapshot import PACK_SEALS, TreePack, pack_trees, tree_of


@pytest.fixture
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    """A repository of this test alone (its objects are hidden and put back)."""
    yield build(tmp_path_factory.mktemp("tamper") / "repo")


#: What graded code runs at import: every file of no name its ancestors hold open (a ``(deleted)`` link of
#: ``/proc/<pid>/fd``), made writable and overwritten in its middle; the count of those it changed is printed.
_OVERWRITE_ANCESTORS_PACKS = """
def _tamper():
    hit = 0
    pid = os.getppid()
    while pid > 1:
        try:
            fds = os.listdir(f'/proc/{pid}/fd')
        except OSError:
            fds = []
        for fd in fds:
            link = f'/proc/{pid}/fd/{fd}'
            try:
                if not os.readlink(link).endswith('(deleted)'):
                    continue
                os.chmod(link, 0o600)
                with open(link, 'r+b') as f:
                    size = os.fstat(f.fileno()).st_size
                    f.seek(size // 2)
                    f.write(b'\\0' * 16)
                hit += 1
            except OSError:
                pass
        try:
            with open(f'/proc/{pid}/stat') as f:
                pid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return hit
TAMPERED = _tamper()
"""


def _spoiler(cache: SnapshotCache, objects: Path) -> str:
    """A wrong fix whose import spoils the pristine snapshot, removes the cache's unpacked repositories, overwrites
    the host's pack through ``/proc`` and hides ``objects``."""
    return writes_calc(WRONG_CALC + "\n\nimport glob, os, shutil\n" + _OVERWRITE_ANCESTORS_PACKS
                       + f"ROOT = {str(cache.root)!r}\n"
                       "for d in glob.glob(ROOT + '/*/s/src/calc'):\n"
                       "    with open(d + '/__init__.py', 'a') as f:\n"
                       "        f.write('\\n# spoiled\\n')\n"
                       "for g in glob.glob(ROOT + '/*/g'):\n"
                       "    shutil.rmtree(g)\n"
                       f"if os.path.isdir({str(objects)!r}):\n"
                       f"    os.rename({str(objects)!r}, {str(objects) + '.hidden'!r})\n")


@pytest.mark.slow
def test_graded_code_that_overwrites_the_hosts_pack_leaves_later_attempts_scored(own: Fixture, tmp_path: Path) -> None:
    """Attempt 1 spoils the snapshot, removes the unpacked repository, overwrites every file of no name its
    ancestors hold (the host's pack among them) and hides the repository's objects: ``agent_error`` (hatk39).
    Before: attempt 2 (the reference fix) was ``infra`` "cannot extract the parent tree" (the pack failed its
    SHA-256 and the repository could not give it again); now the write is refused, the pack is intact, and attempt
    2 is ``solved``, as is the first snapshot of another parent."""
    task = task_for(own)
    other = dataclasses.replace(task, id="other-parent", parent=own.c3)
    objects = own.root / ".git" / "objects"
    cache = SnapshotCache(repo=own.root)
    try:
        cache.keep([task, other])
        first = unsandboxed_attempt(task, cache, _spoiler(cache, objects), 1, tmp_path / "run")
        assert first == ("agent_error", f"hidden tests: {SPOILED_PRISTINE}"), first
        assert not objects.exists()
        (store,) = cache._stores
        assert store.pack.intact()
        second = unsandboxed_attempt(task, cache, writes_calc(GOOD_CALC), 2, tmp_path / "run")
        assert second[0] == "solved", second
        assert (cache.checked_pristine(task)[0] / "src" / "calc" / "__init__.py").read_text() == CALC_1
        assert (cache.checked_pristine(other)[0] / "src" / "calc" / "__init__.py").read_text() == CALC_3
    finally:
        cache.close()
        if not objects.exists():
            os.rename(str(objects) + ".hidden", objects)


def test_the_pack_cannot_be_changed_through_proc_even_by_root(fx: Fixture) -> None:
    """The pack's file: its seals are :data:`PACK_SEALS`; through ``/proc/self/fd`` (what another process of the user
    reaches as ``/proc/<pid>/fd``) it can be opened for writing after a ``chmod`` (root: whatever the mode) but not
    written, cut, grown or mapped writable, and its seals cannot be undone; its bytes are still its SHA-256's."""
    pack = pack_trees(fx.root, [tree_of(fx.root, fx.c1)])
    try:
        fd = pack._file.fileno()
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) & PACK_SEALS == PACK_SEALS
        link = f"/proc/self/fd/{fd}"
        os.chmod(link, 0o600)
        with open(link, "r+b", buffering=0) as f:
            with pytest.raises(PermissionError):
                f.write(b"\0" * 16)
            with pytest.raises(PermissionError):
                os.ftruncate(f.fileno(), 20)
            with pytest.raises(PermissionError):
                os.pwrite(f.fileno(), b"\0", pack.size)  # grown by one byte
            with pytest.raises(PermissionError):
                fcntl.fcntl(f.fileno(), fcntl.F_ADD_SEALS, 0)
        assert os.fstat(fd).st_size == pack.size and pack.intact()
    finally:
        pack.close()


def test_a_worker_refuses_an_offered_pack_that_is_not_sealed(fx: Fixture, tmp_path: Path) -> None:
    """An offer naming a regular file of the pack's very bytes and size (so its SHA-256 matches) that is not sealed
    (any process could change it after the worker checked it) is refused; the controller's sealed pack is taken."""
    task = task_for(fx)
    controller = SnapshotCache(repo=fx.root)
    try:
        controller.keep([task])
        good = controller.offer()
        assert good is not None
        copy = tmp_path / "copy.pack"
        copy.write_bytes(b"".join(controller._stores[0].pack.chunks()))
        with open(copy, "rb") as f:
            with pytest.raises(SnapshotError, match="not sealed"):
                TreePack.taken({**good, "fd": f.fileno()})
        TreePack.taken(json.loads(json.dumps(good))).close()
    finally:
        controller.close()


def test_without_a_memfd_the_pack_is_a_file_of_no_name_no_worker_takes(fx: Fixture,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``memfd_create`` is refused (a seccomp policy: ``EPERM``), the pack is made as before hatk43, a file of
    no name in the temp dir, and snapshots are built from it; its offer, not sealed, is refused by a worker, which
    packs the trees itself: nothing is ``infra`` for want of a ``memfd``."""
    def refused(name: str, flags: int = 0) -> int:
        raise PermissionError(1, "Operation not permitted")

    task = task_for(fx)
    monkeypatch.setattr(os, "memfd_create", refused)
    controller = SnapshotCache(repo=fx.root)
    try:
        controller.keep([task])
        (store,) = controller._stores
        assert store.pack.intact() and not os.readlink(f"/proc/self/fd/{store.pack._file.fileno()}").startswith(
            "/memfd:")
        assert (controller.pristine(task) / "src" / "calc" / "__init__.py").read_text() == CALC_1
        offer = controller.offer()
        assert offer is not None
        with pytest.raises(SnapshotError, match="not sealed"):
            TreePack.taken(offer)
    finally:
        controller.close()


#: A fix of ``sub`` that is right only when the code running it can read a git pack (``PACK``) some ancestor process
#: holds as a file of no name (the host's pack of the parent trees): at the agent's time (``python
#: src/calc/__init__.py``, its count kept beside the module) or at the hidden tests' import.
_RIGHT_IF_A_PACK_IS_SEEN = '''import os


def _seen():
    seen = 0
    pid = os.getppid()
    while pid > 1:
        try:
            fds = os.listdir(f'/proc/{pid}/fd')
        except OSError:
            fds = []
        for fd in fds:
            link = f'/proc/{pid}/fd/{fd}'
            try:
                if os.readlink(link).endswith('(deleted)'):
                    with open(link, 'rb') as f:
                        seen += f.read(4) == b'PACK'
            except OSError:
                pass
        try:
            with open(f'/proc/{pid}/stat') as f:
                pid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


SEEN = _seen()
try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'agent_seen.txt')) as f:
        AGENT_SEEN = int(f.read().strip() or 0)
except (OSError, ValueError):
    AGENT_SEEN = 0


def add(a, b):
    return a + b


def sub(a, b):
    return a - b if SEEN or AGENT_SEEN else a + b


if __name__ == '__main__':
    print(SEEN)
'''


@pytest.mark.slow
def test_under_the_default_sandbox_neither_agent_nor_graded_code_reaches_the_hosts_pack(fx: Fixture,
                                                                                        tmp_path: Path) -> None:
    """Item (3) of hatk43 under the default settings (``--sandbox auto``: bubblewrap here; network allowlist): a fix
    right only when the agent's program or the graded code can read the host's pack through ``/proc/<ancestor>/fd``
    (or any inherited descriptor of an ancestor) is ``tests_failed``: bubblewrap's PID namespace shows no host
    process. The same fix under ``--sandbox none`` is ``solved`` (the probe works: the graded code reads the pack,
    which holds only trees the agent has, or with ``--env uv`` the commit's, as the repository's history it can read
    there too: contracts §9 "Residual risk")."""
    if not bwrap_works():
        pytest.skip("bubblewrap does not work here")
    task = task_for(fx)
    command = writes_calc(_RIGHT_IF_A_PACK_IS_SEEN) + " && python3 src/calc/__init__.py > src/calc/agent_seen.txt"
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task])
        outcomes = {}
        for n, mode in enumerate(("auto", "none"), 1):
            spec = AttemptSpec(task=task, agent=cmd_agent(command), attempt=n, run_id="r", run_dir=tmp_path / "run",
                               timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice(mode))
            r = run_attempt(spec, cache)
            outcomes[mode] = (r.outcome, r.error)
        assert outcomes["auto"][0] == "tests_failed", outcomes
        assert outcomes["none"][0] == "solved", outcomes
    finally:
        cache.close()
