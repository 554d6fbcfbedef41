"""pytest entry point (``pytest11: homefield``).

Inert unless a mode option is given (``--homefield`` to run agents, ``--homefield-mine`` to mine
tasks, ``--homefield-ablate FILE`` to ablate a rules file): without one it only adds its options,
registers its hookspecs and a marker. With a mode it resolves the settings, then registers the
mode's plugin object (:mod:`.mine.plugin`, :mod:`.run.plugin` or :mod:`.ablate.plugin`), which does
the work. Everything past option registration is imported only then (issue lazy29): at the top this
module imports only pytest, :mod:`.errors` and the option table (:mod:`.settings_table`, with the ground
modules it names: :mod:`.layout`, :mod:`.records`, :mod:`.store`), since
pytest imports it in every run of the environment, plain ``pytest`` too; :mod:`.settings` (which
imports the agents' and the sandbox's parsers), the transport, the mode's plugin and git, yaml and
scipy are imported inside the hook that needs them (tests/test_plugin_inert.py).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_homefield.errors import ConfigError
from pytest_homefield.settings_table import MODE_OPTIONS, Settings, add_pytest_options, front_end

if TYPE_CHECKING:
    from pytest_homefield.report.finish import FinishedReport
    from pytest_homefield.report.gate import GateLine


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_homefield import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """In a homefield session, a repository conftest.py that cannot import a module (its package is not
    installed in this Python) ends the session with one line naming the module and the install command
    (:func:`~pytest_homefield.mine.setup_help.conftest_import_line`, a ``pytest.UsageError``: exit 4),
    not pytest's bare traceback. Without a mode option pytest reports it as before."""
    try:
        return (yield)
    except Exception as exc:
        cause, conftest = getattr(exc, "cause", None), getattr(exc, "path", None)  # pytest's ConftestImportFailure
        if (not any(getattr(early_config.known_args_namespace, m, None) for m in MODE_OPTIONS)
                or cause is None or conftest is None):
            raise
        from pytest_homefield.mine.setup_help import conftest_import_line

        try:
            root = find_root(early_config.invocation_params.dir)
        except pytest.UsageError:
            root = early_config.rootpath
        line = conftest_import_line(root, sys.executable, Path(conftest), cause)
        if line is None:
            raise
        raise pytest.UsageError(line) from None


def find_root(start: Path) -> Path:
    """The git top level of ``start`` (``git rev-parse``: one short process instead of importing
    gitpython, about 0.12 s of CPU in every homefield process, controller and xdist workers, of a mode
    that does not scan history). Raises ``pytest.UsageError`` outside a git repository or in a bare one."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--is-bare-repository", "--show-toplevel"], cwd=start,
                              capture_output=True, text=True)
    except OSError:  # no such folder (or no git at all)
        raise pytest.UsageError(f"pytest-homefield: {start} is not inside a git repository") from None
    lines = proc.stdout.splitlines()
    if lines[:1] == ["true"]:
        raise pytest.UsageError(f"pytest-homefield: {start} is a bare git repository")
    if proc.returncode != 0 or len(lines) < 2:
        raise pytest.UsageError(f"pytest-homefield: {start} is not inside a git repository")
    return Path(lines[1]).resolve()


def protect_repository(root: Path, *, note: bool) -> None:
    """Keep the repository out of every test run and sandbox of this process
    (:mod:`pytest_homefield.sandbox.protected`); with ``note``, say in one line which ``PYTHONPATH``
    entries are left out for it."""
    from pytest_homefield.sandbox.protected import outside_pythonpath, protect

    protect(root)
    dropped = outside_pythonpath(os.environ.get("PYTHONPATH", ""))[1]
    if note and dropped:
        print(f"homefield: PYTHONPATH {os.pathsep.join(dropped)!r} is inside or around the repository: left out of "
              "every test run and sandbox (a folder inside it is taken from the copy under test)", file=sys.stderr)


def _gradings_at_once(settings: Settings) -> list[tuple[int, float | None]]:
    """``(test runs at once, memory cap of each)`` of a grading of each task in ``tasks.jsonl``: the runs of
    :func:`~pytest_homefield.sandbox.twin_runs.grading_runs`; for a task mined before mining recorded them, with
    ``--max-total-memory-mb`` given, those of the twin plan of its test files at its commit
    (:func:`~pytest_homefield.run.runs_at_once.planned_runs`), else :data:`~pytest_homefield.sandbox.twin_runs.RUNS`
    and one more, a teardown twin's; and :func:`~pytest_homefield.sandbox.limits.task_memory_mb` of the task's
    ``verify.peak_mb`` (``None``: the ceiling, ``max_test_memory_mb``); ``[]`` when there are none or they cannot
    be read (the run says why later)."""
    from pytest_homefield.records import load_tasks
    from pytest_homefield.run.runs_at_once import planned_runs
    from pytest_homefield.sandbox.limits import task_memory_mb
    from pytest_homefield.sandbox.twin_runs import RUNS, grading_runs

    try:
        tasks = load_tasks(settings.tasks_path) if settings.tasks_path.exists() else []
    except Exception:  # noqa: BLE001 - a bad record is the run's to report, with its line
        return []
    planned = settings.max_total_memory_mb is not None  # a budget refused or not by it: worth reading the plans
    return [(grading_runs(t.verify, unknown=0) or (planned_runs(settings.root, t, RUNS + 1) if planned else RUNS + 1),
             task_memory_mb(t.verify.get("peak_mb"), settings.max_test_memory_mb)) for t in tasks]


def _budget_memory(settings: Settings, run: bool = False, largest_mb: float | None = None) -> float:
    """This process's machine-wide memory budget (``--max-total-memory-mb``, sandbox/memory_budget.py); one
    smaller than the largest set of sandboxes that run at once is refused at start (a usage error, one line),
    never a wait for ever. ``run``: a run's (or verify's) gradings reserve each task's runs at once of its memory
    cap (:func:`_gradings_at_once`), not :data:`~pytest_homefield.sandbox.twin_runs.RUNS` of
    ``max_test_memory_mb``. ``largest_mb``: that largest set (MiB) as the controller found it, for a worker on its
    machine (:class:`XdistHooks`; ``None``: found here: a task recorded before its runs count costs a ``git show``
    per test file and its twin plan). Returns the largest set, MiB."""
    from pytest_homefield.sandbox import memory_budget
    from pytest_homefield.sandbox.twin_runs import RUNS

    if largest_mb is None:
        gradings = (_gradings_at_once(settings) if run else []) or [(RUNS, None)]
        largest_mb = max(memory_budget.largest_mb(settings.max_test_memory_mb, settings.max_agent_memory_mb,
                                                  len(settings.services), runs, mb) for runs, mb in gradings)
    try:
        memory_budget.configure(settings.max_total_memory_mb, largest_mb)
    except memory_budget.BudgetTooSmall as exc:
        raise pytest.UsageError(f"pytest-homefield: {exc}") from None
    return largest_mb


def _session_name(argv: list[str], mode_flag: str) -> str:
    """What a session started by ``argv`` is, as another session that waits for it reads it, never with its
    arguments (a command line may carry paths and tokens, ux30): ``homefield run`` for the CLI (its
    subcommand, the first argument: the CLI's parser took it as one), else the program and ``mode_flag``,
    the session's mode (``pytest --homefield-probe``)."""
    name = os.path.basename(argv[0]) if argv else ""
    if name in ("homefield", "cli.py", "__main__.py"):
        command = argv[1] if len(argv) > 1 else ""
        return f"homefield {command}" if command.isascii() and command.isalpha() and len(command) <= 20 else "homefield"
    return f"{name or 'python'} {mode_flag}".strip()


def _say_phase_waits(config: pytest.Config) -> None:
    """The session's lines about the machine's phase lock (:func:`pytest_homefield.sandbox.phases.set_notice`):
    on stderr past pytest's output capture (an attempt waits inside an item), from a worker too; how this
    session is named to another that waits for it (:func:`_session_name`), and what makes its processes one
    session (the command that started it, a worker's controller's: only its digest is written)."""
    import contextlib

    from pytest_homefield.sandbox import phases

    argv = list(config.workerinput.get("mainargv") or []) if hasattr(config, "workerinput") else list(sys.argv)
    modes = ("homefield", "homefield_mine", "homefield_probe", "homefield_ablate")
    flag = next((f"--{dest.replace('_', '-')}" for dest in modes if getattr(config.option, dest, None)), "")
    label = _session_name(argv, flag)
    session = "\0".join(argv)

    def say(line: str) -> None:
        capman = config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext():
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    phases.set_notice(say, label, session)
    config.add_cleanup(lambda: phases.set_notice(None))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "homefield: an item created by pytest-homefield (a task attempt)")
    mine = bool(config.option.homefield_mine)
    run = bool(config.option.homefield)
    ablate = config.option.homefield_ablate
    probe = bool(config.option.homefield_probe)
    if not (mine or run or ablate or probe):
        return
    if mine + run + bool(ablate) + probe > 1:
        raise pytest.UsageError("pytest-homefield: give one of --homefield, --homefield-mine, --homefield-probe and "
                                "--homefield-ablate, not several")
    if config.option.homefield_front_end:  # the homefield script's session names its flags, xdist workers too (ux65)
        before = front_end(config.option.homefield_front_end)
        config.add_cleanup(lambda: front_end(before))
    from pytest_homefield.layout import HomefieldDir
    from pytest_homefield.sandbox.procs import guard_session
    from pytest_homefield.settings import flags_from_pytest, parse_duration, resolve_settings
    from pytest_homefield.transport import ControllerWriter, TransportPlugin

    config.add_cleanup(guard_session(worker=hasattr(config, "workerinput")))
    from pytest_homefield.terminal.own_output import own_output

    own_output(config)  # the repository's plugins and conftests print nothing into homefield's session (exc35)
    root = find_root(config.invocation_params.dir)
    protect_repository(root, note=not hasattr(config, "workerinput"))
    if hasattr(config, "workerinput"):  # a local worker: the copies its controller found (XdistHooks)
        from pytest_homefield.sandbox.copies_by_content import adopt

        adopt(config.workerinput.get("homefield_copies", ()))
    try:
        settings = resolve_settings(root, flags_from_pytest(config.option), mode="mine" if mine else "run")
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    from pytest_homefield.sandbox.proccap import configure as cap_processes

    cap_processes(settings.max_procs, settings.max_agent_memory_mb)  # every sandbox this process wraps (a worker's too)
    given = config.workerinput.get("homefield_largest_mb") if hasattr(config, "workerinput") else None
    largest_mb = _budget_memory(settings, run=run, largest_mb=given)  # a local worker: its controller's (XdistHooks)
    _say_phase_waits(config)
    plugin: Any
    if ablate:
        from pytest_homefield.ablate.ablate_plugin import AblatePlugin

        plugin = AblatePlugin(config, settings, str(ablate))
    elif mine:
        from pytest_homefield.mine.mine_plugin import MinePlugin

        plugin = MinePlugin(config, settings)
    elif probe:
        from pytest_homefield.probe.probe_plugin import ProbePlugin

        plugin = ProbePlugin(config, settings)
    else:
        from pytest_homefield.run.run_plugin import RunPlugin

        plugin = RunPlugin(config, settings, LazyRunReports())
    config.pluginmanager.register(plugin, "homefield-mode")
    # workers attach their records to reports; the controller writes them (docs/contracts.md §4)
    config.pluginmanager.register(
        TransportPlugin(ControllerWriter(HomefieldDir(root).path), is_worker=hasattr(config, "workerinput"),
                        scope=plugin.message_scope, resume_hint=getattr(plugin, "resume_hint", None)),
        "homefield-transport")
    if not hasattr(config, "workerinput") and not settings.list_candidates and not probe:  # probe: pytest's own line
        from pytest_homefield.terminal.hooks import ProgressHooks

        verifying = bool(getattr(plugin, "verifying", False))  # homefield verify: a run of oracle (and attacks)
        config.pluginmanager.register(ProgressHooks(
            config, "mine" if mine else "run", label_for=plugin.item_label, subject_for=plugin.item_subject,
            size_for=getattr(plugin, "item_size", None),  # a mine's candidates: their test bytes weigh the ETA
            name="verify" if verifying else None, selected_line=plugin.selected_line if verifying else None,
            # a shard's part with --shard; an ablation (which has no shards) may have no session yet
            budget_usd=None if mine else settings.budget if ablate else plugin.session.budget_usd,
            full_total=plugin.expected_items(),
            # a mine's bounds end it sooner than its candidates do: the ETA says the soonest end (nu21)
            goal=("kept", settings.stop_after_tasks) if mine and settings.stop_after_tasks else None,
            budget_s=parse_duration(settings.time_budget) if mine and settings.time_budget else None),
            "homefield-progress")
    if not hasattr(config, "workerinput"):  # JUnit XML is written on the controller (issue 33)
        from pytest_homefield.terminal.hooks import InertReasons
        from pytest_homefield.terminal.junit import JunitHooks

        config.pluginmanager.register(InertReasons(), "homefield-inert-reasons")

        config.pluginmanager.register(JunitHooks(config, unsolved=settings.junit_unsolved), "homefield-junit")
    if config.pluginmanager.hasplugin("xdist"):
        restarts = None if hasattr(config, "workerinput") else bound_restarts(config.option)
        config.pluginmanager.register(XdistHooks(plugin, largest_mb, restarts), "homefield-xdist")
    gc.freeze()  # the modules imported so far live to the end of the session: see pytest_sessionfinish


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """After the mode's own session finish (a run's report imports numpy): what the session
    imported is moved out of the garbage collector's reach (``gc.freeze``), as ``pytest_configure`` did
    with the mode's modules. Those objects live until the process exits, and pytest's five
    ``gc.collect()`` calls at exit (its unraisable-exception check) and the automatic collections
    during the session otherwise walk all of them: about 0.3 s of CPU per homefield process (controller
    and each xdist worker), measured on the fixture repository. Objects made later are collected as
    before. Plain ``pytest`` (no mode) is left alone."""
    if session.config.pluginmanager.has_plugin("homefield-mode"):
        gc.freeze()


class LazyRunReports:
    """The report package's side of a run (:data:`pytest_homefield.report.finish.RUN_REPORTS`, the protocol
    :class:`pytest_homefield.run.session.RunReports`), imported when one of its methods is first called: an
    xdist worker builds no report (``--adaptive`` asks it :meth:`not_needed`), and importing ``report.finish``
    imported the whole report package, 26 modules, about 50 ms of CPU in every worker (speed32)."""

    def finish(self, run_dir: Path, tasks_path: Path) -> FinishedReport:
        from pytest_homefield.report.finish import RUN_REPORTS

        return RUN_REPORTS.finish(run_dir, tasks_path)

    def worse_than(self, candidates: Sequence[Path], baseline: Path, *, alpha: float) -> list[GateLine]:
        from pytest_homefield.report.finish import RUN_REPORTS

        return RUN_REPORTS.worse_than(candidates, baseline, alpha=alpha)

    def not_needed(self, results: Sequence[Mapping[str, Any]], agents: Sequence[tuple[str, str | None]], agent: str,
                   attempt: int, *, looks: int, alpha: float, margin: float, run_dir: Path | None = None,
                   session: str | None = None) -> str | None:
        from pytest_homefield.report.finish import RUN_REPORTS

        return RUN_REPORTS.not_needed(results, agents, agent, attempt, looks=looks, alpha=alpha, margin=margin,
                                      run_dir=run_dir, session=session)


#: Restarts of crashed workers a session of ``--tx`` workers without ``-n`` is allowed per worker: xdist's own
#: default with ``-n`` (``--max-worker-restart``, 4 per worker), which it leaves unbounded without ``-n``.
RESTARTS_PER_WORKER = 4


def bound_restarts(option: Any) -> int | None:
    """On the controller, before xdist's session reads it: a session of ``--tx`` workers without ``-n`` and
    without ``--max-worker-restart`` gets :data:`RESTARTS_PER_WORKER` per worker its ``--tx`` specs start (``3*popen``
    counts 3). xdist bounds restarts only with ``-n`` and otherwise replaces a worker that crashed after it was
    ready without end (ops64: a remote worker crashing in collection, replaced again and again). Sets
    ``option.maxworkerrestart`` and returns the bound; ``None`` (nothing set) for any other session."""
    tx = getattr(option, "tx", None) or []
    if (not tx or getattr(option, "numprocesses", None) or getattr(option, "maxworkerrestart", None) is not None
            or getattr(option, "dist", "no") == "no"):
        return None
    workers = 0
    for spec in tx:
        count, star, _ = str(spec).partition("*")
        workers += int(count) if star and count.isdigit() else 1
    option.maxworkerrestart = str(RESTARTS_PER_WORKER * workers)
    return RESTARTS_PER_WORKER * workers


class XdistHooks:
    """xdist-only hooks, registered only when xdist is installed (pytest's optional-plugin pattern)."""

    def __init__(self, mode_plugin: Any, largest_mb: float | None = None, restarts: int | None = None) -> None:
        """``largest_mb``: the largest set of sandboxes at once this controller found (:func:`_budget_memory`), for
        its workers on this machine (``None``: each finds its own). ``restarts``: the bound homefield set on
        crashed workers' restarts (:func:`bound_restarts`; ``None``: xdist's own or none), said when reached."""
        self.mode_plugin = mode_plugin
        self.largest_mb = largest_mb
        self.restarts = restarts
        self.crashed = 0  # workers that went down with an error after they were ready
        self.worker_pids: list[int] = []

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput.update(self.mode_plugin.workerinput())
        spec = getattr(node.gateway, "spec", None)
        if getattr(spec, "popen", False) and not getattr(spec, "via", None):  # this machine: its file system
            from pytest_homefield.sandbox.copies_by_content import found_so_far

            bwrap = sys.modules.get("pytest_homefield.sandbox.bwrap")  # not imported: no probe, no sandbox here
            if bwrap is not None:
                bwrap.system_masks()  # once per process: the walk each worker's first sandbox would do
            node.workerinput["homefield_copies"] = found_so_far()
            if self.largest_mb is not None:
                node.workerinput["homefield_largest_mb"] = self.largest_mb
        popen = getattr(getattr(node.gateway, "_io", None), "popen", None)  # execnet's popen gateway
        if popen is not None:
            self.worker_pids.append(int(popen.pid))

    @pytest.hookimpl(tryfirst=True)  # before xdist's reporter prints the worker's traceback
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """On the controller: a worker that went down before it was ready (xdist sets ``node.workerinfo`` when it
        is) failed at start-up (its ``pytest_configure``: a usage error, a remote host lacking what it needs). Its
        replacement would fail alike, and xdist without ``-n`` replaces a crashed worker without end (ops63: 85
        replacements in 200 s). The session ends here with one line, exit 4, naming the worker and its error's
        last line. A worker that crashes later (an attempt killed it) is replaced as before, within xdist's
        ``--max-worker-restart`` (:func:`bound_restarts` sets it for ``--tx`` without ``-n``); past the bound
        homefield set, one line says why the session stopped, before xdist's own."""
        if error and "workerinfo" in vars(node):
            self.crashed += 1
            if self.restarts is not None and self.crashed == self.restarts + 1:
                reporter = node.config.pluginmanager.get_plugin("terminalreporter")
                if reporter is not None:
                    reporter.write_line(
                        f"pytest-homefield: {self.crashed} xdist workers crashed after start-up, more than the "
                        f"{self.restarts} restarts a --tx session without -n is allowed ({RESTARTS_PER_WORKER} per "
                        "worker, as xdist allows with -n; --max-worker-restart sets it): the session stopped")
        if not error or "workerinfo" in vars(node):
            return
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
        why = lines[-1].removeprefix("pytest.UsageError: ") if lines else "no error text"
        spec = getattr(node.gateway, "spec", None)
        where = "--tx " + str(spec).split("//", 1)[1] if str(spec).startswith("execmodel=") else f"--tx {spec}"
        pytest.exit(f"pytest-homefield: xdist worker {node.gateway.id} ({where}) failed at start-up: {why[:500]}; "
                    "the session stopped", returncode=4)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        """Ctrl-C reaches only the controller when it is sent to its pid: stop the workers now (each
        stops its attempt's process tree, records nothing for it and removes its temp folders)
        rather than letting them finish their items."""
        from pytest_homefield.sandbox.procs import signal_processes

        signal_processes(self.worker_pids)
