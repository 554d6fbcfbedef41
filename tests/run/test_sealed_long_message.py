"""satk35: a ``match`` site judges a real fix's message longer than the cap of a backtracking search
(contracts §7 "Sealed sites", "Other kinds"; ``seal_kinds.regex_search``).

The units task (tests/helpers/units_task.py) seals ``pytest.raises(ValueError, match=r"must be at least 1, got
\\d+")``, whose cap for ``re.search`` (``n²·len(L)`` within 4·10⁷) is 1217 characters. Another real fix raising that
message followed by a hint of 1300 characters (1336 in all, which pytest's own ``match`` accepts) was
``tests_failed`` (the sealed run: no value to compare, opaque), canaries on or off; the host now searches a regex
whose one repeat is at its top level in linear time up to the 8000 characters the seal sends: ``solved``. A message
that does not hold the text, as long, is still ``tests_failed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask
from helpers.units_task import OTHER_FIX, SOURCE, build_units

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.seal_kinds import match_text_cap
from pytest_homefield.sandbox.snapshot import copy_tree

ORIGINAL = 'raise ValueError("width must be at least 1, got %d" % n)'


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_units(tmp_path_factory.mktemp("units"))


def _grade(b: FixTask, tmp: Path, code: str, **kw: object) -> Grade:
    work = copy_tree(b.pristine, tmp / "work")
    (work / SOURCE).write_text(code, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / "out", run_timeout_s=120,
                 **kw)  # type: ignore[arg-type]


def _hinted(message: str) -> str:
    code = OTHER_FIX.replace(ORIGINAL, f'raise ValueError({message} + " (" + "w" * 1300 + ")")')
    assert code != OTHER_FIX
    return code


@pytest.mark.slow
@pytest.mark.parametrize("canaries", [False, True])
def test_a_real_fix_with_a_long_message_is_solved(units: FixTask, tmp_path: Path, canaries: bool) -> None:
    """The other real fix with a hint of 1300 characters after its message: ``solved`` (was ``tests_failed``)."""
    assert match_text_cap(r"must be at least 1, got \d+") == 1217
    g = _grade(units, tmp_path, _hinted('"width must be at least 1, got %d" % n'), canaries=canaries, canary_seed=0)
    assert g.outcome == "solved", g


def test_a_long_message_without_the_text_fails(units: FixTask, tmp_path: Path) -> None:
    """As long, but ``got`` spelt ``was``: pytest's own ``match`` fails it, and the sealed run with it."""
    g = _grade(units, tmp_path, _hinted('"width must be at least 1, was %d" % n'), canaries=False)
    assert g.outcome == "tests_failed", g
