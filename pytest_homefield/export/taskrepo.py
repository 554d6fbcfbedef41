"""Tasks as a swebench 5 *task repository* (``homefield export --format swe-bench``).

swebench 5 evaluates one's own repository from a task repository (``swebench/task/repo.py``; CLI
``swebench dataset check|build``, ``swebench eval DATASET --task-repo PATH``)::

    sweb.yaml                       datasets and splits
    tasks/<instance_id>/task.yaml   instance_id, repo, version, base_commit, split, image, log_parser,
                                    eval_type, datasets (+ created_at, environment_setup_commit)
    tasks/<instance_id>/tests.json  {"FAIL_TO_PASS": [...], "PASS_TO_PASS": [...]}
    tasks/<instance_id>/problem_statement.md, gold.patch, test.patch, eval.sh, Dockerfile
    instances/<split>.jsonl         the flat instance file (one JSON object a line, every value a string)

``instances/`` holds that one file alone, so ``datasets.load_dataset("json", data_dir=…)`` and
mini-swe-agent (which loads every file of a folder) read each task once, and
``swebench.harness.utils.load_swebench_dataset`` reads the file itself. Each flat instance carries the
fields swebench 5's ``make_test_spec`` needs (``image``, ``eval_script``, ``log_parser``,
``eval_type``) and mini-swe-agent's ``image_name``.

The image (``Dockerfile``): ``python:<major.minor>-slim`` (the task's environment Python, else the
exporting interpreter's), git, the repository cloned at ``base_commit`` into ``/testbed``, its
declaration installed as homefield installs it (:func:`install_lines`), then the task's ``setup_cmd``.
``eval.sh`` first undoes every change of the patch under evaluation that homefield's grading would
not carry (the lines of :mod:`pytest_homefield.run.eval_undo`: a ``conftest.py``, test configuration,
test files, …), resets the hidden test files, applies ``test.patch``, runs the test command with ``-rA`` on the
files holding the FAIL_TO_PASS/PASS_TO_PASS ids between swebench's markers, and resets the test
files again, as the harness's own eval scripts do.

swebench's ``parse_log_pytest`` splits a status line at whitespace, so a test id containing whitespace
could never match: such ids are exported escaped (:func:`escaped_id`, in ``tests.json`` and the instance)
and ``eval.sh`` loads a small plugin (:data:`ID_PLUGIN`) that prints a status line for each in that form
(:attr:`Exported.escaped_ids`).
"""

from __future__ import annotations

import json
import math
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.envs.declaration import Declaration
from pytest_homefield.records import Task
from pytest_homefield.sandbox.limits import TEST_MEMORY_MB
from pytest_homefield.sandbox.snapshot import RAW_ATTRIBUTES
from pytest_homefield.sandbox.testrun import unsynced_command
from pytest_homefield.store import write_atomic

__all__ = ["LOG_PARSER", "EVAL_TYPE", "START", "END", "ID_PLUGIN", "Exported", "image_name", "escaped_id",
           "carried_ids", "python_version", "install_lines", "dockerfile", "eval_script", "own_git_lines", "task_yaml",
           "write_task_repo", "clone_url"]

LOG_PARSER = "parse_log_pytest"
EVAL_TYPE = "pass_and_fail"
#: The markers swebench slices the test output between (``swebench.harness.constants``).
START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
_HEREDOC = "EOF_HOMEFIELD_7f3a9c"
#: s of ``run_timeout`` when the settings cannot be read (the setting's default).
RUN_TIMEOUT_S = 600.0
#: eval.sh's time limit when none is given: ``(seconds, how homefield's grading names that bound)``, the run
#: timeout's default.
DEFAULT_LIMIT = (RUN_TIMEOUT_S, f"{RUN_TIMEOUT_S:g} s")
#: s between ``timeout``'s TERM and its KILL of the test command's process group.
KILL_AFTER_S = 10
_PY_EXE = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")


def image_name(instance_id: str, namespace: str = "swebench") -> str:
    """The image name swebench derives for an instance (``swebench.task.checks.expected_image``):
    ``swebench/sweb.eval.x86_64.<id>:latest``, lower-cased, ``__`` → ``_1776_``."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id}:latest".lower().replace("__", "_1776_")


def escaped_id(test_id: str) -> str:
    """``test_id`` with every whitespace character (what ``str.split()`` splits at) as a Python escape
    (``\\x20``, ``\\u3000``): the form of a test id that ``eval.sh`` prints for swebench's log parser."""
    def one(m: re.Match[str]) -> str:
        n = ord(m.group())
        return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"

    return re.sub(r"\s", one, test_id)


def carried_ids(ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(the ids as exported, the ids that held whitespace)``: swebench's ``parse_log_pytest`` splits each
    status line at whitespace, so an id holding any would never match; it is exported escaped
    (:func:`escaped_id`), and ``eval.sh`` prints a status line for it in that form (:data:`ID_PLUGIN`).
    nu28 on andialbrecht/sqlparse: 2 of 13 tasks left out whole, 266 ids of 11 more, when they were dropped."""
    return [escaped_id(i) for i in ids], [i for i in ids if re.search(r"\s", i)]


#: The pytest plugin ``eval.sh`` loads (``PYTEST_PLUGINS``), printing after pytest's own ``-rA`` lines (an outer
#: wrapper of ``pytest_terminal_summary``, whose last part pytest's short summary is; a test's last line wins in
#: swebench's map): one ``<STATUS> <escaped id>`` line per test whose id holds whitespace and outcome, in
#: ``-rA``'s order of outcomes; then ``FAILED <id>`` for each test with a failed subtest (unittest's ``subTest``
#: under pytest ≥ 9, pytest-subtests). pytest reports such a test itself ``PASSED`` beside ``SUBFAILED[…]``
#: lines, which swebench's parser does not read: hukkin/tomli's empty patch resolved 3 of 12 instances (nu34),
#: which homefield grades as failed (its reporter counts a failed subtest as its test's failure).
ID_PLUGIN = r'''"""homefield's status lines for swebench's parse_log_pytest: a test id holding whitespace, escaped,
and a test whose subtest failed."""
import re

import pytest

_ORDER = (("passed", "PASSED"), ("skipped", "SKIPPED"), ("xfailed", "XFAIL"), ("xpassed", "XPASS"),
          ("error", "ERROR"), ("failed", "FAILED"))


def _one(m):
    n = ord(m.group())
    return "\\x%02x" % n if n < 0x100 else "\\u%04x" % n if n < 0x10000 else "\\U%08x" % n


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    yield
    for key, status in _ORDER:
        for rep in terminalreporter.stats.get(key, []):
            nodeid = getattr(rep, "nodeid", "") or ""
            if re.search(r"\s", nodeid):
                terminalreporter.write_line("%s %s" % (status, re.sub(r"\s", _one, nodeid)))
    subfailed = {}
    for reps in terminalreporter.stats.values():
        for rep in reps:
            if type(rep).__name__ == "SubtestReport" and getattr(rep, "failed", False) and getattr(rep, "nodeid", ""):
                subfailed[rep.nodeid] = None
    for nodeid in subfailed:
        terminalreporter.write_line("FAILED %s" % re.sub(r"\s", _one, nodeid))
'''
_ID_MODULE = "homefield_swebench_ids"


def python_version(task: Task) -> tuple[str, bool]:
    """``(major.minor, from the task)``: the task environment's Python (``env.python``, ``--env uv``),
    else the exporting interpreter's (``False``: a guess the caller should say)."""
    env = task.env or {}
    version = str(env.get("python") or "")
    m = re.match(r"(\d+)\.(\d+)", version)
    if m:
        return f"{m.group(1)}.{m.group(2)}", True
    return f"{sys.version_info[0]}.{sys.version_info[1]}", False


def clone_url(remote_url: str | None) -> str | None:
    """The URL a Docker build can clone: an ``https://`` or ``http://`` remote without credentials,
    an scp-like ``git@host:o/n.git`` or ``ssh://`` remote as ``https://host/o/n.git``; ``None`` for a
    local path (the build then needs ``--build-arg REPO_URL=…``)."""
    if not remote_url:
        return None
    url = remote_url.strip()
    m = re.match(r"^(https?)://(?:[^@/]*@)?(.+)$", url)
    if m:
        return f"{m.group(1)}://{m.group(2)}"
    m = re.match(r"^ssh://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.+)$", url) or re.match(r"^[^@/:]+@([^:/]+):(.+)$", url)
    if m:
        return f"https://{m.group(1)}/{m.group(2).lstrip('/')}"
    return None


def install_lines(decl: Declaration, *, extras: Sequence[str], groups: Sequence[str]) -> list[str]:
    """The Dockerfile ``RUN`` commands that install ``decl`` into the image's Python as homefield's uv
    environments do (:mod:`pytest_homefield.envs.builder`), editable since the checkout is the code
    tested: ``uv.lock`` with a project → ``uv sync --frozen``; else one ``uv pip install`` of the
    project (with ``extras``), the ``groups`` and every ``requirements*.txt``; pytest when none brought it."""
    ex = f"[{','.join(extras)}]" if extras else ""
    out = ["pip install --no-cache-dir uv"]
    if "uv.lock" in decl.files and "project" in decl.pyproject:
        flags = " ".join([*(f"--extra {shlex.quote(e)}" for e in extras),
                          *(f"--group {shlex.quote(g)}" for g in groups)])
        out.append("UV_PROJECT_ENVIRONMENT=/usr/local uv sync --frozen" + (f" {flags}" if flags else ""))
    else:
        args: list[str] = []
        if decl.has_project:
            args += ["-e", shlex.quote(f".{ex}")]
        if groups and "dependency-groups" in decl.pyproject:
            args += [f"--group {shlex.quote(g)}" for g in groups]
        args += [f"-r {shlex.quote(r)}" for r in decl.requirements]
        if args:
            out.append("uv pip install --system " + " ".join(args))
    out.append('python -c "import pytest" 2>/dev/null || uv pip install --system pytest')
    return out


def _test_command(test_cmd: str) -> str:
    """``test_cmd`` with a path to the host's interpreter (``/usr/bin/python3 -m pytest``) made ``python``."""
    words = test_cmd.split(" ", 1)
    if _PY_EXE.match(words[0]) and words[0] != "python":
        return " ".join(["python", *words[1:]])
    return test_cmd


def dockerfile(task: Task, *, python: str, repo_url: str | None, decl: Declaration,
               extras: Sequence[str], groups: Sequence[str]) -> str:
    """The task's ``Dockerfile`` text (see the module docstring)."""
    url = f"ARG REPO_URL={repo_url}" if repo_url else \
        "# no network remote: build with --build-arg REPO_URL=<a URL of this repository to clone>\nARG REPO_URL"
    lines = [
        f"FROM python:{python}-slim",
        "RUN apt-get update && apt-get install -y --no-install-recommends git patch ca-certificates "
        "&& rm -rf /var/lib/apt/lists/*",
        url,
        f'RUN git clone "$REPO_URL" /testbed && git -C /testbed checkout -q {task.parent}',
        "WORKDIR /testbed",
        *(f"RUN {cmd}" for cmd in install_lines(decl, extras=extras, groups=groups)),
    ]
    if task.setup_cmd:
        lines.append(f"RUN {task.setup_cmd}")
    lines.append('RUN git config --global --add safe.directory /testbed && git config --global user.email '
                 'homefield@localhost && git config --global user.name homefield')
    return "\n".join(lines) + "\n"


#: eval.sh's line before a ``uv run`` test command it runs unsynced (:func:`eval_script`): the active environment is
#: the one the image installed the repository into, the ``python`` on ``PATH``'s (its ``sys.prefix``), unless one is.
ACTIVE_LINE = "export VIRTUAL_ENV=\"${VIRTUAL_ENV:-$(python -I -c 'import sys; print(sys.prefix)')}\""


def own_git_lines(base: str) -> list[str]:
    """eval.sh's lines that give every later git command a git folder of eval.sh's own (atk46): ``GIT_DIR`` a new
    temporary folder whose objects are the checkout's (``objects/info/alternates``), config two core keys and index
    ``base``'s tree (the harness applied the patch to the working tree only), ``GIT_WORK_TREE`` the checkout. Nothing
    of the checkout's ``.git`` but its objects is read: SWE-bench's harness falls back to GNU ``patch``, which writes
    ``.git/hooks/*`` and ``.git/config`` where ``git apply`` refuses them, and a hook or ``core.fsmonitor`` there ran
    at eval.sh's first ``git status`` and again at every ``git checkout``, after the undo step. An object is named
    by its hash, so one the patch added cannot stand for ``base``. Its ``info/attributes`` is
    :data:`~pytest_homefield.sandbox.snapshot.RAW_ATTRIBUTES`, read over every ``.gitattributes`` of the tree (git66:
    the patch's ``.gitattributes`` converted the hidden test files ``git checkout`` and ``git apply`` wrote, UTF-16 or
    UTF-7 by ``working-tree-encoding``, CRLF by ``eol``: the reference fix unresolved, and under UTF-7 a wrong one
    resolved, its ``<`` turned into ``+``): they are written as the base commit and ``test.patch`` hold them, as
    homefield's grading writes them. Without ``.git/objects`` eval.sh exits 1 before any test runs."""
    fail = "{ echo 'homefield: the undo step failed: no git repository here: no test is run' >&2; exit 1; }"
    return [
        f"test -d .git/objects && HOMEFIELD_GIT=$(mktemp -d) || {fail}",
        'mkdir -p "$HOMEFIELD_GIT/objects/info" "$HOMEFIELD_GIT/refs" '
        '&& echo "$PWD/.git/objects" > "$HOMEFIELD_GIT/objects/info/alternates" '
        '&& echo "ref: refs/heads/homefield" > "$HOMEFIELD_GIT/HEAD" '
        "&& printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n' > \"$HOMEFIELD_GIT/config\" "
        '&& mkdir "$HOMEFIELD_GIT/info" '
        f"&& echo {shlex.quote(RAW_ATTRIBUTES.strip())} > \"$HOMEFIELD_GIT/info/attributes\" "
        f"|| {fail}",
        OWN_GIT,
        f"git read-tree {base} || {fail}",
    ]


#: eval.sh's line that points git at its own folder (:func:`own_git_lines`); :data:`NO_OWN_GIT` takes it back around
#: the test command, whose tests may run git themselves (in folders of their own, as in grading's runs).
OWN_GIT = 'export GIT_DIR="$HOMEFIELD_GIT" GIT_WORK_TREE="$PWD"'
NO_OWN_GIT = "unset GIT_DIR GIT_WORK_TREE"


def eval_command(test_cmd: str) -> tuple[str, bool]:
    """``(the command eval.sh runs, whether it is a uv run made unsynced)`` for the task's ``test_cmd``:
    :func:`_test_command`, and a ``uv run`` that would read a project with ``--active --no-sync``
    (:func:`~pytest_homefield.sandbox.testrun.unsynced_command`, as grading runs it: ops60, ``uv run pytest`` made
    ``.venv`` in ``/testbed`` and synced the evaluated patch's ``pyproject.toml`` into it, whose pytest it then
    lacked). Every such ``uv run`` is made so, wherever uv would read its project: eval.sh cannot know what the
    patch under evaluation puts there (ops62: ``uv run --directory sub pytest`` was left as it was, measured with uv
    0.13.9: uv made ``sub/.venv`` and ``sub/uv.lock`` and installed the patch's ``sub/pyproject.toml``
    dependencies, a ``pytest11`` plugin among them); outside a project uv only warns that ``--no-sync`` has no
    effect, and runs the active environment's program as it would have."""
    command = _test_command(test_cmd)
    made = unsynced_command(command, lambda folder: True)
    return (command, False) if made is None else (made, True)


def eval_script(task: Task, ids: Sequence[str], *, workdir: str = "/testbed", undo: str = "",
                memory_mb: float | None = TEST_MEMORY_MB,
                time_limit: tuple[float, str] | None = DEFAULT_LIMIT) -> str:
    """``eval.sh``: a git folder of its own (:func:`own_git_lines`), the ``undo`` lines
    (:func:`pytest_homefield.run.eval_undo.undo_lines`: undo what homefield's grading would not carry), reset the
    hidden test files to ``base_commit``, apply the
    test patch, run the test command with ``-rA --color=no`` on the files of ``ids`` (as recorded, not escaped;
    ``--color=no`` last, over a repository's ``addopts = --color=yes``: swebench's ``parse_log_pytest`` reads a
    status line only where it starts with the bare word, and humanize's coloured ``-rA`` lines left the reference
    fix unresolved, nu31)
    between :data:`START` and :data:`END` (with :data:`ID_PLUGIN` loaded: ids holding whitespace, failed subtests),
    reset again. ``workdir`` is where the repository is (``/testbed`` in the image; a clone when run by
    hand). ``memory_mb``: MiB of address space per test process (``ulimit -v`` in a subshell around the
    test command; ``None``: no cap), the ``RLIMIT_AS`` mining verified the task under
    (``max_test_memory_mb``): a parent whose bug allocates without end (mine29, mahmoud/boltons
    0a3084e3058f: 4 GiB at mining, over 5.6 GiB and growing in eval.sh) fails there instead of taking the
    machine's memory. ``time_limit``: ``(s, why)``, how long the test command may run and how homefield's
    grading names that bound (``None`` or not positive: no limit): the bound homefield grades the task with
    (:func:`~pytest_homefield.run.hang_bound.grading_bound`: the run timeout, or the task's own bound when its
    parent hangs; ``homefield export`` passes it); :func:`_timed` stops the command there and says so in one
    line (host30: a hanging test held swebench's harness without end). A ``uv run`` command runs in the image's
    environment, unsynced (:func:`eval_command`, :data:`ACTIVE_LINE` before it)."""
    files = sorted({i.split("::", 1)[0] for i in ids})
    tests = " ".join(shlex.quote(f) for f in task.test_files)
    # a hidden test file is put back as at base_commit, or removed when the commit added it (whatever
    # the patch under evaluation wrote there: homefield's grading drops such edits too)
    reset = f"for f in {tests}; do git checkout -q {task.parent} -- \"$f\" 2>/dev/null || rm -f -- \"$f\"; done"
    body = task.test_patch if task.test_patch.endswith("\n") else task.test_patch + "\n"
    bound = time_limit if time_limit is not None and time_limit[0] > 0 else None
    command, unsynced = eval_command(task.test_cmd)
    return "\n".join([
        "#!/bin/bash",
        "set -uxo pipefail",
        f"cd {shlex.quote(workdir)}",
        *own_git_lines(task.parent),
        "git status --short",
        *([undo] if undo else []),
        reset,
        f"git apply --binary -v - <<'{_HEREDOC}'",
        body + _HEREDOC,
        f"HOMEFIELD_IDS=$(mktemp -d) && cat > \"$HOMEFIELD_IDS/{_ID_MODULE}.py\" <<'{_HEREDOC}'",
        ID_PLUGIN + _HEREDOC,
        f"export PYTHONPATH=\"$HOMEFIELD_IDS${{PYTHONPATH:+:$PYTHONPATH}}\" "
        f"PYTEST_PLUGINS=\"{_ID_MODULE}${{PYTEST_PLUGINS:+,$PYTEST_PLUGINS}}\"",
        *([ACTIVE_LINE] if unsynced else []),
        NO_OWN_GIT,
        f": '{START}'",
        *_timed(_capped(_limited(f"{command} -rA --color=no "
                                 f"{' '.join(shlex.quote(f) for f in files)}",
                                 bound), memory_mb), bound),
        f": '{END}'",
        OWN_GIT,
        reset,
        'rm -rf "$HOMEFIELD_GIT"',
    ]) + "\n"


def _limited(command: str, bound: tuple[float, str] | None) -> str:
    """``command`` (a plain argv, as homefield splits the test command) under coreutils ``timeout``: TERM
    to its process group after ``bound[0]`` s (rounded up to whole seconds), KILL :data:`KILL_AFTER_S`
    s later (``--verbose``: ``timeout`` names each signal it sends); ``command`` itself when ``bound`` is
    ``None``."""
    if bound is None:
        return command
    return f"timeout --verbose -k {KILL_AFTER_S} {math.ceil(bound[0])} {command}"


def _timed(command: str, bound: tuple[float, str] | None) -> list[str]:
    """The lines running ``command`` (:func:`_limited`) and then, when ``timeout`` stopped it (exit 124 after
    TERM, 137 after KILL), one line naming the bound on stdout, inside the test output (as homefield's own
    ``hidden tests exceeded …`` error). ``[command]`` when ``bound`` is ``None``."""
    if bound is None:
        return [command]
    line = shlex.quote(f"homefield: the tests were stopped after {math.ceil(bound[0])} s, the bound homefield "
                       f"grades this task with ({bound[1]}): a test hangs or is too slow")
    return [command, f'HOMEFIELD_RC=$?; if [ "$HOMEFIELD_RC" -eq 124 ] || [ "$HOMEFIELD_RC" -eq 137 ]; '
                     f"then echo {line}; fi"]


def _capped(command: str, memory_mb: float | None) -> str:
    """``command`` in a subshell whose processes get at most ``memory_mb`` MiB of address space (``ulimit -v``,
    KiB), ``command`` itself when ``memory_mb`` is ``None`` or not positive."""
    if not memory_mb or memory_mb <= 0:
        return command
    return f"(ulimit -v {int(memory_mb * 1024)} && {command})"


def task_yaml(meta: Mapping[str, Any]) -> str:
    """``task.yaml``: ``meta`` as YAML, keys sorted, multi-line strings as literal blocks (swebench's
    own ``dump_yaml`` style)."""
    import yaml  # pyyaml: a dependency already (settings)

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)

    _Dumper.add_representer(str, _str)
    return str(yaml.dump(dict(meta), Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False))


def _yaml_mapping(path: Path) -> dict[str, Any]:
    """The YAML mapping in ``path``; ``{}`` when it is missing, unreadable, not YAML or not a mapping."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _config(path: Path, dataset: str, split: str, gone: Collection[str] = ()) -> dict[str, list[str]]:
    """``sweb.yaml``'s datasets and splits: an earlier export's, less the datasets in ``gone`` (named by
    no task folder any more), with ``dataset`` and ``split`` added."""
    old = _yaml_mapping(path)

    def _list(key: str, value: str, drop: Collection[str] = ()) -> list[str]:
        items = [str(x) for x in old.get(key) or [] if isinstance(x, str) and x not in drop]
        return items + ([value] if value not in items else [])

    return {"datasets": _list("datasets", dataset, gone), "splits": _list("splits", split)}


def _renamed(tasks_dir: Path, task: Task, iid: str) -> list[Path]:
    """The task folders of an earlier export into ``tasks_dir`` that hold ``task`` under an instance id other
    than ``iid`` (another repository name: ``repo__<task id>`` before ``--repo-name``): named
    ``<name>__<task id>``, a real folder (not a link) whose ``task.yaml`` has the task's base commit."""
    if not tasks_dir.is_dir():
        return []
    return [d for d in sorted(tasks_dir.glob(f"*__{task.id}")) if d.name != iid and not d.is_symlink()
            and d.is_dir() and _yaml_mapping(d / "task.yaml").get("base_commit") == task.parent]


@dataclass
class Exported:
    """What :func:`write_task_repo` wrote: ``instances`` (the flat rows, task order), ``escaped_ids``
    ({instance id: its ids that hold whitespace, exported escaped}), ``left_out`` ({task id: why}),
    ``guessed_python`` (instance ids whose Python is the exporting interpreter's), ``flat`` (the path
    of the flat instance file), ``replaced`` (earlier task folders of the same tasks, removed)."""

    instances: list[dict[str, str]] = field(default_factory=list)
    escaped_ids: dict[str, list[str]] = field(default_factory=dict)
    #: {instance id: its FAIL_TO_PASS ids among ``escaped_ids``}
    escaped_f2p: dict[str, list[str]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    guessed_python: list[str] = field(default_factory=list)
    flat: Path | None = None
    #: {instance id of a removed task folder of an earlier export: the instance id now holding its task}
    replaced: dict[str, str] = field(default_factory=dict)

    def whitespace_notes(self) -> list[str]:
        """The export's note on :attr:`escaped_ids`: one line for them all (how many ids of how many
        instances, how many FAIL_TO_PASS, an example as exported); ``[]`` when there are none. Once, such
        ids were left out (a line per instance that lost FAIL_TO_PASS ids; pallets/click: 712 ids)."""
        if not self.escaped_ids:
            return []
        ids = [i for group in self.escaped_ids.values() for i in group]
        f2p = sum(len(v) for v in self.escaped_f2p.values())
        return [f"{_plural_ids(len(ids))} of {len(self.escaped_ids)} instance(s) hold whitespace, which swebench's "
                f"log parser splits at ({f2p or 'none'} of them FAIL_TO_PASS): exported escaped, e.g. "
                f"{escaped_id(ids[0])}; eval.sh prints a status line for each in that form"]


def _plural_ids(n: int) -> str:
    """``'1 test id'``, ``'750 test ids'``."""
    return f"{n} test id{'' if n == 1 else 's'}"


def write_task_repo(out: Path | None, rows: Sequence[tuple[Task, dict[str, str]]], *, split: str, dataset: str,
                    repo_url: str | None, declaration: Any, undo: Any = None,
                    memory_mb: float | None = TEST_MEMORY_MB,
                    time_limit: Callable[[Task], tuple[float, str] | None] | None = None) -> Exported:
    """Write the task repository of ``rows`` (each a task and its SWE-bench instance,
    :func:`pytest_homefield.export.swebench.instance`) under ``out`` (``None``: write nothing, only
    compute :attr:`Exported.instances`). ``declaration(task)`` returns ``(Declaration, extras, groups)``
    of the task's base commit; ``undo(task)`` the first lines of its :func:`eval_script` (``None``:
    none). Files are written atomically; a task folder of an earlier export with the same instance id
    is overwritten, one holding the same task under another instance id (:func:`_renamed`) is removed
    (:attr:`Exported.replaced`; a dataset then named by no task folder leaves ``sweb.yaml``), others
    are kept. nu28: an export after one under another repository name held every task twice, once per
    name, and ``sweb.yaml`` both datasets."""
    done = Exported()
    flat: list[dict[str, str]] = []
    gone: set[str] = set()
    for task, inst in rows:
        iid = inst["instance_id"]
        f2p_ids, p2p_ids = json.loads(inst["FAIL_TO_PASS"]), json.loads(inst["PASS_TO_PASS"])
        f2p, spaced_f = carried_ids(f2p_ids)
        p2p, spaced_p = carried_ids(p2p_ids)
        if spaced_f or spaced_p:
            done.escaped_ids[iid] = spaced_f + spaced_p
        if spaced_f:
            done.escaped_f2p[iid] = spaced_f
        if not f2p:
            done.left_out[task.id] = "no FAIL_TO_PASS id"
            continue
        python, known = python_version(task)
        if not known:
            done.guessed_python.append(iid)
        decl, extras, groups = declaration(task)
        image = image_name(iid)
        script = eval_script(task, f2p_ids + p2p_ids, undo=undo(task) if undo else "", memory_mb=memory_mb,
                             time_limit=time_limit(task) if time_limit is not None else DEFAULT_LIMIT)
        row = dict(inst, FAIL_TO_PASS=json.dumps(f2p), PASS_TO_PASS=json.dumps(p2p), image=image, image_name=image,
                   eval_script=script, log_parser=LOG_PARSER, eval_type=EVAL_TYPE)
        flat.append(row)
        if out is None:
            continue
        folder = out / "tasks" / iid
        for stale in _renamed(out / "tasks", task, iid):
            gone.update(str(x) for x in _yaml_mapping(stale / "task.yaml").get("datasets") or [])
            shutil.rmtree(stale)
            done.replaced[stale.name] = iid
        folder.mkdir(parents=True, exist_ok=True)
        meta: dict[str, Any] = {k: inst[k] for k in ("instance_id", "repo", "version", "base_commit", "created_at",
                                                      "environment_setup_commit")}
        meta.update(split=split, image=image, log_parser=LOG_PARSER, eval_type=EVAL_TYPE, datasets=[dataset])
        if "homefield_services" in inst:
            meta["homefield_services"] = inst["homefield_services"]
        write_atomic(folder / "task.yaml", task_yaml(meta))
        write_atomic(folder / "tests.json", json.dumps({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}, indent=2,
                                                       ensure_ascii=False) + "\n")
        write_atomic(folder / "problem_statement.md", inst["problem_statement"])
        write_atomic(folder / "gold.patch", inst["patch"])
        write_atomic(folder / "test.patch", inst["test_patch"])
        write_atomic(folder / "eval.sh", script)
        write_atomic(folder / "Dockerfile", dockerfile(task, python=python, repo_url=repo_url, decl=decl,
                                                       extras=extras, groups=groups))
    done.instances = flat
    if flat and out is not None:
        named = {str(x) for d in (out / "tasks").iterdir() if d.is_dir() and not d.is_symlink()
                 for x in _yaml_mapping(d / "task.yaml").get("datasets") or []}
        write_atomic(out / "sweb.yaml", task_yaml(_config(out / "sweb.yaml", dataset, split, gone - named)))
        done.flat = out / "instances" / f"{split}.jsonl"
        done.flat.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(done.flat, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in flat))
    return done
