"""gatk58: with canaries the sealed run's files lay every member of a group side by side (seal56), but its sites were
those the reference fix passes in the hidden tests as written (mining's ``sealed_sites``, ``reference_sealed``). A
sealed test reading what the tests before it leave (a registry each member of an earlier, unsealed group appends to:
``describe(REG) == "1 item registered"``) gives another value there with any code ("2 items registered"), while the
other runs pass it: a real fix was ``forged`` ("its value differed" at the sealed site, seeds 0 and 1, ``--sandbox
none``, measured on 10297ec; on 1db51c0 it was ``tests_failed``, the confirmation run's side-by-side layout failing
``test_count`` first, "failed there", which 10297ec's reference check excuses). Now a site is judged only where the
reference fix passes it in the grading's own sealed files (``sealed_grading.reference_laid``, once per task, files and
selection)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.suffix_task import READER_IMPORTS, SOURCE, TEST, reading_literal

PARENT = "REG = []\n\n\ndef f(x):\n    return x\n\n\ndef describe(items):\n    return str(items)\n"
FIXED = ("REG = []\n\n\ndef f(x):\n    if isinstance(x, str):\n        return x + '-lima-mike-4417'\n    return x\n\n\n"
         "def describe(items):\n    return f'{len(items)} item' + ('s' if len(items) != 1 else '') + ' registered'\n")
#: another real fix than the commit's (the commit's own is graded without canaries)
OTHER = FIXED + "# another real fix\n"
#: the forger of tests/run/test_attacks.py's kind for ``describe``: it returns the text its caller's line compares with
READER = READER_IMPORTS + FIXED.replace("def describe(items):\n", "def describe(items):\n" + reading_literal()
                                        + "    return m.group(2) if m else ''\n")
#: ``test_register``'s value is the P2P test's too, so not sealable: its members lie side by side in the sealed run
TESTS = '''from pkg import REG, describe, f


def test_register():
    REG.append(f("kilo"))
    assert f("kilo") == "kilo-lima-mike-4417"


def test_count():
    assert describe(REG) == "1 item registered"


def test_other():
    assert f(7) == 7
    assert "kilo-lima-mike-4417"
'''


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("registry"), name="pkg", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="add", message="Describe the registry",
                          fail_to_pass=[f"{TEST}::test_register", f"{TEST}::test_count"],
                          pass_to_pass=[f"{TEST}::test_other"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved_where_the_sealed_layout_changes_a_sealed_value(registry: FixTask, tmp_path: Path,
                                                                             seed: int) -> None:
    g = grade_source(registry, tmp_path, SOURCE, OTHER, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
def test_a_literal_reader_is_still_forged_there(registry: FixTask, tmp_path: Path) -> None:
    """The site no longer judged there, the reader is met by ``test_count``'s twin."""
    g = grade_source(registry, tmp_path, SOURCE, READER, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
def test_a_real_fix_is_solved_there_in_bubblewrap(registry: FixTask, tmp_path: Path) -> None:
    """Under bubblewrap on 1db51c0 the same fix was ``tests_failed``: the confirmation run lays ``test_register``'s
    members side by side too ("test_count failed there"); the reference fix fails it there as well
    (``twin_grading.reference_together``), so the layout, not the code, failed it."""
    bwrap_or_skip()
    g = grade_source(registry, tmp_path, SOURCE, OTHER, canaries=True, canary_seed=0, sandbox="bwrap")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
