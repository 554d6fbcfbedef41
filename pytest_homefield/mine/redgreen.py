"""Red→green verification of a candidate commit (docs/contracts.md §7) and the task's patches.

:func:`verify_candidate` runs the commit's tests against the parent tree (red expected) and against
the commit's tree (green expected), up to ``stability_runs`` times each in a fresh copy, and hands
the runs to :func:`classify_runs`, a pure function that turns them into FAIL_TO_PASS / PASS_TO_PASS
lists, the excluded ids and the drop reason.

Targeted stability runs (the rule of docs/contracts.md §7, verification version 3): the first run
of each state runs the commit's test files in full; every later run is targeted. Parent runs 2…N
run the FAIL_TO_PASS candidates still standing (red in every parent run so far, green in every
commit run so far); commit runs 2…N run those plus the ids that failed in every commit run so far
(:func:`commit_failures`), so an id that fails at commit run 1 and passes later is ``flaky``, not
``fails_with_reference``. Parent run 1, commit run 1, parent runs 2…N, commit runs 2…N, in that
order; a run that cannot change the verdict any more is not made. An id a run did not select is not
observed there (:func:`classify_runs`). PASS_TO_PASS ids are observed in the first run of each state
only: one that fails later is caught when the oracle is graded (docs/contracts.md §7, flaky ids).

Parent runs are bounded by the commit's time (verification version 6): parent run 1 gets at most
:data:`PARENT_PROBE_S`; when it is cut there, commit run 1 is timed and the bound is
:data:`~pytest_homefield.sandbox.limits.HANG_FACTOR` × its seconds, at least
:data:`~pytest_homefield.sandbox.limits.HANG_FLOOR_S`. When the probe was shorter (a slow suite, not a
hang; verification version 12) parent run 1 goes on under that bound from where the probe stopped: the
probe's outcomes stand but for its ``error`` ids (the test it was killed in), and only the ids of commit run 1
the probe did not report run again (``parent-1-rest``); the two are parent run 1. Parent runs 2…N get the
bound at once. A parent run
stopped at the bound did not fail to run: the commit's tests finish, the parent's do not, so it is
the bug the commit fixes (a hang). Such a run (:func:`_cut_short`) observes only the ids it reported
(the test in progress when it was killed reported ``error``: failing); the ids it never reached are
run by the next parent run, and an id no parent run reached is excluded as ``unfinished``, never
PASS_TO_PASS. A run cut while still collecting counts every absent id as failing, as a collection
error does. The kept task's ``verify.parent_bound`` and the record's detail say so.

Passing without change, decided early (perf46): parent run 1 cut at the probe with nothing failing among what it
reported (nor a collection error) makes commit run 1 capped at ``cap`` s, HANG_FACTOR × ``cap`` being the whole
parent run at the probe's pace (× :data:`EARLY_MARGIN`), at least the probe and at most ``run_timeout_s``. Commit
run 1 finished within ``cap``: the schedule goes on as above with it. Cut there: commit run 1 takes over ``cap`` s,
so the bound parent run 1 would get is at least HANG_FACTOR × ``cap`` (and above the probe: no hang at the probe),
and the parent runs once more under that: only the ids the probe collected (its reporter's ``collected_ids``) and
did not report but ``error``, in collection order (perf47, ``parent-1-again-rest``; the probe's reports and that
run's are parent run 1, as ``parent-1-rest``'s are), else in full (``parent-1-again``: the probe's ids not known,
more than :data:`MAX_SELECTED` left, or an id the rest run did not report). Running the rest without the probe's
tests before them makes a parent test's outcome depend on the tests before it no more than before perf46: the
schedule then made the very same rest run for such a candidate (commit run 1 over ``cap`` puts the bound above the
probe, so :func:`rest_of_probe` ran the ids the probe had not reported; commit run 1's ids then, the parent's own now,
which adds only ids the commit lacks, none of them ever FAIL_TO_PASS). Finished with no test failing and nothing
failing to collect, it is parent run 1 and the candidate is ``passes_without_change`` at once: the verdict the
schedule above reaches, since that parent run would finish under its bound too, and an id passing in one parent run
is never FAIL_TO_PASS, whatever the commit's runs and the stability runs show. Finished with a failure, it is parent
run 1 and commit run 1 is made in full; cut at its bound (slower than the probe's pace said), the schedule goes on
as above from the probe. The capped and cut runs' seconds count. (Starting commit run 1 beside the parent's run
instead is no option: every test run holds its memory cgroup's reservation of the machine's budget,
``max_test_memory_mb``, a session's share.)

The stubbed parent run (verification version 13, ms35; docs/contracts.md §7 "Red only for a missing name"): after
every run of both states, the candidates still standing run once more at the parent with ``-p homefield_stub``
(:data:`STUB_PLUGIN`: every name the copy's own modules lack is a dummy); one that passes there is excluded as
``passes_with_stub`` (:func:`without_stubbed`), and a candidate left with none is ``passes_without_change``.

``deadline`` (``--time-budget``): no run outlives it; a run it cuts raises :class:`DeadlineReached`
(the candidate is not verified, not dropped).
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import shlex
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.errors import PatchError
from pytest_homefield.mine.canary_check import check_twins
from pytest_homefield.mine.compiled import BUILT_BEFORE, compiled_sources
from pytest_homefield.mine.run_journal import RunJournal
from pytest_homefield.run.carried import carried_changes, setup_moved
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.canaries import CanaryPlan, function_id
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.canary_soft import softened_files
from pytest_homefield.sandbox.limits import HANG_FACTOR, HANG_FLOOR_S, TEST_MEMORY_MB, TEST_WRITE_MB, hang_bound_s
from pytest_homefield.sandbox.memory_budget import BudgetWaitExpired, reserve
from pytest_homefield.sandbox.nethint import network_hint, read_only_hint, semaphore_hint
from pytest_homefield.sandbox.outcomes import LEFT_OUT, SealScope
from pytest_homefield.sandbox.pytest_config import Setup, from_top, setup_for
from pytest_homefield.sandbox.seal_sites import (
    SEAL_RULES,
    passing_sites,
    sealable_sites,
    sealed_files,
    withheld_data,
)
from pytest_homefield.sandbox.services import ServiceError, TestNetwork
from pytest_homefield.sandbox.snapshot import (
    HOMEFIELD_DIR,
    apply_patch,
    borrowed_gitdir,
    copy_tree,
    git,
    make_snapshot,
    run_setup,
    setup_error_line,
)
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp
from pytest_homefield.sandbox.testrun import (
    FAILING,
    PASSING,
    SELECTION_PLUGIN,
    TestRun,
    pytest_setup,
    run_reservation_mb,
    run_tests,
    scrubbed_env,
)
from pytest_homefield.sandbox.twin_runs import TwinPlan, parent_tests, plan_twins, teardown_nodes
from pytest_homefield.settings_table import option

__all__ = [
    "Verification",
    "classify_runs",
    "f2p_candidates",
    "commit_failures",
    "verify_candidate",
    "without_stubbed",
    "STUB_PLUGIN",
    "make_test_patch",
    "make_gold_patch",
    "gold_paths",
    "HELD_BACK",
    "DESELECTED",
    "selecting_words",
    "LEFT_OUT_DESELECTED",
    "deselected_tests",
    "deselected_note",
    "diff_lines",
    "DROP_REASONS",
    "EXCLUDE_REASONS",
    "VERIFY_VERSION",
    "MAX_SELECTED",
    "own_top_levels",
    "root_commits",
    "DeadlineReached",
    "PARENT_PROBE_S",
    "run_phrase",
]

#: Version of what verification decides from the same inputs (the run schedule, the classification).
#: Part of the key under which mining reuses an earlier verification record (docs/contracts.md §7):
#: bump it whenever the same commit and settings could be classified differently. 5: canary twins
#: beside the original, checked in both orders (the task's ``canary_order``). 6: parent runs bounded by
#: the commit's time, a parent that hangs past the bound is red (module docstring). 7: the twins run apart,
#: each at its original's name and place (:mod:`~pytest_homefield.sandbox.twin_runs`), with real values.
#: 8: a twin's instance skipped where its original's is no FAIL_TO_PASS id (a parameter this environment
#: skips) counts for nothing (:meth:`~pytest_homefield.sandbox.canaries.CanaryPlan.failing`). 9: a test run's
#: ``max_test_memory_mb`` bounds its whole sandbox (a memory cgroup), not each process alone (mem20): a
#: commit whose tests held more than that across processes was green before and is red now. 10: the commit
#: runs are the parent after ``setup_cmd`` plus the commit's changes, as grading builds the reference fix
#: (nu22: a task whose fix changes what setup_cmd generates was kept, and its oracle failed at grading).
#: 11: a twin leaves its function's PASS_TO_PASS instances as they are, else a sentinel
#: (:mod:`~pytest_homefield.sandbox.canary_rows`, atk26): a task's canaries and unprotected functions differ.
#: 12: parent run 1 cut at the probe in a slow suite keeps what the probe reported and runs only the rest
#: (mine29: on simonw/llm the probe's 60 s were thrown away and the whole files run again). 13: the stubbed
#: parent run (ms35): a FAIL_TO_PASS candidate the parent passes once every missing name of the copy's modules is a
#: dummy (``_reporter/homefield_stub.py``) is ``passes_with_stub`` (markupsafe dcb170b12713: every one). 14: a
#: canary instance ``xfailed`` where its original's instance is no FAIL_TO_PASS id counts for nothing, as a skipped
#: one (lbl35: tomli-w a1ccdb7821de, a row the body marks with ``pytest.xfail``, was ``reference_passes_canary``).
#: 15: every canary run's test functions run to the end of their body after a failed statement (soft statements,
#: :mod:`~pytest_homefield.sandbox.canary_soft`, twin37): a twin no longer leaves what its original puts back, so a
#: later test of the reference's targeted run may pass or fail otherwise.
#: 16: the commit runs leave out of the reference fix what grading leaves out of any change (test configuration:
#: a ``pyproject.toml`` whose pytest section changed, ``tox.ini`` …; :func:`_apply_as_graded`; nu38: pallets/click
#: 777a89e232d5 registers its ``stress`` marker in ``pyproject.toml``, was kept, and its oracle failed at grading on
#: the unknown mark under ``filterwarnings = error``).
#: 17: a ``unittest.TestCase``'s test methods and the statements inside a ``while``, ``try`` or ``with`` body are soft
#: too (twin38): such a test runs on after a failed statement where it stopped before.
#: 18: a test is told from a fixture by its decorator being ``fixture`` (gatk39), not by the word in its text: a test
#: marked ``usefixtures`` (or parametrized over a ``fixture_name`` column) is soft too, and so are the tests of a class
#: nested in a class, and the body of a ``with (a as x, b):``: each runs on as 15 says.
#: 19: a test named by the repository's ``python_functions`` (``check_*``) is soft too (soft39), and the body a
#: decorator leaving no ``__wrapped__`` calls (hypothesis's ``given``) keeps an assertion's failure: each runs on as 15
#: says.
#: 20: a ``with`` body at a test's top expecting no exception holds top soft statements, and a nested one keeps an
#: exception a ``raises`` let through unexpected (gatk40): a real fix's exception at a twin's site there runs on.
#: 21: a ``with`` body a ``return``, ``break`` or ``continue`` may leave, and an ``async with`` body, are soft too
#: (soft40): such a test runs on as 15 says, its jump still taken; and so is a test named by the test command's
#: ``-o python_functions=…`` (or by the file its ``-c`` names, or an ``-o`` of the configuration's ``addopts``); and
#: the failure a decorator's body kept is raised when that body returns (a retry wrapper calls it again).
#: 22: a statement at the top of a decorator's body keeps any exception where it is raised at the body's return
#: (soft41): a real fix's exception at the plain run's bare ``raises`` body in a ``mock.patch``ed test runs on; and the
#: ``python_functions`` read is that of the one configuration pytest reads for the run's targets (their common folder),
#: and of an ``env PYTEST_ADDOPTS=…`` before the test command. And the test command's options are read as pytest's
#: parser reads them (gatk41): a test named by ``-qo python_functions=…``, ``-o=…`` or a ``-qc FILE`` is soft too; and
#: a group's function is soft by its name whatever made pytest collect it (a script's ``pytest.main``).
#: 23: an exception that is no assertion's failure at a top soft statement of a ``with`` body goes on as written when a
#: context there takes exceptions by its code (soft42: a repository's ``@contextmanager def expect(kind)``).
#: And every test run of a verification reads the configuration and rootdir pytest takes for the task's runnable test
#: files (conf42: ``run_tests(whole=)``, and the canary runs' files softened by it): a targeted run of some files could
#: read another (a ``tests/tox.ini`` before the root's ``pytest.ini``), collect other tests under other ids, and
#: was made again on the whole files.
#: 24: the pin names the configuration file the pytest that runs takes, by its version (conf43): pytest 8 in a
#: ``--env uv`` environment was given ``-c pytest.toml``, read as empty, where it takes the ``pyproject.toml`` table.
#: And a context is read as taking exceptions through its generator's own ``with`` too (gatk43: ``@contextmanager def
#: expect(kind): with pytest.raises(kind): yield``), and ``pytest.raises`` / ``assertRaises`` under any name is: such a
#: body ends at the exception its context takes, as written, where it ran on before; so does a ``contextmanager``
#: catching with ``except*``. And a command starting pytest through a Python's grouped flags (``python -mpytest``,
#: ``python -Bm pytest``) has its options read (``pytest_config.pytest_args``) and its configuration pinned. And
#: (soft44) a plain function returning a call of a taking context's maker (``def expect(kind): return Expect(kind)``)
#: takes as that context does; and the canary runs' files are softened by the configuration the pytest that runs
#: takes (pytest 8's reading in a pytest 8 environment), the one the pin names.
#: 25 (gatk45): that pytest is asked of the interpreter of commands 24 asked none of (``env A=1 python -m pytest``,
#: ``coverage run -m pytest``: by pytest 9's reading before, a pytest 8 run of theirs pinned to ``-c pytest.toml``).
#: 26 (ops46): ``uv run [uv options] pytest …`` and ``uv run --with pytest python -m pytest …`` commands are pinned (a
#: ``conftest.py`` above the tree was loaded by them, and a configuration there refused the grading, ``infra``).
#: And every sandbox's test run is closed to user namespaces, POSIX message queues and more than 256 queued signals
#: (satk46: a repository's tests making either now fail in every arm); and the reporter reads a plain maker returning
#: a name it assigned a taking context as taking (gatk46), and the canary planner makes no twin a real fix satisfies
#: (``raises(match=)`` twins change a part every match holds; ``assertCountEqual`` twins hold other items: gatk46).
#: And on a repository whose pytest rootdir is not the tree's top (a ``tests/pytest.ini``: ids ``test_a.py::…``) the
#: canaries are planned from the rootdir (root47: every FAIL_TO_PASS function was a sentinel, unguarded) and the
#: targeted and stubbed parent runs select the ids pytest reports (a test red for a missing name alone was kept),
#: and so are its sealed sites (seal47, ``SEAL_RULES`` 14: such a task recorded none, and grading sealed nothing).
#: And (gatk48) a ``--rootdir`` the test command names is the setup's rootdir (its twins were planned from the top:
#: every function a sentinel, a forger equal to anything ``solved``), and a carried ``setup.py`` added or deleted
#: that moves pytest's rootdir is held back in the commit runs as in grading (such a commit was ``reference_fails``).
#: And (gatk47) the reporter reads the contexts a softened ``with`` entered, not only what made them: ``with
#: expect():`` of a maker returning ``pytest.raises(kind) if kind else nullcontext()`` keeps its body's exception.
#: 27 (gatk49): a test whose call passed and whose teardown failed is ``error`` (pytest's reading: the parser said
#: ``passed``, so a hidden test's check after its call checked nothing), and (gatk50) a failed teardown of a class,
#: module, package or session scope counts against every test of that scope in the run (the reporter's ``torn``), not
#: the one pytest happened to run last; grading reads the setup for a held-back ``setup.py`` with the hidden tests
#: applied, as mining does (gatk49). The canary planner (can49): no message twin where the pattern is one of the
#: parent's messages, made-up twins match none of them, positional ``assertRaisesRegex`` patterns get one, a
#: ``parametrize`` column a fixture requests (or ``indirect=``) is no value site, the confirmation run's member names
#: are drawn from the test file's text (not the last twin's), and contexts made through ``sys.modules[...]`` are read
#: as entered. A link in the way of mining's scratch writes is ``setup_failed`` (link48). ``uv run`` commands: uv
#: 0.13.9's option lists, a ``--env-file``'s ``PYTEST_ADDOPTS``, and the pytest version of the interpreter uv runs
#: (ops48: a pytest 8 ``.venv`` was read by pytest 9's rules). And (tcan50) the teardown canary: every canary run
#: plants a test whose fixture's teardown must fail, and the reference fix must fail it (a task counts one more);
#: its fixture never takes ``request`` or a name of the file's ``conftest.py`` files, it is never planted in a module
#: parametrizing its every test, and it ends as the file's tests do where they are named by a suffix (gatk51).
#: And (wz51) a venv's editable-install ``.pth`` naming the repository's folder sees the copy under test's folder
#: there in bubblewrap (werkzeug's dev-server children imported nothing and waited for the run's timeout).
#: 28: a task mined before the teardown canary (no ``canary_teardown``) has it judged against the reference fix, once
#: a task (tcan52: a repository whose conftest passes failed teardowns had a real fix ``forged``); two teardown
#: canaries at different places, and no value twin of a ``parametrize`` column the test body hands to the code (can52;
#: read through the column's own methods, it keeps its twin: gatk53); a loop table's column handed to a call on the
#: expected side is twinned, judged against the reference fix (can53: a sentinel before);
#: root's sandboxes run under a host uid of their own by default, the host's files then owned by 65534 (satk52);
#: setuptools' flat-layout editable finders are followed in bubblewrap (ops52); pytest-cov and pytest's own
#: ``--junitxml`` are off in test runs (nu52: arrow's ``--cov`` wrote ``.coverage`` into the read-only tree).
#: 29: the sealed run holds one run apart's files (drawn from the plan's seed, the plan made first), a function whose
#: sealed text differs between runs apart not sealed in that grading (seal54: gatk52's sealed-run duration channel);
#: canaries and sentinels carry their function's marks and take the names a module's ``pytestmark`` parametrizes,
#: such a module gets teardown canaries too (gatk54: an ``addopts = -m`` deselected them; mining dropped such
#: commits); a test run without a sandbox or under Landlock has an environment of its own whose editable hooks name
#: the grading copy (ops54); a change equal to the reference fix in every file grading carries is the reference fix
#: (nu54: a reference fix changing ``tox.ini`` was not); no near twin of a negated comparison (alt54: ``"Uiscovery:"
#: not in …`` forged every real fix of simonw/llm bd645da55193); an added module named as a top-level module of the
#: interpreter's site folders is not carried (gatk55: setuptools' editable finder, imported by a ``.pth`` at every
#: start); the plain sentinel member keeps its function's marks and takes the names its classes parametrize (gatk55);
#: tasks record ``mined_version``.
#: 30: the sealed run lays every twin member side by side, a sealed group once (seal56: seal54's drawn run told each
#: run apart whether it was drawn); a FAIL_TO_PASS function's own fixture check is contradicted in a run apart of its
#: own, a teardown twin, one run more (tdtwin56: gatk54's shape-reading swallows); marks read by any name the module
#: gives them and from base classes of the module, a sentinel member takes its bases' parametrized names, the
#: configuration's ``-k`` cleared in the confirmation runs (gatk56: ``-m``/``-k`` repositories' real fixes
#: ``tests_failed`` or dropped); the command's own interpreter read for carried files and the run's own
#: environment, ``uv run`` and hatchling's editables redirector followed, ``make``/``tox``/``hatch`` pytest commands
#: refused (ops56); pytest-html's and pytest-json-report's outputs off in test runs (nu56); an unprotected function
#: (a sentinel its only twin) is sealed in the sealed run whatever the runs apart hold (alt56: arrow's c78e35e8ee31
#: was solved by a literal reader), and the sealed run holds no teardown check a teardown twin contradicts (gatk57).
#: 31: a ``uv run`` in a project runs in the active environment, never synced from the tree under test (ops58: an
#: agent's ``pytest11`` entry point was installed; ``infra`` under bubblewrap), the env files and uv configuration it
#: reads are the parent's, and an editable loader naming the checkout is left out of the run's own environment
#: (meson-python, scikit-build-core imported HEAD under none); every run holding canaries drops the configuration's
#: ``-m``, ``-k`` and ``--deselect`` (mark58: a base class's mark from another module, drawn names, node-id
#: prefixes deselected canaries and a real fix's original); a teardown decoy beside every teardown twin, a literal
#: comparison's twin keeping its polarity (pol58: gatk57's polarity tell); suffix-named replacement tests, an original
#: failing only in the confirmation run checked on the reference fix there, sealed sites judged where the reference
#: fix passes them in the grading's own sealed files (gatk58: real fixes ``tests_failed``/``forged``); no read-only
#: bind holding the user's home (satk58); a must-fail canary the completed runs apart left out where its function
#: passed is ``forged`` (lead, mark58's left); ``verify.twin_runs`` recorded (rev58).
#: 32: the teardown decoy is the function itself in a run of its own (deco60: its place and names told it; a
#: teardown-twin task 4 runs; gatk61: a decoy for a test written on its ``def`` line or a method with a column-0 comment
#: before its body, which had none); a contradiction twin mining's check covers, left unreported by completed runs apart
#: where its original passed, is ``forged`` (unr60); the reference checks beside a non-Python FAIL_TO_PASS file get the
#: sentinel module (gatk60: an unfixed task ``solved``, forgeries ``tests_failed``); a ``uv run`` script's inline
#: metadata and a ``uv.toml`` above the copy are not read, the reference fix's uv files applied as graded, a sealed run
#: holding no canary keeps the configuration's selection (ops60); ``verify.twin_runs`` counts an exception-swap twin's
#: plain run (rev60).
#: 33: unittest checks after the test (``addCleanup``, ``tearDown``, ``tearDownClass``, ``addClassCleanup``) get a
#: teardown twin and decoy (ucln62: a change dropping cleanup errors was ``solved`` with no fix); the teardown twin is
#: planted beside an exception-swap body twin (swap62); a test whose body sits on its wrapped signature's last line
#: gets its teardown decoy (menda62); a commit's tests the configuration deselects are ``excluded`` ``deselected``
#: (bld62); a canary the reference fix's runs reported and did not pass, left unreported by completed runs apart
#: beside a passing original, is ``forged`` whether or not mining's check covers it (twn63: a hidden teardown twin or
#: decoy, or called-column twin, was ``solved`` with no fix); a rotation cycle's member gets its teardown twin and
#: decoy, the cycle's placement drawn again (cyc63); a cleanup added without a lambda is contradicted (gatk63).
#: 34: a unittest class's ``tearDown``, ``tearDownClass`` or class cleanup check in a class of several tests, and a
#: ``tearDownModule`` check, get a teardown twin, the unit's other tests blinded in its run (``TwinPlan.blind``) and a
#: once-after-all check's error folded into the twin's outcome (ut64, ut65; gatk65: the class's graded ids too); a
#: class another hidden test file derives from gets no twin (seal64); a function whose only contradiction is the
#: order twin is ``unprotected`` and ``order_only`` (otw64); ``pytest.param`` rows get a row twin (prm65).
#: 35: a ``tearDown`` check of a mixin of the module, inherited or reached through ``super().tearDown()``, gets the
#: teardown twin, its module's classes running it blinded (ut46, gatk66, ran66); a class- or module-level check of a
#: unit of several tests gets a unit decoy (ut46); a module check beside a nested class or a base with tests gets its
#: twin (ran66); a class another hidden test file imports, star-imports or binds to a name gets a sentinel (reach46);
#: ``len(expected.strip())`` and an IntEnum-named row no longer cost a ``pytest.param`` row its twin (reach46); a
#: ``preds:`` patch applied only in part is ``agent_error`` (atk46); a test overriding a base's test of its name is
#: no longer among its own unit's others, blinded in its own twin's run (rev67).
VERIFY_VERSION = 35
#: The plugin of the stubbed parent run (``sandbox/_reporter/homefield_stub.py``).
STUB_PLUGIN = "homefield_stub"
#: A targeted run selects at most this many node ids; with more it runs the whole files.
MAX_SELECTED = 2000
#: Parent run 1 runs before the commit's time is known: it gets at most this many seconds (and never
#: more than the run timeout); cut there, commit run 1 is timed and the bound decides.
PARENT_PROBE_S = 60.0
#: Parent run 1 cut at the probe with nothing failing (perf46): the whole parent run is estimated at the probe's
#: pace (its seconds × tests collected / tests reported) times this, for commit run 1's cap.
EARLY_MARGIN = 1.5


class DeadlineReached(Exception):
    """A run of :func:`verify_candidate` was stopped at its ``deadline`` (``--time-budget``): the
    candidate is not verified. ``where``: the run (``"parent run 1"``, ``"setup at the commit"``); ``ran_s``:
    the seconds that run had been going when it was killed (``None`` when none had started: nothing was left
    of the budget), so that the summary can tell a run that hangs (tabulate's older commits under wcwidth
    0.9: commit run 1 killed at the budget after 7 minutes, nu43) from one the budget merely caught."""

    def __init__(self, where: str, ran_s: float | None = None) -> None:
        super().__init__(f"stopped at the time budget in {where}")
        self.where = where
        self.ran_s = ran_s


def run_phrase(log_name: str) -> str:
    """What a run whose log folder is ``log_name`` is, in words for a record's ``detail`` (the folder
    names are for files: ``parent-1``, ``commit-2-full``, ``parent-1-bounded``, ``parent-1-rest``, ``parent-1-again``,
    ``parent-1-again-rest``, ``commit-1-capped``, ``canaries-1-2``).
    ``"parent-1-bounded"`` -> ``"parent run 1 (again, bounded by the commit's time)"``; a name of no
    known form is returned as it is."""
    name, again = log_name, []
    if name == "sealed":
        return "the sealed run of the reference fix"
    if name.endswith("-full"):
        name, again = name[: -len("-full")], ["whole files"]
    if name.endswith("-bounded"):
        name, again = name[: -len("-bounded")], ["bounded by the commit's time", *again]
    if name.endswith("-rest"):
        name, again = name[: -len("-rest")], ["the tests its probe did not reach", *again]
    if name.endswith("-again"):  # perf46: the parent once more after the capped commit run 1 showed its bound
        # perf47: ``-again-rest`` ran the ids its probe did not reach, ``-again`` the whole files
        name, again = name[: -len("-again")], ["after its probe" if again else "whole files, after its probe", *again]
    if name == "commit-1-capped":
        return "commit run 1 (capped, to show the parent's bound)"
    parts = name.split("-")
    if len(parts) == 2 and parts[0] in ("parent", "commit") and parts[1].isdigit():
        said = f"{parts[0]} run {parts[1]}"
    elif len(parts) == 3 and parts[0] == "canaries" and parts[1].isdigit() and parts[2].isdigit():
        said = f"canary run {parts[2]} of commit run {parts[1]}"
    else:
        return log_name
    return said + (f" (again, {', '.join(again)})" if again else "")


def _targets(select: Sequence[str], broken: Collection[str], rootdir: str | None = None) -> list[str]:
    """The targets of a targeted run: the ids of ``select``, but a module in ``broken`` (it failed to
    collect in an earlier run of the state) as its path, once: pytest aborts a run given ids of a module
    that cannot be imported (exit 4), which would cost a full rerun. Both are as pytest reports them, relative
    to its ``rootdir`` (:attr:`~pytest_homefield.sandbox.pytest_config.Setup.rootdir`); the targets are paths of
    the tree, where the run starts (root47: with a ``tests/pytest.ini``, ``test_a.py::test_x`` is given as
    ``tests/test_a.py::test_x``: given as reported, the stubbed parent run found nothing, and a targeted run was
    made again on the whole files)."""
    out: list[str] = []
    seen: set[str] = set()
    for i in select:
        module = i.split("::", 1)[0]
        target = from_top(rootdir, module if module in broken else i)
        if target not in seen:
            seen.add(target)
            out.append(target)
    return out

#: Reasons verification drops a candidate (docs/contracts.md §7). ``reference_passes_canary``: the
#: reference fix passed a canary even as a sentinel, or the canaries broke the real tests (§7, issue 30).
#: ``writes_over_cap``: a test run was stopped for writing past ``max_test_write_mb`` (or filling the disk).
DROP_REASONS = ("passes_without_change", "reference_fails", "flaky", "timeout", "setup_failed",
                "reference_passes_canary", "tests_skipped", "writes_over_cap")
#: The detail of a parent run whose every test was skipped (:func:`_nothing_failed_detail`).
ALL_SKIPPED = "were skipped in this environment"
#: Why an id is in neither list. ``absent``: the id was missing from every run of a state although
#: that run had no collection error (e.g. a parametrization computed from source code), so it is
#: neither red at the parent nor green at the commit — a case docs/contracts.md §7 does not name.
#: ``unfinished``: green at the commit, but no parent run reached it (each was stopped at its bound
#: before the id ran, :func:`_cut_short`): nothing is known of it at the parent.
#: ``passes_with_stub``: red at the parent, but passed there in the stubbed parent run (every missing name of the
#: copy's own modules a dummy, ms35): it checks nothing the parent's code lacks but names.
EXCLUDE_REASONS = ("flaky", "fails_with_reference", "skipped", "absent", "unfinished", "passes_with_stub",
                   "deselected")

# what one run says about one id
_PASS, _FAIL, _SKIP, _ABSENT = "pass", "fail", "skip", "absent"


@dataclass
class Verification:
    """Result of verifying one candidate.

    ``FAIL_TO_PASS`` / ``PASS_TO_PASS``: sorted node ids. ``excluded``: id → one of
    :data:`EXCLUDE_REASONS`. ``reason``: ``None`` when the candidate is a task, else one of
    :data:`DROP_REASONS`. ``detail``: one line for people. ``parent_s`` / ``commit_s``: seconds
    spent on each state (setup and test runs). ``runs``: test-command runs done (both states).
    ``red_by_import_error``: the FAIL_TO_PASS ids that never ran at the parent: absent from every
    parent run because their module failed to import or collect there (not a failing assertion).
    ``missing_modules``: modules a parent run could not import (``No module named 'x'`` in a
    collection error), sorted: a parent that fails for these is failing for its environment.
    ``network_hint``: for a dropped candidate whose sandboxed runs could not connect (no network in
    the sandbox), the addresses the tests tried and what to declare
    (:func:`~pytest_homefield.sandbox.nethint.network_hint`), and for one whose Landlock runs could not
    make a ``multiprocessing`` lock, that it needs bubblewrap (``semaphore_hint``); else ``None``.
    ``canaries``: for a task, the canaries the reference fix failed in the canary run (``None``:
    not checked, a ``{junit}`` command); ``canary_sentinels``: the FAIL_TO_PASS functions whose
    contradicted copy the reference passed (or that did not run), checked as sentinels instead;
    ``canary_order``: ``{}`` since verification version 7 (the twins run apart, no order to fix,
    :func:`~pytest_homefield.mine.canary_check.check_twins`); version 5 kept function →
    ``after``/``before`` there. ``canary_unprotected``: the FAIL_TO_PASS functions no contradiction
    twin guards (sentinels only, or past the limit: :attr:`~pytest_homefield.sandbox.twin_runs.
    TwinPlan.unprotected`).
    ``parent_bound``: when a parent run was stopped at the bound set by the commit's time (a hang at
    the parent), one line saying which run, the bound and the commit's time; else ``None``.
    ``skip_reasons``: for a ``passes_without_change`` drop whose last parent run skipped some tests,
    skip reason → how many ids it skipped there (reasons as pytest reported them; ids skipped without
    one are not counted), for the mining summary (:func:`~pytest_homefield.mine.summary.skipped_line`).
    ``peak_mb``: the most MiB the memory cgroup of any of its test runs held at once (parent, reference fix,
    canary twins; :attr:`~pytest_homefield.sandbox.testrun.TestRun.peak_mb`); ``None`` when no run had one.
    """

    FAIL_TO_PASS: list[str] = field(default_factory=list)
    PASS_TO_PASS: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    detail: str = ""
    parent_s: float = 0.0
    commit_s: float = 0.0
    runs: int = 0
    red_by_import_error: list[str] = field(default_factory=list)
    missing_modules: list[str] = field(default_factory=list)
    network_hint: str | None = None
    canaries: int | None = None
    canary_sentinels: list[str] = field(default_factory=list)
    canary_order: dict[str, str] = field(default_factory=dict)
    canary_unprotected: list[str] = field(default_factory=list)
    #: whether the canary check judged the teardown canary on the reference fix (tcan52; the task's ``canary_teardown``)
    canary_teardown: bool = False
    #: the test runs a grading of a change makes at once, as mining's twin plan laid them out (the task's
    #: ``verify.twin_runs``; 0: no canary check held)
    twin_runs: int = 0
    parent_bound: str | None = None
    skip_reasons: dict[str, int] = field(default_factory=dict)
    peak_mb: float | None = None
    #: the sealable sites the reference fix passed in its sealed run (docs/contracts.md §7 "Sealed sites"; ``[]``:
    #: none sealable or none passed), ``None`` when not checked (a ``{junit}`` command, the run did not complete)
    sealed_sites: list[str] | None = None
    #: shape37: the version of the sealable-site rules ``sealed_sites`` were found under (``seal_sites.SEAL_RULES``;
    #: ``None`` with ``sealed_sites`` ``None``)
    sealed_rules: int | None = None
    #: parent and commit runs read back from a stopped verification's journal instead of being made again
    #: (:mod:`~pytest_homefield.mine.run_journal`; counted in ``runs`` too)
    resumed_runs: int = 0


def peak_of(runs: Sequence[TestRun], earlier: float | None = None) -> float | None:
    """The largest :attr:`~pytest_homefield.sandbox.testrun.TestRun.peak_mb` of ``runs`` and ``earlier`` (MiB),
    ``None`` when none has one."""
    peaks = [p for p in (earlier, *(r.peak_mb for r in runs)) if p is not None]
    return max(peaks) if peaks else None


def _state(run: TestRun, test_id: str) -> str | None:
    """The id's state in ``run``; ``None`` when a targeted run did not select it (not observed)."""
    if run.selected is not None and test_id not in run.selected:
        return None
    outcome = run.outcomes.get(test_id)
    if outcome is None:
        # absent: failing only when this run could not collect everything
        return _FAIL if run.collection_error else _ABSENT
    if outcome in PASSING:
        return _PASS
    if outcome in FAILING:
        return _FAIL
    return _SKIP  # skipped, xfailed, xpassed: verifies nothing


def _all_ids(runs: Sequence[TestRun]) -> list[str]:
    return sorted({i for r in runs for i in r.outcomes})


def _states(runs: Sequence[TestRun], test_id: str) -> list[str]:
    """The id's state in each run that observed it (targeted runs that did not select it left out)."""
    return [st for st in (_state(r, test_id) for r in runs) if st is not None]


def _red_ids(parent_runs: Sequence[TestRun], ids: Sequence[str]) -> list[str]:
    """Ids that fail or error in every parent run that observed them (at least one)."""
    out = []
    for i in ids:
        st = _states(parent_runs, i)
        if st and all(x == _FAIL for x in st):
            out.append(i)
    return out


def f2p_candidates(parent_runs: Sequence[TestRun], commit_runs: Sequence[TestRun]) -> list[str]:
    """The ids that can still end in FAIL_TO_PASS: red in every parent run and passing in every
    commit run that observed them (at least one of each), sorted."""
    ids = _all_ids([*parent_runs, *commit_runs])
    out = []
    for i in _red_ids(parent_runs, ids):
        st = _states(commit_runs, i)
        if st and all(x == _PASS for x in st):
            out.append(i)
    return out


def commit_failures(parent_runs: Sequence[TestRun], commit_runs: Sequence[TestRun]) -> list[str]:
    """The ids (named by any run) that failed in every commit run that observed them (at least one),
    sorted: a later commit run selects them again so that one passing there is ``flaky``, not
    ``fails_with_reference``."""
    out = []
    for i in _all_ids([*parent_runs, *commit_runs]):
        st = _states(commit_runs, i)
        if st and all(x == _FAIL for x in st):
            out.append(i)
    return out


def unreached(parent_runs: Sequence[TestRun], commit_runs: Sequence[TestRun]) -> list[str]:
    """The ids that passed in every commit run observing them (at least one) and that no parent run
    observed (every parent run was cut short before reaching them, :func:`_cut_short`), sorted: the
    next parent run selects them too."""
    out = []
    for i in _all_ids([*parent_runs, *commit_runs]):
        st = _states(commit_runs, i)
        if st and all(x == _PASS for x in st) and not _states(parent_runs, i):
            out.append(i)
    return out


def _cut_short(run: TestRun) -> TestRun:
    """A parent run stopped at its bound (:func:`~pytest_homefield.sandbox.limits.hang_bound_s`), as a run that
    observed only what it reported: its reported outcomes stand (the test in progress when it was killed reported
    ``error`` if its setup had passed), the ids it never reached are not observed (``selected`` is the ids it
    reported, intersected with its own selection), and it is not a timeout. A run that never finished collecting (no
    test reported, none collected: a hang at import) counts as a collection error: its absent ids fail, as they do
    when a module cannot be imported."""
    if not run.outcomes and not run.collected:
        return dataclasses.replace(run, timed_out=False, collection_error=True, error=None)
    seen = frozenset(run.outcomes) if run.selected is None else run.selected & frozenset(run.outcomes)
    return dataclasses.replace(run, timed_out=False, selected=seen, error=None)


def _exclusion(parent: Sequence[str], commit: Sequence[str]) -> str:
    """Why an id with these per-run states is in neither list."""
    if not parent:
        return "unfinished"
    if len(set(parent)) > 1 or len(set(commit)) > 1:
        return "flaky"
    if _FAIL in commit:
        return "fails_with_reference"
    if _SKIP in commit or _SKIP in parent:
        return "skipped"
    return "absent"


_NO_MODULE = re.compile(r"No module named '([^']+)'")


def _missing_modules(runs: Sequence[TestRun], own: Collection[str] = ()) -> list[str]:
    """Modules named by ``ModuleNotFoundError`` in the collection errors of ``runs``, or in the error of a
    run that stopped before any test ran (``collection_error`` with no per-file error: a conftest that
    imports its package in ``pytest_sessionstart`` ends pytest with ``INTERNALERROR>``, exit 3), but for
    those of the repository itself (their top-level name in ``own``, :func:`own_top_levels`): a module the
    commit adds is missing at the parent by design, not from the environment."""
    said = [msg for r in runs for msg in (*r.collection_errors.values(),
                                           *([r.error] if r.collection_error and r.error else []))]
    return sorted({m for msg in said for m in _NO_MODULE.findall(msg) if m.split(".", 1)[0] not in own})


def root_commits(root: Path) -> list[str]:
    """The root commits of ``HEAD``'s history at ``root`` (sorted; ``[]`` when git cannot say): what
    identifies a repository across its clones, whatever their remotes."""
    return sorted(git("rev-list", "--max-parents=0", "HEAD", cwd=root, check=False).split())


def own_top_levels(repo: Path, *commits: str) -> frozenset[str]:
    """The importable top-level names of the repository at ``commits``: each top-level folder and ``.py``
    file, and those under ``src/`` (the src layout), from ``git ls-tree``."""
    names: set[str] = set()
    for commit in commits:
        for tree in (commit, f"{commit}:src"):
            out = git("ls-tree", "--name-only", "-z", tree, cwd=repo, check=False)
            names.update(n.removesuffix(".py") for n in out.split("\0") if n)
    return frozenset(names)


def _run_problem(runs: Sequence[TestRun], state: str) -> str | None:
    """A one-line reason when a run of ``state`` could not test anything at all."""
    for k, r in enumerate(runs, 1):
        if not r.outcomes and not r.collection_error and r.error:
            return f"{state} run {k}: {r.error}"
    return None


#: At most this many skip reasons are named in a drop's detail (the most frequent first).
SKIP_REASONS_SHOWN = 3


def _by_reason(skipped: Sequence[str], reasons: Mapping[str, str]) -> dict[str, list[str]]:
    """Skip reason → the ids of ``skipped`` pytest skipped for it, in their order (ids without a reported
    reason left out)."""
    groups: dict[str, list[str]] = {}
    for i in skipped:
        if reasons.get(i):
            groups.setdefault(reasons[i], []).append(i)
    return groups


def _skipped_ids(run: TestRun) -> list[str]:
    """The ids ``run`` skipped (skipped, xfailed, xpassed), sorted."""
    return sorted(i for i in run.outcomes if _state(run, i) == _SKIP)


def _skip_examples(skipped: Sequence[str], reasons: Mapping[str, str]) -> str:
    """``skipped`` (sorted test ids) by skip reason, for a drop's detail: one reason reads
    ``e.g. ID: REASON``; several read ``N: REASON, e.g. ID; …``, the most frequent first, at most
    :data:`SKIP_REASONS_SHOWN` of them (``and K more reasons``); ids skipped without a reported reason
    are counted in the total only. A skip of the commit's own new tests for a
    missing optional package then shows beside the many skips of another one (structlog 2796b22:
    11 "Needs better-exceptions." named first, the 3 new "Needs Rich." tests not at all)."""
    groups = _by_reason(skipped, reasons)
    if len(groups) <= 1:
        why, ids = next(iter(groups.items()), ("", skipped))
        return f"e.g. {ids[0]}" + (f": {why}" if why else "")
    ranked = sorted(groups.items(), key=lambda g: (-len(g[1]), g[1][0]))
    parts = [f"{len(ids)}: {why}, e.g. {ids[0]}" for why, ids in ranked[:SKIP_REASONS_SHOWN]]
    if len(ranked) > SKIP_REASONS_SHOWN:
        more = len(ranked) - SKIP_REASONS_SHOWN
        parts.append(f"and {more} more reason{'s' if more != 1 else ''}")
    return "; ".join(parts)


def _skip_counts(run: TestRun) -> dict[str, int]:
    """Skip reason → how many ids ``run`` skipped for it (ids skipped without a reported reason left out)."""
    return {why: len(ids) for why, ids in _by_reason(_skipped_ids(run), run.skip_reasons).items()}


def _nothing_failed_detail(parent_runs: Sequence[TestRun]) -> str:
    """Why nothing failed at the parent, in words: the tests passed, or were skipped (and why)."""
    runs = f"{len(parent_runs)} parent run{'s' if len(parent_runs) != 1 else ''}"
    last = parent_runs[-1] if parent_runs else None
    if last is None or not last.outcomes:
        return f"no test failed in {runs}: no test ran"
    skipped = _skipped_ids(last)
    if not skipped:
        return f"no test failed in {runs}: all {len(last.outcomes)} passed without the change"
    example = _skip_examples(skipped, last.skip_reasons)
    if len(skipped) == len(last.outcomes):
        return f"no test failed in {runs}: all {len(skipped)} {ALL_SKIPPED} ({example})"
    return (f"no test failed in {runs}: {len(last.outcomes) - len(skipped)} passed without the change and "
            f"{len(skipped)} {'was' if len(skipped) == 1 else 'were'} skipped ({example})")


def _uncollected(runs: Sequence[TestRun]) -> list[str]:
    """The test files, sorted, that any of ``runs`` could not collect."""
    return sorted({p for r in runs for p in r.collection_errors})


def _left_out_files(runs: Sequence[TestRun]) -> list[str]:
    """The files whose collection failed in ``runs`` when every collection error of every run is one of a file
    the repository's own configuration leaves out here (the reporter's ``left_out``: :data:`LEFT_OUT`); else
    ``[]`` (a run without any collection error, or one error of another kind, says the runs were not only that)."""
    if not runs or not all(r.collection_errors for r in runs):
        return []
    if not all(m.startswith(LEFT_OUT) for r in runs for m in r.collection_errors.values()):
        return []
    return _uncollected(runs)


def classify_runs(parent_runs: Sequence[TestRun], commit_runs: Sequence[TestRun], *,
                  own_modules: Collection[str] = ()) -> Verification:
    """Classify the ids of stability runs at the parent (commit's tests on the parent tree) and
    at the commit (docs/contracts.md §7). Pure: reads only the given runs.

    An id's state in a run is pass, fail (failed/error, or absent from a run with a collection
    error), skip (skipped/xfailed/xpassed) or absent; a targeted run (``TestRun.selected``) says
    nothing about an id it did not select, and "every run" below means every run that observed the
    id. FAIL_TO_PASS: fail in every parent run and pass in every commit run. PASS_TO_PASS: pass in
    every run of both states. Other ids are
    excluded as ``flaky`` (state varied within parent or commit runs), ``fails_with_reference``
    (fail in a commit run), ``skipped`` (skip in a commit run, or at the parent while passing at
    the commit), ``absent`` (missing without a collection error) or ``unfinished`` (no parent run
    observed it: each was cut short at its bound before it ran, :func:`_cut_short`).

    ``reason``: ``timeout`` if any run timed out; ``setup_failed`` if a parent run produced no
    outcomes because the test command itself failed (not found, no outcome file); with empty
    FAIL_TO_PASS: ``passes_without_change`` (no id failed in any parent run), ``flaky`` (ids
    failed at the parent but not in every run, or every red id was flaky at the commit), else
    ``reference_fails``; ``tests_skipped`` when every test was skipped at the parent, or when no id was seen and
    every collection error of every run is of a file the repository's own configuration leaves out here
    (:data:`~pytest_homefield.sandbox.outcomes.LEFT_OUT`: collected only because named). With no commit runs
    (verification stopped after the parent) both lists stay empty and only the reason is set. ``own_modules``:
    the repository's top-level names (:func:`own_top_levels`), never reported as missing from the environment.
    """
    parent_s = sum(r.wall_s for r in parent_runs)
    commit_s = sum(r.wall_s for r in commit_runs)
    v = Verification(parent_s=parent_s, commit_s=commit_s, runs=len(parent_runs) + len(commit_runs),
                     missing_modules=_missing_modules(parent_runs, own_modules))
    for state, runs in (("parent", parent_runs), ("commit", commit_runs)):
        for k, r in enumerate(runs, 1):
            if r.timed_out:
                v.reason = "timeout"
                v.detail = f"{state} run {k} exceeded the run timeout after {r.wall_s:.0f} s"
                return v
    problem = _run_problem(parent_runs, "parent")
    if problem:
        v.reason, v.detail = "setup_failed", f"the test command produced no outcomes: {problem}"
        return v
    ids = _all_ids([*parent_runs, *commit_runs])
    red = _red_ids(parent_runs, ids)
    ever_failed = [i for i in ids if _FAIL in _states(parent_runs, i)]
    if commit_runs:
        for i in ids:
            p = _states(parent_runs, i)
            c = _states(commit_runs, i)
            if set(c) == {_PASS} and set(p) == {_FAIL}:
                v.FAIL_TO_PASS.append(i)
            elif set(c) == {_PASS} and set(p) == {_PASS}:
                v.PASS_TO_PASS.append(i)
            else:
                v.excluded[i] = _exclusion(p, c)
    v.red_by_import_error = [i for i in v.FAIL_TO_PASS if all(i not in r.outcomes for r in parent_runs)]
    counts = f"FAIL_TO_PASS {len(v.FAIL_TO_PASS)}, PASS_TO_PASS {len(v.PASS_TO_PASS)}, excluded {len(v.excluded)}"
    if v.FAIL_TO_PASS:
        v.detail = _kept_detail(v)
        return v
    left_out = _left_out_files([*parent_runs, *commit_runs])
    if not ids and left_out:
        v.reason = "tests_skipped"  # as the repository runs its tests here, none of these runs at all
        v.detail = (f"its test files are left out of collection by the repository's own pytest configuration in this "
                    "environment (a conftest.py's collect_ignore, --ignore; e.g. files for a newer Python): "
                    f"{', '.join(left_out)}; their tests never run here")
    elif not ids and any(r.collection_error for r in parent_runs) and any(r.collection_error for r in commit_runs):
        v.reason = "reference_fails"
        messages = {p: m for r in commit_runs for p, m in r.collection_errors.items()}
        v.detail = "collection errors at the parent and at the commit"
        if messages:
            first = sorted(messages)[0]
            v.detail += f": {', '.join(sorted(messages))} ({messages[first]})"
        elif stopped := next((r.error for r in commit_runs if r.collection_error and r.error), None):
            v.detail += f" ({stopped})"  # pytest stopped before collecting: its own error line
    elif not ever_failed:
        v.detail = _nothing_failed_detail(parent_runs)
        # every test skipped says nothing of the change: this environment cannot run them (issue 35)
        v.reason = "tests_skipped" if ALL_SKIPPED in v.detail else "passes_without_change"
        if v.reason == "passes_without_change":
            v.skip_reasons = _skip_counts(parent_runs[-1]) if parent_runs else {}
        uncollected = _uncollected(parent_runs)
        if uncollected:  # their tests never ran: "all N passed" alone read as if the commit's tests had
            v.detail += f"; not collected at the parent, so never run: {', '.join(uncollected)}"
    elif not red:
        v.reason = "flaky"
        v.detail = f"{len(ever_failed)} test(s) failed in some parent runs but not all, e.g. {ever_failed[0]}"
    elif commit_runs and all(v.excluded.get(i) == "flaky" for i in red):
        v.reason = "flaky"
        v.detail = f"every red test varied at the commit, e.g. {red[0]}; {counts}"
    else:
        v.reason = "reference_fails"
        failing = [i for i in red if any(x != _PASS for x in _states(commit_runs, i))] or red
        v.detail = f"{len(failing)} red test(s) do not pass at the commit, e.g. {failing[0]}"
        errs = _uncollected(commit_runs)
        if errs:
            v.detail += f" (collection errors: {', '.join(errs)})"
    if v.reason in ("reference_fails", "passes_without_change", "tests_skipped") and v.missing_modules:
        v.detail += f"; the environment lacks module(s): {', '.join(v.missing_modules)}"
    return v


def verify_candidate(
    repo: Path,
    *,
    commit: str,
    parent: str,
    test_files: Sequence[str],
    runnable_tests: Sequence[str],
    test_cmd: str,
    setup_cmd: str | None,
    stability_runs: int = 3,
    run_timeout_s: float = 600,
    test_timeout_s: float | None = None,
    memory_mb: float | None = TEST_MEMORY_MB,
    write_mb: float | None = TEST_WRITE_MB,
    work_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    sandbox: str = "none",
    network: TestNetwork | None = None,
    deadline: float | None = None,
    parent_floor_s: float = HANG_FLOOR_S,
    parent_probe_s: float = PARENT_PROBE_S,
    journal: RunJournal | None = None,
) -> Verification:
    """Verify that the commit's tests go red→green, stably.

    Parent state: a snapshot of ``parent`` plus the commit's version of ``test_files`` (the
    :func:`make_test_patch` patch applied, so deleted test files are removed). Commit state: a
    snapshot of ``commit``. Each run uses a fresh copy of its state, runs ``setup_cmd`` there (if
    any), then ``test_cmd``, at most ``stability_runs`` times per state, on the schedule of the
    module docstring: the first run of each state on ``runnable_tests``, the others on the
    FAIL_TO_PASS candidates' node ids (commit runs: also the ids that failed in every commit run so
    far; ``{junit}`` commands: always the files).
    Runs stop early as soon as no id can end up in FAIL_TO_PASS any more (e.g. after the first
    parent run when nothing failed and nothing failed to collect: ``passes_without_change``).

    ``run_timeout_s``: seconds per setup or test-command run; a test run that hits it drops the
    candidate as ``timeout``, a setup that fails or hits it as ``setup_failed``.
    ``test_timeout_s``: seconds per test (pytest-timeout). ``memory_mb``: MiB of address space per test
    process (``max_test_memory_mb``). ``write_mb``: MiB a test process may write (``max_test_write_mb``,
    :func:`~pytest_homefield.sandbox.testrun.run_tests`): a run stopped for its writes drops the
    candidate as ``writes_over_cap``. ``work_root``: where the temporary
    folders go (default: the temp dir); all are removed afterwards. ``env``: base environment for
    setup and tests (default ``os.environ``). ``log_dir``: keep ``<state>-<k>/`` folders with
    ``setup.log``, ``tests.log`` and ``outcomes.jsonl`` there (default: discarded). ``sandbox``:
    ``"bwrap"`` runs each test run in bubblewrap (no network, the copy read-only; see
    :func:`pytest_homefield.sandbox.testrun.run_tests`), ``"none"`` as it is. ``network``: the
    services and ports of the test runs (a service that cannot be had drops the candidate as
    ``setup_failed`` with its log's last lines). A dropped candidate whose sandboxed runs could not
    connect gets :attr:`Verification.network_hint`, also appended to its detail.

    Parent runs are bounded by the commit's time (the module docstring): parent run 1 by
    ``parent_probe_s`` until commit run 1 has been timed, then every parent run by
    :func:`~pytest_homefield.sandbox.limits.hang_bound_s` of commit run 1's seconds, at least
    ``parent_floor_s`` (s; both capped by ``run_timeout_s``). ``deadline``: a wall-clock time
    (``time.time()``, s) no setup or test run outlives (``--time-budget``). ``journal``: the candidate's
    :class:`~pytest_homefield.mine.run_journal.RunJournal`: each parent or commit run that finished is kept
    there, and one it already holds (a verification stopped before) is read back instead of made
    (:attr:`Verification.resumed_runs`); twin runs are always made.

    Raises ``SnapshotError`` when ``parent`` or ``commit`` cannot be read from ``repo``,
    ``ValueError`` for an unparseable ``test_cmd`` and :class:`DeadlineReached` when ``deadline``
    cut a run (the temporary folders are removed first); every other problem is a drop reason.
    """
    runs_n = max(1, int(stability_runs))
    root = hf_mkdtemp(work_root)
    logs = Path(log_dir) if log_dir is not None else root / "logs"
    setup_s = {"parent": 0.0, "commit": 0.0}
    gold_patch = ""  # the commit's changes but its test files, applied after setup_cmd in every commit run
    gold_files: list[str] = []  # the files it changes
    held_back: set[str] = set()  # those the commit runs leave as the parent has them, as grading does (nu38)
    can_select = "{junit}" not in test_cmd  # JUnit ids (classname::name) cannot be given back as targets
    try:
        parent_base = make_snapshot(repo, parent, dest=Path(tempfile.mkdtemp(dir=root)), init_git=False)
        before = parent_tests(parent_base, test_files)  # the cycles' "new in the commit" (grading's too)
        parent_text = ParentText(parent_base).load()  # the fallback twins' values (read before it is removed)
        try:
            apply_patch(parent_base, make_test_patch(repo, parent, commit, test_files))
        except PatchError as exc:
            return Verification(reason="setup_failed", detail=f"the commit's test files do not apply: {exc}")

        def whole_setup(tree: Path) -> Setup:
            """pytest's configuration and rootdir for the task's whole run (its runnable test files) in ``tree``, as
            grading reads them (root47: the rootdir its node ids are relative to)."""
            return pytest_setup(tree, test_cmd, [], list(runnable_tests), env)

        def within(timeout: float, where: str) -> tuple[float, bool]:
            """``timeout`` (s) cut to what is left before ``deadline``, and whether it was cut; raises
            :class:`DeadlineReached` when nothing is left."""
            if deadline is None:
                return timeout, False
            left = deadline - time.time()
            if left <= 0:
                raise DeadlineReached(where)
            return (left, True) if left < timeout else (timeout, False)

        def one_run(base: Path, state: str, k: int, select: Sequence[str] | None,
                    name: str = "", prepare: Callable[[Path], tuple[list[str], Setup | None]] | None = None,
                    timeout_s: float | None = None, seals: SealScope | None = None,
                    plugins: Sequence[str] = ()) -> TestRun | Verification:
            kept = journal is not None and prepare is None  # twin runs are drawn afresh: never kept
            if kept and journal is not None:
                earlier = journal.get(name or f"{state}-{k}", select, timeout_s)
                if earlier is not None:
                    setup_s[state] += earlier[1]
                    return earlier[0]
            out = logs / (name or f"{state}-{k}")
            out.mkdir(parents=True, exist_ok=True)
            wd = copy_tree(base, Path(tempfile.mkdtemp(dir=root)))
            try:
                limit, cut = within(run_timeout_s, f"the setup at the {state}")
                setup = run_setup(
                    wd, setup_cmd, env=scrubbed_env(wd, env), timeout_s=limit, log_path=out / "setup.log"
                )
                setup_s[state] += setup.wall_s
                if setup.timed_out and cut:
                    raise DeadlineReached(f"the setup at the {state}", setup.wall_s)
                if setup.timed_out or setup.exit_code != 0:
                    how = (
                        f"timed out after {run_timeout_s:g} s" if setup.timed_out else f"exit status {setup.exit_code}"
                    )
                    line = setup_error_line(out / "setup.log")
                    said = f": {line}" if line else ""
                    return Verification(reason="setup_failed", detail=f"setup_cmd failed at the {state} ({how}){said}")
                if state == "commit":  # as grading builds it: the parent after setup_cmd, then the change (nu22)
                    try:  # as grading carries it: without the test configuration it changes (nu38)
                        held_back.update(_apply_as_graded(wd, gold_patch, gold_files, test_files,
                                                          Path(tempfile.mkdtemp(dir=root)), test_cmd,
                                                          list(runnable_tests)))
                    except PatchError as exc:
                        return Verification(reason="setup_failed", detail="the commit's changes do not apply to the "
                                            f"parent after setup_cmd, as grading applies them: {exc}")
                    except nofollow.LinkInTheWay as exc:
                        return Verification(reason="setup_failed", detail=_linked(state, exc))
                config: Setup | None = None  # pytest's configuration for the run, read by ``prepare`` (twin43)
                if prepare is not None:
                    try:
                        targets, config = prepare(wd)
                    except nofollow.LinkInTheWay as exc:
                        return Verification(reason="setup_failed", detail=_linked(state, exc))
                elif select is not None:  # the ids from pytest's rootdir for the whole run, read once (root47)
                    config = whole_setup(wd)
                    targets = _targets(select, broken[state], config.rootdir)
                else:
                    targets = list(runnable_tests)
                where = run_phrase(name or f"{state}-{k}")
                try:
                    # the run's memory reserved first, its wait bounded by the deadline, and the run's time what is
                    # left after it (run_tests' own reservation draws from this one): other sessions' sandboxes
                    # holding the machine's memory pushed a run past the deadline by their whole runs (nu48: an 8m
                    # budget ended at 9m54s)
                    with reserve(run_reservation_mb(sandbox, memory_mb, network), until=deadline):
                        limit, cut = within(timeout_s or run_timeout_s, where)
                        r = run_tests(
                            wd,
                            test_cmd,
                            targets,
                            out_dir=out,
                            timeout_s=limit,
                            test_timeout_s=test_timeout_s,
                            env=env,
                            sandbox=sandbox,
                            network=network,
                            memory_mb=memory_mb,
                            write_mb=write_mb,
                            seals=seals,
                            plugins=plugins,
                            whole=list(runnable_tests),  # conf42: the configuration of the whole run, every run
                            setup=config,
                        )
                except BudgetWaitExpired:
                    raise DeadlineReached(where) from None
                except ServiceError as exc:
                    return Verification(reason="setup_failed", detail=str(exc))
                if r.over_writes:  # nothing but the repository's own code ran: a real, if odd, repository
                    return Verification(reason="writes_over_cap", detail=(
                        f"in {where}: {r.over_writes}; the repository's own tests at the {state} write this much "
                        f"(a real, if odd, repository: raise {option('max-test-write-mb', 'cli')} to keep such "
                        "commits)"))
                if r.over_events:  # the repository's own tests report more than one run may: none is read whole
                    return Verification(reason="setup_failed", detail=(
                        f"in {where}: {r.over_events}; the repository's own tests at the {state} report this much"))
                if r.timed_out and cut:
                    raise DeadlineReached(where, r.wall_s)
                r = r if select is None else dataclasses.replace(r, selected=frozenset(select))
                if kept and journal is not None:  # finished whole: kept for a verification stopped later
                    journal.put(name or f"{state}-{k}", select, timeout_s, r, setup.wall_s)
                return r
            finally:
                shutil.rmtree(wd, ignore_errors=True)

        def run(base: Path, state: str, k: int, select: Sequence[str] | None, name: str = "") -> TestRun | Verification:
            """Run ``k`` of ``state``, limited to ``select`` (``None``: the whole files). A targeted run
            that did not report a selected id whose module reported no collection error (an id pytest
            cannot address, a rootdir other than the copy) is made again in full, so targeting never
            loses a task."""
            if select is not None and (not can_select or len(select) > MAX_SELECTED):
                select = None
            bound = parent_bound_s() if state == "parent" else None
            r = one_run(base, state, k, select, timeout_s=bound, name=name)
            if isinstance(r, TestRun):
                broken[state].update(r.collection_errors)
            # a module that fails to import reports its collection error: its ids are absent for a reason
            if (select is not None and isinstance(r, TestRun) and not r.timed_out
                    and any(i not in r.outcomes and i.split("::", 1)[0] not in r.collection_errors for i in select)):
                r = one_run(base, state, k, None, name=f"{name or f'{state}-{k}'}-full", timeout_s=bound)
            if (isinstance(r, TestRun) and state == "parent" and r.timed_out and commit_runs
                    and bound is not None and bound < run_timeout_s):
                r = note_bounded(r, k, bound)  # the commit's tests finish: the parent hangs
            return r

        parent_runs: list[TestRun] = []
        commit_runs: list[TestRun] = []
        # modules that failed to collect in a run of each state: later targeted runs name them as paths,
        # since pytest given the ids of a module that cannot import stops the whole run (exit 4)
        broken: dict[str, set[str]] = {"parent": set(), "commit": set()}
        bounded: list[str] = []  # one phrase per parent run stopped at the bound
        unclassified: list[TestRun] = []  # parent run 1 cut at the probe and not classified: time and runs count

        def parent_bound_s() -> float:
            """Seconds for a parent run: :data:`~pytest_homefield.sandbox.limits.HANG_FACTOR` × commit run 1's, at least
            ``parent_floor_s``, once commit run 1 finished; ``parent_probe_s`` before; never above the
            run timeout. A parent that hangs where the commit's tests finish (the bug the commit fixes
            may be a hang) does not hold a worker for the whole run timeout."""
            if not commit_runs:
                return min(run_timeout_s, parent_probe_s)
            if commit_runs[0].timed_out:
                return run_timeout_s
            return hang_bound_s(commit_runs[0].wall_s, run_timeout_s, floor_s=parent_floor_s)

        def note_bounded(r: TestRun, k: int, bound: float) -> TestRun:
            """A parent run stopped at the commit's bound: noted for the detail, and :func:`_cut_short`."""
            limit = parent_bound_s()
            past = f", past the bound of {limit:.0f} s" if round(limit) < round(bound) else ""
            bounded.append(f"parent run {k} stopped at {bound:.0f} s{past} ({HANG_FACTOR:g}× commit run 1's "
                           f"{commit_runs[0].wall_s:.1f} s, at least {parent_floor_s:g} s)")
            return _cut_short(r)

        def rest_of_probe(probe: TestRun) -> TestRun | Verification:
            """Parent run 1 when its probe was cut at ``parent_probe_s`` and commit run 1 says the suite is slow,
            not hung (the bound is above the probe): what the probe reported stands, but for its ``error`` ids (the
            test in progress when it was killed reports ``error``), and only the ids commit run 1 named that the
            probe did not report run again, under the bound (``parent-1-rest``); the two are parent run 1, one
            run of the whole files. A probe that reported nothing (cut while collecting), or a rest run made
            again in full, is replaced: parent run 1 again on the whole files, under the bound."""
            kept = {i: o for i, o in probe.outcomes.items() if o != "error"}
            if not kept:
                unclassified.append(probe)
                return run(parent_base, "parent", 1, None, name="parent-1-bounded")
            rest = [i for i in commit_runs[0].outcomes if i not in kept]
            if not rest:
                return with_probe(probe, kept, None)
            r = run(parent_base, "parent", 1, rest, name="parent-1-rest")
            if isinstance(r, Verification) or r.selected is None:  # a full rerun replaced the rest
                unclassified.append(probe)
                return r
            return with_probe(probe, kept, r)

        def passes_early(probe: TestRun, commit_base: Path) -> Verification | tuple[str, TestRun] | None:
            """Parent run 1 cut at the probe with nothing seen failing (perf46; the module docstring, "Passing
            without change, decided early"): commit run 1 capped at ``cap`` (s), :data:`~pytest_homefield.sandbox.
            limits.HANG_FACTOR` times which covers the whole parent by the probe's pace (× :data:`EARLY_MARGIN`) and
            the probe, at most the run timeout; cut there, the parent once more in full under ``HANG_FACTOR × cap``.
            The verdict ``passes_without_change`` when that run finished with no test failing and no collection
            error; ``("commit", run)`` when the capped run finished (it is commit run 1), ``("parent", run)`` when
            the parent's full run finished with a failure or a collection error (it is parent run 1); ``None``: the
            schedule goes on as before (nothing decided here, the runs made are counted)."""
            kept = {i: o for i, o in probe.outcomes.items() if o != "error"}  # "error": the test it was killed in
            if not kept or not probe.collected or probe.collection_error or FAILING & set(kept.values()):
                return None
            # never above run_timeout_s / HANG_FACTOR: a commit run 1 longer than that gives the parent the whole run
            # timeout, the most the schedule ever gives it (a probe that saw few tests under load guesses high)
            whole = probe.wall_s * probe.collected / len(kept) * EARLY_MARGIN
            cap = min(run_timeout_s, max(parent_probe_s, whole)) / HANG_FACTOR
            capped = one_run(commit_base, "commit", 1, None, name="commit-1-capped", timeout_s=cap)
            if isinstance(capped, Verification):
                return _with_times(capped, setup_s, parent_runs, commit_runs, [*unclassified, probe], journal)
            if not capped.timed_out:
                broken["commit"].update(capped.collection_errors)
                return "commit", capped
            setup_s["commit"] += capped.wall_s  # not classified: its seconds count
            # commit run 1 takes over cap s: its bound is at least HANG_FACTOR × cap, so a parent finishing within
            # that would finish under the bound the old schedule gives it, and the probe was no hang
            bound = min(run_timeout_s, HANG_FACTOR * cap)
            rest = rest_of_collected(probe, kept) if can_select else None
            again: TestRun | Verification | None = None
            if rest:  # perf47: only the ids the probe did not reach, as parent-1-rest runs them
                again = one_run(parent_base, "parent", 1, rest, name="parent-1-again-rest", timeout_s=bound)
                if isinstance(again, TestRun) and not again.timed_out and any(
                        i not in again.outcomes and i.split("::", 1)[0] not in again.collection_errors for i in rest):
                    unclassified.append(again)  # an id it could not address: the whole files instead
                    again = None
            if again is None and rest != []:
                again = one_run(parent_base, "parent", 1, None, name="parent-1-again", timeout_s=bound)
            if isinstance(again, Verification):
                return _with_times(again, setup_s, parent_runs, commit_runs, [*unclassified, probe], journal)
            if again is not None:
                broken["parent"].update(again.collection_errors)
                if again.timed_out:  # slower than the probe's pace said: as before, commit run 1 decides the bound
                    unclassified.append(again)
                    return None
            if again is None or again.selected is not None:  # the probe's reports stand, and the rest's
                again = with_probe(probe, kept, again)
            else:  # the whole files once more: parent run 1 alone
                unclassified.append(probe)
            parent_runs.append(again)
            if again.collection_error or FAILING & set(again.outcomes.values()):
                return "parent", again
            return done()

        def rest_of_collected(probe: TestRun, kept: Mapping[str, str]) -> list[str] | None:
            """The ids the probe collected (the reporter's ``collected_ids``, in collection order) that it did not
            report but ``error`` (perf47), when it named all it collected and every id it reported is one of them
            and there are at most :data:`MAX_SELECTED`; else ``None`` (the whole files are run)."""
            ids = probe.collected_ids
            if ids is None or not set(kept) <= set(ids):
                return None
            rest = [i for i in ids if i not in kept]
            return rest if len(rest) <= MAX_SELECTED else None

        def with_probe(probe: TestRun, kept: Mapping[str, str], r: TestRun | None) -> TestRun:
            """The probe's reports (but ``error``: ``kept``) and run ``r`` of the ids it did not reach, as one run of
            the whole files (``selected``: every id collected); ``r`` ``None``: the probe reported every id. Parent
            run 1 of :func:`rest_of_probe` (``parent-1-rest``) and of :func:`passes_early` (``parent-1-again-rest``)."""
            if r is None:
                return dataclasses.replace(probe, outcomes=dict(kept), timed_out=False, error=None,
                                           selected=frozenset(kept), finished=True)
            return dataclasses.replace(
                r, outcomes={**kept, **r.outcomes}, selected=(r.selected or frozenset()) | frozenset(kept),
                wall_s=probe.wall_s + r.wall_s, collected=probe.collected, collected_ids=probe.collected_ids,
                collection_error=probe.collection_error or r.collection_error,
                collection_errors={**probe.collection_errors, **r.collection_errors},
                skip_reasons={**probe.skip_reasons, **r.skip_reasons}, stop_lines={**probe.stop_lines, **r.stop_lines},
                peak_mb=peak_of([probe, r]))

        own = own_top_levels(repo, parent, commit)

        stubbed: set[str] = set()  # the candidates the stubbed parent run passed (ms35)

        def done() -> Verification:
            v = _with_times(classify_runs(parent_runs, commit_runs, own_modules=own), setup_s, parent_runs,
                            commit_runs, unclassified, journal)
            if v.reason is None and stubbed & set(v.FAIL_TO_PASS):
                v = without_stubbed(v, stubbed)
            if v.reason is not None and held_back:
                v.detail += (f"{HELD_BACK}{', '.join(sorted(held_back))}: test configuration, which grading "
                             "carries from no change, the reference fix's neither")
            left = deselected_tests([*parent_runs, *commit_runs], test_files, v)
            if v.reason is None and left:  # bld62: some of the commit's tests deselected, the task keeps the rest
                counts = _kept_detail(v)
                v.excluded.update(dict.fromkeys(left, "deselected"))
                tree = parent_base if parent_base.is_dir() else commit_base  # the parent's removed by now
                # the counts again, what the detail said after them kept (without_stubbed's note)
                said = _kept_detail(v) + v.detail.removeprefix(counts) if v.detail.startswith(counts) else v.detail
                v.detail = said + deselected_note(left, selecting_words(whole_setup(tree), test_cmd))
            if v.reason == "passes_without_change" and not any(r.outcomes for r in parent_runs):
                picked = selecting_words(whole_setup(parent_base), test_cmd)
                if picked:  # ops61: the repository's own -m/-k/--deselect left the commit's tests out
                    v.detail += (f"{DESELECTED}{shlex.join(picked)}): the commit's tests it deselects never run when "
                                 "mined, so they make no task")
            built = compiled_sources(gold_files) if setup_cmd and v.reason == "reference_fails" else []
            if built:  # ops61: the parent's build, then the change, as grading builds an agent's copy
                v.detail += (f"{BUILT_BEFORE}{', '.join(built[:3])}{' …' if len(built) > 3 else ''} never reaches "
                             "the tests (grading builds no change either)")
            if bounded:
                v.parent_bound = f"{bounded[0]}: the parent hangs where the commit's tests finish" + (
                    f" ({len(bounded)} parent runs)" if len(bounded) > 1 else "")
                if v.reason in ("timeout", "passes_without_change", "tests_skipped"):
                    # nothing was seen red: the runs were cut before any test of the commit failed
                    v.reason, v.detail = "timeout", f"{bounded[0]}; no test was seen failing before it"
                else:
                    v.detail += f"; {v.parent_bound}"
            return _with_network_hint(v, [*parent_runs, *commit_runs])

        # parent run 1, whole files: which ids are red (bounded by the probe: the commit's time is not known yet)
        probe_s = parent_bound_s()
        r = run(parent_base, "parent", 1, None)
        if isinstance(r, Verification):
            return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
        probe = r if r.timed_out else None  # cut: the commit's time says whether it hangs
        if probe is None:
            parent_runs.append(r)
            # a collection error hides ids that only the commit runs will name: keep going then
            if not (r.collection_error or _red_ids(parent_runs, _all_ids(parent_runs))):
                return done()
        # commit run 1, whole files: which red ids turn green, and PASS_TO_PASS
        # the commit's state as grading builds the reference fix's: the parent (with the commit's test files)
        # after setup_cmd, then the commit's other changes (one_run); never the commit's own tree set up, whose
        # setup_cmd output (a compiled .mo, a built extension) grading's copy would not have (nu22: humanize's
        # oracle solved 28 of 36, the four tasks changing a .po file failing at grading)
        gold_files = gold_paths(repo, parent, commit, test_files)
        gold_patch = _diff(Path(repo), parent, commit, gold_files)
        commit_base = copy_tree(parent_base, Path(tempfile.mkdtemp(dir=root)))
        first: TestRun | None = None  # commit run 1 when the capped one finished (perf46)
        if probe is not None and probe_s < run_timeout_s:
            early = passes_early(probe, commit_base)
            if isinstance(early, Verification):
                return early
            if early is not None and early[0] == "commit":
                first = early[1]
            elif early is not None:  # the parent's run finished, and something failed: parent run 1 (kept there)
                probe = None
        r = first if first is not None else run(commit_base, "commit", 1, None)
        if isinstance(r, Verification):
            return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
        commit_runs.append(r)
        if probe is not None and r.timed_out:
            unclassified.append(probe)  # the commit timed out too: that is the timeout to report, not classified
        if probe is not None and not r.timed_out:
            bound = parent_bound_s()
            if bound > probe_s:  # a slow suite, not a hang: parent run 1 goes on from where the probe stopped
                r = rest_of_probe(probe)
                if isinstance(r, Verification):
                    return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
                parent_runs.append(r)
            elif bound < run_timeout_s:  # the parent ran past the bound: it hangs
                parent_runs.append(note_bounded(probe, 1, probe_s))
            else:  # no bound below the run timeout: a timeout
                parent_runs.append(probe)
        if commit_runs[0].timed_out or parent_runs[0].timed_out:
            return done()
        # parent runs 2..N: the FAIL_TO_PASS candidates, and the ids a bounded run did not reach (first)
        for k in range(2, runs_n + 1):
            standing = f2p_candidates(parent_runs, commit_runs)
            todo = [*unreached(parent_runs, commit_runs), *standing]
            if not todo:
                return done()
            r = run(parent_base, "parent", k, todo)
            if isinstance(r, Verification):
                return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
            parent_runs.append(r)
            if r.timed_out:
                return done()
        # commit runs 2..N: the candidates, and the ids that failed in every commit run so far
        for k in range(2, runs_n + 1):
            standing = f2p_candidates(parent_runs, commit_runs)
            if not standing:
                break
            r = run(commit_base, "commit", k, sorted({*standing, *commit_failures(parent_runs, commit_runs)}))
            if isinstance(r, Verification):
                return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
            commit_runs.append(r)
            if r.timed_out:
                break
        # the stubbed parent run (ms35), after every run of both states: the candidates still standing once more at
        # the parent, every name the copy's modules lack a dummy
        standing = f2p_candidates(parent_runs, commit_runs)
        if standing and can_select and not any(r.timed_out for r in commit_runs):
            r = one_run(parent_base, "parent", 1, standing, name="parent-stubbed", timeout_s=parent_bound_s(),
                        plugins=(STUB_PLUGIN,))
            if isinstance(r, Verification):
                return _with_times(r, setup_s, parent_runs, commit_runs, unclassified, journal)
            setup_s["parent"] += r.wall_s
            stubbed.update(i for i in standing if r.outcomes.get(i) == "passed")
        shutil.rmtree(parent_base, ignore_errors=True)
        v = done()
        if v.reason is None and can_select:
            def twin_run(forced: set[str], k: int) -> tuple[TestRun | Verification, CanaryPlan]:
                """The targeted twin runs of one plan (whole files for a run that lost an id), merged."""
                plan = TwinPlan(seed=secrets.randbits(32))
                runs: list[TestRun] = []

                def preparer(n: int, whole: bool) -> Callable[[Path], tuple[list[str], Setup | None]]:
                    def prepare(wd: Path) -> tuple[list[str], Setup | None]:
                        nonlocal plan
                        if n == 0 and not whole:
                            plan = plan_twins(wd, v.FAIL_TO_PASS, seed=plan.seed, sentinel_for=forced,
                                               parent=before, parent_text=parent_text,
                                               pass_to_pass=v.PASS_TO_PASS,  # ids from pytest's rootdir (root47)
                                               rootdir=whole_setup(wd).rootdir, teardown=True,
                                               hidden=test_files)
                        # the group functions and the teardown canary (tcan50), from the tree's top (root47)
                        targets = [*runnable_tests] if whole or not plan.placement else \
                            [plan.target(s) for s in [*plan.selectors(), *teardown_nodes(plan)]]
                        # softened as every canary run's files (twin37, grading's twin_grading._fresh_copies), by
                        # the configuration pytest reads for the task's whole run, the one every run is pinned to
                        # (soft41, conf42): read once, for its files and its pin (twin43)
                        config = pytest_setup(wd, test_cmd, targets, list(runnable_tests), env)
                        for rel, data in softened_files(plan.runs[n] if n < len(plan.runs) else {}, wd,
                                                        test_cmd, list(runnable_tests), plan.selectors(),
                                                        config).items():
                            _write_into(wd, rel, data)
                        return targets, config
                    return prepare

                n = 0
                # the plan's runs (it is made by the first): one more with a teardown twin (tdtwin56)
                while n == 0 or n < len(plan.runs):
                    n += 1
                    # the configuration's -k and -m dropped (mark58): the teardown canaries' drawn names and marks
                    # deselected them; the ids select
                    r = one_run(commit_base, "commit", k, None, name=f"canaries-{k}-{n}",
                                prepare=preparer(n - 1, False), plugins=(SELECTION_PLUGIN,))
                    if not isinstance(r, TestRun):
                        return r, plan
                    ran = {function_id(i) for i in r.outcomes}  # every group function reports (twin or original)
                    if not r.timed_out and plan.placement and any(f not in ran and f.split("::", 1)[0] not in
                                                             r.collection_errors for f in plan.selectors()):
                        r = one_run(commit_base, "commit", k, None, name=f"canaries-{k}-{n}-full",
                                    prepare=preparer(n - 1, True), plugins=(SELECTION_PLUGIN,))
                        if not isinstance(r, TestRun):
                            return r, plan
                    runs.append(r)
                    if r.timed_out:
                        break
                merged = plan.merge([r.outcomes for r in runs], v.FAIL_TO_PASS, [r.caught for r in runs])
                return dataclasses.replace(runs[-1], outcomes=merged, wall_s=sum(r.wall_s for r in runs),
                                           timed_out=any(r.timed_out for r in runs), peak_mb=peak_of(runs)), plan

            check = check_twins(v.FAIL_TO_PASS, twin_run)
            if isinstance(check, Verification):
                return check
            v.commit_s += check.seconds
            v.peak_mb = max((p for p in (v.peak_mb, check.peak_mb) if p is not None), default=None)
            if check.reason is not None:
                return dataclasses.replace(v, reason=check.reason, detail=check.detail)
            v.canaries, v.canary_sentinels, v.canary_order = check.canaries, check.sentinels, check.order
            v.canary_unprotected = check.unprotected
            v.canary_teardown = check.teardown
            v.twin_runs = check.at_once
            # the sealed sites the reference fix passes sealed (contracts §7 "Sealed sites"): one more targeted run
            try:
                # the ids from pytest's rootdir for the whole run (seal47), as grading's _sealed_first reads them
                rootdir = whole_setup(commit_base).rootdir
                sites = sealable_sites(commit_base, test_files, v.FAIL_TO_PASS, before, rootdir)
                sealed, ids = sealed_files(commit_base, sites, test_files) if sites else ({}, {})
                # as grading's sealed run: no hidden data file of the commit (sealed_grading.plan_seals)
                sealed = {**withheld_data(commit_base, test_files, before), **sealed} if sites else sealed
            except (OSError, ValueError):
                sites = None
            if sites == []:
                v.sealed_sites, v.sealed_rules = [], SEAL_RULES
            elif sites:
                def seal_prepare(wd: Path) -> tuple[list[str], Setup | None]:
                    for rel, data in sealed.items():
                        _write_into(wd, rel, data)
                    return list(runnable_tests), None  # the test files whole, as grading's sealed run selects them

                r = one_run(commit_base, "commit", 1, None, name="sealed", prepare=seal_prepare,
                            seals=SealScope({sid: site.expectation() for sid, site in ids.items()}))
                if isinstance(r, TestRun) and r.finished and not r.timed_out:  # else: None, grading checks
                    v.sealed_sites = passing_sites(ids, v.FAIL_TO_PASS, r.outcomes, r.seal_reports)
                    v.sealed_rules = SEAL_RULES
                    v.commit_s += r.wall_s
        return v
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _kept_detail(v: Verification) -> str:
    """The detail of a kept candidate ``v``: its FAIL_TO_PASS, PASS_TO_PASS and excluded counts, and how many of
    its FAIL_TO_PASS ids were red by an import error at the parent, e.g.
    ``FAIL_TO_PASS 2, PASS_TO_PASS 0, excluded 39 (2 red by import error at the parent)``."""
    detail = f"FAIL_TO_PASS {len(v.FAIL_TO_PASS)}, PASS_TO_PASS {len(v.PASS_TO_PASS)}, excluded {len(v.excluded)}"
    if v.red_by_import_error:
        detail += f" ({len(v.red_by_import_error)} red by import error at the parent)"
    return detail


def without_stubbed(v: Verification, stubbed: Collection[str]) -> Verification:
    """``v`` (a task) with the FAIL_TO_PASS ids in ``stubbed`` (passed at the parent in the stubbed parent run,
    docs/contracts.md §7 "Red only for a missing name") moved to ``excluded`` as ``passes_with_stub``; when none is
    left, dropped as ``passes_without_change`` with the detail saying so."""
    gone = [i for i in v.FAIL_TO_PASS if i in stubbed]
    v.FAIL_TO_PASS = [i for i in v.FAIL_TO_PASS if i not in stubbed]
    v.excluded.update({i: "passes_with_stub" for i in gone})
    v.red_by_import_error = [i for i in v.red_by_import_error if i not in stubbed]
    if v.FAIL_TO_PASS:
        # the counts again, after the move: the detail said "FAIL_TO_PASS 41, excluded 0" of a task that kept 2
        # and excluded 39 (pallets/itsdangerous 7f4dcf83a07b, nu36)
        v.detail = (f"{_kept_detail(v)}; {len(gone)} red only for a missing name "
                    "(passed at the parent with every one a dummy)")
        return v
    v.PASS_TO_PASS = []
    v.reason = "passes_without_change"
    v.detail = (f"every one of {len(gone)} FAIL_TO_PASS candidate(s) passed at the parent once every name its "
                "modules lack was a dummy (the stubbed parent run): red only for a missing name")
    return v


def _with_network_hint(v: Verification, runs: Sequence[TestRun]) -> Verification:
    """``v`` with :attr:`Verification.network_hint` (and its detail extended) when it is dropped and
    the logs of its sandboxed runs (no network there) show connections the tests could not make,
    or (Landlock runs) ``multiprocessing`` locks they could not make; and its detail extended when they show writes
    into the read-only tree (:func:`~pytest_homefield.sandbox.nethint.read_only_hint`, nu48)."""
    if v.reason is None:
        return v
    hints = [network_hint([r.log_path for r in runs if r.sandbox != "none"]),
             semaphore_hint([r.log_path for r in runs if r.sandbox == "landlock"])]
    hint = "; ".join(h for h in hints if h)
    if hint:
        v.network_hint = hint
        v.detail = f"{v.detail}; {hint}" if v.detail else hint
    # the detail only: the summary's Network: line counts network_hint as connection errors
    tree = read_only_hint([r.log_path for r in runs if r.sandbox in ("bwrap", "landlock")])
    if tree:
        v.detail = f"{v.detail}; {tree}" if v.detail else tree
    return v


def _with_times(
    v: Verification, setup_s: Mapping[str, float], parent_runs: Sequence[TestRun], commit_runs: Sequence[TestRun],
    unclassified: Sequence[TestRun] = (), journal: RunJournal | None = None,
) -> Verification:
    """``v`` with ``parent_s``/``commit_s`` = setup plus test seconds and ``runs`` filled in
    (``unclassified``: parent runs made but not classified, e.g. parent run 1 cut at the probe and made again),
    and ``resumed_runs`` (the runs ``journal`` gave back)."""
    v.parent_s = setup_s["parent"] + sum(r.wall_s for r in [*parent_runs, *unclassified])
    v.commit_s = setup_s["commit"] + sum(r.wall_s for r in commit_runs)
    v.runs = len(parent_runs) + len(commit_runs) + len(unclassified)
    v.resumed_runs = journal.resumed if journal is not None else 0
    v.peak_mb = peak_of([*parent_runs, *commit_runs, *unclassified], v.peak_mb)
    return v


_DIFF_ARGS = (
    "diff",
    "--binary",
    "--no-renames",
    "--full-index",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--submodule=short",
)


_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


def _not_utf8(text: str) -> bool:
    """``text`` came from undecodable bytes (surrogate escapes)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _diff(repo: Path, parent: str, commit: str, paths: Sequence[str]) -> str:
    """The diff of ``paths``, always valid UTF-8 text: a file whose text diff is not UTF-8 (a
    Latin-1 fixture, say) is diffed as binary (base85 ``GIT binary patch``) instead, so the patch
    survives JSON and applies byte for byte."""
    if not paths:
        return ""
    text = git(*_DIFF_ARGS, parent, commit, "--", *paths, cwd=repo, env=_LITERAL)
    if not _not_utf8(text):
        return text
    old, new = (git("rev-parse", "--verify", f"{c}^{{commit}}", cwd=repo).strip() for c in (parent, commit))
    parts = []
    with borrowed_gitdir(repo, "* -diff\n") as gitdir:
        for path in paths:
            one = git(*_DIFF_ARGS, old, new, "--", path, cwd=repo, env=_LITERAL)
            if _not_utf8(one):
                one = git(*_DIFF_ARGS, old, new, "--", path, cwd=repo, env={**_LITERAL, "GIT_DIR": str(gitdir)})
            parts.append(one)
    return "".join(parts)


def make_test_patch(repo: Path, parent: str, commit: str, test_files: Sequence[str]) -> str:
    """Binary-safe unified diff (``git diff --binary --no-renames --full-index``) of ``test_files``
    from ``parent`` to ``commit``; ``""`` when there are none. Applies with :func:`apply_patch`.
    Always valid UTF-8 (see :func:`_diff`). Raises ``SnapshotError`` for unknown commits."""
    return _diff(Path(repo), parent, commit, sorted(set(test_files)))


def gold_paths(repo: Path, parent: str, commit: str, test_files: Sequence[str]) -> list[str]:
    """The files (sorted) that :func:`make_gold_patch` changes: every file changed from ``parent`` to ``commit``
    but ``test_files`` and homefield's own folder. Raises ``SnapshotError`` for unknown commits."""
    changed = git("diff", "--name-only", "-z", "--no-renames", "--no-relative", parent, commit, cwd=Path(repo))
    tests = set(test_files)
    return sorted(p for p in changed.split("\0") if p and p not in tests and p.split("/", 1)[0] != HOMEFIELD_DIR)


def make_gold_patch(repo: Path, parent: str, commit: str, test_files: Sequence[str]) -> str:
    """Binary-safe unified diff of every file changed from ``parent`` to ``commit`` except
    ``test_files`` (docs/contracts.md §6 ``gold_patch``). Raises ``SnapshotError`` for unknown commits."""
    return _diff(Path(repo), parent, commit, gold_paths(repo, parent, commit, test_files))


#: What a ``passes_without_change`` detail says when no parent run saw a test and the repository's configuration or
#: the test command selects tests (:func:`selecting_words`), the words after it.
DESELECTED = "; the repository's configuration selects tests ("

#: What a kept task's detail says of the commit's tests its configuration deselected (bld62), the count after it.
LEFT_OUT_DESELECTED = "; left out, deselected by the repository's configuration"


def deselected_tests(runs: Sequence[TestRun], test_files: Collection[str], v: Verification) -> list[str]:
    """The ids of the commit's ``test_files`` (``/``-separated, relative to the root) that a selection left out of
    any of ``runs`` (their reporter's ``deselected``: the configuration's ``-m``, ``-k``, ``--deselect``) and that
    are in neither list of ``v`` nor excluded already, sorted: tests of the commit no mining run ever ran, so in no
    task (bld62: a commit deselecting one of its two new tests made a task of the other, the one silently absent)."""
    files = set(test_files)
    seen = {*v.FAIL_TO_PASS, *v.PASS_TO_PASS, *v.excluded}
    return sorted({i for r in runs for i in r.deselected if i.split("::", 1)[0] in files and i not in seen})


def deselected_note(ids: Sequence[str], picked: Sequence[str]) -> str:
    """The end of a kept task's detail naming the tests ``ids`` of the commit's test files its configuration
    deselected (``picked``: :func:`selecting_words`, shown when there are any), at most three by name, e.g. ``; left
    out, deselected by the repository's configuration (-m 'not slow'): 1 test of the commit's test files,
    tests/test_a.py::test_slow``."""
    words = f" ({shlex.join(picked)})" if picked else ""
    names = ", ".join(ids[:3]) + (" …" if len(ids) > 3 else "")
    tests = f"{len(ids)} test{'' if len(ids) == 1 else 's'}"
    return f"{LEFT_OUT_DESELECTED}{words}: {tests} of the commit's test files, {names}"


def selecting_words(setup: Setup, command: str) -> list[str]:
    """The words of ``setup``'s ``addopts`` and of the arguments ``command`` gives pytest (:meth:`Setup.args`) that
    select tests by mark, name or node id: ``-m``, ``-k``, ``--deselect`` each with its value (``-m 'not slow'``;
    ``-mslow``, ``--deselect=ID`` as given), in that order; ``[]`` with none."""
    words = [*setup.addopts, *setup.args(command)]
    picked: list[str] = []
    for i, word in enumerate(words):
        if word in ("-m", "-k", "--deselect"):
            picked += words[i:i + 2]
        elif word.startswith(("-m", "-k")) and word[2:3] not in ("", "-") or word.startswith("--deselect="):
            picked.append(word)
    return picked


#: What a dropped candidate's detail says when the commit runs left a file of the reference fix out
#: (:func:`_apply_as_graded`), the paths after it: no fault of the environment (the summary's hints skip it).
HELD_BACK = "; the commit runs left out its change to "


@dataclass(frozen=True)
class _Files:
    """What :func:`~pytest_homefield.run.carried.carried_changes` reads of a task, for a candidate."""

    test_files: Sequence[str]
    source_files: Sequence[str]


def _apply_as_graded(wd: Path, patch: str, paths: Sequence[str], test_files: Sequence[str],
                     scratch: Path, command: str | None = None, targets: Sequence[str] = ()) -> list[str]:
    """Apply the reference fix ``patch`` (changing ``paths``) to the copy ``wd`` as grading carries it into a
    grading copy (:func:`~pytest_homefield.run.carried.carried_changes`): each file it changes that grading
    leaves out of any change (test configuration: a ``pyproject.toml`` / ``setup.cfg`` whose pytest section
    changed, ``tox.ini``, ``pytest.ini``, a ``.pth`` …) is put back as ``wd`` had it. Returns those paths (sorted;
    ``[]``: the whole patch stands). ``scratch``: an empty folder for the earlier versions, removed here.
    nu38: pallets/click 777a89e232d5 registers the marker of its new tests in ``pyproject.toml`` under
    ``filterwarnings = error``; the commit runs passed with it, grading left it out and the oracle failed.
    ``command``: the test command; given, what a ``uv run`` one reads as its configuration is put back as grading
    holds it back (ops60: its env files, its script, the top's uv configuration; ``carried_changes``' ``command``),
    and a ``setup.py`` (or configuration file) the patch adds or deletes is put back too when it moves pytest's
    configuration or rootdir for ``targets`` (the runnable test files; gatk48,
    :func:`~pytest_homefield.run.carried.setup_moved`), as grading holds it back.
    Raises ``PatchError`` when the patch does not apply."""
    before = setup_for(Path(os.path.abspath(wd)), command, targets) if command is not None else None
    try:
        # every entry reached by folder descriptors, never through a link the commit's tree or its setup_cmd left
        # on the way (link48: before, a linked folder led the copies, the removal and the putting back outside wd)
        for rel in paths:
            if nofollow.kind_at(wd, rel) in ("file", "link"):
                nofollow.copy_entry(wd, rel, scratch)
        apply_patch(wd, patch)
        changes = {rel: ("added" if nofollow.kind_at(scratch, rel) is None
                         else "deleted" if nofollow.kind_at(wd, rel) is None else "modified") for rel in paths}
        carried, dropped, _ = carried_changes(changes, _Files(test_files, paths), scratch, wd, command=command)
        if before is not None and command is not None:  # gatk48: pytest's rootdir is the parent's, as at grading
            dropped += setup_moved(before, wd, carried, changes, command, targets)
        for rel in dropped:
            if nofollow.kind_at(wd, rel) in ("file", "link"):
                nofollow.remove(wd, rel)
            if nofollow.kind_at(scratch, rel) is not None:
                nofollow.copy_entry(scratch, rel, wd)
        return sorted(dropped)
    finally:
        nofollow.remove_tree(scratch)


def _linked(state: str, exc: OSError) -> str:
    """The detail of a candidate whose copy at ``state`` holds a link where mining writes a file (link48)."""
    return f"the copy at the {state} (after setup_cmd) has a link where homefield writes: {exc.strerror}"


def _write_into(wd: Path, rel: str, data: bytes) -> None:
    """Make ``wd/rel`` (a copy's test file, a twin or a sealed file) hold ``data``, its permission bits kept: the
    entry replaced, reached without following a link (:func:`~pytest_homefield.sandbox.nofollow.write_bytes`;
    link48: before, ``Path.write_bytes`` wrote through a link the commit's tree or its ``setup_cmd`` left there, or
    on the way, into the file it named). Raises :class:`~pytest_homefield.sandbox.nofollow.LinkInTheWay`,
    ``OSError``."""
    st = nofollow.lstat(wd, rel)
    mode = stat.S_IMODE(st.st_mode) if st is not None and stat.S_ISREG(st.st_mode) else 0o644
    nofollow.write_bytes(wd, rel, data, mode=mode)


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def diff_lines(patch: str) -> int:
    """Added plus removed lines of a unified diff, counted inside hunks by their ``@@`` line
    counts (file headers, context lines and binary patches are not counted)."""
    n = 0
    old = new = 0
    for line in patch.splitlines():
        if old > 0 or new > 0:
            tag = line[:1]
            if tag == "-":
                old, n = old - 1, n + 1
            elif tag == "+":
                new, n = new - 1, n + 1
            elif tag in (" ", ""):
                old, new = old - 1, new - 1
            continue  # "\ No newline at end of file" and anything else: no count
        m = _HUNK.match(line)
        if m:
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
    return n
