"""A class-, module- or session-scoped fixture's teardown error (gatk50).

pytest reports it on the one test whose teardown ended the scope: the last of the scope the run ran. Since gatk49 a
passing call with a failed teardown is ``error``, so that one id was ``error`` and its siblings ``passed``, an
outcome that moved with the run's selection and schedule: mining's targeted twin runs (one id alone) made a real fix's
FAIL_TO_PASS id ``error`` and dropped the task as ``reference_passes_canary`` (measured on a repository whose
session-scoped fixture's teardown fails: "1 FAIL_TO_PASS id(s) did not pass with the canaries planted"), and under
xdist each worker's last id errs, another pair each run (``test_a[5]``/``test_a[7]``, then ``[6]``/``[7]``): an id
the mine kept could be the one a grading's schedule put last, a real fix ``tests_failed``. The reporter now says whose
finalizers raised (``torn``) and the scope's failure is every one of its ids': the same in any subset or schedule."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_homefield.sandbox.outcomes import parse_events
from pytest_homefield.sandbox.testrun import run_tests

CMD = (f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio "
       "-p no:randomly")
MODULE = """\
    import pytest


    @pytest.fixture(scope="module", autouse=True)
    def server():
        yield
        raise RuntimeError("the server did not stop cleanly")


    @pytest.mark.parametrize("i", range(4))
    def test_a(i):
        assert i >= 0


    class TestB:
        def test_b(self):
            assert True
    """
OTHER = """\
    import pytest


    @pytest.fixture
    def spy():
        yield
        raise AssertionError("never called")


    def test_spied(spy):
        assert True


    def test_plain():
        assert True
    """
M = "tests/test_m.py"
OTH = "tests/test_o.py"
ALL = {**{f"{M}::test_a[{i}]": "error" for i in range(4)}, f"{M}::TestB::test_b": "error",
       f"{OTH}::test_spied": "error", f"{OTH}::test_plain": "passed"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scope") / "p"
    for rel, text in {M: MODULE, OTH: OTHER, "pyproject.toml": "[tool.pytest.ini_options]\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(("args", "targets", "expected"), [
    ("", [M, OTH], ALL),
    ("", [f"{M}::test_a[1]"], {f"{M}::test_a[1]": "error"}),
    ("", [f"{M}::test_a[0]", f"{M}::test_a[1]", OTH], {k: v for k, v in ALL.items() if "[2]" not in k and "[3]" not in k
                                                     and "TestB" not in k}),
    ("-n 2", [M, OTH], ALL),
], ids=["whole", "one", "subset", "xdist"])
def test_a_scopes_teardown_error_is_every_one_of_its_ids(project: Path, tmp_path: Path, args: str,
                                                         targets: list[str], expected: dict[str, str]) -> None:
    run = run_tests(project, f"{CMD} {args}", targets, out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == expected, (run.outcomes, run.log_path.read_text()[-2000:])


def _ev(nodeid: str, when: str, outcome: str, **extra: object) -> str:
    return json.dumps({"event": "phase", "nodeid": nodeid, "when": when, "outcome": outcome, "pid": 1, **extra})


def test_torn_names_only_scopes_around_the_reporting_id() -> None:
    """A ``torn`` naming a scope that does not hold the reporting test (only the test process could write such) makes
    no other id ``error``; the reporting id's own failed teardown still does; a malformed ``torn`` line is not
    counted."""
    lines = [json.dumps({"event": "start", "pid": 1})]
    for n in ("a/t.py::x", "a/t.py::y", "b/u.py::z", "b/u.py::w"):
        lines += [_ev(n, "setup", "passed"), _ev(n, "call", "passed")]
    lines += [_ev("a/t.py::x", "teardown", "passed"), _ev("a/t.py::y", "teardown", "failed", torn=["b/u.py", "a"]),
              _ev("b/u.py::z", "teardown", "failed", torn=["a/t.py::y"]), _ev("b/u.py::w", "teardown", "failed",
                                                                             torn=[7]),
              json.dumps({"event": "finish", "exitstatus": 1, "pid": 1})]
    parsed, _ = parse_events("\n".join(lines) + "\n")
    assert parsed.outcomes == {"a/t.py::x": "error", "a/t.py::y": "error", "b/u.py::z": "error",
                               "b/u.py::w": "passed"}, parsed.outcomes
