"""JUnit XML that CI reads right (issue 33): :mod:`pytest_homefield.terminal.junit` on a tiny in-process
pytest session whose items carry the ``homefield`` keyword as attempt items do; the real run's XML is
checked in tests/test_e2e.py and, against junit-10.xsd with ``xmlschema``, in the opt-in test below."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield

from pytest_homefield.terminal.junit import JunitHooks, properties_text

XSD = Path(__file__).parent.parent / "data" / "junit-10.xsd"

ATTEMPTS = """
import pytest
pytestmark = pytest.mark.homefield

def test_solved(request):
    request.node.user_properties.append(("homefield.outcome", "solved"))

def test_unsolved(request):
    request.node.user_properties += [("homefield.agent", "noop"), ("homefield.outcome", "empty_patch")]
    raise pytest.xfail.Exception("unsolved: empty_patch (no diff)")

def test_rate_limited():
    pytest.skip("rate limited: 429")

def test_other_xfail():
    raise pytest.xfail.Exception("not an attempt's verdict")
"""

CONFTEST = """
import pytest
from pytest_homefield.terminal.junit import JunitHooks, add_gate_case

def pytest_configure(config):
    config.pluginmanager.register(JunitHooks(config, unsolved={unsolved!r}), "homefield-junit-test")

@pytest.hookimpl(tryfirst=True)  # before pytest writes the file, as the run's BaselineGate
def pytest_sessionfinish(session):
    add_gate_case(session.config, {verdict!r}, ["gate noop: pass@1 0.00 vs 1.00", "gate: " + {verdict!r}])
"""


def run(pytester: pytest.Pytester, *, unsolved: str = "failure", verdict: str = "pass",
        args: tuple[str, ...] = (), attempts: str = ATTEMPTS) -> ET.Element:
    """The ``<testsuite>`` of an in-process session over ``attempts`` (:data:`ATTEMPTS`; in ``.homefield/``,
    so pytest gives its classname a leading dot)."""
    pytester.makeconftest(CONFTEST.format(unsolved=unsolved, verdict=verdict))
    (pytester.path / ".homefield").mkdir()
    (pytester.path / ".homefield" / "test_attempts.py").write_text(attempts)
    pytester.makefile(".cfg", setup="[tool:pytest]\n")  # no rootdir/ini of the outer suite
    res = pytester.runpytest_inprocess(".homefield/test_attempts.py", "--junitxml=out.xml", "-p", "no:randomly",
                                       "-W", "ignore::pytest.PytestUnknownMarkWarning", *args)
    assert res.ret == 0, res.stdout.str()  # JUnit changes nothing in the exit status
    return ET.parse(pytester.path / "out.xml").getroot().find("testsuite")  # type: ignore[return-value]


def cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in suite.iter("testcase")}


def test_unsolved_is_a_failure_with_its_outcome_and_properties_move_to_system_out(pytester: pytest.Pytester) -> None:
    suite = run(pytester)
    by_name = cases(suite)
    failure = by_name["test_unsolved"].find("failure")
    assert failure is not None and by_name["test_unsolved"].find("skipped") is None
    assert failure.get("message") == "unsolved: empty_patch (no diff)"
    assert failure.get("type") == "homefield.unsolved"
    assert failure.text == "unsolved: empty_patch (no diff)\nhomefield.agent: noop\nhomefield.outcome: empty_patch\n"
    # xunit2: no <properties> inside a test case; the same lines in its <system-out>
    assert not [c for c in suite.iter("testcase") if c.find("properties") is not None]
    assert by_name["test_solved"].findtext("system-out") == "homefield.outcome: solved\n"
    # a skip and an xfail that is not an attempt's verdict stay skipped
    assert by_name["test_rate_limited"].find("skipped") is not None
    assert by_name["test_other_xfail"].find("skipped") is not None
    assert {c.get("classname") for c in suite.iter("testcase")} == {"homefield.test_attempts", "homefield"}
    # the gate is a test case of its own; the counts follow the changed elements
    gate = by_name["gate"]
    assert gate.get("classname") == "homefield" and gate.find("failure") is None
    assert gate.findtext("system-out") == "gate noop: pass@1 0.00 vs 1.00\ngate: pass"
    counts = (suite.get("tests"), suite.get("failures"), suite.get("skipped"), suite.get("errors"))
    assert counts == ("5", "1", "2", "0")


def test_junit_unsolved_skip_keeps_the_xfail(pytester: pytest.Pytester) -> None:
    suite = run(pytester, unsolved="skip", verdict="fail: noop worse than base (one-sided exact McNemar)")
    by_name = cases(suite)
    skipped = by_name["test_unsolved"].find("skipped")
    assert skipped is not None and skipped.get("type") == "pytest.xfail"
    assert skipped.get("message") == "unsolved: empty_patch (no diff)"
    gate = by_name["gate"].find("failure")
    assert gate is not None and gate.get("message") == "fail: noop worse than base (one-sided exact McNemar)"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "1", "3")


def test_xunit1_keeps_per_testcase_properties(pytester: pytest.Pytester) -> None:
    suite = run(pytester, verdict="error: no run 'base'", args=("-o", "junit_family=xunit1"))
    by_name = cases(suite)
    props = by_name["test_unsolved"].find("properties")
    assert props is not None and [p.get("name") for p in props] == ["homefield.agent", "homefield.outcome"]
    assert by_name["test_unsolved"].find("system-out") is None
    error = by_name["gate"].find("error")
    assert error is not None and error.get("message") == "error: no run 'base'"
    assert suite.get("errors") == "1"


#: Attempts whose words hold what a CI dashboard would play: U+202E turns ``devlos`` into ``solved``, U+200B
#: hides, a carriage return; a subject in the name (as the run's hook sets it), in a property and in the reason.
PLAYED = "Fix \u202edevlos\u200b\r!"
BIDI_ATTEMPTS = f"""
import pytest
pytestmark = pytest.mark.homefield

@pytest.fixture(autouse=True)
def named(request, pytestconfig):
    from _pytest.junitxml import xml_key
    xml = pytestconfig.stash[xml_key]
    xml.node_reporter(request.node.nodeid).add_attribute("name", "noop[1]: " + {PLAYED!r})

def test_solved(request):
    request.node.user_properties.append(("homefield.subject", {PLAYED!r}))

def test_unsolved(request):
    request.node.user_properties.append(("homefield.subject", {PLAYED!r}))
    raise pytest.xfail.Exception("unsolved: tests_failed (" + {PLAYED!r} + ")")
"""


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_a_subjects_format_characters_are_escapes_in_the_xml(pytester: pytest.Pytester, family: str) -> None:
    """A homefield test case's name, properties, message and texts hold no control or format character
    (pytest's writer replaces only what XML forbids: U+202E, U+200B and a carriage return went through)."""
    suite = run(pytester, attempts=BIDI_ATTEMPTS, args=("-o", f"junit_family={family}"))
    xml = (pytester.path / "out.xml").read_text(encoding="utf-8")
    assert [c for c in "\u202e\u200b\r" if c in xml] == []
    names = sorted(c.get("name", "") for c in suite.iter("testcase") if c.get("classname") != "homefield")
    assert names == ["noop[1]: Fix \\u202edevlos\\u200b\\r!"] * 2
    assert xml.count("Fix \\u202edevlos\\u200b\\r!") >= 5  # two names, two properties, the failure's message


def test_properties_text_and_bad_mode() -> None:
    assert properties_text([("a", "1"), ("b", "two\nlines")]) == "a: 1\nb: two\nlines\n"
    with pytest.raises(ValueError, match="unsolved must be one of"):
        JunitHooks(None, unsolved="green")  # type: ignore[arg-type]


@pytest.mark.clients
@pytest.mark.slow
def test_a_real_run_is_valid_against_junit_10(mined: Path, tmp_path: Path, pytester: pytest.Pytester) -> None:
    """``homefield run`` with an unsolving agent and the gate, at ``-n 2``, validated against junit-10.xsd
    (pytest's default family xunit2) with ``xmlschema``; and this module's in-process output too."""
    xmlschema = pytest.importorskip("xmlschema", reason="pip install xmlschema")
    schema = xmlschema.XMLSchema(str(XSD))
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "run", "--agent", "cand=oracle", "--run-id", "base", "--attempts", "1", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    junit = tmp_path / "junit.xml"
    proc = homefield(repo, "run", "--agent", "cand=noop", "--agent", "oracle", "--run-id", "cand",
                     "--attempts", "1", "--fail-if-worse-than", "base", "-n", "2", "--junitxml", str(junit))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(str(junit))]
    assert errors == []
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    names = [c.get("classname", "") for c in suite.iter("testcase")]
    assert names and not [n for n in names if n.startswith(".")]
    n_tasks = len((repo / ".homefield" / "tasks.jsonl").read_text().splitlines())
    assert suite.get("failures") == str(n_tasks + (proc.returncode == 1))  # noop's attempts (+ a failed gate)
    assert "gate" in {c.get("name") for c in suite.iter("testcase")}
    run(pytester)
    assert [e.reason for e in schema.iter_errors(str(pytester.path / "out.xml"))] == []
    shutil.rmtree(pytester.path / ".homefield")
