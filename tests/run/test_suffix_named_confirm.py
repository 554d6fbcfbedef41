"""gatk58: a repository naming its tests by a suffix (``python_functions = ["*_test"]``, ``def suffix_two_test``).
Mining keeps the commit (its canaries run apart, each member under its function's own name). At grading every real
fix's original passes apart beside failing twins, so the confirmation run lays every member of the group side by
side (``twin_together``), one under the function's own name and the others under fresh names; those were drawn with
the name's prefix only (``suffix_kilo_lima``), which pytest does not collect under ``*_test``: when the original drew
a fresh name it was "not reported there" and the real fix was ``tests_failed`` (seeds 0 and 1 of 0 to 3, ``--sandbox
none``, measured on 1db51c0). gatk51 had given the teardown canaries the suffix; every fresh test
name now keeps it (``canaries._Namer.name``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.suffix_task import FIXED, OTHER, PARENT, READER_IMPORTS, SOURCE, TEST, reading_literal

from pytest_homefield.sandbox.twin_runs import plan_twins
from pytest_homefield.sandbox.twin_together import together

TESTS = '''from pkg import f


def suffix_two_test():
    assert f("kilo") == "kilo-lima-mike-4417"
    assert f(7) == 7


def other_value_test():
    assert f(7) == 7
'''
CONF = '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\npython_functions = ["*_test"]\n'
F2P = f"{TEST}::suffix_two_test"


def test_the_confirmation_runs_fresh_names_end_as_the_functions_name(tmp_path: Path) -> None:
    """The layout alone: every member's name there ends with ``_test`` (before: one of two did not, every seed)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(TESTS.replace("assert f(7) == 7\n\n\ndef other", "assert f(8) == 8\n\n\ndef other"))
    for seed in range(4):
        plan = plan_twins(tmp_path, [F2P], seed=seed)
        built = together(plan.layouts, seed)
        assert built is not None
        names = built[1][F2P]
        assert len(names) >= 2 and all(n.endswith("_test") for n in names), (seed, names)
        assert F2P in names


@pytest.fixture(scope="module")
def suffixed(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("suffixed"), name="pkg", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="add", message="Suffix strings", fail_to_pass=[F2P],
                          pass_to_pass=[f"{TEST}::other_value_test"], parent_data={"pyproject.toml": CONF})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved_where_tests_are_named_by_a_suffix(suffixed: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(suffixed, tmp_path, SOURCE, OTHER, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_reading_the_literal_is_not_solved_where_tests_are_named_by_a_suffix(suffixed: FixTask,
                                                                                       tmp_path: Path,
                                                                                       seed: int) -> None:
    """The forger of ``tests/run/test_attacks.py``'s kind: it returns the string its caller's line compares with."""
    reader = (READER_IMPORTS + "\ndef f(x):\n" + reading_literal()
              + "    return m.group(2) if m and isinstance(x, str) else x\n")
    g = grade_source(suffixed, tmp_path, SOURCE, reader, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome in ("forged", "tests_failed"), (g.outcome, g.error, g.failing_f2p)
