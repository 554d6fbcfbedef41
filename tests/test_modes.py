"""pytest_homefield.modes: a mode is a session and a plugin over it; the plugin base does the hooks every
mode repeats. A toy mode, written the way the four are, at -n 0 and -n 2."""

from __future__ import annotations

import json

import pytest

from pytest_homefield.ablate.session import AblationSession
from pytest_homefield.mine.pipeline import MineSession
from pytest_homefield.modes import ModeSession
from pytest_homefield.probe.session import ProbeSession
from pytest_homefield.run.session import RunSession

TOY_MODE = '''
import json, os
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.modes import ModeFile, ModePlugin
from pytest_homefield.settings import Settings
from pytest_homefield.transport import ControllerWriter, Scope, TransportPlugin, append_message, post

LOG = Path(os.environ["TOY_LOG"])


def log(event, **kw):
    with LOG.open("a") as fh:
        fh.write(json.dumps({"event": event, "worker": os.environ.get("PYTEST_XDIST_WORKER"), **kw}) + "\\n")


class ToySession:
    """One word per line of items.txt; each item's record goes to the controller."""

    def __init__(self, settings, path):
        self.settings = settings
        self.path = path

    @property
    def collect_path(self):
        return self.path

    def workerinput(self):
        return {"toy_path": str(self.path)}

    def close(self):
        log("close")


class ToyFile(ModeFile):
    def collect(self):
        for word in self.path.read_text().split():
            yield ToyItem.from_parent(self, name=word)


class ToyItem(pytest.Item):
    def runtest(self):
        post(self, [append_message("toy.jsonl", {"word": self.name})])
        if self.name == "bad":
            raise AssertionError("bad word")


class ToyPlugin(ModePlugin):
    collector = ToyFile

    def __init__(self, config, settings):
        super().__init__(config, settings)
        path = Path(config.workerinput["toy_path"]) if self.is_worker else Path(str(config.rootpath)) / "items.txt"
        self.session = ToySession(settings, path)

    def active(self):
        return self.session

    def on_report(self, report):
        if report.when == "call":
            log("report", nodeid=report.nodeid, outcome=report.outcome)

    def status(self, report):
        if report.when == "call" and report.failed:
            return "toyfailed", "T", "TOYFAILED"
        return None

    def finish(self, session):
        log("finish")

    def message_scope(self, nodeid):
        return Scope(appends={"toy.jsonl": {"word": nodeid.rsplit("::", 1)[-1]}})

    def write_summary(self, terminalreporter):
        terminalreporter.write_line("toy summary")


class Xdist:
    def __init__(self, plugin):
        self.plugin = plugin

    def pytest_configure_node(self, node):
        node.workerinput.update(self.plugin.workerinput())


def pytest_configure(config):
    plugin = ToyPlugin(config, Settings(root=Path(str(config.rootpath))))
    config.pluginmanager.register(plugin, "toy-mode")
    config.pluginmanager.register(TransportPlugin(ControllerWriter(Path(str(config.rootpath)) / "home"),
                                                  is_worker=plugin.is_worker, scope=plugin.message_scope),
                                  "toy-transport")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(Xdist(plugin), "toy-xdist")
'''


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [["-n", "0"], ["-n", "2"]], ids=["n0", "n2"])
def test_a_toy_mode_collects_reports_finishes_and_summarises_through_the_base(lean_pytester: pytest.Pytester,
                                                                              xdist: list[str],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    pytester = lean_pytester
    log = pytester.path / "log.jsonl"
    monkeypatch.setenv("TOY_LOG", str(log))
    pytester.makeconftest(TOY_MODE)
    (pytester.path / "items.txt").write_text("one two bad three\n")
    result = pytester.runpytest_subprocess("items.txt", "-p", "no:cacheprovider", "-p", "no:randomly", "-v", *xdist)
    assert result.ret == 1, result.stdout.str()
    assert [ln for ln in result.outlines if "TOYFAILED" in ln and "items.txt::bad" in ln], result.stdout.str()
    result.stdout.fnmatch_lines(["*toy summary*", "*3 passed, 1 toyfailed*"])
    assert result.stdout.str().count("toy summary") == 1
    events = [json.loads(line) for line in log.read_text().splitlines()]
    controller = [e for e in events if e["worker"] is None]
    # reports reach on_report on the controller only, once per item; finish once, after close
    assert sorted(e["nodeid"] for e in controller if e["event"] == "report") == \
        sorted(f"items.txt::{w}" for w in ("one", "two", "bad", "three"))
    assert [e["event"] for e in controller if e["event"] != "report"] == ["close", "finish"]
    assert not [e for e in events if e["worker"] is not None and e["event"] in ("report", "finish")]
    if xdist[1] == "2":  # every worker closes its own session
        assert {e["worker"] for e in events if e["event"] == "close"} == {None, "gw0", "gw1"}
    # the records went through the transport: the controller wrote each once
    words = sorted(json.loads(line)["word"] for line in (pytester.path / "home" / "toy.jsonl").read_text().splitlines())
    assert words == ["bad", "one", "three", "two"]


@pytest.mark.parametrize("session", [MineSession, RunSession, ProbeSession, AblationSession])
def test_the_four_mode_sessions_keep_the_contract(session: type) -> None:
    """Each mode's session class has every member of :class:`ModeSession` (mypy checks the types
    through each plugin's ``active()``)."""
    members = ["collect_path", "workerinput", "close"]
    assert all(callable(getattr(session, m, None)) or isinstance(getattr(session, m, None), property)
               for m in members), session
    assert {m for m in dir(ModeSession) if not m.startswith("_")} == set(members)
