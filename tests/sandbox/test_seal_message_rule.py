"""satk35: a ``match`` site's message is the text the test process's own pytest searches the regex in
(contracts §7 "Sealed sites", ``homefield_seal._pytest_text``), whatever pytest that is.

For each interpreter (this one, and each path in ``HOMEFIELD_TEST_PYTHONS``, space-separated: another pytest), a
real subprocess raises each exception of :data:`CASES` inside ``pytest.raises(E, match=L)`` (does pytest accept
it?) and inside the seal of a sealed file (``__hf_raises__`` around ``pytest.raises(E)``), and the host searches
the message sent with ``L`` as :class:`~pytest_homefield.sandbox.seal_kinds.SealCheck` does: the two must agree, or
a real fix is ``forged`` (pytest accepts, the host does not) or a site passes where the test fails. Measured before
satk35 with pytest 7.2.2 (``ExceptionInfo.match`` reads ``str(exc)`` alone): a ``ValueError`` with a note matched
``got 0$`` in pytest, and the seal, which sent ``str(exc)`` and the note whenever ``stringify_exception`` (pytest 8.4+)
was missing, gave a message the host found no match in; pytest 8.3.5 and 9.2 agreed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox.bwrap import REPORTER_DIR
from pytest_homefield.sandbox.outcomes import seal_verdict
from pytest_homefield.sandbox.seal_kinds import SealCheck

#: (name, code making the exception, its class's name, the regex)
CASES = [
    ("plain", "ValueError('width must be at least 1, got 0')", "ValueError", r"got \d$"),
    ("note-anchored", "_noted(ValueError('width must be at least 1, got 0'), 'see the docs')", "ValueError",
     r"got 0$"),
    ("note-text", "_noted(ValueError('width must be at least 1, got 0'), 'see the docs')", "ValueError",
     r"the docs"),
    ("group-message", "ExceptionGroup('bad widths', [ValueError('got 0')])", "ExceptionGroup", r"bad widths$"),
    ("group-member", "ExceptionGroup('bad widths', [ValueError('got 0')])", "ExceptionGroup", r"got 0"),
]

SCRIPT = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import pytest
import homefield_seal


def _noted(exc, note):
    exc.add_note(note)
    return exc


out = {"pytest": pytest.__version__}
for name, make, cls, regex in json.loads(sys.argv[2]):
    E = eval(cls)
    try:
        with pytest.raises(E, match=regex):
            raise eval(make)
        accepted = True
    except BaseException:
        accepted = False
    with homefield_seal.__hf_raises__("hf0", pytest.raises(E)):
        raise eval(make)
    sent = homefield_seal.take()
    out[name] = [accepted, sent[0][1] if len(sent) == 1 else None]
print(json.dumps(out))
'''


def _pythons() -> list[str]:
    return [sys.executable, *os.environ.get("HOMEFIELD_TEST_PYTHONS", "").split()]


@pytest.mark.parametrize("python", _pythons())
def test_the_host_accepts_what_the_process_pytest_accepts(python: str, tmp_path: Path) -> None:
    """Each case (module docstring): the host's verdict on the message the seal sent is ``equal`` exactly when that
    interpreter's pytest accepted the exception with ``match=L``."""
    made = subprocess.run([python, "-c", SCRIPT, str(REPORTER_DIR), json.dumps(CASES)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    got = json.loads(made.stdout.strip().splitlines()[-1])
    verdicts = {name: (got[name][0], seal_verdict(got[name][1], SealCheck("match", regex)))
                for name, _, _, regex in CASES}
    assert all(v in ((True, "equal"), (False, "unequal")) for v in verdicts.values()), (got["pytest"], verdicts)
    assert verdicts["plain"] == (True, "equal") and verdicts["group-member"][0] is False, verdicts
