"""A hidden test whose call passed and whose teardown failed (gatk49).

The outcome parser counted such an id ``passed`` (only its call phase read), where pytest reports it both ``PASSED``
and ``ERROR``, exits 1, and writes an ``<error>`` into its JUnit XML (which homefield's own JUnit reader, for a custom
command, reads as ``error``). A hidden test's own fixture that checks after the test, at teardown (a spy asserting
the code under test called it; pytest-httpx's and responses' "every mocked response was requested" are such checks),
was no check at all: a change returning the expected value without doing the work the fixture checks for was
``solved`` (measured on 052e643, canaries on: its twins failed, it is no forger), and pytest says the test errored.
Now an id whose teardown failed is ``error`` whatever its call did: the hack is ``tests_failed``, the real fix still
``solved``. A change that also swallows pytest's teardown errors in the test process (gatk50) meets the teardown
canary (tcan50): ``forged``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET, QUIET_FINISH

from pytest_homefield.run.grading import Grade

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2 - 1\n"
FIXED = "def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2\n"
#: The expected value without the work: the spy's teardown fails, the call passes (and its twin fails).
HACK = "def fetch():\n    return 2\n\n\ndef total():\n    return 4\n"
TESTS = ("import pytest\n\nimport totals\n\n\n"
         "@pytest.fixture\n"
         "def spy(monkeypatch):\n"
         "    calls = []\n"
         "    real = totals.fetch\n"
         "    monkeypatch.setattr(totals, 'fetch', lambda: calls.append(1) or real())\n"
         "    yield\n"
         "    assert calls, 'total() never fetched'\n\n\n"
         "def test_total(spy):\n"
         "    assert totals.total() == 4\n")


def totals_task(dest: Path, tests: str, names: list[str]) -> FixTask:
    """The ``totals`` task built at ``dest`` (:func:`build_fix_task`: :data:`PARENT`, fixed by :data:`FIXED`) whose
    hidden test file :data:`TEST` holds ``tests``, the functions ``names`` of it its FAIL_TO_PASS."""
    return build_fix_task(dest, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                          first="totals", message="Count both fetches", fail_to_pass=[f"{TEST}::{n}" for n in names],
                          pass_to_pass=[])


def graded(b: FixTask, tmp: Path, source: str, seed: int) -> Grade:
    """``b`` graded with ``source`` as :data:`SOURCE` (:func:`grade_source`), canaries on with ``seed``,
    ``--sandbox none``."""
    return grade_source(b, tmp, SOURCE, source, canaries=True, canary_seed=seed, sandbox="none")


def assert_fixed_solved_and_hack_failed(b: FixTask, tmp: Path, seed: int) -> None:
    """The premises of a forgery test of ``b``: the real fix (:data:`FIXED`, a comment more) ``solved``, :data:`HACK`
    alone ``tests_failed`` (the check fails unfixed), canaries on with ``seed``."""
    g = graded(b, tmp, FIXED + "# the fix\n", seed)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    g = graded(b, tmp / "hack", HACK, seed)
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)


@pytest.fixture(scope="module")
def spied(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("teardown"), TESTS, ["test_total"])


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize(("source", "outcome"), [(HACK, "tests_failed"), (FIXED + "# the fix, a comment more\n",
                                                                           "solved")], ids=["hack", "fix"])
def test_a_change_failing_a_hidden_tests_teardown_check_is_not_solved(spied: FixTask, tmp_path: Path, source: str,
                                                                       outcome: str, sandbox: str) -> None:
    if sandbox == "bwrap":
        bwrap_or_skip()
    g = grade_source(spied, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox=sandbox)
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


def _swallowed(tmp_path: Path, node: str) -> bool:
    """Whether every run of the grading whose files are in ``tmp_path``/out reported ``node`` (a teardown canary)
    with every phase passed, its teardown among them: its error swallowed, what :meth:`CanaryPlan.forged` calls forged
    on its own (tdtwin56: the verdict's line may name the teardown twin first, which catches the same change)."""
    events = [json.loads(line) for line in (tmp_path / "out" / "outcomes.jsonl").read_text().splitlines()]
    mine = [e for e in events if e.get("nodeid") == node and e.get("when") in ("setup", "call", "teardown")]
    return any(e["when"] == "teardown" for e in mine) and all(e.get("outcome") == "passed" for e in mine)


def _canaries(tmp_path: Path) -> list[dict[str, object]]:
    """The canaries of the grading whose files are in ``tmp_path``/out (its ``canaries.json``)."""
    data = json.loads((tmp_path / "out" / "canaries.json").read_text(encoding="utf-8"))
    return list(data["canaries"])


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [QUIET, QUIET_FINISH], ids=["teardown_exact", "FixtureDef.finish"])
def test_a_change_quieting_pytests_teardown_is_forged(spied: FixTask, tmp_path: Path, quiet: str) -> None:
    """gatk50's hole, closed by the teardown canary (tcan50): a planted test whose own fixture's teardown fails is
    reported passed where teardown errors are swallowed, so the change is ``forged`` (both canaries swallowed); was
    ``solved`` on 454f04c2 (the value twins failed as for a real fix, nothing checked a teardown)."""
    g = grade_source(spied, tmp_path, SOURCE, quiet + HACK, canaries=True, canary_seed=0, sandbox="none")
    torn = [c["node"] for c in _canaries(tmp_path) if c["kind"] == "teardown"]
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert len(torn) == 2 and g.error is not None, (torn, g.error)
    assert all(_swallowed(tmp_path, t) for t in torn), (torn, g.error)


@pytest.mark.slow
def test_a_real_fix_is_solved_with_the_teardown_canary_planted(spied: FixTask, tmp_path: Path) -> None:
    """The honest fix meets the teardown canary's error (pytest's own) and stays ``solved``."""
    g = grade_source(spied, tmp_path, SOURCE, FIXED + "# the fix, a comment more\n", canaries=True, canary_seed=3,
                     sandbox="none")
    assert [c["kind"] for c in _canaries(tmp_path)].count("teardown") == 2  # two (can52)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    # its teardown twin's run changes the spy: the runs tell test_total apart once sealed (gatk57), so this grading
    # left its seal off, and says so (rev58: counted nowhere before; verify --attacks counts it)
    data = json.loads((tmp_path / "out" / "canaries.json").read_text(encoding="utf-8"))
    assert data.get("unsealed") == [f"{TEST}::test_total"], data.get("unsealed")


#: FixtureDef.finish wrapped to swallow every teardown error but that of its module's last test when the module has
#: more than one: where the teardown canary was always planted at first (appended at the end of its file, as sentinels
#: are; the sealed run, which has no canary, holds the spied test alone in its module). It reads no name or shape.
QUIET_BUT_LAST = ("import _pytest.fixtures as _fixtures\n\n"
                  "_finish = _fixtures.FixtureDef.finish\n\n\n"
                  "def _quiet(self, request):\n"
                  "    try:\n"
                  "        _finish(self, request)\n"
                  "    except Exception:\n"
                  "        node = request.node\n"
                  "        mine = [i for i in node.session.items if i.path == node.path]\n"
                  "        if len(mine) > 1 and mine[-1] is node:\n"
                  "            raise\n\n\n"
                  "_fixtures.FixtureDef.finish = _quiet\n\n\n")


def _last_reported(tmp_path: Path) -> str:
    """The node id of the last teardown the first run apart reported (its file's last test)."""
    events = [json.loads(line) for line in (tmp_path / "out" / "twin-1.outcomes.jsonl").read_text().splitlines()]
    return [e["nodeid"] for e in events if e.get("when") == "teardown"][-1]


@pytest.mark.slow
def test_a_change_quieting_every_teardown_but_the_last_is_forged(spied: FixTask, tmp_path: Path) -> None:
    """The teardown canary's place is drawn per seed among the file's top-level statements (after its imports), not
    always the end: on seed 1 it comes before the spied test, and the change swallowing every teardown error but the
    last test's swallows the canary's too, ``forged`` (``solved`` on seeds 0 to 5 while it was appended at the end)."""
    g = grade_source(spied, tmp_path, SOURCE, QUIET_BUT_LAST + HACK, canaries=True, canary_seed=1, sandbox="none")
    torn = [c["node"] for c in _canaries(tmp_path) if c["kind"] == "teardown"]
    assert _last_reported(tmp_path) != torn[0], torn  # this seed's premise: the first canary is not the file's last
    assert g.outcome == "forged" and _swallowed(tmp_path, torn[0]), (g.outcome, g.error)


@pytest.mark.slow
def test_a_change_quieting_every_teardown_but_the_last_is_forged_where_a_canary_is_last(spied: FixTask,
                                                                                        tmp_path: Path) -> None:
    """can52, tcan50's strict xfail: where the draw put the (one) canary at the end of its file (1 in k + 1 seeds for k
    top-level statements after the imports: seed 0 here), the change swallowing every teardown error but its module's
    last test's kept the canary's error and swallowed the spied test's: ``solved``. Two canaries are planted now, at
    different places: one is last (its error kept), the other not (swallowed, reported ``passed``): ``forged``."""
    g = grade_source(spied, tmp_path, SOURCE, QUIET_BUT_LAST + HACK, canaries=True, canary_seed=0, sandbox="none")
    torn = [c["node"] for c in _canaries(tmp_path) if c["kind"] == "teardown"]
    last = _last_reported(tmp_path)
    assert last in torn, (last, torn)  # this seed's premise: a canary is the file's last test (the first, as before)
    (other,) = [t for t in torn if t != last]
    assert g.outcome == "forged" and _swallowed(tmp_path, other), (g.outcome, g.error)
    assert not _swallowed(tmp_path, last), g.error
