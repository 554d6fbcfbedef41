"""pytest_homefield.transport: records go with reports and the controller writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.store import read_jsonl
from pytest_homefield.transport import (
    ControllerWriter,
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


def test_a_worker_report_carries_the_records_to_the_controller(pytester: pytest.Pytester) -> None:
    """The real path: an item posts in setup, the report crosses xdist, the controller writes once."""
    pytester.makeconftest('''
import pytest
from pathlib import Path
from pytest_homefield.transport import ControllerWriter, TransportPlugin, append_message, post

def pytest_configure(config):
    home = Path(str(config.rootpath)) / "home"
    config.pluginmanager.register(TransportPlugin(ControllerWriter(home), is_worker=hasattr(config, "workerinput")))

@pytest.fixture(autouse=True)
def _post(request):
    post(request.node, [append_message("out.jsonl", {"item": request.node.name})])
''')
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): assert 0\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    names = sorted(r["item"] for r in read_jsonl(pytester.path / "home" / "out.jsonl"))
    assert names == ["test_a", "test_b", "test_c"]  # each once, written by the controller
