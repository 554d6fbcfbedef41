"""The ``homefield`` console script (docs/contracts.md §2).

``mine``, ``run`` and ``verify`` translate their flags into ``--homefield-*`` options and call
``pytest.main`` once; ``report`` and ``plan`` read ``.homefield/`` directly and start no pytest
session. Arguments after ``--`` go to pytest unchanged; ``-n``, ``-k``, ``-x``, ``-v`` and
``--junitxml`` are also accepted directly.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_homefield.errors import ConfigError, ScanError
from pytest_homefield.layout import VERIFY_PREFIX, HomefieldDir
from pytest_homefield.report.formats import REPORT_FORMATS
from pytest_homefield.settings import (
    add_cli_options,
    flags_from_pytest,
    resolve_settings,
    spelled_for,
)
from pytest_homefield.settings_table import option

if TYPE_CHECKING:
    from pytest_homefield.records import Task

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block): ``homefield run: argument --attempts: invalid
    int value: 'x' (see homefield run --help)``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _as_typed_plugin(argv: Sequence[str], root: Path, mode: str) -> object:
    """A plugin of the session a command starts: a usage error of the session (a bad ``--resume``, an
    unknown agent in ``--fail-under``) names the options as the user gave them
    (:func:`pytest_homefield.argv.as_typed`), not the ``--homefield-*`` options the command made.
    Built here: pytest is imported only by the commands that start a session."""
    import pytest

    from pytest_homefield.argv import as_typed

    class AsTyped:
        @pytest.hookimpl(wrapper=True)
        def pytest_cmdline_main(self, config: pytest.Config) -> Generator[None, Any, Any]:
            try:
                return (yield)
            except pytest.UsageError as exc:
                raise pytest.UsageError(*(as_typed(str(a), argv, root, mode=mode) for a in exc.args)) from None

    return AsTyped()


def _passthrough(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--numprocesses", dest="numprocesses", default=None,
                   help="xdist workers (a number, auto or logical)")
    p.add_argument("-k", dest="keyword", default=None, help="select items by keyword (task id, agent)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first error")
    p.add_argument("-v", "--verbose", action="count", default=0, help="one line per item")
    p.add_argument("--junitxml", default=None,
                   help="write JUnit XML here (unsolved attempts as <failure>; homefield.* values in <system-out>)")
    p.add_argument("--keep-addopts", action="store_true", help="keep the repository's pytest addopts")


def _merge_flag(p: argparse.ArgumentParser, what: str) -> None:
    """``--merge DIR…`` (CLI only, no pytest session: :mod:`pytest_homefield.commands.merge`)."""
    p.add_argument("--merge", nargs="+", metavar="DIR", default=None,
                   help=f"merge the {what} of N {option('shard', 'cli')} K/N sessions (from other machines) into "
                        "this .homefield/; runs nothing")


def build_parser(*, export_arguments: bool = True) -> argparse.ArgumentParser:
    """The argparse parser with every subcommand; ``export_arguments=False`` lists ``export`` without its
    arguments (they import the exporters, which ``report`` and ``status`` do not need)."""
    parser = _Parser(prog="homefield", description="Your git history as a benchmark for coding agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("mine", help="find commits whose tests go red→green and write .homefield/tasks.jsonl")
    add_cli_options(p, "mine")
    _merge_flag(p, "mine folders (.homefield/mine/<id>/, or a .homefield/ holding one)")
    _passthrough(p)
    p = sub.add_parser("run", help="run agents on the mined tasks (one pytest item per task × agent × attempt)")
    add_cli_options(p, "run")
    _passthrough(p)
    p = sub.add_parser("probe", help="memorization probe: can an agent write each task's fix from its message alone? "
                       "(one pytest item per task × agent × sample, judged against a control)")
    add_cli_options(p, "probe")
    _merge_flag(p, ".homefield/probe/ folders")
    _passthrough(p)
    p = sub.add_parser("verify", help="re-run oracle on every task: find tasks this environment no longer passes")
    add_cli_options(p, "verify")
    _passthrough(p)
    p = sub.add_parser("ablate", help=f"which rules of CLAUDE.md / AGENTS.md matter: the plan, then with "
                                      f"{option('yes', 'cli')} one variant per rule run and tested against the "
                                      "full file")
    p.add_argument("rules_file", metavar="FILE", help="the rules file, e.g. CLAUDE.md or AGENTS.md")
    add_cli_options(p, "ablate")
    _merge_flag(p, "ablation folders (.homefield/ablate/<id>/)")
    _passthrough(p)
    p = sub.add_parser("report", help="print and save the report of one or more runs (no tests run)")
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="runs to report on together (default: the newest)")
    p.add_argument("--format", choices=list(REPORT_FORMATS), default="text",
                   help="what to print: text, md or json on stdout; html prints the path of the saved file "
                        "(md, json and html are always saved in the run folder)")
    p.add_argument("-v", "--verbose", action="count", default=0)
    add_cli_options(p, "report")
    sub.add_parser("status", help="mines, runs, ablations and probes in progress or finished, their folders, and "
                   "which run `homefield report` picks")
    p = sub.add_parser("plan", help="agent runs, hours and USD a run would take, before anything is spent")
    add_cli_options(p, "plan")
    p.add_argument("--probe", action="store_true", help="plan a `homefield probe` instead: calls and USD")
    p = sub.add_parser("export", help="write the tasks as SWE-bench instances for other harnesses (no tests run)")
    if export_arguments:
        from pytest_homefield.commands.export import add_export_arguments

        add_export_arguments(p)
    p = sub.add_parser("envs", help=f"list the uv environments ({option('env', 'cli')} uv) in the user cache; "
                                    "--prune removes the ones no task uses")
    p.add_argument("--prune", action="store_true",
                   help="remove environments no task of this repository uses (kept: those another repository "
                        "has used, those in use)")
    p = sub.add_parser("services", help="list the services of .homefield.yml; --check starts each once, waits, "
                       "resets and stops it")
    p.add_argument("--check", action="store_true", help="start each service, wait until ready, reset, stop")
    p = sub.add_parser("tasks", help="list the mined tasks with their spec score and its parts (no tests run)")
    p.add_argument("-v", "--verbose", action="store_true", help="also each prompt and what it does not name")
    p = sub.add_parser("view", help="write a static site of a run into its folder: every attempt's transcript, "
                       "diff and hidden tests; every task's attempts side by side")
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="runs to show together (default: the newest)")
    p.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1 and print its URL (Ctrl-C stops)")
    p.add_argument("--port", type=int, default=0, help="the port of --serve (default: a free one)")
    p = sub.add_parser("demo", help="build the bundled example repository, mine it, run reference agents, report")
    p.add_argument("--dir", default=None, help="where to build the example repository (default: a temp folder)")
    p.add_argument("-n", "--numprocesses", dest="numprocesses", default="auto",
                   help="xdist workers of its mine and its run: a number, or auto (the default: one per core)")
    return parser


def _root() -> Path:
    """The top of the git work tree around the current folder (``git rev-parse``: one short process
    instead of importing gitpython, which ``report`` and ``plan`` do not need). Raises
    ``SystemExit`` with one line outside a repository or in a bare one."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--is-bare-repository", "--show-toplevel"], cwd=Path.cwd(),
                              capture_output=True, text=True)
    except OSError as exc:
        raise SystemExit(f"homefield: cannot run git: {exc}") from None
    lines = proc.stdout.splitlines()
    if lines[:1] == ["true"]:
        raise SystemExit("homefield: this is a bare git repository")
    if proc.returncode != 0 or len(lines) < 2:
        raise SystemExit(f"homefield: {Path.cwd()} is not inside a git repository")
    return Path(lines[1]).resolve()


def _cmd_report(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    from pytest_homefield.errors import MergeError
    from pytest_homefield.records import load_tasks, tasks_digest
    from pytest_homefield.report import compute_report, write_reports
    from pytest_homefield.report.gate import GateError, gate_summary, worse_than
    from pytest_homefield.report.shard_checks import check_runs
    from pytest_homefield.report.which import default_run, which_run_lines

    home = HomefieldDir(_root())
    runs_root = home.runs
    ids = list(ns.run_ids)
    running: list[str] = []
    summaries = None
    if not ids:
        try:  # the newest run no session is running (issue 35): a run just started is not "the" report
            newest, running, summaries = default_run(runs_root)
        except ValueError as exc:  # RunError: a meta.json that cannot be read
            print(f"homefield report: {exc}", file=sys.stderr)
            return 2
        ids = [newest] if newest else []
    if not ids:
        print(f"homefield report: no runs in {runs_root}", file=sys.stderr)
        return 2
    dirs = []
    for rid in ids:
        if not home.has_run(rid):
            print(f"homefield report: no run {rid!r} in {runs_root}", file=sys.stderr)
            return 2
        dirs.append(home.run_dir(rid))
    try:
        tasks_now = home.tasks if home.tasks.exists() else None
        merged = check_runs(dirs, [t.id for t in load_tasks(tasks_now)] if tasks_now else (),
                            tasks_digest(tasks_now) if tasks_now else None)
        settings = resolve_settings(home.root, vars(ns), mode="run")
    except MergeError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except ConfigError as exc:  # the flag as typed (--alpha), not the session's --homefield-alpha
        from pytest_homefield.argv import as_typed

        print(f"homefield report: {as_typed(str(exc), argv, home.root)}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:  # RecordError, RunError, StoreError: one line naming the file
        print(f"homefield report: {exc}", file=sys.stderr)
        return 2
    try:
        report = compute_report(dirs, load_tasks(home.tasks), stamp=True)  # made_by: the viewer may reuse it
        report.incomplete = list(merged.incomplete)
        report.notes.extend(merged.incomplete)
        if merged.reconciled:
            report.notes.append(f"{merged.reconciled} result(s) present in two shards with the same outcome "
                                "counted once.")
        paths = write_reports(report, dirs[0] if len(dirs) == 1 else runs_root / ("+".join(ids))[:120])
    except (ValueError, OSError) as exc:  # RecordError, RunError, StoreError: one line naming the file
        print(f"homefield report: {exc}", file=sys.stderr)
        return 2
    # which run this is, on stderr: stdout stays the report alone (md, json)
    for line in which_run_lines(runs_root, ids, by_default=not ns.run_ids, summaries=summaries) + running:
        print(line, file=sys.stderr)
    fmt = REPORT_FORMATS[ns.format]
    verdict = (_verify_verdict(home, ids, load_tasks(home.tasks))
               if ns.format == "text" and not ns.verbose and not settings.fail_if_worse_than else None)
    if verdict is not None:  # a verify --attacks run: its verdict, as verify printed it (-v: the agents' report)
        print("\n".join(verdict))
        print(f"(the agents' report of this verify run: homefield report {ids[0]} -v)", file=sys.stderr)
        print(f"See each attempt: homefield view {' '.join(ids)}", file=sys.stderr)
        return 0
    saved = next((p for p in paths if fmt.saved and p.name == fmt.file_name()), None)
    if not fmt.printed:
        print(saved)
    else:  # a saved format is printed as written: rendering it again cost a 1,000-task report 0.1 s (issue 35)
        print(saved.read_text(encoding="utf-8") if saved is not None else fmt.render(report))
    for line in merged.incomplete:
        print(line, file=sys.stderr)
    status = 0
    if settings.fail_if_worse_than:
        try:
            gates = worse_than(dirs, home.run_dir(settings.fail_if_worse_than), alpha=settings.alpha)
        except GateError as exc:
            print(f"gate error: {exc}", file=sys.stderr)
            return 2
        for g in gates:
            print(g.text, file=sys.stderr)
        print(gate_summary(gates), file=sys.stderr)
        if merged.incomplete:
            print("gate: refused: the runs are incomplete (a missing shard could hide a regression)", file=sys.stderr)
            status = 1
        if any(g.worse for g in gates):
            status = 1
    sys.stdout.flush()  # the last line, after the report on stdout: how to see each attempt (issue 34)
    print(f"See each attempt: homefield view {' '.join(ids)}", file=sys.stderr)
    return status


def _verify_verdict(home: HomefieldDir, ids: Sequence[str], tasks: Sequence[Task]) -> list[str] | None:
    """The verdict lines of ``ids`` when they are one ``homefield verify --attacks`` run
    (:func:`~pytest_homefield.commands.verify.verify_run_lines`), else ``None``."""
    if len(ids) != 1 or not ids[0].startswith(VERIFY_PREFIX):
        return None
    from pytest_homefield.commands.verify import verify_run_lines

    return verify_run_lines(home.run_dir(ids[0]), tasks)


def _cmd_list_candidates(ns: argparse.Namespace, root: Path) -> int:
    """``homefield mine --list-candidates``: the scan alone, no pytest session, no tests run."""
    from pytest_homefield.mine.pipeline import scan_options
    from pytest_homefield.mine.scan import format_scan, scan

    flags = {k: v for k, v in vars(ns).items()}
    try:
        settings = resolve_settings(root, flags, mode="mine")
        result = scan(root, scan_options(settings))
    except (ConfigError, ScanError, ValueError) as exc:
        print(f"homefield mine: {exc}", file=sys.stderr)
        return 2
    print(format_scan(result, verbose=True))
    return 0


def _cmd_plan(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    from pytest_homefield.argv import as_typed
    from pytest_homefield.commands.plan import plan_text, probe_plan_text
    from pytest_homefield.errors import AgentSpecError

    root = _root()
    flags = {o: getattr(ns, o, None) for o in vars(ns) if o != "probe"}
    try:
        settings = resolve_settings(root, {**flags_from_pytest(argparse.Namespace()), **flags}, mode="run")
        print(probe_plan_text(settings) if ns.probe else plan_text(settings))
    except (ConfigError, ValueError, AgentSpecError) as exc:  # flags named as typed (--attempts)
        print(f"homefield plan: {as_typed(str(exc), argv, root)}", file=sys.stderr)
        return 2
    return 0


#: The exit status of a command whose reader went away (``homefield status | head -3``): a shell's for
#: a process SIGPIPE ended, 128 + 13.
BROKEN_PIPE_EXIT = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``homefield`` script; returns the exit status. A reader that closes the pipe
    early (``homefield status | head -3``, ``homefield tasks | head``) ends the command quietly with
    :data:`BROKEN_PIPE_EXIT`, as a shell tool ends, not with a traceback (ref28): the rest of stdout goes
    to ``/dev/null``, so the interpreter's own flush at exit has nothing to complain about."""
    try:
        with spelled_for("cli"):  # messages name this script's flags, --attempts, not pytest's (ux65)
            status = _main(argv)
        sys.stdout.flush()  # inside the try: a pipe closed before the last buffered line is this case too
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return BROKEN_PIPE_EXIT


def _main(argv: Sequence[str] | None = None) -> int:
    """:func:`main` without the handling of a closed stdout."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    ns, rest = build_parser(export_arguments=argv[:1] == ["export"]).parse_known_args(argv)
    if rest:  # named under the command's own help (argparse's top level would say "homefield: …")
        hint = ""
        if ns.command == "ablate" and "--plan" in rest:  # `homefield plan` exists; ablate plans unless --yes
            hint = f"; homefield ablate prints its plan unless {option('yes', 'cli')} is given: leave out --plan"
        print(f"homefield {ns.command}: unrecognized arguments: {' '.join(rest)} (see homefield {ns.command} --help)"
              + hint, file=sys.stderr)
        return 2
    if ns.command == "report":
        # a short process that builds tens of thousands of small objects and frees them by reference
        # counting: the cyclic collector's passes over them cost a 1,000-task report ~8 % (issue 35)
        gc.disable()
        try:
            return _cmd_report(ns, argv)
        finally:
            gc.enable()
    if ns.command == "plan":
        return _cmd_plan(ns, argv)
    if ns.command == "status":
        from pytest_homefield.commands.status import run_status

        return run_status(_root())
    if ns.command == "export":
        from pytest_homefield.commands.export import run_export

        return run_export(_root(), ns)
    if ns.command == "view":
        from pytest_homefield.commands.view import run_view

        return run_view(_root(), ns)
    if ns.command == "envs":
        try:
            envs_root: Path | None = _root()
        except SystemExit:
            envs_root = None
        from pytest_homefield.commands.envs import run_envs

        return run_envs(envs_root, prune=ns.prune)
    if ns.command == "services":
        from pytest_homefield.commands.services import run_services

        return run_services(_root(), check=bool(ns.check))
    if ns.command == "tasks":
        from pytest_homefield.commands.tasks import run_tasks

        return run_tasks(_root(), verbose=bool(ns.verbose))
    if ns.command == "demo":
        from pytest_homefield.commands.demo import run_demo

        return run_demo(ns)
    import pytest

    from pytest_homefield.argv import (
        check_flags,
        pytest_args,  # here: it loads the agents and sandbox (0.2 s), report needs neither
    )

    root = _root()
    bad = check_flags(ns, ns.command, root, argv)
    if bad is not None:  # one line naming the flag as typed (or the .homefield.yml key), before any session
        print(f"homefield {ns.command}: {bad}", file=sys.stderr)
        return 2
    spelling = _as_typed_plugin(argv, root, "mine" if ns.command == "mine" else "run")
    if getattr(ns, "merge", None):
        from pytest_homefield.commands.merge import run_merge

        return run_merge(ns, root)
    if ns.command == "mine" and ns.list_candidates:
        return _cmd_list_candidates(ns, root)
    if ns.command == "ablate":
        from pytest_homefield.commands.ablate import run_ablate

        return run_ablate(ns, root, extra, plugins=[spelling])
    if ns.command == "verify":
        from pytest_homefield.commands.verify import run_verify

        return run_verify(root, pytest_args(ns, "verify", root, extra), attacks=bool(ns.attacks), plugins=[spelling])
    return int(pytest.main(pytest_args(ns, ns.command, root, extra), plugins=[spelling]))


if __name__ == "__main__":
    sys.exit(main())
