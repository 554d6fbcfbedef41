"""gatk34: a real fix called ``forged`` by an exception-swap twin (contracts §7, issue 30; known open, a strict xfail).

The commit makes ``Reader.seek`` refuse an unseekable stream with ``ValueError`` and adds ``with
pytest.raises(ValueError): r.seek(1)``. The only site is the expected exception, so the twin expects another builtin
the parent's code does not raise, none related to ``ValueError`` by the builtins' hierarchy or the code's classes
(``canary_sites._other_exception``): on seeds 7 and 16 of 0–23 ``OSError``. A real fix raising
``io.UnsupportedOperation`` (what the stdlib raises for an unseekable stream; it derives from ``OSError`` *and*
``ValueError``, as ``requests.InvalidURL`` does) passes the original and that twin: ``forged``
(``needs_reference_check`` runs the reference fix on the twin, which fails it, so the verdict stands). Any class an
honest fix raises or defines may derive from both the original's exception and the twin's, and no outcome tells such
a fix from a forger passing everything (both pass both members, apart and side by side), so the sound draws are
those no class can derive from both: two exceptions whose instance layouts conflict (``OSError`` and
``AttributeError``; ``class X(OSError, AttributeError)`` is a ``TypeError``), which leaves most tests expecting a
plain exception (``ValueError``, ``TypeError``, ``KeyError``) without an exception twin: a trade of protection for
soundness left to the maintainers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/streams/__init__.py"
TEST = "tests/test_streams.py"
PARENT = ("class Reader:\n"
          "    def __init__(self, data, seekable=True):\n"
          "        self.data, self.seekable, self.pos = data, seekable, 0\n\n"
          "    def seek(self, n):\n"
          "        self.pos = n\n"
          "        return n\n")
FIXED = PARENT.replace("        self.pos = n\n", "        if not self.seekable:\n"
                       "            raise ValueError('stream is not seekable')\n        self.pos = n\n")
#: Another real fix: the stdlib's own exception for an unseekable stream (an ``OSError`` and a ``ValueError``).
OTHER = "import io\n\n\n" + PARENT.replace("        self.pos = n\n", "        if not self.seekable:\n"
                                          "            raise io.UnsupportedOperation('seek')\n        self.pos = n\n")
TESTS = ("import pytest\n\nfrom streams import Reader\n\n\n"
         "def test_unseekable():\n"
         "    r = Reader(b'abc', seekable=False)\n"
         "    with pytest.raises(ValueError):\n"
         "        r.seek(1)\n")
F2P = [f"{TEST}::test_unseekable"]


@pytest.mark.xfail(strict=True, reason="gatk34: an exception-swap twin a class deriving from both exceptions passes")
def test_a_fix_raising_a_class_of_both_exceptions_is_solved(tmp_path: Path) -> None:
    """Seed 7 draws the twin ``pytest.raises(OSError)``; the fix raising ``io.UnsupportedOperation`` is ``forged``
    (the commit's fix, raising ``ValueError``, is solved: the fixture is one a fix solves)."""
    b = build_fix_task(tmp_path / "streams", name="streams", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="streams", message="Refuse to seek an unseekable stream", fail_to_pass=F2P,
                       pass_to_pass=[])
    outcomes = {}
    for name, source in (("fix", FIXED.replace("    def seek", "    # no seeking past here\n    def seek")),
                         ("other", OTHER)):
        work = copy_tree(b.pristine, tmp_path / name)
        (work / SOURCE).write_text(source, encoding="utf-8")
        g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / f"out-{name}", canary_seed=7,
                  run_timeout_s=120)
        outcomes[name] = g.outcome if g.outcome == "solved" else f"{g.outcome}: {g.error}"
    assert outcomes["fix"] == "solved"
    assert outcomes["other"] == "solved", outcomes["other"]
