"""multi35: a parametrize column read by two statements, ``assert ordinal(n) == expected`` and ``assert
ordinal(-n) == "-" + expected`` (python-humanize's shape), sealed at both (contracts §7 "Sealed columns"): each
new row's cell is a site id in the sealed run, the first statement reports it, the second reports it with
``:1`` and the host judges that report against ``"-" + <the row's literal>``, computed by its own rules.

On the signed ordinal task (tests/helpers/signed_ordinal_task.py), graded with ``canaries=False`` so that the
sealed run alone decides: the commit's fix and another real fix are ``solved``; a fix right for positive numbers
only, the stock readers, a reader of the frame's ``expected`` (signed too), a reader of the node id, an
always-equal object, a seal silencer and made-up seal reports are not. The signed reader is ``solved`` with no fix
without the sealed run."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, grade_source
from helpers.signed_ordinal_task import (
    FID,
    FIXED,
    HALF_FIX,
    OTHER_FIX,
    P2P,
    PARENT,
    ROWS,
    SOURCE,
    build_signed_ordinals,
)
from run.test_sealed_columns import FORGERS

from pytest_homefield.run import sealed_grading
from pytest_homefield.run.sealed_grading import SEALED_OUTCOMES

#: Reads the calling test's ``expected`` off its frame and gives it, with a ``-`` for a negative number: right at
#: both statements of every row with no fix, as long as the frame holds the value.
SIGNED_READER = '''
import os as _os
import traceback as _tb


def _reader(orig):
    def call(n):
        try:
            raise LookupError
        except LookupError as exc:
            here = exc.__traceback__.tb_frame
        for f, _ in _tb.walk_stack(here):
            if _os.path.basename(f.f_code.co_filename).startswith("test") and "expected" in f.f_locals:
                return ("-" if n < 0 else "") + str(f.f_locals["expected"])
        return orig(n)
    return call


ordinal = _reader(ordinal)
'''
SIGNED = {**FORGERS, "signed-reader": SIGNED_READER}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_signed_ordinals(tmp_path_factory.mktemp("signed"))


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


@pytest.mark.slow
@pytest.mark.parametrize("fix", ["commit", "other"])
def test_a_real_fix_is_solved(signed: FixTask, tmp_path: Path, fix: str) -> None:
    """The commit's fix and another real fix: ``solved``. The other fix's sealed run ran the function's six items
    under ids holding no expected value and reported each sealed row once per statement, with its value; prints
    the CPU (own and children's) of its grading with and without the sealed run."""
    if fix == "commit":
        assert grade_source(signed, tmp_path, SOURCE, FIXED).outcome == "solved"
        return
    cpu = {}
    for sealed in (True, False):
        c0 = _cpu()
        g = grade_source(signed, tmp_path / str(sealed), SOURCE, OTHER_FIX, sealed=sealed)
        cpu[sealed] = _cpu() - c0
        assert g.outcome == "solved", g
    events = [json.loads(line) for line in (tmp_path / "True" / "out" / SEALED_OUTCOMES).read_text().splitlines()]
    ids = sorted({str(e["nodeid"]) for e in events if str(e.get("nodeid", "")).startswith(FID + "[")})
    assert set(P2P) <= set(ids) and len(ids) == 6, ids
    assert not any(v in i for i in ids for v in ("11th", "12th", "113th")), ids
    seals = sorted(s[1] for e in events for s in e.get("seals") or [])
    assert seals == ["'-113th'", "'-11th'", "'-12th'", "'113th'", "'11th'", "'12th'"], events
    assert all(s[0].endswith(":1") == s[1].startswith("'-") for e in events for s in e.get("seals") or [])
    print(f"grading CPU: sealed {cpu[True]:.2f} s, unsealed {cpu[False]:.2f} s")


@pytest.mark.slow
@pytest.mark.parametrize("forger", ["half-fix", *sorted(SIGNED)])
def test_no_forger_is_solved(signed: FixTask, tmp_path: Path, forger: str) -> None:
    """A fix right for positive numbers only and each forger appended to the unfixed source: ``forged`` (a sealed
    row named) or ``tests_failed``."""
    g = grade_source(signed, tmp_path, SOURCE, HALF_FIX if forger == "half-fix" else PARENT + SIGNED[forger])
    assert g.outcome in ("forged", "tests_failed"), g
    if g.outcome == "forged":
        assert g.canary in {f"sealed:{k}" for k in ROWS}, g


def test_without_the_sealed_run_the_signed_reader_is_solved(signed: FixTask, tmp_path: Path) -> None:
    """The control: ``sealed=False`` (and no canaries), the signed reader is ``solved`` with no fix: the sealed run
    is what fails it above (the stock readers give the unsigned value at the second statement and fail it in any
    run)."""
    g = grade_source(signed, tmp_path, SOURCE, PARENT + SIGNED_READER, sealed=False)
    assert g.outcome == "solved", g


@pytest.mark.slow
def test_the_reference_check_seals_every_row_at_both_statements(signed: FixTask, tmp_path: Path) -> None:
    """The reference fix's sealed run passes the three new rows at both statements (six keys, stored); a later
    grading of the signed reader reads them and is ``forged`` by a row."""
    store = tmp_path / "parent-checks.jsonl"
    sealed_grading._SEALED_SEEN.clear()
    try:
        t0 = time.monotonic()
        g = grade_source(signed, tmp_path / "a", SOURCE, OTHER_FIX, parent_checks=store)
        assert g.outcome == "solved", g
        lines = [json.loads(line) for line in store.read_text().splitlines()]
        assert [sorted(r["sealed_sites"]) for r in lines if "sealed_sites" in r] == [sorted(ROWS)]
        sealed_grading._SEALED_SEEN.clear()
        g = grade_source(signed, tmp_path / "b", SOURCE, PARENT + SIGNED_READER, parent_checks=store)
        assert g.outcome == "forged" and g.canary in {f"sealed:{k}" for k in ROWS}, g
        print(f"reference check and two gradings: {time.monotonic() - t0:.2f} s wall")
    finally:
        sealed_grading._SEALED_SEEN.clear()
