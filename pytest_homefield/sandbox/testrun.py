"""Run a repository's test command on chosen test files/ids and read per-test-id outcomes.

pytest commands (the default) get the package's reporter plugin (``_reporter/homefield_reporter.py``)
loaded with ``-p homefield_reporter``; it writes one JSON line per test phase into the *outcome
channel*: a pipe this process opens (:class:`OutcomeChannel`) and passes to the command as an
inherited descriptor (``pass_fds``, through the reaper and bubblewrap), whose number is in
``HOMEFIELD_OUTCOMES_FD``. A thread here reads it as the run goes. No outcome *path* is given to the
test process, so nothing it runs can rewrite the outcomes afterwards, and only the events from the
reporter's ``start`` to its first ``finish``, written by the process that wrote ``start``, count
(:func:`parse_events`): an exit handler that writes more after ``finish`` changes nothing. The channel
is parsed as it arrives, in bounded memory, and a run that sends more than one run may (64 MiB, 100,000
test ids: :class:`~pytest_homefield.sandbox.outcomes.EventTally`) has :attr:`TestRun.over_events`. The
events that counted are then written to ``out_dir/outcomes.jsonl`` for people to read (never read
back for grading). A custom command that contains ``{junit}`` is not given the reporter: it must
write JUnit XML to the path substituted for ``{junit}``, which is read instead. That path is weaker:
the file lives in the run's writable folder, so code run by the tests may rewrite it (an exit
handler included). Terminal output is never parsed; it goes to ``tests.log`` (stdout and stderr
together, through a capped pipe: :data:`LOG_CAP_BYTES`) for people to read.

The test process never writes ``out_dir`` (an attempt's artifacts folder, inside the user's
repository; issue 30): every run gets a private, fresh folder (:func:`tempdirs.mkdtemp`) as its only
writable folder, holding the log, the JUnit XML, the pytest cache, the services' sockets and the run's
own empty ``HOME`` and ``TMPDIR`` (``home/``, ``tmp/``; a sandbox gives its own anyway). After
the process has ended, the log's last :data:`LOG_TAIL_BYTES` and the JUnit XML (regular files only,
read without following a link, :mod:`~pytest_homefield.sandbox.nofollow`) are copied to ``out_dir``
and the private folder is removed. So code run by the tests can neither replace files beside it
(``diff.patch``, ``grading.err``) nor leave a link or a fifo there for the host to follow.

What it writes is capped by ``write_mb`` (``max_test_write_mb``, docs/contracts.md §7): per file
(``RLIMIT_FSIZE``), in a sandbox's ``/tmp`` and ``/dev/shm``, and added to its folders
(:func:`~pytest_homefield.sandbox.limits.watch_test_folders`; :attr:`TestRun.over_writes`).

What is added to a pytest command, after the user's own arguments:

* ``-p homefield_reporter``;
* ``-p no:homefield``: homefield's own entry point (installed beside the repository's tests, and inert
  without a mode option) is not loaded: it adds nothing to a test run but about 45 ms of CPU to each (its
  option table: ``benchmarks/entry_point.py``);
* ``-o cache_dir=<private>/.pytest_cache``: the cache provider stays on (so ``--lf``/``--sw`` in a
  repository's ``addopts`` still parse) but writes outside the snapshot, fresh for every run;
* ``--continue-on-collection-errors``: one test module that fails to import does not keep the
  other modules from running (their ids keep their own outcome);
* ``--maxfail=0``: overrides ``-x``/``--maxfail`` in the command or ``addopts``, so every selected
  test reports an outcome (the reporter clears pytest's stepwise options, ``--sw`` in ``addopts``, for the same
  reason: gatk38);
* the configuration pytest's search takes, pinned (:func:`pinned_config`: ``-c``, ``--rootdir``, ``--confcutdir``;
  read by :func:`~pytest_homefield.sandbox.pytest_config.setup_for`, conf42): the tree's own where the search meets
  it (hatk42), else the one it would take with nothing above the tree, so that nothing above the tree (a
  ``pytest.ini`` and ``conftest.py`` left in ``/tmp``) is read: hatk41; with ``whole`` (:func:`run_tests`), the
  choice for the grading's whole run;
* the targets (test files or node ids): in a file, ``@<private>/targets.args`` (one per line), when the
  command's ``python`` (or the interpreter of its ``pytest`` script: :func:`pytest_python`) has pytest 8.2
  or later (which reads arguments from a file named so; probed once per interpreter, isolated,
  :func:`run_version`; not when the tree holds a pytest of its own),
  else as separate arguments. The targets name the
  hidden test files and ids, and ``/proc/<pid>/cmdline`` is readable by every process of the machine,
  a Landlock-confined agent's too (atk21: a spy agent read another session's grading's FAIL_TO_PASS ids
  there); the private folder is not.

The repository's ``addopts`` are kept (they may be needed: import mode, plugins, markers). When they
enable xdist the reporter writes from the controller only, so each phase is still recorded once.

Environment (see :func:`scrubbed_env`): ``PYTHONPATH`` = workdir, ``workdir/src`` (if it is a folder),
the reporter folder, then the caller's ``PYTHONPATH`` but its entries around the repository, and those
inside it taken from workdir instead (:mod:`.protected`); ``PYTHONDONTWRITEBYTECODE=1`` (no
``__pycache__`` in the snapshot); ``PYTHONHASHSEED=0`` (set and dict-of-str ordering is the same at
verification and at grading, so a hash-order dependence cannot look like a fix or a flake);
``PYTEST_TIMEOUT`` = ``test_timeout_s`` (read by pytest-timeout when the test command's Python has it,
ignored otherwise — no probe needed). Variables that would change what pytest does or leak the
caller's session are removed: ``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS``,
``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, ``PYTEST_XDIST_*``, ``PYTEST_CURRENT_TEST``, ``PYTEST_VERSION``,
``PYTEST_TIMEOUT``, ``COV_CORE_*``, ``PYTHONSTARTUP``, ``PYTHONINSPECT``, ``HOMEFIELD_*`` (only
``HOMEFIELD_OUTCOMES_FD`` is then set) and the git variables that point git at another repository
(``GIT_DIR``, ``GIT_WORK_TREE``, …).
``PYTHONHOME`` and everything else the interpreter needs are kept. Of the caller's environment only the
variables :func:`host_test_env` keeps reach a test command at all (:data:`TEST_ENV_NAMES`, ``LC_*``,
``PYTHON*``, ``CONDA_*``): never a token or key of the user's (hatk39); ``setup_cmd`` still gets it whole.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.pins import make_folder
from pytest_homefield.sandbox import nofollow, pytest_config, tempdirs
from pytest_homefield.sandbox.backends import LandlockBackend, NoSandbox, SandboxBackend, TestBox, backend_named
from pytest_homefield.sandbox.bwrap import REPORTER_DIR, sandboxed_argv
from pytest_homefield.sandbox.dropped_env import dropped_variable
from pytest_homefield.sandbox.editable_env import own_environment
from pytest_homefield.sandbox.limits import (
    MIB,
    TASK_MEMORY_OPTION,
    TEST_MEMORY_MB,
    TEST_WRITE_MB,
    limits_for_tests,
    memory_cap_note,
    watch_test_folders,
    write_cap_note,
)
from pytest_homefield.sandbox.memory_budget import reserve
from pytest_homefield.sandbox.outcomes import (
    MAX_EVENT_BYTES,
    Caught,
    EventTally,
    OutcomeChannel,
    Parsed,
    SealScope,
    parse_events,
    parse_junit,
    read_junit,
    read_outcomes,
    write_counted,
)
from pytest_homefield.sandbox.proccap import cap_by, max_procs, memory_capped, oom_note, over_cap_note
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.protected import in_copy, outside_pythonpath, touches_protected
from pytest_homefield.sandbox.services import TestNetwork, run_network
from pytest_homefield.sandbox.uv_bin import uv_binary

__all__ = [
    "TestRun",
    "run_tests",
    "last_error_line",
    "relative_error",
    "scrubbed_env",
    "host_test_env",
    "dropped_variable",
    "TEST_ENV_NAMES",
    "TEST_ENV_PREFIXES",
    "TEST_ENV_VAR",
    "build_command",
    "project_run",
    "unsynced_command",
    "uv_config_pin",
    "NO_UV_CONFIG",
    "read_outcomes",
    "parse_events",
    "read_junit",
    "parse_junit",
    "REPORTER_DIR",
    "SELECTION_PLUGIN",
    "OUTCOMES_FD_ENV",
    "OutcomeChannel",
    "PASSING",
    "FAILING",
    "NOT_RUN",
    "sandboxed_argv",
]

#: argparse's one line for a usage error, ``{prog}: error: {message}``. The prog is whatever pytest
#: calls itself and varies by version and launcher (``__main__.py``, ``pytest``, ``python -m pytest``
#: since pytest 9.2), so only the stable part is matched: a prefix without a colon, then ``: error: ``.
_ARGPARSE_ERROR = re.compile(r"^[^:]+: error: ")
#: The last line of a traceback (``ModuleNotFoundError: No module named 'x'``), or pytest's ``E   …Error: …``.
_EXCEPTION_LINE = re.compile(r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit): \S.*?)\s*$")

#: The plugin of every run holding canaries (``_reporter/homefield_keyword.py``, loaded with ``-p`` after the reporter:
#: :func:`build_command`'s ``plugins``): the configuration's ``-k``, ``-m`` and ``--deselect`` dropped, which read the
#: canaries' drawn names and the marks their text carries and deselected them (gatk54, gatk56, mark58); the targets
#: select.
SELECTION_PLUGIN = "homefield_keyword"
#: The variable naming the outcome channel's descriptor in the test process (the reporter removes it).
OUTCOMES_FD_ENV = "HOMEFIELD_OUTCOMES_FD"
OUTCOMES_FILE = "outcomes.jsonl"
LOG_FILE = "tests.log"
JUNIT_FILE = "junit.xml"
#: Bytes of the end of a run's log copied back to ``out_dir/tests.log`` (the rest stays in the private
#: folder, removed with it).
LOG_TAIL_BYTES = 4 * 2**20
#: The cap of a run's log in its private folder: the test command's stdout and stderr come through a
#: pipe into a :class:`~pytest_homefield.sandbox.streams.CappedSink` (its head, a marker line, its
#: last 256 KiB), never a file the command holds and could grow without bound.
LOG_CAP_BYTES = 8 * 2**20

#: Outcome vocabulary of :attr:`TestRun.outcomes`.
PASSING = frozenset({"passed"})
FAILING = frozenset({"failed", "error"})
NOT_RUN = frozenset({"skipped", "xfailed", "xpassed"})


#: The variables of the host's environment a test command gets (when set; besides those of
#: :data:`TEST_ENV_PREFIXES`): what interpreters, locales, certificates and test tools read, never a
#: credential. Everything else of the caller's environment stays out of every test run (hatk39: graded
#: code, the agent's, read the user's API keys and tokens from ``os.environ`` inside the sandbox, though
#: the agent's own program got none of them, contracts §9). An allowlist, not a list of secret-looking
#: names: a variable nobody thought of is out.
TEST_ENV_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "SHELL", "TZ", "TMPDIR",
    "VIRTUAL_ENV", "LD_LIBRARY_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "CI", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "SOURCE_DATE_EPOCH",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
})
#: Prefixes of the host's variables a test command gets: the locale's, the interpreter's, conda's.
TEST_ENV_PREFIXES = ("LC_", "PYTHON", "CONDA_")


#: The variable of the caller's environment naming more of its variables the test commands get (names
#: separated by commas or spaces: ``HOMEFIELD_TEST_ENV=REDIS_URL,DATABASE_URL``), for a server the user runs
#: (``--test-network loopback:PORT``) that the tests find through a variable.
TEST_ENV_VAR = "HOMEFIELD_TEST_ENV"


def host_test_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The part of ``env`` (default ``os.environ``) a test command may see: the variables named in
    :data:`TEST_ENV_NAMES` or in ``env``'s :data:`TEST_ENV_VAR`, or starting with one of
    :data:`TEST_ENV_PREFIXES` (a new dict; the scrubbing of :func:`scrubbed_env` then applies)."""
    base = os.environ if env is None else env
    named = TEST_ENV_NAMES | set(re.split(r"[\s,]+", base.get(TEST_ENV_VAR, "").strip())) - {""}
    return {k: v for k, v in base.items() if k in named or k.startswith(TEST_ENV_PREFIXES)}


@dataclass
class TestRun:
    """Outcome of one test-command run.

    ``outcomes``: node id as pytest prints it → ``"passed"``, ``"failed"``, ``"error"`` (setup
      failed, teardown failed after a passing call, or the test was interrupted after setup), ``"skipped"``,
      ``"xfailed"`` or ``"xpassed"``.
      A test passes iff its call phase ran and passed and its teardown did not fail (a teardown error is
      ``"error"``, as pytest reports it: gatk49).
    ``exit_code``: the command's exit status (``None`` when killed on timeout; negative: signal).
    ``timed_out``: the whole run hit ``timeout_s`` and its process group was killed.
    ``collection_error``: a test module or conftest failed to import/collect, or the command failed
      (exit 2, 3 or 4) before any test ran — ids absent from this run may count as failing.
    ``collection_errors``: path (or collector node id) → one-line message, from the reporter.
    ``collected``: number of tests collected (0 for pytest exit status 5).
    ``collected_ids``: the ids collected, in collection order, when the reporter named exactly ``collected`` of
      them (:attr:`~pytest_homefield.sandbox.outcomes.Parsed.collected_ids`), else ``None``; read only by mining's
      parent run after its probe (perf47).
    ``deselected``: the ids a selection (``-m``, ``-k``, ``--deselect``) left out of the run, in order
      (:attr:`~pytest_homefield.sandbox.outcomes.Parsed.deselected`); read only by mining (bld62).
    ``wall_s``: seconds. ``log_path``: stdout+stderr of the command.
    ``error``: one line when the run looks wrong (no outcome file, exit status contradicting the
      outcomes, killed by a signal, timeout), else ``None``.
    ``test_timeouts``: ids that pytest-timeout failed (``test_timeout_s``).
    ``skip_reasons``: skipped id → its skip reason (``requires Python 3.12``), when reported.
    ``stop_lines``: failed id → where its test function stopped in its first failed phase, in lines from the
      first line of its definition (the reporter's ``line``), when reported (a run of the untouched parent
      compares a twin's with its original's: :func:`~pytest_homefield.run.twin_grading.parent_told`).
    ``stop_operands``: failed id → ``(op, repr(left), repr(right))`` of the failing comparison its call stopped
      at, when both were plain literals (the reporter's ``operands``; the parent check's nearness).
    ``finished``: the session reached its end (the reporter's ``finish`` event; for JUnit XML: the
      file was written); ``False`` when the process died on the way (``os._exit``, a signal).
    ``selected``: the node ids a targeted run was limited to (a later stability run of mining,
      docs/contracts.md §7); ``None`` for a run of whole test files. Ids outside it were not run.
    ``sandbox``: the backend that wrapped the command (``bwrap``, ``landlock``, ``hook`` or ``none``).
    ``ignored_events``: outcome-channel lines that did not count (before ``start``, after the first
      ``finish``, from another pid, unparseable): 0 for an honest run.
    ``over_memory``: why the run failed when a test process went over its memory cap: the kernel killed a
      process in the sandbox's memory cgroup (:func:`~pytest_homefield.sandbox.proccap.oom_note`), or a
      process's allocation failed at its ``RLIMIT_AS`` (:func:`~pytest_homefield.sandbox.limits.memory_cap_note`);
      else ``None``.
    ``over_writes``: why the run was stopped when its folders grew past ``max_test_write_mb`` or it
      filled their disk (:class:`~pytest_homefield.sandbox.limits.DiskWatch`), else ``None``: the
      run did not finish, and whatever wrote it is to blame.
    ``write_refused``: why the run failed when the kernel refused a write at a cap
      (:func:`~pytest_homefield.sandbox.limits.write_cap_note`), else ``None``.
    ``procs_refused``: why the run failed when its sandbox's process cap (``--max-procs``) refused a fork
      (:func:`~pytest_homefield.sandbox.proccap.over_cap_note`), else ``None``.
    ``over_events``: why the run did not count past a point when it sent more on its outcome channel
      than one run may (:class:`~pytest_homefield.sandbox.outcomes.EventTally`: bytes or test ids), else
      ``None``; the run did not finish, and whatever sent it is to blame.
    ``seal_reports``: in a sealed run (``run_tests``'s ``seals``), test id → seal site id → what its reports of that
      site gave (:attr:`~pytest_homefield.sandbox.outcomes.Parsed.seal_reports`), else empty.
    ``caught``: test id → ``(expected class names, caught class's MRO names, (function, line))`` of each expected
      exception its
      ``pytest.raises``/``assertRaises`` took (:attr:`~pytest_homefield.sandbox.outcomes.Parsed.caught`; what the
      test process said, so it can only excuse what a forger could pass anyway: contracts §7).
    ``peak_mb``: the most MiB its sandbox's memory cgroup held at once (its processes, and the page cache and
      tmpfs pages charged to it; :func:`~pytest_homefield.sandbox._reaper.peak_bytes`), ``None`` without one.
    """

    __test__ = False  # not a pytest test class

    outcomes: dict[str, str]
    exit_code: int | None
    timed_out: bool
    collection_error: bool
    collected: int
    wall_s: float
    log_path: Path
    error: str | None = None
    collection_errors: dict[str, str] = field(default_factory=dict)
    test_timeouts: list[str] = field(default_factory=list)
    skip_reasons: dict[str, str] = field(default_factory=dict)
    stop_lines: dict[str, int] = field(default_factory=dict)
    stop_operands: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    finished: bool = False
    selected: frozenset[str] | None = None
    sandbox: str = "none"
    ignored_events: int = 0
    over_memory: str | None = None
    over_writes: str | None = None
    write_refused: str | None = None
    over_events: str | None = None
    procs_refused: str | None = None
    peak_mb: float | None = None
    seal_reports: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    caught: dict[str, list[Caught]] = field(default_factory=dict)
    collected_ids: list[str] | None = None
    deselected: list[str] = field(default_factory=list)

    def cap_note(self) -> str | None:
        """The notes of the caps a failed run met (:attr:`over_memory`, :attr:`write_refused`,
        :attr:`procs_refused`), ``"; "``-joined, else ``None``."""
        return "; ".join(n for n in (self.over_memory, self.write_refused, self.procs_refused) if n) or None

    def passed(self, test_id: str) -> bool:
        """``True`` iff ``test_id`` ran and passed."""
        return self.outcomes.get(test_id) in PASSING


def scrubbed_env(
    workdir: Path, env: Mapping[str, str] | None = None, *, test_timeout_s: float | None = None
) -> dict[str, str]:
    """The environment for a test command in ``workdir`` (see the module docstring): ``env``
    (default ``os.environ``) scrubbed, with our ``PYTHONPATH`` first. Does not set
    ``HOMEFIELD_OUTCOMES``."""
    base = dict(os.environ if env is None else env)
    out = {k: v for k, v in base.items() if not dropped_variable(k)}
    workdir = Path(workdir)
    paths = [str(workdir)]
    if (workdir / "src").is_dir():
        paths.append(str(workdir / "src"))
    paths.append(str(REPORTER_DIR))
    # never the repository itself (protected): a folder inside it is taken from the copy under test
    kept, dropped = outside_pythonpath(base.get("PYTHONPATH", ""))
    paths += [str(c) for c in (in_copy(e, workdir) for e in dropped) if c is not None and str(c) not in paths]
    paths += kept
    out["PYTHONPATH"] = os.pathsep.join(paths)
    out["PYTHONDONTWRITEBYTECODE"] = "1"
    out["PYTHONHASHSEED"] = "0"
    if test_timeout_s:
        out["PYTEST_TIMEOUT"] = f"{test_timeout_s:g}"
    return out


#: The pytest that reads arguments from a file named ``@FILE`` (its parser's ``fromfile_prefix_chars``).
ARGSFILE_PYTEST = (8, 2)
#: The file of a run's targets in its private folder (:func:`build_command`).
ARGSFILE = "targets.args"


@functools.lru_cache(maxsize=32)
def pytest_version(python: str) -> tuple[int, int] | None:
    """The ``(major, minor)`` of the pytest of interpreter ``python`` (a path, or a name on the host's ``PATH``:
    :func:`run_python` finds the run's). Asked once per interpreter and process, with ``-I`` (neither
    ``PYTHONPATH`` nor the working folder: nothing of a workspace runs here, on the host); ``None`` when it cannot
    tell (no pytest there, an interpreter that does not start, 30 s)."""
    probe = "from importlib.metadata import version; print(version('pytest'))"
    try:
        out = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"(\d+)\.(\d+)", out.stdout.strip()) if out.returncode == 0 else None
    return (int(found[1]), int(found[2])) if found is not None else None


def run_python(test_cmd: str, path: str | None) -> str | None:
    """The interpreter whose pytest test command ``test_cmd`` runs (:func:`pytest_python` of its program's word, past
    an ``env`` prefix's: :func:`~pytest_homefield.sandbox.pytest_config.program_at`), a
    bare name found on ``path`` (the test run's ``PATH``: a ``--env uv`` environment's ``bin`` first, conf43: the
    host's ``python`` was asked before; the name itself when ``path`` holds none); ``None`` when it cannot tell."""
    command = pytest_config.parse_command(test_cmd or "python -m pytest")
    if not command.split:
        return None
    first = command.words[pytest_config.program_at(command.words):][:1]  # gatk45: env A=1 python -m pytest
    # gatk45: a program whose Python's -m runs pytest (coverage run -m pytest) is read by its #! line too
    python = pytest_python(first[0], path, command.launched) if first else None
    if python is not None and "/" not in python:
        python = shutil.which(python, path=path) or python  # none on it: the host's, as before
    return python


#: ``uv run``'s flags a command runs in a project with (:func:`project_run`): the active environment, never synced.
UV_PROJECT_FLAGS = ("--active", "--no-sync")
#: Why a ``uv run`` in a project did not start (:func:`project_run` found no active environment).
NO_ACTIVE_ENV = ("a uv run test command runs in the active environment, never one uv makes or syncs in the copy "
                 "(it would install the tree's own pyproject.toml), and there is none: run homefield in the "
                 "project's environment (uv run homefield …, uv run pytest --homefield …) or set VIRTUAL_ENV to it")


def project_run(workdir: Path, test_cmd: str, run_env: dict[str, str]) -> str:
    """``test_cmd`` as a test run in ``workdir`` with ``run_env`` (:func:`scrubbed_env`'s) runs it: a ``uv run`` command
    (:func:`~pytest_homefield.sandbox.pytest_config.uv_run`, every option one of uv's; not ``--script``) that would
    run its program in a project's own environment (a ``pyproject.toml`` at ``workdir``, or in its ``--directory``,
    or ``--project``; no ``--no-project``) gets :data:`UV_PROJECT_FLAGS` it lacks right after ``run``: uv runs it in
    the run's active environment and syncs nothing (ops58). Left as it was, uv made ``.venv`` in the copy and synced
    the copy's own project into it before pytest started: a grading installed the agent's ``pyproject.toml`` (its
    ``[project.entry-points.pytest11]`` module autoloaded as a pytest plugin in every run, gatk56), and under
    bubblewrap, the copy read-only and offline, no run started (``infra``). The active environment is ``run_env``'s
    ``VIRTUAL_ENV``, else this process's own when it runs in one (``sys.prefix``; set in ``run_env`` then): the one
    a ``uv run pytest`` of the user's checkout runs in (``uv run homefield …`` sets it), made by the user from their
    own project, never from the tree under test (nor a ``.venv`` the tree holds: an agent's is carried); with
    neither, :func:`run_tests` starts no such run (:data:`NO_ACTIVE_ENV`). Any other command as it is. Raises
    nothing (an unparseable command is left to the run's own error)."""
    made = unsynced_command(test_cmd, lambda folder: (Path(workdir) / folder / "pyproject.toml").is_file())
    if made is None:
        return test_cmd
    if not run_env.get("VIRTUAL_ENV") and sys.prefix != sys.base_prefix:
        run_env["VIRTUAL_ENV"] = sys.prefix
    return made


def unsynced_command(test_cmd: str, project_at: Callable[[str], bool]) -> str | None:
    """``test_cmd`` with the :data:`UV_PROJECT_FLAGS` it lacks put right after ``uv run`` when it is a ``uv run``
    command (every option one of uv's; not ``--script``, ``--gui-script``, ``--help``, ``--no-project``) that runs
    in a project: ``--project`` given, or ``project_at(folder)`` (``folder`` the working folder's ``"."``, else
    its ``--directory`` value: where uv reads the project) says a ``pyproject.toml`` is there; ``None`` when it is
    left as it is. :func:`project_run`'s reading, and the exported ``eval.sh``'s (ops60,
    ``export/taskrepo.eval_script``)."""
    try:
        words = shlex.split(test_cmd)
    except ValueError:
        return None
    found = pytest_config.uv_run(words)
    if found is None or found.unknown is not None:
        return None
    names = {name for name, _ in found.given}
    if names & (pytest_config.UV_RUN_ASIDE - {"--directory"}):  # --script, --gui-script, --help
        return None
    folder = "."
    for name, value in found.given:  # uv reads the project in --directory's folder
        if name == "--directory" and value:
            folder = posixpath.join(folder, value)
    if "--no-project" in names or not ("--project" in names or project_at(posixpath.normpath(folder))):
        return None
    missing = [flag for flag in UV_PROJECT_FLAGS if flag not in names]
    if not missing:
        return None
    at = pytest_config.program_at(words) + 2  # past ``uv run``
    return shlex.join([*words[:at], *missing, *words[at:]])


#: The empty uv configuration file :func:`uv_config_pin` names (in the run's private folder).
NO_UV_CONFIG = "no-uv.toml"
#: ``uv run``'s options that choose where its configuration is read (:func:`uv_config_pin` leaves such a run alone).
UV_CONFIG_CHOSEN = frozenset({"--config-file", "--no-config", "--directory", "--project"})


def uv_config_pin(workdir: Path, test_cmd: str, run_env: dict[str, str], out_dir: Path) -> None:
    """Keep a ``uv run`` test command's configuration inside ``workdir`` (ops60): where the tree holds none at its
    top (:func:`~pytest_homefield.sandbox.pytest_config.uv_config_top`), uv's discovery went on to the folders above
    the copy, made in the temp folder, and read the nearest ``uv.toml`` there (measured under ``--sandbox none``: one
    another attempt's code left had a ``uv run --with attrs`` install its ``attrs`` from a folder of its wheels, whose
    ``pytest11`` module was loaded). Sets ``run_env``'s ``UV_CONFIG_FILE`` to an empty file of the run's
    (``out_dir/``:data:`NO_UV_CONFIG`, written here): uv reads no file of its own discovery then, the user-level one
    neither (a run's ``HOME`` is its own already; an ``XDG_CONFIG_HOME`` of the caller's no more). Nothing for another
    command, one choosing its configuration (:data:`UV_CONFIG_CHOSEN`, ``UV_CONFIG_FILE``/``UV_NO_CONFIG`` in
    ``run_env``), or a tree holding its own (the parent's: grading holds an agent's change to it back). The user's
    ``UV_*`` variables still reach the run. Raises ``OSError`` writing the file."""
    found = pytest_config.uv_run_of(test_cmd)
    if found is None or found.unknown is not None or "UV_CONFIG_FILE" in run_env or "UV_NO_CONFIG" in run_env:
        return
    if {name for name, _ in found.given} & UV_CONFIG_CHOSEN or pytest_config.uv_config_top(Path(workdir)):
        return
    nofollow.write_bytes(out_dir, NO_UV_CONFIG, b"")
    run_env["UV_CONFIG_FILE"] = str(Path(out_dir) / NO_UV_CONFIG)


def _python_on(workdir: Path, test_cmd: str, path: str | None, venv: str | None) -> str | None:
    """The interpreter a run of ``test_cmd`` in ``workdir`` whose ``PATH`` is ``path`` and ``VIRTUAL_ENV`` ``venv``
    runs: :func:`run_python`, else the ``uv run``'s (:func:`uv_run_python`, a ``uv python find`` process); ``None``
    when unknown."""
    return run_python(test_cmd, path) or uv_run_python(workdir, test_cmd, path, venv)


def _command_env(workdir: Path, test_cmd: str, env: Mapping[str, str] | None) -> tuple[str, dict[str, str]]:
    """``(test_cmd as run, its environment)`` for a run of ``test_cmd`` in ``workdir`` with ``env`` (the host's when
    ``None``), as :func:`run_tests` makes them: :func:`scrubbed_env` of :func:`host_test_env`, and
    :func:`project_run` with it (which may set its ``VIRTUAL_ENV``)."""
    run_env = scrubbed_env(workdir, host_test_env(env))
    return project_run(workdir, test_cmd, run_env), run_env


def command_python(workdir: Path, test_cmd: str, env: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of the interpreter a run of ``test_cmd`` in ``workdir`` with ``env`` (:func:`run_tests`'s:
    the host's when ``None``) runs: :func:`run_python` on the run's ``PATH``, else the ``uv run``'s
    (:func:`uv_run_python`); ``None`` when unknown (``tox``, a shell script) or not found."""
    test_cmd, run_env = _command_env(workdir, test_cmd, env)
    path = run_env.get("PATH")
    python = _python_on(workdir, test_cmd, path, run_env.get("VIRTUAL_ENV"))
    return python if python is not None and os.path.isabs(python) else None


#: The empty configuration file :func:`pinned_config` names when the tree has none (in the run's private folder).
NO_CONFIG = "no-config.ini"


def run_version(workdir: Path, test_cmd: str, env: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """The ``(major, minor)`` of the pytest a run of ``test_cmd`` in ``workdir`` with ``env`` (:func:`run_tests`'s:
    the host's when ``None``) runs: :func:`pytest_version` of :func:`run_python` on the run's ``PATH``; ``None``
    when unknown, or when the tree holds a pytest of its own (:func:`_own_pytest`: that one runs). The one place a
    run's pytest is asked for (soft44: the softener's reading, :func:`pytest_setup`, and the pin's, in
    :func:`run_tests`)."""
    test_cmd, run_env = _command_env(workdir, test_cmd, env)
    return _version_on(workdir, test_cmd, run_env.get("PATH"), run_env.get("VIRTUAL_ENV"))


def _version_on(workdir: Path, test_cmd: str, path: str | None, venv: str | None = None) -> tuple[int, int] | None:
    """:func:`run_version` for a run whose ``PATH`` is ``path`` and ``VIRTUAL_ENV`` ``venv``: a ``uv run`` command's
    pytest is that of the interpreter uv runs it with (:func:`uv_run_python`; ops48: it was asked of the ``uv`` word,
    unknown, and pytest 9's reading pinned a pytest 8 run)."""
    if _own_pytest(Path(workdir)):
        return None
    python = _python_on(workdir, test_cmd, path, venv)
    return pytest_version(python) if python is not None else None


#: ``uv run``'s options that choose its interpreter, given to ``uv python find`` as they are (:func:`uv_run_python`).
UV_FIND_PASSED = frozenset({"--no-project", "--project", "--no-config", "--config-file", "--managed-python",
                            "--no-managed-python", "--python-preference", "--no-python-downloads", "--offline"})
#: ``uv run``'s options that run the program in an environment of its own (a ``--with`` requirement may be pytest
#: itself): its pytest is not the interpreter's that ``uv python find`` names.
UV_FIND_UNKNOWN = frozenset({"--with", "--with-editable", "--with-requirements", "--isolated"})


def uv_run_python(workdir: Path, test_cmd: str, path: str | None, venv: str | None = None) -> str | None:
    """The interpreter the ``uv run`` of ``test_cmd`` (:func:`~pytest_homefield.sandbox.pytest_config.uv_run`, all
    its options read) in ``workdir`` runs its program with, as ``uv python find`` answers it (the run's ``uv`` on
    ``path``, else the ``env`` extra's; in ``workdir``, ``PATH`` ``path``; the command's ``--python``/``-p`` its
    request, :data:`UV_FIND_PASSED` passed on; no cache, no download, 30 s): in a project (a ``pyproject.toml`` at
    ``workdir`` or ``--project``, without ``--no-project``/``--active``) only a project environment it names
    (``…/.venv/bin/python``: uv runs in it; with none uv would make one and sync it, its pytest unknown), else
    with ``VIRTUAL_ENV`` ``venv`` (the run's active environment, which uv takes first). ``None`` for another command,
    :data:`UV_FIND_UNKNOWN`, or when uv cannot tell. Reads nothing of the tree but what uv's discovery reads; runs
    no code of it (uv asks the interpreter it finds, as :func:`pytest_version` does)."""
    try:
        words = shlex.split(test_cmd)
    except ValueError:
        return None
    found = pytest_config.uv_run(words)
    if found is None or not found.read:
        return None
    args: list[str] = []
    request: str | None = None
    project = (Path(workdir) / "pyproject.toml").is_file()
    root = Path(workdir)  # the project's folder: ``--project``'s, else the working folder
    for name, value in found.given:
        if name in UV_FIND_UNKNOWN:
            return None
        if name == "--python":
            request = value
        elif name in UV_FIND_PASSED:
            args += [name] if value is None else [name, value or ""]
        if name == "--project" and value:
            root = Path(workdir) / value
        project = (project or name == "--project") and name not in ("--no-project", "--active")
    uv = shutil.which("uv", path=path) if path else None
    if uv is None:
        uv = uv_binary()  # the env extra's uv
        if uv is None:
            return None
    env = {"PATH": path or os.defpath, "HOME": os.environ.get("HOME", "/"), "UV_PYTHON_DOWNLOADS": "never"}
    if venv and not project:
        env["VIRTUAL_ENV"] = venv
    try:
        out = subprocess.run([uv, "python", "find", "--no-cache", *args, *([request] if request else [])],
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, cwd=workdir,
                             env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    python = out.stdout.strip() if out.returncode == 0 else ""
    # in a project, only the project's own environment (an interpreter of another ``.venv`` on ``PATH``, a user's
    # own or CI's, is the one uv finds when the project has none: not the one it would run)
    if not python or "\n" in python or (project and os.path.realpath(Path(python).parent.parent)
                                         != os.path.realpath(root / ".venv")):
        return None
    return python


def pytest_setup(workdir: Path, test_cmd: str, targets: Sequence[str], whole: Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None) -> pytest_config.Setup:
    """pytest's choice of configuration for a run of ``test_cmd`` on ``targets`` in ``workdir`` (``whole``: of the
    grading's whole run, :func:`pinned_config`), as the pin reads it
    (:func:`~pytest_homefield.sandbox.pytest_config.setup_for`): read once by a caller that softens the run's files by
    it too (:func:`~pytest_homefield.sandbox.canary_soft.softened_files`), and passed on to :func:`run_tests`
    (twin43: a canary run read it twice, for its files and for its pin). Paths relative to ``workdir``, so it holds
    for a copy of it as well. ``env``: the run's (:func:`run_tests`'s ``env``): read for the pytest it runs
    (:func:`run_version`; soft44: read by pytest 9's rules, a pytest 8 run's functions were softened by a file
    pytest 8 does not read, while its pin named the one it does). The version it was read for is asked here, once
    for the run: the setup keeps the command and ``PATH`` it was asked for (``asked``), and :func:`run_tests` of the
    same two takes it instead of asking again (ops46: the ``PATH`` lookup and the script's ``#!`` read were made
    twice a run). Asked each call, never kept by the process: a ``PATH`` or environment changed between runs is
    asked again."""
    test_cmd, run_env = _command_env(workdir, test_cmd, env)
    path = run_env.get("PATH")
    python, version = _asked_on(workdir, test_cmd, path, run_env.get("VIRTUAL_ENV"))
    return dataclasses.replace(pytest_config.setup_for(Path(os.path.abspath(workdir)), test_cmd or "python -m pytest",
                                                       targets if whole is None else whole, version),
                               asked=(test_cmd, path), python=python)


def _asked_on(workdir: Path, test_cmd: str, path: str | None, venv: str | None
              ) -> tuple[str | None, tuple[int, int] | None]:
    """``(the interpreter, the (major, minor) of its pytest)`` a run of ``test_cmd`` in ``workdir`` on ``PATH``
    ``path`` and ``VIRTUAL_ENV`` ``venv`` starts (:func:`_python_on`; the version ``None`` where the tree holds a
    pytest of its own, as :func:`_version_on`): each asked once a run (ops46; ops56's interpreter for the sandbox)."""
    python = _python_on(workdir, test_cmd, path, venv)
    own = _own_pytest(Path(workdir))
    return python, None if own or python is None else pytest_version(python)


def pinned_config(workdir: Path, test_cmd: str, targets: Sequence[str], out_dir: Path,
                  whole: Sequence[str] | None = None, version: tuple[int, int] | None = None,
                  setup: pytest_config.Setup | None = None) -> list[str]:
    """The options that keep a pytest run's configuration and ``conftest.py`` files inside ``workdir`` (hatk41):
    pytest looks for its configuration from the run's paths' common folder upwards, past the tree, and with none
    inside it takes the first one above (a ``pytest.ini`` in ``/tmp`` that another attempt's code left under
    ``--sandbox none``), which makes that folder its rootdir and ``confcutdir``: a ``conftest.py`` there was loaded
    by the test runs after it, the parent check's and the reference fix's runs included. pytest's choice is read by
    :func:`~pytest_homefield.sandbox.pytest_config.setup_for` (conf42: the softener's reading too). Pinned in every
    pytest command (hatk42: a tree whose own configuration pytest's search meets was left to that search, and a file
    that only looked like one, a ``tox.ini`` whose ``commands`` run pytest, pinned nothing while pytest passed it by
    and read a planted ``pytest.ini`` above): ``-c`` the configuration pytest reads (the tree's own, the first
    ``pyproject.toml`` met, its fallback, or the one a path's own folder holds) and ``--confcutdir`` its folder;
    with none ``-c`` an empty configuration file of the run's (``out_dir/``:data:`NO_CONFIG`, written here),
    ``--rootdir`` pytest's rootdir and ``--confcutdir`` that rootdir. ``[]`` when the command names its
    configuration file (``-c``, ``--config-file``, ``--inifile``; in a group of short flags or the
    ``PYTEST_ADDOPTS`` it sets too: :func:`~pytest_homefield.sandbox.pytest_config.pytest_args`), or when a path of
    the run lies outside ``workdir``; an option the command names (``--rootdir``, ``--confcutdir``) is not pinned
    again, but ``-c`` still is (hatk42: such a command got no pin, and pytest, which still looks for a
    configuration, read one above the tree). ``whole``: the targets of the grading's whole run (the task's test
    files) when the run targets only some of them: its choice for ``whole`` is pinned, with ``--rootdir``, so the
    run reads what the whole run reads (conf42: a run of ``tests/test_a.py`` alone read a ``tests/tox.ini`` where
    the whole run, given ``other/`` too, read the root's ``pytest.ini``). ``version``: the ``(major, minor)`` of the
    pytest that runs (:func:`pytest_version`; ``None`` when unknown: pytest 9's reading): the file pinned is the one
    that pytest takes (conf43: pytest 8 in a ``--env uv`` environment was given ``-c pytest.toml``, which it reads as
    an empty ``pyproject.toml``, where its own search took the tree's ``pyproject.toml`` table). ``setup``:
    :func:`pytest_setup` of these inputs, read before (of ``workdir`` or the tree it is a copy of);
    ``None``, or read for another pytest than ``version`` (its own ``version``): read here. Paths are relative to
    ``workdir`` (the run's working folder), but the empty file's. Never raises but ``OSError`` writing it."""
    try:
        shlex.split(test_cmd or "python -m pytest")
    except ValueError:
        return []
    command = test_cmd or "python -m pytest"
    if setup is None or setup.version != version:  # read for another pytest (soft44): read for this one
        setup = pytest_config.setup_for(Path(os.path.abspath(workdir)), command,
                                        targets if whole is None else whole, version)
    # the options pytest reads as its own (a group of short flags, the PYTEST_ADDOPTS the command sets: hatk42; that
    # of a uv run --env-file: ops48)
    args = setup.args(command)
    if pytest_config.all_values(args, "-c", "--config-file") or pytest_config.all_values(args, "", "--inifile"):
        return []  # the command names its configuration: pytest looks for none
    named_root = pytest_config.all_values(args, "", "--rootdir")
    named_cut = pytest_config.all_values(args, "", "--confcutdir")
    if setup.rootdir is None:
        return []
    if setup.config is not None:  # pytest's own choice, named (hatk42): never left to a search above the tree
        pin = ["-c", setup.config, *([f"--rootdir={setup.rootdir}"] if whole is not None and not named_root else [])]
        cut = posixpath.dirname(setup.config) or "."
    else:
        nofollow.write_bytes(out_dir, NO_CONFIG, b"")
        # with no configuration pytest cuts at the rootdir: the command's own where it names one
        cut = named_root[-1] if named_root else setup.rootdir
        pin = ["-c", str(out_dir / NO_CONFIG), *([] if named_root else [f"--rootdir={setup.rootdir}"])]
    return [*pin, *([] if named_cut else [f"--confcutdir={cut}"])]


def build_command(test_cmd: str, targets: Sequence[str], *, out_dir: Path,
                  argsfile: bool = False, plugins: Sequence[str] = (), pin: Sequence[str] = ()
                  ) -> tuple[list[str], Path | None]:
    """The argv for ``test_cmd`` on ``targets`` and the JUnit XML path (``None`` in reporter mode).

    ``test_cmd`` is split with :func:`shlex.split` (no shell). With a ``{junit}`` placeholder it is a
    custom command: ``{junit}`` is replaced by ``out_dir/junit.xml`` inside any argument, an argument
    that is exactly ``{files}`` is replaced by the targets, and without ``{files}`` the targets are
    appended. Otherwise it is a pytest command and gets the reporter options listed in the module
    docstring; with ``argsfile`` the targets are not on it but named by ``@out_dir/targets.args``, which
    the caller writes (:func:`write_argsfile`); ``plugins``: more modules of ``REPORTER_DIR`` it loads with
    ``-p`` after the reporter (mining's stubbed parent run: ``homefield_stub``; a custom command gets none);
    ``pin``: :func:`pinned_config`'s options, after the reporter's (a custom command that runs pytest: right after
    the words that start it, :func:`pytest_words`; another custom command gets none).
    Raises ``ValueError`` for an empty or unparseable command.
    """
    try:
        argv = shlex.split(test_cmd or "python -m pytest")
    except ValueError as exc:
        raise ValueError(f"test_cmd cannot be parsed: {exc}") from None
    if not argv:
        raise ValueError("test_cmd is empty")
    if "{junit}" in test_cmd:
        junit = out_dir / JUNIT_FILE
        out: list[str] = []
        placed = False
        for arg in argv:
            if arg == "{files}":
                out.extend(targets)
                placed = True
            else:
                out.append(arg.replace("{junit}", str(junit)))
        if not placed:
            out.extend(targets)
        at = pytest_words(test_cmd)  # a custom command that runs pytest: the pin right after its launcher (hatk42)
        return [*out[:at], *(pin if at else ()), *out[at:]], junit
    argv += [
        "-p",
        "homefield_reporter",
        *(arg for name in plugins for arg in ("-p", name)),
        "-p",
        "no:homefield",
        "-o",
        f"cache_dir={out_dir / '.pytest_cache'}",
        "--continue-on-collection-errors",
        "--maxfail=0",
        *pin,
        *(["@" + str(out_dir / ARGSFILE)] if argsfile and targets else targets),
    ]
    return argv, None


def pytest_words(test_cmd: str) -> int:
    """How many leading words of ``test_cmd`` start pytest, where the pin goes (:func:`build_command`): those up to
    pytest's own arguments when pytest is the program the command starts
    (:attr:`~pytest_homefield.sandbox.pytest_config.TestCommand.launched`, the one reading of a command's pytest
    words, :func:`~pytest_homefield.sandbox.pytest_config.parse_command`): 1 for ``pytest``/``py.test`` (a path to
    one too), 3 for ``<python> -m pytest``, as many as a Python's flags before it are (gatk43: ``python -mpytest``
    2, ``python -I -m pytest`` 4, ``coverage run -m pytest`` 4), after an ``env`` prefix's words too (twin43: ``env
    X=1 pytest`` was none, and pytest's search went on above the tree); else 0 for a custom ``{junit}`` command (of
    another program, or one :func:`shlex.split` cannot split) and 1 for a command without ``{junit}``, always a
    pytest command (``uv run pytest``: its pin goes at its end). A ``{junit}`` command that runs pytest gets
    :func:`pinned_config` as the others (hatk42: it got none)."""
    command = pytest_config.parse_command(test_cmd or "python -m pytest")
    if not command.split:
        return 0
    if command.launched:
        return command.at
    return 0 if "{junit}" in test_cmd else 1


def pytest_python(word: str, path: str | None, script: bool = False) -> str | None:
    """The interpreter whose pytest a pytest test command's first ``word`` runs, for
    :func:`run_python`: the word itself when it names a Python (``python``, ``python3.12``,
    ``.venv/bin/python``); for a ``pytest`` or ``py.test`` script, or (``script``: a command whose program runs
    pytest, gatk45: ``coverage run -m pytest``) any (an absolute path, or a name found on
    ``path``, the test run's ``PATH``), the interpreter its ``#!`` line names (``#!/v/bin/python``,
    ``#!/usr/bin/env python3``); else ``None`` (``uv run``, ``tox``, a relative script path: the targets stay
    arguments). Reads at most the script's first 512 bytes; never raises."""
    name = Path(word).name
    if "python" in name:
        return word
    if (name not in ("pytest", "py.test") and not script) or ("/" in word and not word.startswith("/")):
        return None
    found = word if "/" in word else shutil.which(word, path=path)
    if found is None:
        return None
    try:
        with open(found, "rb") as fh:
            head = fh.readline(512)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    return words[0] if words and "python" in Path(words[0]).name else None


#: The folder of a run's own environment in its private folder (:func:`own_environment_argv`).
OWN_ENV_DIR = "py"


def own_environment_argv(argv: Sequence[str], env: dict[str, str], workdir: Path, out_dir: Path,
                         uv_python: str | None = None) -> list[str]:
    """``argv`` (a test command's) run in the run's own environment (:func:`~.editable_env.own_environment`, made at
    ``out_dir/py``) when the interpreter it starts has an editable install of the repository under benchmark: its
    program word (past an ``env`` prefix) when it names a Python, that environment's ``bin/python`` in its place;
    when it is a script whose ``#!`` names one (``pytest``, ``coverage``: :func:`pytest_python`), that ``bin/python``
    before the script's path. When the folder of the interpreter replaced is on the ``PATH`` of ``env`` (the run's),
    that environment's ``bin`` goes just before it, holding that folder's scripts that run it (a child's ``python``
    and the project's own entry points are the run's own too).
    ``argv`` as it is for any other command (``uv run``, ``tox``), an interpreter without such an install or one that
    does not answer. ``uv_python``: the interpreter a ``uv run`` command runs with when the caller asked already
    (:func:`uv_run_python` of the same ``PATH`` and ``VIRTUAL_ENV``: asked here when ``None``). Raises ``OSError``
    when the environment cannot be made."""
    at = pytest_config.program_at(argv)
    if at >= len(argv):
        return list(argv)
    word, path = argv[at], env.get("PATH")
    if pytest_config.uv_run(argv[at:]) is not None:
        _uv_run_own(argv, env, workdir, out_dir, uv_python)
        return list(argv)
    python = pytest_python(word, path, script=True)
    found = shutil.which(python, path=path) if python is not None and "/" not in python else python
    if found is None or not os.path.isabs(found):
        return list(argv)
    folders = (path or "").split(os.pathsep)
    on_path = os.path.dirname(found) in folders
    own = own_environment(found, workdir, out_dir / OWN_ENV_DIR, env, os.path.dirname(found) if on_path else None)
    if own is None:
        return list(argv)
    script = [] if "python" in Path(word).name else [shutil.which(word, path=path) or word]
    if on_path:
        at_path = folders.index(os.path.dirname(found))
        env["PATH"] = os.pathsep.join([*folders[:at_path], own.bin, *folders[at_path:]])
    return [*argv[:at], own.python, *script, *argv[at + 1:]]


def program_found(argv: Sequence[str], path: str | None) -> list[str]:
    """``argv`` with its program word (past an ``env`` prefix) a bare name found on ``path`` (the run's ``PATH``) and
    no Python's replaced by the absolute path it is found at, so that a sandbox shows that file (it binds what a
    command names by absolute path; ops56: ``uv run …`` with ``uv`` in ``~/.local/bin`` did not start under
    bubblewrap or Landlock, exit status 127); ``argv`` as it is for any other, and for a program found inside a
    protected folder (the repository's). Raises nothing."""
    at = pytest_config.program_at(argv)
    if at >= len(argv) or "/" in argv[at] or "python" in Path(argv[at]).name:
        return list(argv)
    found = shutil.which(argv[at], path=path)
    if found is None or touches_protected(found):  # a file of the repository is never shown to a test run
        return list(argv)
    return [*argv[:at], os.path.abspath(found), *argv[at + 1:]]


def _uv_run_own(argv: Sequence[str], env: dict[str, str], workdir: Path, out_dir: Path,
                python: str | None = None) -> None:
    """For a ``uv run`` command (``argv``) that runs its program in the run's active environment (``VIRTUAL_ENV`` of
    ``env``: ``--no-project``, ``--active``, no project at ``workdir``; :func:`uv_run_python`): when that
    environment's interpreter has an editable install of the repository under benchmark, the run's own environment
    (:func:`~.editable_env.own_environment`, at ``out_dir/py``, with that environment's scripts) is made and named
    the active one instead (``VIRTUAL_ENV``; its ``bin`` just before the environment's on ``PATH``), so uv runs the
    program there (ops56: a test's child imported the user's checkout, HEAD's fix, as ops52's did; and ``uv run
    --active`` synced the project into the user's environment, its editable install then naming the grading copy,
    a folder removed after the run). Nothing for any other (a project's own ``.venv``: a run never takes it, ops58,
    :func:`project_run`). ``python``: that interpreter when the caller asked already (else asked here). Raises
    ``OSError`` when the environment cannot be made."""
    venv, path = env.get("VIRTUAL_ENV"), env.get("PATH")
    if not venv:
        return
    python = python or uv_run_python(workdir, shlex.join(argv), path, venv)
    if python is None or os.path.realpath(Path(python).parent.parent) != os.path.realpath(venv):
        return
    own = own_environment(python, workdir, out_dir / OWN_ENV_DIR, env, os.path.dirname(python))
    if own is None:
        return
    env["VIRTUAL_ENV"] = os.path.dirname(own.bin)
    folders = (path or "").split(os.pathsep)
    at = folders.index(os.path.dirname(python)) if os.path.dirname(python) in folders else 0
    env["PATH"] = os.pathsep.join([*folders[:at], own.bin, *folders[at:]])


def _own_pytest(workdir: Path) -> bool:
    """Whether the tree under test holds a pytest of its own at an import root (pytest's own repository):
    it comes first on ``PYTHONPATH``, so the interpreter's pytest that :func:`run_version` asks about
    is not the one that runs."""
    return any((workdir / root / name).exists() for root in (".", "src") for name in ("_pytest", "pytest"))


def write_argsfile(out_dir: Path, targets: Sequence[str]) -> None:
    """``out_dir/targets.args``: one target per line, as pytest reads ``@FILE`` (argparse: a line is one
    argument). Raises ``ValueError`` for a target holding a line break (it cannot be written so)."""
    if any("\n" in t or "\r" in t for t in targets):
        raise ValueError("a test target holds a line break")
    nofollow.write_bytes(out_dir, ARGSFILE, "".join(t + "\n" for t in targets).encode())


def run_reservation_mb(sandbox: str | SandboxBackend, memory_mb: float | None, network: TestNetwork | None) -> float:
    """MiB of the machine's memory budget one test run of ``sandbox`` reserves (:mod:`.memory_budget`): its
    memory cgroup's cap (``memory_mb``: :func:`run_tests`'s ``box_mb`` when given, else its ``memory_mb``) and
    one per service instance it starts (``network.memory_mb`` each),
    where the sandbox gets memory cgroups (:func:`~.proccap.memory_capped`); 0 where it gets none (nothing
    caps it there, nothing is reserved)."""
    name = sandbox if isinstance(sandbox, str) else sandbox.name
    if not memory_capped(name):
        return 0.0
    services = len(network.services) * (network.memory_mb or 0) if network is not None else 0
    return (memory_mb or 0) + services


def run_tests(
    workdir: Path,
    test_cmd: str,
    targets: Sequence[str],
    *,
    out_dir: Path,
    timeout_s: float | None = 600,
    test_timeout_s: float | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: str | SandboxBackend = "none",
    network: TestNetwork | None = None,
    memory_mb: float | None = TEST_MEMORY_MB,
    write_mb: float | None = TEST_WRITE_MB,
    box_mb: float | None = None,
    seals: SealScope | None = None,
    plugins: Sequence[str] = (),
    whole: Sequence[str] | None = None,
    setup: pytest_config.Setup | None = None,
) -> TestRun:
    """Run ``test_cmd`` in ``workdir`` on ``targets`` (test files or node ids, relative to
    ``workdir``) and return the per-id outcomes.

    ``out_dir`` (created; must be outside ``workdir``) receives ``tests.log`` (its last
    :data:`LOG_TAIL_BYTES`), ``outcomes.jsonl`` (or ``junit.xml``) once the command has ended; the
    command itself writes only a private temp folder (the module docstring), removed afterwards.
    ``timeout_s``: seconds for the whole run, after which
    its process group is killed (``None``: no limit). ``test_timeout_s``: seconds per test through
    pytest-timeout when installed. ``env``: the base environment (default ``os.environ``), scrubbed
    by :func:`scrubbed_env`. ``sandbox``: the
    :class:`~pytest_homefield.sandbox.backends.SandboxBackend` that wraps the command (its
    ``wrap_tests``; bubblewrap: :func:`sandboxed_argv`, no network, ``workdir`` read-only, only
    its private out folder and a private ``/tmp`` writable), or its name (``"bwrap"``, ``"none"``: as it is); the
    run's ``sandbox`` is the name of the backend that wrapped it. ``network``: the services the run
    needs (:mod:`pytest_homefield.sandbox.services`: started or reset, their ``env`` set) and the ports
    it may reach, relayed into a sandbox that has no network. ``memory_mb``: MiB of address space for
    each process of the command (``RLIMIT_AS``, also under bubblewrap; ``None``: no cap), and of memory
    for all of them in all where the sandbox gets a memory cgroup
    (:func:`~pytest_homefield.sandbox.proccap.memory_root`; past it the kernel kills one of them); a run that
    went over it has ``over_memory`` set (its tests failed or its process died for it). ``box_mb``: MiB of
    that memory cgroup when it is smaller than ``memory_mb`` (a grading's cap from the task's measured peak,
    :func:`~pytest_homefield.sandbox.limits.task_memory_mb`; ``None``: ``memory_mb``); ``RLIMIT_AS`` stays
    ``memory_mb`` (address space is not memory held). ``write_mb``: MiB
    the command may write (the module docstring; ``None``: no cap); a run stopped for it has
    ``over_writes`` set, one whose write was refused ``write_refused``. ``HOME`` and ``TMPDIR`` are
    empty folders of the run's private folder, so nothing an earlier run wrote there is seen (the
    canary twin runs, :mod:`~pytest_homefield.sandbox.twin_runs`) and what this one writes there is
    watched. ``whole``: the targets of the grading's whole run (the task's test files) when this run targets only
    some: pytest reads the configuration it reads for them (:func:`pinned_config`, conf42). ``setup``: pytest's
    choice for this run read before (:func:`pytest_setup` of these ``test_cmd``, ``targets`` and ``whole``, of
    ``workdir`` or the tree it is a copy of; twin43: read once for a canary run's files and its pin). ``seals``: a
    sealed run's sites and the ids whose reports of them count
    (:class:`~pytest_homefield.sandbox.outcomes.SealScope`, docs/contracts.md §7 "Sealed sites"): the channel
    compares each seal report with its site's value as it arrives (the run's ``seal_reports``). ``plugins``: more
    modules of ``REPORTER_DIR`` a pytest command loads (:func:`build_command`).

    Never raises for test failures; raises ``ValueError`` for an unparseable ``test_cmd`` and
    :class:`~pytest_homefield.sandbox.services.ServiceError` when a service cannot be had. A command
    that cannot be started gives a run with ``exit_code`` 127 and ``error`` set.
    """
    workdir = Path(workdir)
    public = Path(out_dir)
    make_folder(public)  # below an attempt's pinned folder: from its descriptor (link52)
    for stale in (OUTCOMES_FILE, JUNIT_FILE):
        nofollow.remove(public, stale)
    # the test process writes only a private, fresh folder; what people read is copied back after it ended,
    # once that folder is gone: whatever the test process left there (it may have filled the disk after
    # pytest finished, attacker8's F3) is freed before homefield writes a byte
    private = tempdirs.mkdtemp()
    try:
        # the run's memory cgroups (its sandbox, its services') reserved together (sandbox/memory_budget.py)
        box = box_mb if box_mb else memory_mb
        with reserve(run_reservation_mb(sandbox, box, network)):
            run, junit_data, counted = _run_private(workdir, test_cmd, targets, private, timeout_s=timeout_s,
                                                    test_timeout_s=test_timeout_s, env=env, sandbox=sandbox,
                                                    network=network, memory_mb=memory_mb, write_mb=write_mb,
                                                    box_mb=box, seals=seals, plugins=plugins, whole=whole,
                                                    setup=setup)
        try:
            tail = nofollow.read_tail(private / LOG_FILE, LOG_TAIL_BYTES)
        except OSError:
            tail = b""
    finally:
        nofollow.remove_tree(private)  # graded code wrote there: any depth (atk25)
    run.over_memory = run.over_memory or memory_cap_note(tail[-(1 << 20):], memory_mb)  # the OOM kill's first
    run.write_refused = write_cap_note(tail[-(1 << 20):], write_mb)
    run.procs_refused = over_cap_note(tail[-(1 << 20):], max_procs() if cap_by(run.sandbox) else None)
    nofollow.write_bytes(public, LOG_FILE, tail)
    run.log_path = public / LOG_FILE
    if junit_data is not None:
        nofollow.write_bytes(public, JUNIT_FILE, junit_data)
    if counted is not None:
        write_counted(public / OUTCOMES_FILE, counted)
    return run


def _run_private(workdir: Path, test_cmd: str, targets: Sequence[str], out_dir: Path, *, timeout_s: float | None,
                 test_timeout_s: float | None, env: Mapping[str, str] | None, sandbox: str | SandboxBackend,
                 network: TestNetwork | None, memory_mb: float | None = None,
                 write_mb: float | None = None, box_mb: float | None = None,
                 seals: SealScope | None = None,
                 plugins: Sequence[str] = (),
                 whole: Sequence[str] | None = None, setup: pytest_config.Setup | None = None
                 ) -> tuple[TestRun, bytes | None, list[str] | None]:
    """:func:`run_tests` with ``out_dir`` the private folder the test process may write; returns the run
    (its ``log_path`` in ``out_dir``), the JUnit XML's bytes (``None`` in reporter mode or when
    unreadable; read without following a link) and the outcome-channel lines that counted (``None``
    for a JUnit command). ``box_mb``: MiB of its memory cgroup (``None``: ``memory_mb``)."""
    box_mb = box_mb or memory_mb
    log_path = out_dir / LOG_FILE
    run_env = scrubbed_env(workdir, host_test_env(env), test_timeout_s=test_timeout_s)  # no secret of the host
    # a uv run in a project: in the active environment, synced from nothing of the tree (ops58)
    as_given, test_cmd = test_cmd, project_run(workdir, test_cmd, run_env)
    # the pytest that runs, its version asked once (conf43: the pin names the file it reads; a tree with a pytest
    # of its own runs that one, unknown), as the softener's reading asked it (soft44: run_version); ops46: a setup
    # asked for this command on this PATH (pytest_setup, for this run) holds the answer
    path = run_env.get("PATH")
    found, version = (setup.python, setup.version) if setup is not None and setup.asked == (test_cmd, path) \
        else _asked_on(workdir, test_cmd, path, run_env.get("VIRTUAL_ENV"))
    by_file = ("{junit}" not in test_cmd and bool(targets) and not any("\n" in t or "\r" in t for t in targets)
               and version is not None and version >= ARGSFILE_PYTEST)
    pin = pinned_config(workdir, test_cmd, targets, out_dir, whole, version, setup) if pytest_words(test_cmd) else []
    argv, junit = build_command(test_cmd, targets, out_dir=out_dir, argsfile=by_file, plugins=plugins, pin=pin)
    if by_file:
        write_argsfile(out_dir, targets)
    for var, name in (("HOME", "home"), ("TMPDIR", "tmp")):  # the run's own: fresh, and watched
        (out_dir / name).mkdir()
        run_env[var] = str(out_dir / name)
    uv_config_pin(workdir, test_cmd, run_env, out_dir)  # nothing above the copy (ops60)
    limits = limits_for_tests(write_mb) if write_mb else None
    channel = OutcomeChannel(EventTally(seals=seals)) if junit is None else None
    backend = backend_named(sandbox)
    run_argv: Sequence[str] = argv
    own_failed: OSError | None = None  # the run's own environment could not be made: a run that did not start
    if test_cmd != as_given and not run_env.get("VIRTUAL_ENV"):  # uv would run in a .venv of the tree's (ops58)
        own_failed = OSError(NO_ACTIVE_ENV)
    # the interpreter the command runs, shown to the sandbox (ops56: a venv's pytest script by absolute path was its
    # own argv[0], no Python, so its #! interpreter was not bound and the run did not start, 127; a uv run's, that of
    # the environment uv runs in, asked before the run's own environment replaces it)
    python = found or argv[0]
    if backend.name in (NoSandbox.name, LandlockBackend.name):  # nothing bound over the checkout: an own environment
        try:  # a uv run's interpreter is the one found (run_python knows no uv run)
            run_argv = own_environment_argv(argv, run_env, workdir, out_dir, found)
        except OSError as exc:
            own_failed = exc
    if backend.name != NoSandbox.name:
        run_argv = program_found(run_argv, path)
    # sh merges stderr into stdout so the log keeps their order; "$@" keeps argv exact
    full = ["sh", "-c", 'exec "$@" 2>&1', "sh", *run_argv]
    services = contextlib.ExitStack()  # the run's services, and the relay that carries their ports in
    try:
        service_env, relay, ports, service_dirs = services.enter_context(
            run_network(network, relays=backend.relays, folder=out_dir / "net"))
        run_env.update((k, v) for k, v in service_env.items() if not dropped_variable(k))  # soft41
        if channel is not None:
            run_env[OUTCOMES_FD_ENV] = str(channel.write_fd)
        wrapped = backend.wrap_tests(full, run_env, TestBox(workdir=workdir, out_dir=out_dir, python=python,
                                                            relay=relay, ports=ports,
                                                            tmpfs_bytes=limits.total_bytes if limits else None))
        # bubblewrap and Landlock keep the copy read-only: only an unconfined run may write it
        watch = watch_test_folders(out_dir, workdir if wrapped.backend not in ("bwrap", "landlock") else None, limits,
                                   service_dirs)
        start = time.monotonic()
        not_started: str | None = None
        try:
            if own_failed is not None:
                raise own_failed
            proc = run_process(
                wrapped.argv,
                cwd=workdir,
                env=run_env,
                timeout_s=timeout_s,
                stdout_path=log_path,
                output_cap=LOG_CAP_BYTES,
                pass_fds=(channel.write_fd,) if channel is not None else (),
                memory_cap=int(memory_mb * MIB) if memory_mb else None,
                file_cap=limits.file_bytes if limits else None,
                watch=watch,
                watch_every_s=limits.poll_s if limits else 0.5,
                box_memory=int(box_mb * MIB) if box_mb else None,  # the sandbox's memory cgroup: all in all
            )
            exit_code, timed_out, wall_s = proc.exit_code, proc.timed_out, proc.wall_s
            oom_kills, peak = proc.oom_kills, proc.peak_bytes
            if watch is not None and proc.stopped is None and not timed_out:
                watch.settle()  # once more at its end, with a walk: held to the cap however short it was
        except OSError as exc:
            not_started = f"cannot start {argv[0]}: {exc}"
            with contextlib.suppress(OSError):  # the entry replaced, never written through (link46)
                nofollow.write_bytes(log_path.parent, log_path.name, f"{not_started}\n".encode("utf-8", "replace"))
            exit_code, timed_out, wall_s, oom_kills, peak = 127, False, time.monotonic() - start, 0, None
    finally:
        services.close()
        events = channel.close() if channel is not None else None
    junit_data: bytes | None = None
    counted: list[str] | None = None
    if junit is not None:
        try:
            junit_data = nofollow.read_bytes(out_dir, JUNIT_FILE, limit=MAX_EVENT_BYTES)
        except OSError:
            junit_data = None
        parsed = parse_junit(junit_data)
    else:
        assert events is not None
        parsed, counted = events
    run = _cross_check(parsed, exit_code, timed_out, wall_s, log_path, reporter=junit is None, not_started=not_started)
    run.error = relative_error(run.error, workdir)
    run.sandbox = wrapped.backend
    run.ignored_events = parsed.ignored
    run.seal_reports = parsed.seal_reports
    run.peak_mb = round(peak / MIB, 1) if peak is not None else None
    if box_mb:  # the kernel killed a process of it in its sandbox's memory cgroup: the change's doing
        run.over_memory = oom_note(oom_kills, box_mb, "max_test_memory_mb" if box_mb == memory_mb else
                                   TASK_MEMORY_OPTION)
    if watch is not None and watch.stopped is not None:  # stopped while it wrote: it did not finish
        run.over_writes = run.error = watch.stopped
        run.finished = False
    if parsed.over is not None:  # it sent more than a run may: what came after did not count
        run.over_events = run.error = parsed.over
        run.finished = False
    return run, junit_data, counted


def last_error_line(log_path: Path, *, limit: int = 300) -> str | None:
    """The last line of pytest's own error output in the log, stripped and cut to ``limit``
    characters: what a test command that stopped before any test ran said. That is an
    ``INTERNALERROR>`` line with text after the marker, argparse's ``<prog>: error: …`` of a usage
    error, or an ``ERROR: …`` line other than ``ERROR: usage: …``; without one, the last exception line
    of a traceback (``ModuleNotFoundError: No module named 'pluggy._version'``: pytest itself failed to
    import, or ``E   ImportError: …`` under ``ImportError while loading conftest``). ``None`` when the log
    has no such line or cannot be read. The log lies in the test run's read-write output folder: it is
    read without following a link the test process put there, and only its last MiB."""
    try:
        tail = nofollow.read_tail(log_path, 1 << 20)
    except OSError:
        return None
    lines = tail.decode("utf-8", errors="replace").splitlines()[-400:]
    for i in range(len(lines) - 1, -1, -1):
        text = lines[i].strip()
        if text.startswith("INTERNALERROR>") and text[len("INTERNALERROR>"):].strip():
            return _cut(_internal_error_start(lines, i), limit)
        if _ARGPARSE_ERROR.match(text) or (text.startswith("ERROR:") and not text.startswith("ERROR: usage:")):
            return _cut(_with_what_follows(text, lines[i + 1:]), limit)
    for k in range(len(lines) - 1, -1, -1):
        m = _EXCEPTION_LINE.match(lines[k])
        if m:
            return _cut(" ".join([m.group(1), *_message_rest(lines[k + 1:])]), limit)
    return None


def _with_what_follows(text: str, after: list[str]) -> str:
    """``text``, an ``ERROR:`` line, with what it announces when it ends in ``:``: the first non-blank line of
    ``after`` (the lines that follow it in the log) and, in parentheses, the last exception line among them.
    pytest's ``ERROR: while parsing the following warning configuration:`` quotes the filter on its next line
    and ends in the traceback that says why (nub58 on dgilland/pydash: ``AttributeError: module 'pytest' has no
    attribute 'PytestRemovedIn8Warning'``, a filter older than pytest 9); the heading alone said neither."""
    if not text.endswith(":"):
        return text
    quoted = next((line.strip() for line in after if line.strip()), None)
    if quoted is None:
        return text
    causes = [m.group(1) for m in map(_EXCEPTION_LINE.match, after[1:]) if m]
    return f"{text} {quoted}" + (f" ({causes[-1]})" if causes and causes[-1] != quoted else "")


#: At most this many lines after an exception's first line are read as the rest of its message.
MESSAGE_LINES = 4


def _message_rest(after: list[str]) -> list[str]:
    """The lines that go on the message of the exception whose first line precedes ``after`` (stripped): those
    up to the end of the log, at most :data:`MESSAGE_LINES`, when nothing else follows them; ``[]`` when a blank
    line, a traceback or another exception comes after (the message ended there), or more lines do. A
    multi-line message reads whole (mine29 on mahmoud/boltons: pluggy's ``PluginValidationError: Plugin
    'tests/conftest.py' for hook 'pytest_ignore_collect'`` said nothing of its next lines,
    ``hookimpl definition: pytest_ignore_collect(path, config)`` and ``Argument(s) {'path'} are declared in the
    hookimpl but can not be found in the hookspec``: a conftest older than pytest 9)."""
    rest = [line.strip() for line in after]
    while rest and not rest[-1]:
        rest.pop()
    if (len(rest) > MESSAGE_LINES or any(not line or line.startswith(("Traceback", "File ", "=", "E "))
                                         or _EXCEPTION_LINE.match(line) for line in rest)):
        return []
    return rest


#: An ``INTERNALERROR>`` line that starts an exception's message (``pytest.PytestDeprecationWarning: …``).
_INTERNAL_EXCEPTION = re.compile(
    r"INTERNALERROR>\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Warning): \S")


def _internal_error_start(lines: list[str], last: int) -> str:
    """The line that starts the exception message of the ``INTERNALERROR>`` block ending at ``lines[last]``
    (a message of several lines, e.g. a warning turned error, ends far from its type), else that last line."""
    i = last
    while i >= 0 and lines[i].strip().startswith("INTERNALERROR>"):
        if _INTERNAL_EXCEPTION.match(lines[i].strip()):
            return lines[i].strip()
        i -= 1
    return lines[last].strip()


def relative_error(error: str | None, workdir: Path) -> str | None:
    """``error`` with the run's working folder left out of the paths it quotes (``cannot import name
    'HookimplOpts' from 'pluggy' (src/pluggy/__init__.py)``, not ``(/tmp/hf-…/tmpab12/src/…)``): each run
    has a folder of its own, so the same error read differently in every record, and the mine's summary,
    which counts equal details, called 6 candidates that failed alike 6 different failures (nu25 on
    pytest-dev/pluggy)."""
    if not error:
        return error
    for root in dict.fromkeys((str(workdir), str(workdir.resolve()))):
        error = error.replace(root.rstrip(os.sep) + os.sep, "")
    return error


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, its last one ``…`` when cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _cross_check(
    parsed: Parsed, exit_code: int | None, timed_out: bool, wall_s: float, log_path: Path, *, reporter: bool,
    not_started: str | None = None
) -> TestRun:
    """Combine parsed outcomes with the exit status into a :class:`TestRun` (pytest exit codes:
    0 ok, 1 tests failed, 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected).
    ``not_started``: why the command could not be started (its ``OSError``, said in the run's ``error``)."""
    # exit_code is None only when timed out (procs.run_process), handled first
    outcomes = parsed.outcomes
    failing = sorted(i for i, o in outcomes.items() if o in FAILING)
    collection_error = bool(parsed.collection_errors)
    collected = parsed.collected if parsed.collected is not None else len(outcomes)
    error: str | None = None
    if timed_out:
        error = "the test command timed out and was killed"
    elif exit_code is not None and exit_code < 0:
        error = f"the test command was killed by signal {-exit_code}"
    elif exit_code == 5:
        collected = 0
    elif exit_code in (2, 3, 4) and not outcomes:
        # failed before running anything: conftest import error, usage or internal error
        collection_error = True
        if not parsed.collection_errors:
            error = f"the test command exited with status {exit_code} before any test ran"
            why = last_error_line(log_path)
            if why:
                error += f": {why}"
    elif not_started is not None:  # its sandbox refused it (no uid of the pool free, no keyring of its own) or no exec
        error = f"the test command could not be run: {not_started}"
    elif exit_code in (126, 127) and not outcomes:
        error = f"the test command could not be run (exit status {exit_code}: not found or not executable)"
    elif not parsed.found:
        what = "outcome" if reporter else "JUnit XML"
        error = f"no {what} was written (exit status {exit_code})"
        why = last_error_line(log_path) if exit_code else None
        if why:  # e.g. pytest could not import itself (a snapshot's src/ shadowing one of its packages)
            error += f": {why}"
        # a custom runner that failed without writing any result: a build/import failure
        collection_error = not reporter and exit_code != 0
    elif reporter and not parsed.started:
        error = f"the reporter did not start (exit status {exit_code})"
    elif exit_code == 0 and failing:
        error = f"exit status 0 but {len(failing)} test(s) failed or errored"
    elif exit_code != 0 and not failing and not collection_error and outcomes:
        error = f"exit status {exit_code} but no test failed"
    elif exit_code != 0 and not outcomes and not collection_error:
        collection_error = not reporter
        error = f"exit status {exit_code} and no test reported"
    return TestRun(
        outcomes=outcomes,
        exit_code=exit_code,
        timed_out=timed_out,
        collection_error=collection_error,
        collected=collected,
        wall_s=wall_s,
        log_path=log_path,
        error=error,
        collection_errors=dict(parsed.collection_errors),
        test_timeouts=parsed.test_timeouts,
        skip_reasons=dict(parsed.skip_reasons),
        collected_ids=parsed.collected_ids,
        deselected=list(parsed.deselected),
        stop_lines=dict(parsed.stop_lines),
        stop_operands=dict(parsed.stop_operands),
        caught=dict(parsed.caught),
        finished=parsed.finished and not timed_out,
    )
