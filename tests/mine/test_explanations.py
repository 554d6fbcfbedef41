"""Drop and task explanations a newcomer can act on: skipped new tests say they were skipped and why;
a task red only because its test module failed to import at the parent is marked as such."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from pytest_homefield.mine.redgreen import classify_runs
from pytest_homefield.sandbox.testrun import TestRun, run_tests


def run(outcomes: dict[str, str], *, ce: bool = False, skips: dict[str, str] | None = None) -> TestRun:
    return TestRun(outcomes=dict(outcomes), exit_code=1, timed_out=False, collection_error=ce,
                   collected=len(outcomes), wall_s=1.0, log_path=Path(os.devnull), skip_reasons=dict(skips or {}))


def test_all_new_tests_skipped_says_skipped_and_why() -> None:
    parent = run({"t.py::a": "skipped", "t.py::b": "skipped"}, skips={"t.py::a": "requires Python 3.12"})
    v = classify_runs([parent], [])
    assert v.reason == "tests_skipped"  # issue 35: not "passes without the change"
    assert v.detail == ("no test failed in 1 parent run: all 2 were skipped in this environment "
                        "(e.g. t.py::a: requires Python 3.12)")


def test_some_skipped_some_passed() -> None:
    v = classify_runs([run({"t.py::a": "passed", "t.py::b": "skipped"})], [])
    assert v.detail == "no test failed in 1 parent run: 1 passed without the change and 1 was skipped (e.g. t.py::b)"
    # nu43 on urllib3: "38 passed without the change and 1 were skipped"; two still "were"
    v = classify_runs([run({"t.py::a": "passed", "t.py::b": "skipped", "t.py::c": "skipped"})], [])
    assert v.detail.startswith("no test failed in 1 parent run: 1 passed without the change and 2 were "
                               "skipped"), v.detail
    v = classify_runs([run({"t.py::a": "passed"})] * 2, [])
    assert v.detail == "no test failed in 2 parent runs: all 1 passed without the change"


def test_skips_for_several_reasons_name_each_reason_with_its_count() -> None:
    # structlog 2796b22: the commit's 3 new tests skip for a missing rich, beside 11 older ones for a missing
    # better-exceptions; the detail named only the first id's reason, the wrong package to install
    skips = {f"tests/test_dev.py::TestBetterTraceback::test_{k}": "Needs better-exceptions." for k in "abcdefghijk"}
    skips |= {f"tests/test_dev.py::TestProps::test_rich_{k}": "Needs Rich." for k in "xyz"}
    outcomes = {i: "skipped" for i in skips} | {"tests/test_dev.py::test_plain": "passed"}
    v = classify_runs([run(outcomes, skips=skips)], [])
    assert v.detail == ("no test failed in 1 parent run: 1 passed without the change and 14 were skipped "
                        "(11: Needs better-exceptions., e.g. tests/test_dev.py::TestBetterTraceback::test_a; "
                        "3: Needs Rich., e.g. tests/test_dev.py::TestProps::test_rich_x)")
    # more reasons than are named: the most frequent, then how many more (a skip without a reason: in the total)
    skips = {"t.py::a": "r1", "t.py::b": "r1", "t.py::c": "r2", "t.py::d": "r3", "t.py::e": "r4"}
    v = classify_runs([run({i: "skipped" for i in [*skips, "t.py::f"]}, skips=skips)], [])
    assert v.reason == "tests_skipped"
    assert v.detail == ("no test failed in 1 parent run: all 6 were skipped in this environment "
                        "(2: r1, e.g. t.py::a; 1: r2, e.g. t.py::c; 1: r3, e.g. t.py::d; and 1 more reason)")


def test_red_by_import_error_is_marked() -> None:
    # the module cannot import at the parent: its ids are absent there (collection error), pass at the commit
    parent = run({}, ce=True)
    commit = run({"t.py::a": "passed", "t.py::b": "passed"})
    v = classify_runs([parent, parent], [commit, commit])
    assert v.FAIL_TO_PASS == ["t.py::a", "t.py::b"] and v.red_by_import_error == ["t.py::a", "t.py::b"]
    assert v.detail.endswith("(2 red by import error at the parent)")
    # a real failing assertion at the parent is not
    v = classify_runs([run({"t.py::a": "failed"})], [run({"t.py::a": "passed"})])
    assert v.FAIL_TO_PASS == ["t.py::a"] and v.red_by_import_error == []


def test_skip_reasons_come_from_the_reporter(tmp_path: Path) -> None:
    (tmp_path / "test_s.py").write_text(textwrap.dedent("""\
        import sys
        import pytest

        @pytest.mark.skipif(sys.version_info < (9, 0), reason="requires Python 9")
        def test_future():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_bug():
            assert False

        def test_ok():
            pass
    """))
    r = run_tests(tmp_path, f"{sys.executable} -m pytest -p no:cacheprovider", ["test_s.py"], out_dir=tmp_path / "out")
    assert r.outcomes == {"test_s.py::test_future": "skipped", "test_s.py::test_bug": "xfailed",
                          "test_s.py::test_ok": "passed"}
    assert r.skip_reasons["test_s.py::test_future"] == "requires Python 9"
    assert set(r.skip_reasons) == {"test_s.py::test_future"}


def test_translation_catalogues_are_a_language_not_other() -> None:
    from pytest_homefield.mine.pipeline import _languages

    assert _languages(["src/pkg/locale/fr/LC_MESSAGES/pkg.po", "src/pkg/number.py"]) == ["gettext", "python"]


def test_drops_that_skipped_tests_are_summed_up_with_their_shared_reason() -> None:
    # python-humanize/humanize: 9 i18n candidates "passed without the change" because their new tests skipped
    # until setup_cmd compiled the .mo files; each record said so, the summary gave no hint
    from pytest_homefield.mine.summary import skipped_line

    mo = "Generate .mo with scripts/generate-translation-binaries.sh"
    parent = run({"t.py::a": "passed", "t.py::b": "skipped", "t.py::c": "skipped"},
                 skips={"t.py::b": mo, "t.py::c": mo})
    v = classify_runs([parent], [])
    assert v.reason == "passes_without_change" and v.skip_reasons == {mo: 2}
    assert classify_runs([run({"t.py::a": "passed"})], []).skip_reasons == {}
    record = {"reason": v.reason, "skip_reasons": v.skip_reasons}
    other = {"reason": "passes_without_change", "skip_reasons": {"requires Windows": 1}}
    assert skipped_line([record]) is None  # one drop: its own detail names its skips
    line = skipped_line([record, dict(record), other, {"reason": "passes_without_change"}])
    assert line is not None
    assert line.startswith(f'Skipped tests: 3 candidates that passed without the change skipped tests at the parent, '
                           f'2 of them for "{mo}"; 1 other skip reason: tests this environment skips cannot go red.')
    assert "setup_cmd" in line
    # nu31 on humanize: with the .mo step in setup_cmd the 3 commits changing a .po dropped as "reference fails"
    assert line.endswith("setup_cmd runs at the parent, before a commit's change, as grading builds the reference "
                         "fix: a commit that changes what it reads (a .po file it compiles) stays red at the commit "
                         "and is dropped as reference fails.")


def test_a_skip_for_a_package_the_environment_lacks_says_install_it_first() -> None:
    """ux67 (usr66 on jd/tenacity): trio's tests skipped at the parent for "trio not installed", and the line said
    to add "a step (a generated file, a package)" to setup_cmd; installing trio where the tests run and mining
    again made them tasks. The line says that first now, and setup_cmd for generated files; pytest's importorskip
    reason is read too, and a reason that names no package keeps the line as it was."""
    from pytest_homefield.mine.summary import skipped_line

    trio = [{"reason": "passes_without_change", "skip_reasons": {"trio not installed": 3}}] * 2
    line = skipped_line(trio, "/venv/bin/python")
    assert line is not None
    assert ("tests this environment skips cannot go red. The skip reasons name a package the tests' environment "
            "lacks (trio): install it there (the tests ran with /venv/bin/python), then mine again. If a step "
            "would let them run (a generated file), add it to setup_cmd") in line, line
    skipped = [{"reason": "passes_without_change",
                "skip_reasons": {"could not import 'rich': No module named 'rich'": 2, "trio is not installed": 1}}] * 2
    line = skipped_line(skipped)
    assert line is not None and ("name packages the tests' environment lacks (rich, trio): install them there (the "
                                 "environment homefield runs the tests with), then mine again.") in line, line
    windows = skipped_line([{"reason": "passes_without_change", "skip_reasons": {"requires Windows": 1}}] * 2)
    assert windows is not None and "lacks" not in windows and "(a generated file, a package)" in windows


def test_a_tie_between_shared_skip_reasons_names_the_one_that_skipped_most_tests() -> None:
    """nu58, hynek/structlog: both drops skipped 5 tests for "Needs Rich." (rich, which its test group lacks), 2 for
    "Needs better-exceptions." and 1 for "Must be running on Windows."; the tie among candidates was broken by the
    reason's text, so the line named the Windows skip, which no step can lift, and not the package to install."""
    from pytest_homefield.mine.summary import skipped_line

    records = [{"reason": "passes_without_change",
                "skip_reasons": {"Needs better-exceptions.": 2, "Must be running on Windows.": 1, "Needs Rich.": 5}},
               {"reason": "passes_without_change",
                "skip_reasons": {"Needs better-exceptions.": 2, "Only relevant on Windows with colorama": 1,
                                 "Must be running on Windows.": 1, "Needs Rich.": 5}}]
    line = skipped_line(records)
    assert line is not None
    assert line.startswith('Skipped tests: 2 candidates that passed without the change skipped tests at the parent, '
                           '2 of them for "Needs Rich."; 3 other skip reasons: '), line


def test_a_tie_between_skip_reasons_with_no_counted_tests_goes_by_their_text() -> None:
    """A reason whose counts are not numbers (a hand-edited record) counts no tests: a tie among candidates and
    tests (0 each, or equal counts) is broken by the reason's text, whichever order the records give them."""
    from pytest_homefield.mine.summary import skipped_line

    records = [{"reason": "passes_without_change", "skip_reasons": {"zeta": "3", "alpha": None, "mid": 0}},
               {"reason": "passes_without_change", "skip_reasons": {"mid": 0, "alpha": "x", "zeta": 1.5}}]
    for order in (records, records[::-1]):
        line = skipped_line(order)
        assert line is not None and '2 of them for "alpha"; 2 other skip reasons: ' in line, line
    records[1]["skip_reasons"] = {"mid": 1, "alpha": "x", "zeta": 1.5}
    line = skipped_line(records)
    assert line is not None and '2 of them for "mid"; 2 other skip reasons: ' in line, line
