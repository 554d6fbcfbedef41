"""Red→green verification (contracts §7): the pure classification on synthetic runs, and real
verification of fixture commits covering every drop reason."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import ordinal_task
from helpers.fix_task import build_fix_task
from helpers.slug_task import SLUG_F2P, SLUG_SITE, SLUG_TEST, build_slugs
from helpers.units_task import F2P as UNITS_F2P
from helpers.units_task import SITES as UNITS_SITES
from helpers.units_task import TEST as UNITS_TEST
from helpers.units_task import build_units

from pytest_homefield.mine import redgreen
from pytest_homefield.mine.redgreen import (
    DROP_REASONS,
    EXCLUDE_REASONS,
    Verification,
    classify_runs,
    diff_lines,
    make_gold_patch,
    make_test_patch,
    run_phrase,
    verify_candidate,
)
from pytest_homefield.sandbox.seal_sites import SEAL_RULES
from pytest_homefield.sandbox.snapshot import apply_patch, make_snapshot
from pytest_homefield.sandbox.testrun import TEST_ENV_VAR, TestRun
from pytest_homefield.sandbox.twin_runs import RUNS

# -- classify_runs on synthetic runs ---------------------------------------------------------------


def run(
    outcomes: dict[str, str], *, ce: bool = False, timed_out: bool = False, error: str | None = None, wall: float = 1.0
) -> TestRun:
    return TestRun(
        outcomes=dict(outcomes),
        exit_code=None if timed_out else 1,
        timed_out=timed_out,
        collection_error=ce,
        collected=len(outcomes),
        wall_s=wall,
        log_path=Path(os.devnull),
        error=error,
    )


def classify(parent: list[dict[str, str] | TestRun], commit: list[dict[str, str] | TestRun]) -> Verification:
    def as_run(r: dict[str, str] | TestRun) -> TestRun:
        return r if isinstance(r, TestRun) else run(r)

    return classify_runs([as_run(r) for r in parent], [as_run(r) for r in commit])


def test_red_to_green_and_always_green() -> None:
    v = classify(
        [{"t::a": "failed", "t::b": "passed", "t::c": "error"}] * 3,
        [{"t::a": "passed", "t::b": "passed", "t::c": "passed"}] * 3,
    )
    assert v.reason is None
    assert v.FAIL_TO_PASS == ["t::a", "t::c"] and v.PASS_TO_PASS == ["t::b"] and v.excluded == {}
    assert v.runs == 6 and v.parent_s == 3.0 and v.commit_s == 3.0
    assert "FAIL_TO_PASS 2" in v.detail


def test_absent_counts_as_failing_only_with_a_collection_error() -> None:
    commit = [{"t::new": "passed", "t::old": "passed"}] * 2
    with_ce = classify([run({"t::old": "passed"}, ce=True)] * 2, commit)
    assert with_ce.FAIL_TO_PASS == ["t::new"] and with_ce.PASS_TO_PASS == ["t::old"] and with_ce.reason is None
    without = classify([{"t::old": "passed"}] * 2, commit)
    assert without.FAIL_TO_PASS == [] and without.excluded == {"t::new": "absent"}
    assert without.reason == "passes_without_change"
    # a collection error in one parent run only: absent there counts as failing, but passing in the other
    mixed = classify([run({"t::old": "passed"}, ce=True), {"t::old": "passed", "t::new": "passed"}], commit)
    assert mixed.excluded == {"t::new": "flaky"} and mixed.reason == "flaky"


def test_absent_in_one_parent_run_without_collection_error_is_flaky() -> None:
    v = classify([{"t::a": "failed"}, {}], [{"t::a": "passed"}] * 2)
    assert v.excluded == {"t::a": "flaky"} and v.reason == "flaky"


def test_skipped_and_xfail_at_the_commit_verify_nothing() -> None:
    v = classify(
        [{"t::red": "failed", "t::skip": "skipped", "t::xf": "failed", "t::xp": "failed"}] * 2,
        [{"t::red": "passed", "t::skip": "skipped", "t::xf": "xfailed", "t::xp": "xpassed"}] * 2,
    )
    assert v.reason is None and v.FAIL_TO_PASS == ["t::red"]
    assert v.excluded == {"t::skip": "skipped", "t::xf": "skipped", "t::xp": "skipped"}


def test_skipped_at_the_parent_only_is_not_red() -> None:
    v = classify([{"t::a": "skipped"}] * 2, [{"t::a": "passed"}] * 2)
    assert v.excluded == {"t::a": "skipped"} and v.reason == "tests_skipped"  # issue 35: its own reason


def test_an_unrelated_failing_test_never_costs_the_task() -> None:
    v = classify([{"t::red": "failed", "t::broken": "failed"}] * 3, [{"t::red": "passed", "t::broken": "error"}] * 3)
    assert v.reason is None and v.FAIL_TO_PASS == ["t::red"] and v.excluded == {"t::broken": "fails_with_reference"}


def test_flaky_at_the_parent() -> None:
    v = classify([{"t::a": "failed"}, {"t::a": "passed"}], [{"t::a": "passed"}])
    assert v.reason == "flaky" and v.excluded == {"t::a": "flaky"} and "t::a" in v.detail


def test_flaky_at_the_commit() -> None:
    v = classify([{"t::a": "failed"}] * 3, [{"t::a": "passed"}, {"t::a": "failed"}, {"t::a": "passed"}])
    assert v.reason == "flaky" and v.excluded == {"t::a": "flaky"}


def test_reference_fails() -> None:
    v = classify([{"t::a": "failed", "t::b": "passed"}] * 2, [{"t::a": "failed", "t::b": "passed"}] * 2)
    assert v.reason == "reference_fails" and v.excluded == {"t::a": "fails_with_reference"}
    assert v.PASS_TO_PASS == ["t::b"] and "t::a" in v.detail
    # some red ids flaky, one failing for good: the reference fails
    w = classify(
        [{"t::a": "failed", "t::b": "failed"}] * 2,
        [{"t::a": "failed", "t::b": "passed"}, {"t::a": "failed", "t::b": "failed"}],
    )
    assert w.reason == "reference_fails" and w.excluded == {"t::a": "fails_with_reference", "t::b": "flaky"}
    # red tests that cannot even be collected at the commit
    x = classify([run({}, ce=True)] * 2, [run({}, ce=True)] * 2)
    assert x.reason == "reference_fails" and "collection errors" in x.detail
    # a module broken in both states next to tests that pass without the change
    y = classify([run({"t::a": "passed"}, ce=True)] * 2, [run({"t::a": "passed"}, ce=True)])
    assert y.reason == "passes_without_change" and y.PASS_TO_PASS == ["t::a"]


def test_passes_without_change() -> None:
    v = classify([{"t::a": "passed", "t::s": "skipped"}], [])
    assert v.reason == "passes_without_change" and v.FAIL_TO_PASS == [] and v.PASS_TO_PASS == []
    assert v.runs == 1 and v.commit_s == 0.0


def test_timeout_wins() -> None:
    v = classify([{"t::a": "failed"}, run({}, timed_out=True, wall=600)], [])
    assert v.reason == "timeout" and "parent run 2" in v.detail
    w = classify([{"t::a": "failed"}], [{"t::a": "passed"}, run({"t::a": "passed"}, timed_out=True)])
    assert w.reason == "timeout" and w.FAIL_TO_PASS == []


def test_a_test_command_that_cannot_run_is_setup_failed() -> None:
    v = classify([run({}, error="no outcome file was written (exit status 127)")], [])
    assert v.reason == "setup_failed" and "exit status 127" in v.detail


def test_vocabularies() -> None:
    assert DROP_REASONS == ("passes_without_change", "reference_fails", "flaky", "timeout", "setup_failed",
                            "reference_passes_canary", "tests_skipped", "writes_over_cap")
    assert set(EXCLUDE_REASONS) >= {"flaky", "fails_with_reference", "skipped"}


def test_diff_lines() -> None:
    patch = textwrap.dedent(
        """\
        diff --git a/x.py b/x.py
        index 1111111..2222222 100644
        --- a/x.py
        +++ b/x.py
        @@ -1,3 +1,3 @@
         keep
        --- a line that starts with dashes
        +++ a line that starts with pluses
         keep
        @@ -10 +10,2 @@
        -old
        +new
        +newer
        \\ No newline at end of file
        diff --git a/b.bin b/b.bin
        GIT binary patch
        literal 3
        Kc${NkU;qFB0RR91

        """
    )
    assert diff_lines(patch) == 5
    assert diff_lines("") == 0


# -- real verification on a fixture repository ------------------------------------------------------

PY = shlex.quote(sys.executable)
#: Plugins this suite does not need are left out: each test run starts in a fraction of the time.
CMD = f"{PY} -m pytest -q -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
COUNTER_ENV = "HF_TEST_COUNTER"


def _counting(counter: Path) -> dict[str, str]:
    """The caller's environment with ``counter`` as the run counter, its variable named for the test runs (they
    get only the host variables named: ``TEST_ENV_NAMES`` and ``HOMEFIELD_TEST_ENV``, sandbox/testrun.py)."""
    return {**os.environ, COUNTER_ENV: str(counter), TEST_ENV_VAR: COUNTER_ENV}


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def _commit(repo: Path, message: str, files: dict[str, str | bytes | None]) -> str:
    """Write (str/bytes), or delete (None), ``files`` and commit them; returns the sha."""
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content))
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


CORE = """\
def add(a, b):
    return a + b
"""

TEST_CORE = """\
import os
import re
from pkg.core import add

def test_add():
    assert add(1, 2) == 3

def test_known_broken():
    assert False, "broken for years"

def test_fresh_copy():
    assert not os.path.exists("leftover")
    open("leftover", "w").close()
"""

TEST_MUL = """\
import pytest
from pkg.core import mul

@pytest.mark.parametrize("label", ["two words", "[brackets]", "naïve ünïcode", "PASSED", "FAILED"])
def test_mul(label):
    assert mul(2, 3) == 6

def test_table():
    with open("tests/data/table.bin", "rb") as fh:
        assert fh.read() == bytes(range(256))

def test_always_skipped():
    pytest.skip("needs hardware")
"""

TEST_NEG = f"""\
import os
import re
from pkg.neg import neg

def test_neg():
    path = os.environ["{COUNTER_ENV}"]
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as fh:
        fh.write(str(n))
    assert neg(1) == -1
    assert n % 2 == 1, "fails on even runs"
"""


TEST_CORE_INC = TEST_CORE + f"""
def test_sometimes():
    path = os.environ["{COUNTER_ENV}"]
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as fh:
        fh.write(str(n))
    assert n % 2 == 1, "fails on even runs"

def test_inc():
    from pkg.inc import inc
    assert inc(1) == 2

def test_inc_zero():
    from pkg.inc import inc
    assert inc(-1) == 0
"""


TEST_LATE = f"""\
import os
import re

def test_dec():
    from pkg.dec import dec
    assert dec(1) == 0

def test_third_run():
    path = os.environ["{COUNTER_ENV}"]
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as fh:
        fh.write(str(n))
    assert n < 3, "fails from its third run on"
"""


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """name → (parent, commit) of one scenario each, on one linear history."""
    repo = tmp_path_factory.mktemp("history")
    _git(repo, "init", "-q", "-b", "main")
    shas = {"root": repo}
    prev = _commit(
        repo,
        "base",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": CORE,
            "tests/test_core.py": TEST_CORE,
            "tests/test_old.py": "def test_old():\n    pass\n",
        },
    )

    def step(name: str, files: dict[str, str | bytes | None]) -> None:
        nonlocal prev
        sha = _commit(repo, f"{name}: change", files)
        shas[name] = (prev, sha)
        prev = sha

    step(
        "import_error",
        {
            "pkg/core.py": CORE + "\ndef mul(a, b):\n    return a * b\n",
            "tests/test_mul.py": TEST_MUL,
            "tests/data/table.bin": bytes(range(256)),
            "tests/test_core.py": TEST_CORE
            + "\ndef test_old_file_deleted():\n    assert not os.path.exists('tests/test_old.py')\n"
            + "\ndef test_setup_ran():\n    assert os.path.exists('.setup-done')\n",
            "tests/test_old.py": None,
        },
    )
    step(
        "passes",
        {
            "pkg/core.py": '"""Core."""\n' + CORE + "\ndef mul(a, b):\n    return a * b\n",
            "tests/test_add.py": "from pkg.core import add\n\ndef test_big():\n    assert add(10**20, 1) > 10**20\n",
        },
    )
    step(
        "reference_fails",
        {
            "pkg/sub.py": "def sub(a, b):\n    return a + b\n",
            "tests/test_sub.py": "from pkg.sub import sub\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
        },
    )
    step("flaky", {"pkg/neg.py": "def neg(a):\n    return -a\n", "tests/test_neg.py": TEST_NEG})
    step(
        "hang",
        {"pkg/slow.py": "X = 1\n", "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n"},
    )
    step("flaky_p2p", {"pkg/inc.py": "def inc(a):\n    return a + 1\n", "tests/test_core.py": TEST_CORE_INC})
    step("late_p2p", {"pkg/dec.py": "def dec(a):\n    return a - 1\n", "tests/test_late.py": TEST_LATE})
    step("generated_base", {"pkg/words.src": "old\n"})
    step(
        "generated",  # the fix changes a source that setup_cmd compiles (nu22: humanize's .po -> .mo)
        {
            "pkg/words.src": "new\n",
            "tests/test_words.py": "def test_words():\n    assert open('pkg/words.gen').read() == 'new\\n'\n",
        },
    )
    prev = _commit(repo, "xdist for everything", {"pytest.ini": "[pytest]\naddopts = -n 2\n"})
    step(
        "xdist",
        {
            "pkg/mod.py": "def mod(a, b):\n    return a % b\n",
            "tests/test_mod.py": "from pkg.mod import mod\n\ndef test_mod():\n    assert mod(7, 3) == 1\n"
            "\n\ndef test_other():\n    pass\n",
        },
    )
    return shas


def _verify(history: dict, name: str, tmp_path: Path, **kw) -> Verification:
    repo = history["root"]
    parent, commit = history[name]
    changed = _git(repo, "diff", "--name-only", "--no-renames", parent, commit).split()
    tests = [p for p in changed if p.startswith("tests/")]
    runnable = [
        p
        for p in tests
        if p.endswith(".py") and Path(p).name.startswith("test_") and _git(repo, "ls-tree", commit, "--", p).strip()
    ]
    options = dict(test_cmd=CMD, setup_cmd=None, stability_runs=2, run_timeout_s=60, work_root=tmp_path / "work")
    options.update(kw)
    (tmp_path / "work").mkdir(exist_ok=True)
    v = verify_candidate(repo, commit=commit, parent=parent, test_files=tests, runnable_tests=runnable, **options)
    assert list((tmp_path / "work").iterdir()) == []  # every snapshot and copy removed
    return v


@pytest.mark.slow
def test_verify_import_error_at_the_parent_is_a_legitimate_red(history: dict, tmp_path: Path) -> None:
    v = _verify(history, "import_error", tmp_path, setup_cmd="touch .setup-done", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == [
        "tests/test_mul.py::test_mul[FAILED]",
        "tests/test_mul.py::test_mul[PASSED]",
        "tests/test_mul.py::test_mul[[brackets]]",
        "tests/test_mul.py::test_mul[na\\xefve \\xfcn\\xefcode]",
        "tests/test_mul.py::test_mul[two words]",
    ]
    assert v.PASS_TO_PASS == [
        "tests/test_core.py::test_add",
        "tests/test_core.py::test_fresh_copy",  # each run in a fresh copy
        "tests/test_core.py::test_old_file_deleted",  # the deleted test file is gone at the parent too
        "tests/test_core.py::test_setup_ran",  # setup_cmd ran in every copy
    ]
    assert v.excluded == {
        "tests/test_core.py::test_known_broken": "fails_with_reference",
        "tests/test_mul.py::test_always_skipped": "skipped",
        # red at the parent only because ``mul`` could not be imported; it never calls it (ms35: a stub passes it)
        "tests/test_mul.py::test_table": "passes_with_stub",
    }
    # the counts as kept, after the stubbed run moved test_table (nu36: the detail said the counts before it)
    assert v.detail == ("FAIL_TO_PASS 5, PASS_TO_PASS 4, excluded 3 (5 red by import error at the parent); "
                        "1 red only for a missing name (passed at the parent with every one a dummy)"), v.detail
    assert v.runs == 4 and v.parent_s > 0 and v.commit_s > 0
    assert v.peak_mb is None  # unsandboxed runs have no memory cgroup, no peak (mem27; the boxed runs' peak:
    # test_verify_keeps_the_peak_memory_of_its_sandboxed_runs)
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    # + the canary twin runs, apart: one round of k + 1 targeted runs (issue 30, verification version 6)
    assert logs == [*(f"canaries-1-{n}" for n in range(1, RUNS + 1)), "commit-1", "commit-2", "parent-1", "parent-2",
                    "parent-stubbed"]
    assert (tmp_path / "logs" / "parent-1" / "outcomes.jsonl").exists()


def test_verify_passes_without_change_stops_after_one_run(history: dict, tmp_path: Path) -> None:
    v = _verify(history, "passes", tmp_path, stability_runs=3)
    assert v.reason == "passes_without_change" and v.runs == 1 and v.FAIL_TO_PASS == []


@pytest.mark.slow
def test_verify_reference_fails(history: dict, tmp_path: Path) -> None:
    v = _verify(history, "reference_fails", tmp_path)
    assert v.reason == "reference_fails" and "tests/test_sub.py::test_sub" in v.detail
    assert v.runs == 2  # one parent run, then one commit run settles it


def test_verify_names_why_pytest_stopped_before_collecting(history: dict, tmp_path: Path) -> None:
    """A test command pytest refuses at both states: the record says pytest's own line, not only
    "collection errors" (which sent a user looking for a missing module)."""
    v = _verify(history, "reference_fails", tmp_path, test_cmd=f"{CMD} --no-such-option")
    assert v.reason == "reference_fails"
    # pytest names itself differently by version (8.4: "__main__.py", 9.2: "python -m pytest"): the
    # stable parts are the status and argparse's "<prog>: error: <message>" line
    stop = (r"collection errors at the parent and at the commit \(the test command exited with status 4 "
            r"before any test ran: [^:]+: error: unrecognized arguments: --no-such-option\)")
    assert re.fullmatch(stop, v.detail), v.detail


@pytest.mark.slow
def test_verify_flaky_at_the_commit(history: dict, tmp_path: Path) -> None:
    counter = tmp_path / "counter"  # outside every snapshot: run 1 passes, run 2 fails
    v = _verify(history, "flaky", tmp_path, env=_counting(counter), log_dir=tmp_path / "logs")
    assert v.reason == "flaky" and v.excluded == {"tests/test_neg.py::test_neg": "flaky"}
    assert counter.read_text() == "2" and v.runs == 4
    # the module cannot import at the parent: the targeted parent run 2 says so, it is not made again in full
    # no candidate stands after commit run 2: no stubbed parent run (ms35)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["commit-1", "commit-2", "parent-1", "parent-2"]


def _ids_run(log: Path) -> set[str]:
    """The node ids a logged run reported (its ``outcomes.jsonl`` phase events)."""
    out = set()
    for line in (log / "outcomes.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev.get("event") == "phase":
            out.add(ev["nodeid"])
    return out


@pytest.mark.slow
def test_verify_flaky_pass_to_pass(history: dict, tmp_path: Path) -> None:
    # test_sometimes passes on odd runs: run 1 (parent 1) passes, run 2 (commit 1) fails, run 3 passes
    counter = tmp_path / "counter"
    v = _verify(history, "flaky_p2p", tmp_path, stability_runs=3, env=_counting(counter),
                log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == ["tests/test_core.py::test_inc", "tests/test_core.py::test_inc_zero"]
    assert v.PASS_TO_PASS == ["tests/test_core.py::test_add", "tests/test_core.py::test_fresh_copy"]
    assert v.excluded == {"tests/test_core.py::test_known_broken": "fails_with_reference",
                          "tests/test_core.py::test_sometimes": "flaky"}
    # targeted stability runs: the first run of each state runs the whole files; the later parent runs
    # only the FAIL_TO_PASS candidates, the later commit runs those and the ids that failed in every
    # commit run so far (test_sometimes passes at commit run 2: flaky, not fails_with_reference)
    logs = tmp_path / "logs"
    assert sorted(p.name for p in logs.iterdir()) == [*(f"canaries-1-{n}" for n in range(1, RUNS + 1)), "commit-1",
                                                     "commit-2", "commit-3", "parent-1", "parent-2", "parent-3",
                                                     "parent-stubbed"]
    # ``assert inc(-1) == 0`` is no sealed site: the file's ``assert False`` holds a value equal to ``0`` (satk34: a
    # value equal to another literal of the file is readable there; contracts §7 "Sealed sites"), so no sealed run
    # is made and the task records none (mining's sealed run:
    # test_verify_records_the_sites_the_reference_fix_passes_sealed)
    assert v.sealed_sites == []
    everything = _ids_run(logs / "parent-1")
    assert len(everything) == 6 and _ids_run(logs / "commit-1") == everything
    for name in ("parent-2", "parent-3"):
        assert _ids_run(logs / name) == set(v.FAIL_TO_PASS), name
    broken, sometimes = "tests/test_core.py::test_known_broken", "tests/test_core.py::test_sometimes"
    assert _ids_run(logs / "commit-2") == {*v.FAIL_TO_PASS, broken, sometimes}
    assert _ids_run(logs / "commit-3") == {*v.FAIL_TO_PASS, broken}
    assert v.runs == 6 and counter.read_text() == "3"


@pytest.mark.slow
def test_verify_pass_to_pass_failing_only_after_the_first_runs_stays(history: dict, tmp_path: Path) -> None:
    # test_third_run passes in its first two runs (parent run 1, commit run 1) and fails from then on:
    # the later runs are targeted, it is not run again and stays PASS_TO_PASS. Grading the oracle is
    # what catches it (run/grading's flaky ids, docs/contracts.md §7).
    counter = tmp_path / "counter"
    v = _verify(history, "late_p2p", tmp_path, stability_runs=3, env=_counting(counter),
                log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == ["tests/test_late.py::test_dec"]
    assert v.PASS_TO_PASS == ["tests/test_late.py::test_third_run"] and v.excluded == {}
    # its third run is mining's sealed run of the reference fix (test_dec's site), which selects the test files
    # whole, as grading's does (gatk35): it is read for the sealed site alone
    assert v.runs == 6 and counter.read_text() == "3" and v.sealed_sites == ["tests/test_late.py::test_dec@6"]
    for name in ("parent-2", "parent-3", "commit-2", "commit-3"):
        assert _ids_run(tmp_path / "logs" / name) == {"tests/test_late.py::test_dec"}, name


@pytest.mark.slow
def test_verify_a_target_that_cannot_be_addressed_runs_the_files(history: dict, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # a selected id the targeted run does not report: that run is made again on the whole files
    real = redgreen.run_tests

    def renaming(workdir, test_cmd, targets, **kw):  # type: ignore[no-untyped-def]
        return real(workdir, test_cmd, [t.replace("test_inc", "test_nope") for t in targets], **kw)

    monkeypatch.setattr(redgreen, "run_tests", renaming)
    counter = tmp_path / "counter"
    v = _verify(history, "flaky_p2p", tmp_path, stability_runs=2, env=_counting(counter),
                log_dir=tmp_path / "logs")
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_core.py::test_inc", "tests/test_core.py::test_inc_zero"]
    assert (tmp_path / "logs" / "parent-2-full").is_dir()


def test_verify_timeout(history: dict, tmp_path: Path) -> None:
    v = _verify(history, "hang", tmp_path, run_timeout_s=1)
    # parent run 1 cut, then commit run 1 timed to tell a hang from a slow suite: it hangs too
    assert v.reason == "timeout" and v.runs == 2 and v.parent_s < 15, v
    assert v.detail.startswith("commit run 1 exceeded the run timeout"), v.detail


def test_verify_setup_failed(history: dict, tmp_path: Path) -> None:
    # the detail quotes the setup's last output line: python-humanize/humanize's setup_cmd
    # `sh scripts/generate-translation-binaries.sh` (bash brace expansion under dash) dropped every
    # candidate as "setup_cmd failed at the parent (exit status 1)" and nothing said why
    v = _verify(history, "passes", tmp_path, setup_cmd="echo step one; echo broken: no such file >&2; echo; exit 3")
    assert v.reason == "setup_failed" and v.runs == 0
    assert v.detail == "setup_cmd failed at the parent (exit status 3): broken: no such file", v.detail
    w = _verify(history, "passes", tmp_path, setup_cmd="sleep 30", run_timeout_s=1)
    assert w.reason == "setup_failed" and "timed out" in w.detail


@pytest.mark.slow
def test_verify_repository_addopts_with_xdist(history: dict, tmp_path: Path) -> None:
    v = _verify(history, "xdist", tmp_path, stability_runs=1)
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == ["tests/test_mod.py::test_mod"]
    # red at the parent only because ``mod`` could not be imported, and ``pass``: the stubbed run (through the
    # repository's ``-n 2``) passes it (ms35)
    assert v.excluded == {"tests/test_mod.py::test_other": "passes_with_stub"}


def test_verify_patches(history: dict, tmp_path: Path) -> None:
    repo = history["root"]
    parent, commit = history["import_error"]
    tests = ["tests/test_mul.py", "tests/test_core.py", "tests/test_old.py", "tests/data/table.bin"]
    test_patch = make_test_patch(repo, parent, commit, tests)
    gold = make_gold_patch(repo, parent, commit, tests)
    assert "GIT binary patch" in test_patch and "deleted file mode" in test_patch
    assert "pkg/core.py" not in test_patch
    assert gold.startswith("diff --git a/pkg/core.py b/pkg/core.py") and "tests/" not in gold
    assert diff_lines(gold) == 3  # blank line, def, return
    assert make_test_patch(repo, parent, commit, []) == ""
    # parent + gold + tests == the commit's tree
    work = make_snapshot(repo, parent, dest=tmp_path / "w", init_git=False)
    apply_patch(work, gold)
    apply_patch(work, test_patch)
    ref = make_snapshot(repo, commit, dest=tmp_path / "ref", init_git=False)
    diff = subprocess.run(["diff", "-r", str(work), str(ref)], capture_output=True, text=True)
    assert diff.returncode == 0, diff.stdout


def test_non_utf8_files_become_binary_patches(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    parent = _commit(repo, "one", {"tests/latin1.txt": "caf\xe9\n".encode("latin-1"), "tests/a.py": "A = 1\n"})
    latin = "na\xefve\nline two\n".encode("latin-1")
    commit = _commit(repo, "two", {"tests/latin1.txt": latin, "tests/a.py": "A = 2\n"})
    patch = make_test_patch(repo, parent, commit, ["tests/latin1.txt", "tests/a.py"])
    patch.encode("utf-8")  # no surrogate escapes: storable as JSON text
    assert "GIT binary patch" in patch and "+A = 2" in patch and diff_lines(patch) == 2
    work = make_snapshot(repo, parent, dest=tmp_path / "w", init_git=False)
    apply_patch(work, patch)
    assert (work / "tests" / "latin1.txt").read_bytes() == latin
    assert (work / "tests" / "a.py").read_text() == "A = 2\n"


def test_a_parent_missing_a_third_party_module_names_it() -> None:
    """The environment, not the commit, is at fault: the detail names the module it lacks."""
    def broken() -> TestRun:
        r = run({}, ce=True)
        r.collection_errors = {"tests/test_cli.py": "ModuleNotFoundError: No module named 'sqlite_migrate'"}
        return r

    v = classify_runs([broken()], [broken()])
    assert v.reason == "reference_fails" and v.missing_modules == ["sqlite_migrate"]
    assert v.detail.endswith("; the environment lacks module(s): sqlite_migrate"), v.detail
    ok = classify_runs([run({"t::a": "failed"})], [run({"t::a": "passed"})])
    assert ok.reason is None and ok.missing_modules == []


def test_passes_without_change_names_the_test_files_that_never_ran() -> None:
    """Seen on jaraco/inflect (2018): one of the commit's two test files imported ``nose``, which the
    environment lacked; the drop read "all 37 passed without the change", as if every test had run."""
    def half() -> TestRun:
        r = run({"tests/test_pwd.py::test_a": "passed"}, ce=True)
        r.collection_errors = {"tests/test_compounds.py": "ModuleNotFoundError: No module named 'nose'"}
        return r

    v = classify_runs([half()], [half()])
    assert v.reason == "passes_without_change" and v.missing_modules == ["nose"]
    assert v.detail == ("no test failed in 1 parent run: all 1 passed without the change; not collected at the "
                        "parent, so never run: tests/test_compounds.py; the environment lacks module(s): nose")


def test_the_commit_is_checked_as_grading_builds_it(history: dict, tmp_path: Path) -> None:
    """nu22 on python-humanize/humanize: setup_cmd compiles translation files, and 4 commits change one. Mining
    set up the commit's own tree, where the compiled file matched the fix, and kept them; grading sets up the
    parent and then applies the change, so the compiled file was stale and the oracle failed each of them
    (28 of 36). The commit runs are now built as grading builds them: here the test reads the file setup_cmd
    generated from the parent's source, and the candidate is dropped, never kept for an oracle to fail."""
    v = _verify(history, "generated", tmp_path, setup_cmd="cp pkg/words.src pkg/words.gen")
    assert v.reason == "reference_fails", v
    assert "tests/test_words.py::test_words" not in v.FAIL_TO_PASS


@pytest.mark.slow
def test_verify_keeps_the_peak_memory_of_its_sandboxed_runs(history: dict, tmp_path: Path) -> None:
    """mem27: the largest memory-cgroup peak of a candidate's runs (parent, reference fix, canary twins) is its
    ``peak_mb`` (the task's ``verify.peak_mb``, which sets its grading's memory cap): a pytest run of these small
    tests holds some tens of MiB, far under the 4096 MiB ceiling. (Unsandboxed runs have no cgroup, no peak:
    checked on the same candidate's unsandboxed verification in
    test_verify_import_error_at_the_parent_is_a_legitimate_red, which this test verified a second time.)"""
    from helpers.bwrap import skip_without_memory_cgroup_bwrap

    skip_without_memory_cgroup_bwrap()
    # one stability run: the peak is kept over every run of a candidate whatever their number (stability
    # runs are tests/mine/test_redgreen.py's flaky tests' subject, not this one's)
    boxed = _verify(history, "import_error", tmp_path, setup_cmd="touch .setup-done", sandbox="bwrap",
                    stability_runs=1)
    assert boxed.reason is None, boxed.detail
    assert boxed.peak_mb is not None and 15 < boxed.peak_mb < 512, boxed.peak_mb


@pytest.mark.slow
def test_verify_records_the_sites_the_reference_fix_passes_sealed(tmp_path: Path) -> None:
    """Mining's sealed run of the reference fix (contracts §7 "Sealed sites"): the slug task's site is recorded, with
    the rules' version it was found under, its run kept as ``sealed`` among the logs; the repository's own runs are as
    before."""
    b = build_slugs(tmp_path / "slugs")
    (tmp_path / "work").mkdir()
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[SLUG_TEST],
                         runnable_tests=[SLUG_TEST], test_cmd=b.task.test_cmd, setup_cmd=None, stability_runs=1,
                         run_timeout_s=60, work_root=tmp_path / "work", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == [SLUG_F2P]
    assert v.sealed_sites == [SLUG_SITE]
    assert v.sealed_rules == SEAL_RULES  # shape37: grading trusts the record under these rules only
    assert (tmp_path / "logs" / "sealed" / "outcomes.jsonl").exists()
    assert run_phrase("sealed") == "the sealed run of the reference fix"


@pytest.mark.slow
def test_verify_records_the_other_kinds_of_sealed_site(tmp_path: Path) -> None:
    """cmp35: mining's sealed run judges the sites of the other kinds with their own checks (``match=`` and
    ``assertRaisesRegex`` by ``re.search``, ``in`` and ``assertIn``, ``pytest.approx``): the reference fix passes
    each of the units task's five, all recorded."""
    b = build_units(tmp_path / "units")
    (tmp_path / "work").mkdir()
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[UNITS_TEST],
                         runnable_tests=[UNITS_TEST], test_cmd=b.task.test_cmd, setup_cmd=None, stability_runs=1,
                         run_timeout_s=60, work_root=tmp_path / "work", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert sorted(v.FAIL_TO_PASS) == sorted(UNITS_F2P)
    assert v.sealed_sites == sorted(k for keys in UNITS_SITES.values() for k in keys)


@pytest.mark.slow
@pytest.mark.parametrize("reads", [False, True])
def test_mining_seals_no_site_whose_test_needs_a_hidden_data_file(tmp_path: Path, reads: bool) -> None:
    """gatk35: mining's sealed run of the reference fix holds no hidden data file of the commit (each empty or its
    parent's version there), as grading's does: a site whose test reads the commit's ``tests/cases.txt`` fails it
    and is not recorded (grading's sealed run, without the file, would fail that test for any fix: a real fix
    ``tests_failed``, or ``forged`` when its value came from the file); a test that does not read it is sealed."""
    test = "tests/test_texts.py"
    body = ("from texts import lines\n\n\ndef test_spaces():\n"
            + ("    assert 'ok' in open('tests/cases.txt').read()\n" if reads else "")
            + "    assert lines('first; second') == 'first\\nsecond'\n")
    b = build_fix_task(tmp_path / "t", name="texts", source="src/texts/__init__.py",
                       parent="def lines(s):\n    return s.replace(';', '\\n')\n",
                       fixed="def lines(s):\n    return '\\n'.join(p.strip() for p in s.split(';'))\n",
                       test=test, tests=body, first="Add lines()", message="lines(): no spaces around",
                       fail_to_pass=[f"{test}::test_spaces"], pass_to_pass=[], data={"tests/cases.txt": "ok\n"})
    (tmp_path / "work").mkdir()
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=b.task.test_files,
                         runnable_tests=[test], test_cmd=b.task.test_cmd, setup_cmd=None, stability_runs=1,
                         run_timeout_s=60, work_root=tmp_path / "work", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert v.sealed_sites == ([] if reads else [f"{test}::test_spaces@{6 if reads else 5}"])


@pytest.mark.slow
def test_verify_records_the_rows_of_a_column_the_reference_fix_passes_sealed(tmp_path: Path) -> None:
    """col35: the ordinal task's column (tests/helpers/ordinal_task.py): mining's sealed run of the reference fix
    records the three rows the commit added (their items ran under ids holding their site ids, not the original
    FAIL_TO_PASS ids, and each reported once, equal); the three rows kept from the parent are never sites."""
    b = ordinal_task.build_ordinals(tmp_path / "ordinals")
    (tmp_path / "work").mkdir()
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[ordinal_task.TEST],
                         runnable_tests=[ordinal_task.TEST], test_cmd=b.task.test_cmd, setup_cmd=None,
                         stability_runs=1, run_timeout_s=60, work_root=tmp_path / "work", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    assert sorted(v.FAIL_TO_PASS) == sorted(ordinal_task.F2P)
    assert v.sealed_sites == ordinal_task.ROWS
