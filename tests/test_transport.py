"""pytest_homefield.transport: records go with reports and the controller writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.store import read_jsonl
from pytest_homefield.transport import (
    EVENT_REFUSED,
    ControllerWriter,
    Scope,
    TransportError,
    append_message,
    artifact_messages,
    file_message,
)


def test_deliver_appends_records_and_writes_files(tmp_path: Path) -> None:
    home = tmp_path / ".homefield"
    writer = ControllerWriter(home)
    appended = writer.deliver([append_message("runs/r/results.jsonl", {"a": 1}),
                               file_message("runs/r/attempts/t/x/1/diff.patch", b"+x\n"),
                               append_message("runs/r/results.jsonl", {"a": 2})])
    assert appended == [{"a": 1}, {"a": 2}]
    assert list(read_jsonl(home / "runs/r/results.jsonl")) == [{"a": 1}, {"a": 2}]
    assert (home / "runs/r/attempts/t/x/1/diff.patch").read_text() == "+x\n"


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside.jsonl", "runs/../../x", ""])
def test_paths_outside_homefield_are_refused(tmp_path: Path, target: str) -> None:
    with pytest.raises(TransportError, match="outside .homefield"):
        ControllerWriter(tmp_path / ".homefield").deliver([append_message(target, {})])
    assert not (tmp_path / "outside.jsonl").exists()


def test_unknown_message_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="unknown message"):
        ControllerWriter(tmp_path).deliver([{"delete": "x"}])


def test_artifacts_are_capped_and_marked(tmp_path: Path) -> None:
    home = tmp_path / ".homefield"
    folder = home / "runs/r/attempts/t/a/1"
    folder.mkdir(parents=True)
    (folder / "agent.out").write_bytes(b"y" * 50)
    (folder / "tests.log").write_bytes(b"ok\xff\n")  # not UTF-8: replaced, not fatal
    msgs = artifact_messages(folder, home, cap=10)
    assert [m["file"] for m in msgs] == ["runs/r/attempts/t/a/1/agent.out", "runs/r/attempts/t/a/1/tests.log"]
    assert msgs[0]["truncated"] and msgs[0]["size"] == 50
    assert msgs[0]["text"].startswith("y" * 10 + "\n[homefield: cut at 10 of 50 bytes")
    assert not msgs[1]["truncated"] and msgs[1]["text"] == "ok\ufffd\n"
    other = tmp_path / "controller" / ".homefield"
    ControllerWriter(other).deliver(msgs)
    assert (other / "runs/r/attempts/t/a/1/tests.log").read_text() == "ok\ufffd\n"


@pytest.mark.slow
def test_a_worker_report_carries_the_records_to_the_controller(lean_pytester: pytest.Pytester) -> None:
    """The real path: an item posts in setup, the report crosses xdist, the controller writes once."""
    pytester = lean_pytester
    pytester.makeconftest('''
import pytest
from pathlib import Path
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin, append_message, post

def scope(nodeid):
    return Scope(appends={"out.jsonl": {"item": nodeid.rsplit("::", 1)[-1]}})

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=hasattr(config, "workerinput"),
                                                  scope=scope))

@pytest.fixture(autouse=True)
def _post(request):
    post(request.node, [append_message("out.jsonl", {"item": request.node.name})])
''')
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): assert 0\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    names = sorted(r["item"] for r in read_jsonl(pytester.path / "home" / "out.jsonl"))
    assert names == ["test_a", "test_b", "test_c"]  # each once, written by the controller


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_a_write_that_fails_on_the_controller_stops_the_session_in_one_line(lean_pytester: pytest.Pytester,
                                                                             xdist: list[str]) -> None:
    """A full disk on the controller (issue 21): no INTERNALERROR, the session stops with one line
    naming the file and the resume command, nothing after the failed write is written, exit non-zero."""
    pytester = lean_pytester
    pytester.makeconftest('''
import errno, os
import pytest
from pathlib import Path
from pytest_homefield import store
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin, append_message, post

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    if not hasattr(config, "workerinput"):
        real = os.write
        def full(fd, data):  # the second record on the controller meets a full disk
            if b'test_b' in data:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd, data)
        store.os.write = full
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=hasattr(config, "workerinput"),
                                                  scope=lambda n: Scope(appends={"out.jsonl": {}}),
                                                  resume_hint=lambda: "homefield run --resume --run-id R"))

@pytest.fixture(autouse=True)
def _post(request):
    post(request.node, [append_message("out.jsonl", {"item": request.node.name})])
''')
    pytester.makepyfile("".join(f"def test_{c}(): pass\n" for c in "abcdefghij"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *xdist, "-p", "no:randomly")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    assert result.ret != 0
    path = pytester.path / "home" / "out.jsonl"
    result.stdout.fnmatch_lines([
        f"*homefield: a record could not be written, the session stopped: {path}: cannot append a record: "
        "No space left on device (the file is left as it was)",
        "*Free space, then continue with: homefield run --resume --run-id R",
    ])
    names = [r["item"] for r in read_jsonl(path)]
    assert "test_b" not in names and len(names) < 10 and path.read_bytes().endswith(b"\n")


def test_a_scope_takes_its_items_records_and_folder_only(tmp_path: Path) -> None:
    """hatk36: a record must carry the item's key, exactly (1 is not True nor "1"); a file must lie in its folder."""
    scope = Scope(appends={"runs/r/results.jsonl": {"task_id": "t", "agent": "a", "attempt": 1}},
                  folder="runs/r/attempts/t/a/1")
    own = {"task_id": "t", "agent": "a", "attempt": 1, "outcome": "solved"}
    assert scope.why_not(append_message("runs/r/results.jsonl", own)) is None
    assert scope.why_not(file_message("runs/r/attempts/t/a/1/diff.patch", b"")) is None
    refused = [append_message("runs/r/results.jsonl", {**own, "task_id": "u"}),
               append_message("runs/r/results.jsonl", {**own, "attempt": True}),
               append_message("runs/r/results.jsonl", {**own, "attempt": "1"}),
               append_message("runs/r/results.jsonl", {k: v for k, v in own.items() if k != "agent"}),
               append_message("tasks.jsonl", own), append_message("flaky.jsonl", own),
               {"append": "runs/r/results.jsonl", "record": ["t", "a", 1]},
               file_message("runs/r/attempts/t/a/10/diff.patch", b""),  # a prefix of the name is not the folder
               file_message("runs/r/attempts/t/a/1", b""),
               file_message("runs/r/attempts/t/a/1/../../2/diff.patch", b""),
               file_message("tasks.jsonl", b""), {"delete": "tasks.jsonl"}]
    home = tmp_path / ".homefield"
    for msg in refused:
        assert scope.why_not(msg) is not None, msg
        with pytest.raises(TransportError):
            ControllerWriter(home).check([append_message("runs/r/results.jsonl", own), msg], scope)
    assert not home.exists()  # a check writes nothing
    assert Scope(appends={}).why_not(file_message("x/y", b"")) is not None  # no folder: no file


FORGING_CONFTEST = '''
import pytest
from pathlib import Path
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin, append_message, post

def scope(nodeid):
    name = nodeid.rsplit("::", 1)[-1]
    return Scope(appends={"out.jsonl": {"item": name}}) if name.startswith("test_") else None

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=hasattr(config, "workerinput"),
                                                  scope=scope))

@pytest.fixture(autouse=True)
def _post(request):
    name = request.node.name
    post(request.node, [append_message("out.jsonl", {"item": name})]
                       + ([append_message("out.jsonl", {"item": "test_a"})] if name == "test_b" else []))
'''


@pytest.mark.slow
@pytest.mark.parametrize("dist", [["-n", "0"], ["-n", "2", "--dist", "load"], ["-n", "2", "--dist", "worksteal"],
                                  ["-n", "2", "--dist", "loadscope"], ["-n", "2", "--dist", "loadfile"]],
                         ids=["n0", "load", "worksteal", "loadscope", "loadfile"])
def test_an_item_sending_another_items_record_is_refused_whole(lean_pytester: pytest.Pytester,
                                                               dist: list[str]) -> None:
    """hatk36, under every xdist scheduler (each keeps its workers' items its own way: :func:`given_to`): the
    item test_b sends a record of test_a beside its own; none of test_b's is written, one line says so, the
    refusal is recorded, the others are written as before, and the exit status is not 0."""
    pytester = lean_pytester
    pytester.makeconftest(FORGING_CONFTEST)
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *dist)
    names = sorted(r["item"] for r in read_jsonl(pytester.path / "home" / "out.jsonl"))
    assert names == ["test_a", "test_c"], result.stdout.str()
    refused = list(read_jsonl(pytester.path / "home" / "refused.jsonl"))
    assert [r["nodeid"] for r in refused] == ["test_an_item_sending_another_items_record_is_refused_whole.py::test_b"]
    assert "item 'test_a', not its item's 'test_b'" in refused[0]["why"], refused
    result.stdout.fnmatch_lines(["*homefield: refused what * sent with *::test_b: a record of 'out.jsonl' with "
                                 "item 'test_a', not its item's 'test_b'; none of it written*"])
    assert result.ret == 1


EVENTS_CONFTEST = '''
import json
import pytest
from pathlib import Path
from pytest_homefield.store import append_jsonl
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin

class Log:
    """On the controller: what it was told of each item (the events homefield's tries.jsonl is made from)."""
    def __init__(self, path):
        self.path = path
    def pytest_runtest_logstart(self, nodeid, location):
        append_jsonl(self.path, {"nodeid": nodeid, "event": "start"})
    def pytest_runtest_logreport(self, report):
        if not getattr(report, "homefield_refused", None):
            append_jsonl(self.path, {"nodeid": report.nodeid, "event": report.when})

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    worker = hasattr(config, "workerinput")
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=worker,
                                                  scope=lambda n: Scope(appends={})))
    if not worker:
        config.pluginmanager.register(Log(home / "events.jsonl"))

@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A changed worker: test_b's worker says, on its xdist channel, that test_a and test_c start and end."""
    config = item.config
    if hasattr(config, "workerinput") and item.name == "test_b":
        interactor = next(p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor")
        for other in item.session.items:
            if other.name != "test_b":
                interactor.sendevent("logstart", nodeid=other.nodeid, location=other.location)
                forged = pytest.TestReport(nodeid=other.nodeid, location=other.location, keywords={},
                                           outcome="passed", longrepr=None, when="teardown")
                interactor.sendevent("testreport",
                                     data=config.hook.pytest_report_to_serializable(config=config, report=forged))
    return (yield)
'''


@pytest.mark.slow
@pytest.mark.parametrize("dist", [["--dist", "load"], ["--dist", "worksteal"], ["--dist", "loadscope"],
                                  ["--dist", "loadfile"]], ids=["load", "worksteal", "loadscope", "loadfile"])
def test_a_worker_starts_and_ends_only_the_item_it_runs(lean_pytester: pytest.Pytester, dist: list[str]) -> None:
    """hatk37: xdist hands the controller a worker's ``logstart`` without saying which worker sent it (and took a
    report without messages as it came): test_b's worker saying test_a and test_c start and end made them start
    twice and end before they ran (a run's ``tries.jsonl``: tries cut short, counted against their agent). Now
    each event is refused unless its item is the one that worker runs; the items' own events are as before."""
    pytester = lean_pytester
    pytester.makeconftest(EVENTS_CONFTEST)
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-n", "2", *dist)
    events: dict[str, list[str]] = {}
    for r in read_jsonl(pytester.path / "home" / "events.jsonl"):
        events.setdefault(r["nodeid"].rsplit("::", 1)[-1], []).append(r["event"])
    assert events == {name: ["start", "setup", "call", "teardown"] for name in ("test_a", "test_b", "test_c")}, \
        result.stdout.str()
    refused = list(read_jsonl(pytester.path / "home" / "refused.jsonl"))
    whys = sorted((r["nodeid"].rsplit("::", 1)[-1], r["why"].startswith("a start event: ")) for r in refused)
    assert whys == [("test_a", False), ("test_a", True), ("test_c", False), ("test_c", True)], refused
    assert all("not given this item" in r["why"] or "but runs" in r["why"] for r in refused), refused
    result.stdout.fnmatch_lines(["*homefield: refused what worker gw* sent with *::test_a: a start event: *; "
                                 + EVENT_REFUSED])
    assert result.ret == 1


@pytest.mark.slow
def test_a_results_file_linked_elsewhere_is_never_appended_to(lean_pytester: pytest.Pytester,
                                                              tmp_path: Path) -> None:
    """fix45, ``--sandbox none``: graded code (``test_a`` here) replaced the controller's JSON-lines file with a
    link to a file of the user. Before: the next record was appended to that file (a write outside
    ``.homefield``). Now the append is refused, the session stops in one line naming the file, the user's file
    is as it was."""
    pytester = lean_pytester
    user_file = tmp_path / "user" / "notes.txt"
    user_file.parent.mkdir()
    user_file.write_text("the user's own lines\n")
    pytester.makeconftest('''
import pytest
from pathlib import Path
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin, append_message, post

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=hasattr(config, "workerinput"),
                                                  scope=lambda n: Scope(appends={"out.jsonl": {}}),
                                                  resume_hint=lambda: "homefield run --resume --run-id R"))

@pytest.fixture(autouse=True)
def _post(request):
    post(request.node, [append_message("out.jsonl", {"item": request.node.name})])
''')
    pytester.makepyfile(f'''
import os
from pathlib import Path

def test_a():
    out = Path(__file__).parent / "home" / "out.jsonl"
    os.symlink({str(user_file)!r}, str(out) + ".new")
    os.replace(str(out) + ".new", out)

def test_b():
    pass

def test_c():
    pass
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    assert result.ret != 0
    path = pytester.path / "home" / "out.jsonl"
    result.stdout.fnmatch_lines([
        f"*homefield: a record could not be written, the session stopped: {path}: a symlink, never followed"])
    assert user_file.read_text() == "the user's own lines\n" and path.is_symlink()


def _swapped(home: Path, outside: Path) -> Path:
    """``home/runs/r/attempts/t/a/1`` (holding ``diff.patch``) after ``a/`` is moved away and a link to ``outside``
    (holding ``1/secret``) put in its place: what graded code left running under ``--sandbox none`` can do once the
    attempt's pin is gone (link52). The attempt folder's path."""
    folder = home / "runs/r/attempts/t/a/1"
    folder.mkdir(parents=True)
    (folder / "diff.patch").write_bytes(b"+x\n")
    (outside / "1").mkdir(parents=True)
    (outside / "1" / "secret").write_bytes(b"the user's own file\n")
    (home / "runs/r/attempts/t/a").rename(home.parent / "away")
    (home / "runs/r/attempts/t/a").symlink_to(outside)
    return folder


def test_a_workers_artifacts_are_never_read_through_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """link52: before, ``artifact_messages`` walked the attempt folder by path: a link swapped in above it sent the
    folder it named (the user's ``secret``) to the controller as the attempt's artifacts. Now the folder is reached
    from ``.homefield/`` one component at a time without following a link: nothing is sent."""
    home = tmp_path / ".homefield"
    folder = _swapped(home, tmp_path / "outside")
    assert artifact_messages(folder, home) == []


def test_a_workers_artifacts_skip_links_fifos_and_folders_below(tmp_path: Path) -> None:
    """Files below the folder are sent, in sorted path order; a link (to a file or a folder) and a fifo are not
    (never opened: a fifo would block the worker)."""
    import os

    home = tmp_path / ".homefield"
    folder = home / "runs/r/attempts/t/a/1"
    (folder / "net" / "deep").mkdir(parents=True)
    (folder / "net" / "deep" / "z.log").write_bytes(b"z")
    (folder / "net.log").write_bytes(b"n")
    (folder / "b").write_bytes(b"b")
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "f").write_bytes(b"user")
    (folder / "link").symlink_to(tmp_path / "user" / "f")
    (folder / "dirlink").symlink_to(tmp_path / "user")
    os.mkfifo(folder / "fifo")
    files = [m["file"].removeprefix("runs/r/attempts/t/a/1/") for m in artifact_messages(folder, home)]
    assert files == ["b", "net/deep/z.log", "net.log"]


def test_the_controller_never_writes_an_artifact_through_a_link_in_its_folders(tmp_path: Path) -> None:
    """link52: before, ``deliver`` wrote a file message by path: a link among the controller's ``.homefield/``
    folders (``runs/r/attempts/t/a`` → ``outside``) had ``outside/1/diff.patch`` written. Now the folders are made
    and entered without following a link: a :class:`StoreError` (the session stops as on a failed write), nothing
    written outside."""
    from pytest_homefield.errors import StoreError

    home, outside = tmp_path / ".homefield", tmp_path / "outside"
    _swapped(home, outside)
    with pytest.raises(StoreError, match="never followed"):
        ControllerWriter(home).deliver([file_message("runs/r/attempts/t/a/1/diff.patch", b"+y\n")])
    assert sorted(p.name for p in (outside / "1").iterdir()) == ["secret"]
