"""JUnit XML that CI reads right (issue 33, docs/contracts.md §8 "JUnit XML").

pytest's own writer (``--junitxml``, :mod:`_pytest.junitxml`) builds one ``<testcase>`` per item; this
module adjusts the test cases of homefield's items once pytest has built them, on the controller:

* an unsolved attempt (an xfail whose reason starts ``unsolved: ``) is a ``<failure>`` with the outcome
  and reason as its ``message`` (``--junit-unsolved failure``, the default; ``skip`` keeps pytest's
  ``<skipped type="pytest.xfail">``, which CI dashboards count as green). The pytest exit status is not
  changed: ``--fail-under`` and ``--fail-if-worse-than`` decide it;
* the item's ``homefield.*`` properties go to the test case's ``<system-out>`` as ``name: value`` lines
  under pytest's default family ``xunit2`` (whose schema, junit-10.xsd, allows ``<properties>`` only on
  ``<testsuite>``); ``junit_family = xunit1`` (or ``legacy``) keeps them as ``<properties>``;
* every text and attribute of a homefield test case is made inert (:func:`inert`): a commit subject's
  U+202E or zero-width space in its ``name``, an agent's in a property, are written as escapes (``\\u202e``),
  as the terminal and the reports write them (pytest's own writer replaces only what XML forbids);
* the classname has no leading dot (pytest turns ``.homefield/tasks.jsonl`` into ``.homefield.tasks.jsonl``);
* :func:`add_gate_case` adds the ``--fail-if-worse-than`` verdict as a test case of its own
  (classname ``homefield``, name ``gate``): passed, or a ``<failure>`` / ``<error>`` with the verdict.

pytest has no public API for any of this: the writer is reached through its stash key, and a test case
is changed in place after pytest has finalized it (``_NodeReporter.to_xml`` then returns the same element
every time). ``tests/terminal/test_junit.py`` validates the result against junit-10.xsd.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Literal

import pytest
from _pytest.junitxml import xml_key  # pytest's stash key of its JUnit writer (no public accessor)

from pytest_homefield.records import UNSOLVED_PREFIX, visible

__all__ = ["JUNIT_UNSOLVED", "JunitHooks", "add_gate_case", "inert", "properties_text"]

#: The values of ``--junit-unsolved``: how an unsolved attempt is written.
JUNIT_UNSOLVED: tuple[str, ...] = ("failure", "skip")

#: The ``type`` attribute of an unsolved attempt's ``<failure>``.
UNSOLVED_TYPE = "homefield.unsolved"


def properties_text(properties: list[tuple[str, str]]) -> str:
    """``name: value`` lines (one per property, in order, each ending in a newline) for ``<system-out>``.
    A value's own line breaks are kept (the XML text holds them)."""
    return "".join(f"{name}: {value}\n" for name, value in properties)


def inert(element: ET.Element) -> None:
    """``element`` and everything in it changed in place: each attribute value, text and tail through
    :func:`~pytest_homefield.records.visible` (newline and tab kept), so no control or format character of a
    commit's subject, a test id or an agent's words (U+202E, which turns ``devlos`` into ``solved`` on a CI
    dashboard, a zero-width space, a carriage return) reaches a reader of the XML; the one place a homefield
    test case is finished, whichever hook or property wrote the text (ratk46: the ``name`` kept a subject's
    U+202E and U+200B)."""
    for node in element.iter():
        for key, value in node.attrib.items():
            node.set(key, visible(value, keep="\n\t"))
        if node.text:
            node.text = visible(node.text, keep="\n\t")
        if node.tail:
            node.tail = visible(node.tail, keep="\n\t")


def _writer(config: pytest.Config) -> Any:
    """pytest's JUnit writer (a ``LogXML``), or ``None`` without ``--junitxml`` and on xdist workers."""
    return config.stash.get(xml_key, None)


class JunitHooks:
    """pytest hooks adjusting homefield items' test cases in pytest's JUnit XML (see the module).

    ``unsolved``: one of :data:`JUNIT_UNSOLVED`. Register on the controller only (workers write no XML);
    without ``--junitxml`` every hook returns at once.
    """

    def __init__(self, config: pytest.Config, *, unsolved: str = "failure") -> None:
        if unsolved not in JUNIT_UNSOLVED:
            raise ValueError(f"unsolved must be one of {JUNIT_UNSOLVED}, got {unsolved!r}")
        self.config = config
        self.unsolved = unsolved
        self._open: dict[tuple[str, object], Any] = {}  # (node id, xdist node) -> pytest's node reporter
        self._unsolved: set[tuple[str, object]] = set()

    @staticmethod
    def _key(report: pytest.TestReport) -> tuple[str, object]:
        return report.nodeid, getattr(report, "node", None)  # pytest's own key (xdist reports carry a node)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Before pytest's writer sees the teardown report: hold the test case's reporter, which the
        writer finalizes and forgets while handling that report."""
        xml = _writer(self.config)
        if xml is None or "homefield" not in report.keywords:
            return
        key = self._key(report)
        if report.when == "call" and report.skipped and str(getattr(report, "wasxfail", "")).startswith(
                UNSOLVED_PREFIX):
            self._unsolved.add(key)
        if report.when == "teardown":
            self._open[key] = xml.node_reporter(report)

    @pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_after(self, report: pytest.TestReport) -> None:
        """After pytest's writer finalized the test case: change it in place (see the module)."""
        xml = _writer(self.config)
        if xml is None or report.when != "teardown":
            return
        key = self._key(report)
        reporter = self._open.pop(key, None)
        unsolved = key in self._unsolved
        self._unsolved.discard(key)
        if reporter is None:
            return
        case: ET.Element = reporter.to_xml()
        case.set("classname", case.get("classname", "").lstrip("."))
        props = case.find("properties")
        details = properties_text([(p.get("name", ""), p.get("value", "")) for p in props.iter("property")]
                                  ) if props is not None else ""
        if props is not None and xml.family != "xunit1":
            # <properties> is invalid on a test case under xunit2: the same lines in a <system-out>
            case.remove(props)
            ET.SubElement(case, "system-out").text = details
        if unsolved and self.unsolved == "failure":
            self._failure(xml, case, details)
        inert(case)

    @staticmethod
    def _failure(xml: Any, case: ET.Element, details: str) -> None:
        """The ``<skipped type="pytest.xfail">`` of an unsolved attempt → ``<failure>`` with its message
        (``unsolved: <outcome> (<reason>)``), the item's properties as ``name: value`` lines after it in
        its text, and the testsuite's counts moved with it."""
        for child in case:
            if child.tag == "skipped" and child.get("type") == "pytest.xfail":
                message = child.get("message", "")
                child.tag = "failure"
                child.attrib = {"type": UNSOLVED_TYPE, "message": message}
                child.text = message + ("\n" + details if details else "")
                xml.stats["skipped"] -= 1
                xml.stats["failure"] += 1
                return


def add_gate_case(config: pytest.Config, verdict: str, lines: list[str]) -> None:
    """The ``--fail-if-worse-than`` verdict as a test case of its own (classname ``homefield``, name
    ``gate``): passed for ``pass``; a ``<failure>`` for ``fail: …``; an ``<error>`` for ``error: …``
    (the gate could not decide). ``lines``: the gate's printed lines, the element's text (and the
    passed case's ``<system-out>``). Nothing without ``--junitxml``."""
    xml = _writer(config)
    if xml is None:
        return
    reporter = xml.node_reporter("homefield::gate")
    reporter.add_attribute("classname", "homefield")
    reporter.add_attribute("name", "gate")
    text = "\n".join(lines)
    kind: Literal["failure", "error"] | None = (
        "failure" if verdict.startswith("fail") else "error" if verdict.startswith("error") else None)
    if kind is None:
        xml.add_stats("passed")
        node = ET.Element("system-out")
    else:
        node = ET.Element(kind, message=verdict)
    node.text = visible(text, keep="\n\t")
    reporter.append(node)  # counts a failure or an error in the testsuite's totals
