"""gatk41: graded code that reaches the reporter (``homefield_reporter``, on the test process's path, loaded with
``-p``) and changes its state, with no fix, under ``--sandbox none`` (contracts §7 "The outcome channel").

The reporter's state is the test process's own: whatever it makes of a phase reaches the host as bytes on the outcome
channel, which the same process can write itself (``PIPE_FD_FORGER``, ``PIPE_PLUGIN_FORGER``). What the host trusts of
it is nothing a process could not forge; the canaries judge it: each way below passes every test it reaches, twins
too, and is ``forged``. These hold that no piece of the reporter's state buys a pass the twins do not see:

* ``writer``: ``_Writer.write`` rewrites a failed phase as passed (no ``message``, ``line``, ``operands``);
* ``soft``: ``_Soft._exit`` takes every failure of a soft statement and keeps none (``_soft_first`` stays empty), and
  ``_Block._leave`` raises nothing kept, so a canary run's test bodies pass whatever they meet;
* ``call``: pytest's ``_pytest.runner.call_and_report`` is replaced: it empties the reporter's ``_soft_first`` (the
  failures soft statements kept) before each phase and makes a failed call phase's report passed before it is
  logged.

Measured: each way ``forged`` on seeds 0 and 1 under ``--sandbox none`` (below) and under bubblewrap
(``grade(..., sandbox="bwrap")``, the same 6 gradings, run once by hand).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.modes_task import PARENT, TEST, grade_modes

from pytest_homefield.sandbox.canary_soft import softened
from pytest_homefield.sandbox.testrun import run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:randomly -p no:cacheprovider"

#: The commit's tests: the twins sit in the assertions of ``test_scaled`` and ``test_negative``.
TESTS = ("from modes import MODE, compute\n\n\ndef test_scaled():\n    MODE['scale'] = 3\n"
         "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n"
         "\n\ndef test_plain():\n    assert compute(2) == 2\n")

_HEAD = "\n\ndef _hf_tamper():\n    import sys\n    r = sys.modules.get('homefield_reporter')\n    if r is None:\n" \
        "        return\n"
#: The ways, each appended to the parent's source (no fix) and run at its import in the test process.
WAYS = {
    "writer": _HEAD + (
        "    real = r._Writer.write\n"
        "    def write(self, record):\n"
        "        if record.get('event') == 'phase' and record.get('outcome') == 'failed':\n"
        "            record = {**record, 'outcome': 'passed', 'message': None, 'line': None, 'operands': None}\n"
        "        real(self, record)\n"
        "    r._Writer.write = write\n"),
    "soft": _HEAD + (
        "    r._Soft._exit = lambda self, exc: exc is not None and isinstance(exc, Exception)\n"
        "    r._Block._leave = lambda self, exc: (r._blocks.pop() if r._blocks else None,\n"
        "                                         r._left.pop() if r._left else None) and None\n"),
    "call": _HEAD + (
        "    import _pytest.runner as run\n"
        "    real = run.call_and_report\n"
        "    def call_and_report(item, when, log=True, **kw):\n"
        "        del r._soft_first[:]\n"
        "        report = real(item, when, log=False, **kw)\n"
        "        if when == 'call' and report.failed:\n"
        "            report.outcome, report.longrepr = 'passed', None\n"
        "        if log:\n"
        "            item.ihook.pytest_runtest_logreport(report=report)\n"
        "        return report\n"
        "    run.call_and_report = call_and_report\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("way", sorted(WAYS))
def test_each_way_passes_a_soft_body_that_fails(tmp_path: Path, way: str) -> None:
    """Each way does what it says in a canary run's test process: the softened ``test_scaled`` fails with the
    parent's code (the twin's ``forged`` below is then the canaries' doing, not a way that did nothing), and passes
    with the way appended."""
    outcomes = {}
    for name, source in (("parent", PARENT), ("way", PARENT + WAYS[way] + "\n\n_hf_tamper()\n")):
        root = tmp_path / name
        (root / "modes").mkdir(parents=True)
        (root / "modes" / "__init__.py").write_text(source)
        (root / "test_modes.py").write_text(softened(TESTS))
        run = run_tests(root, CMD, ["test_modes.py"], out_dir=tmp_path / f"{name}-out", timeout_s=60)
        outcomes[name] = run.outcomes.get("test_modes.py::test_scaled")
    assert outcomes == {"parent": "failed", "way": "passed"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("way", sorted(WAYS))
def test_reporter_state_buys_no_pass(tmp_path: Path, way: str, seed: int) -> None:
    source = PARENT + WAYS[way] + "\n\n_hf_tamper()\n"
    g = grade_modes(tmp_path, TESTS, seed, fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"],
                    source=source)
    assert g.outcome == "forged", g
