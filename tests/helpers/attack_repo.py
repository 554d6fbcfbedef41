"""A tiny real repository with one task, for the grading attacks and the snapshot audit.

History (``main``)::

    c1  Initial calculator with add()          src/calc/__init__.py, tests/test_add.py, pyproject.toml
    c2  Add sub() that subtracts b from a      the task: src/calc/__init__.py + new tests/test_sub.py
    c3  Add mul() ...                          later: must be invisible to an agent working on c2
    c4  Add div() ... (branch ``feature``)     later, on a branch; ``main`` is back at c3
    tags ``v1`` (annotated, on c3) and ``light`` (c4); a note on c3; a stash holding a further
    blob; a fake remote-tracking ref; packed refs; reflogs of all of it; and working-tree junk
    (``.pytest_cache``, ``__pycache__``, ``*.egg-info``, ``.homefield/``, ``build/``) that is in no
    commit. The package lives in ``src/`` (an import root of the test command) and ``pyproject.toml``
    has no pytest section, so pytest searches for configuration above a checkout of it.

:func:`task_for` builds the :class:`~pytest_homefield.records.Task` of c2 by hand (the ids are
known: two FAIL_TO_PASS ids, one PASS_TO_PASS id), so no mining is needed.
"""

from __future__ import annotations

import base64
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.agents.base import Agent, AgentContext, AgentResult, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

CALC_1 = "def add(a, b):\n    return a + b\n"
CALC_2 = CALC_1 + "\n\ndef sub(a, b):\n    return a - b\n"
CALC_3 = CALC_2 + "\n\ndef mul(a, b):\n    return a * b  # FUTURE-MUL-7f3a\n"
CALC_4 = CALC_3 + "\n\ndef div(a, b):\n    return a / b  # FUTURE-DIV-91c2\n"

TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
TEST_SUB = (
    "import pytest\n\nfrom calc import sub\n\n\n"
    "@pytest.mark.parametrize('a,b,c', [(3, 1, 2), (0, 5, -5)], ids=['pos', 'neg'])\n"
    "def test_sub(a, b, c):\n    assert sub(a, b) == c\n\n\n"
    "def test_add_still_works():\n    from calc import add\n    assert add(2, 2) == 4\n"
)
PYPROJECT = '[project]\nname = "calc"\nversion = "0"\n'

#: Plugins of this environment that the tiny repository does not need (hypothesis alone costs
#: seconds per test process, anyio about 0.3 s of CPU, more than the tiny tests themselves); disabled
#: by the task's test command so that the attacks run fast.
NO_PLUGINS = ("-p no:hypothesispytest -p no:benchmark -p no:xdist -p no:xdist.looponfail -p no:timeout "
              "-p no:homefield -p no:anyio")

F2P = ["tests/test_sub.py::test_sub[pos]", "tests/test_sub.py::test_sub[neg]"]
P2P = ["tests/test_sub.py::test_add_still_works"]
#: The reference fix and a wrong one (what most attacks ship so that there is something to grade).
GOOD_CALC = CALC_2
WRONG_CALC = CALC_1 + "\n\ndef sub(a, b):\n    return a + b\n"

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def git(cwd: Path, *args: str, date: str | None = None, check: bool = True) -> str:
    """``git args`` in ``cwd`` with a fixed identity and no user configuration; stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_ENV)
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@dataclass
class Fixture:
    """The built repository: ``root``, the shas ``c1``..``c4``, the objects of the parent tree (the
    tree of c1 and everything in it) in ``parent_tree``, and every other object of the repository
    (the commits themselves, the task's fix and tests, later commits, tags, notes, stash, reflog
    targets) in ``other_objects``: none of those may exist in an agent's workspace."""

    root: Path
    c1: str
    c2: str
    c3: str
    c4: str
    parent_tree: set[str] = field(default_factory=set)
    other_objects: set[str] = field(default_factory=set)


def build(dest: Path, extra: dict[str, str] | None = None) -> Fixture:
    """Create the repository in ``dest`` (must not exist). ``extra``: more files of the first commit (the parent's
    tree), ``{path: text}``."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "config", "commit.gpgsign", "false")

    def commit(msg: str, files: dict[str, str], day: int) -> str:
        _write(dest, files)
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", msg, date=f"2026-01-{day:02d}T12:00:00+00:00")
        return git(dest, "rev-parse", "HEAD").strip()

    c1 = commit("Initial calculator with add()", {"src/calc/__init__.py": CALC_1, "tests/test_add.py": TEST_ADD,
                                                  "pyproject.toml": PYPROJECT, **(extra or {})}, 1)
    c2 = commit(f"Add sub() that subtracts b from a\n\nFollows up on {c1[:10]}; the tests pin both signs.\n",
                {"src/calc/__init__.py": CALC_2, "tests/test_sub.py": TEST_SUB}, 2)
    c3 = commit("Add mul() to multiply two numbers", {"src/calc/__init__.py": CALC_3,
                                                      "tests/test_mul.py": "from calc import mul\n\n\n"
                                                                           "def test_mul():\n"
                                                                           "    assert mul(2, 3) == 6\n"}, 3)
    git(dest, "tag", "-a", "v1", "-m", "release one", c3)
    git(dest, "notes", "add", "-m", "NOTE-ON-C3", c3)
    git(dest, "checkout", "-q", "-b", "feature")
    c4 = commit("Add div() for division", {"src/calc/__init__.py": CALC_4}, 4)
    git(dest, "tag", "light", c4)
    git(dest, "checkout", "-q", "main")
    git(dest, "update-ref", "refs/remotes/origin/main", c4)
    # a stash with a blob of its own, and a reset that leaves a dangling reflog entry
    _write(dest, {"src/calc/__init__.py": CALC_3 + "\n# STASHED-WORK-5e1b\n"})
    git(dest, "stash", "-q")
    git(dest, "reset", "-q", "--hard", c2)
    git(dest, "reset", "-q", "--hard", c3)
    git(dest, "pack-refs", "--all")
    # junk in the user's working tree (in no commit)
    _write(dest, {
        ".pytest_cache/v/cache/lastfailed": '{"tests/test_sub.py::test_sub[pos]": true}\n',
        "src/calc/__pycache__/__init__.cpython-311.pyc": "JUNK-PYC\n",
        "src/calc.egg-info/PKG-INFO": "Name: calc\n",
        ".homefield/tasks.jsonl": f'{{"id": "{c2[:12]}", "commit": "{c2}", "parent": "{c1}"}}\n',
        "build/lib/calc/__init__.py": CALC_4,
    })
    (dest / ".git" / "info").mkdir(exist_ok=True)
    (dest / ".git" / "info" / "exclude").write_text(".pytest_cache/\n__pycache__/\n*.egg-info/\n.homefield/\nbuild/\n")
    assert git(dest, "status", "--porcelain").strip() == "", "junk must be ignored"
    stored = set(git(dest, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    parent_tree = {git(dest, "rev-parse", f"{c1}^{{tree}}").strip()}
    parent_tree |= {line.split()[2] for line in git(dest, "ls-tree", "-r", "-t", c1).splitlines()}
    return Fixture(dest, c1, c2, c3, c4, parent_tree, stored - parent_tree)


def task_for(fx: Fixture, *, canaries: int | None = None) -> Task:
    """The task of commit c2 (FAIL_TO_PASS / PASS_TO_PASS known from the fixture). ``canaries``: the
    task record's count, e.g. 1 as mined with the canary check (one FAIL_TO_PASS function: one canary; its
    teardown canary judged too, ``canary_teardown``, tcan52); ``None`` as mined before canaries (sentinels only,
    which an always-equal object does not pass)."""
    message = git(fx.root, "log", "-1", "--format=%B", fx.c2)
    tests = ["tests/test_sub.py"]
    return Task(
        id=fx.c2[:12], commit=fx.c2, parent=fx.c1,
        committed_at="2026-01-02T12:00:00+00:00", authored_at="2026-01-02T12:00:00+00:00",
        mode="commit", subject=message.splitlines()[0], message=message, prompt=clean_prompt(message),
        source_files=["src/calc/__init__.py"], test_files=tests,
        test_patch=make_test_patch(fx.root, fx.c1, fx.c2, tests),
        gold_patch=make_gold_patch(fx.root, fx.c1, fx.c2, tests),
        FAIL_TO_PASS=list(F2P), PASS_TO_PASS=list(P2P),
        test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=canaries,
        canary_teardown=canaries is not None,
    )


def user_checkout(fx: Fixture, task: Task, repo: Path, copies: int = 1, canary_key: bytes | None = None) -> Path:
    """A clone of the fixture in ``repo`` as the user's checkout, with ``.homefield/tasks.jsonl`` holding
    ``task`` (its gold patch in it): what an attack reaches for. ``copies`` > 1: that many copies of it,
    with ids ``<id>-0``, ``<id>-1``, …. ``canary_key``: written as its ``.homefield/canary.key``
    (:func:`plant_canary_key`); ``None``: none, the first grading makes one."""
    import dataclasses
    import json

    subprocess.run(["git", "clone", "-q", "--no-local", str(fx.root), str(repo)], check=True, capture_output=True)
    (repo / ".homefield").mkdir()
    tasks = [task] if copies == 1 else [dataclasses.replace(task, id=f"{task.id}-{i}") for i in range(copies)]
    (repo / ".homefield" / "tasks.jsonl").write_text("".join(json.dumps(t.to_dict()) + "\n" for t in tasks))
    if canary_key is not None:
        plant_canary_key(repo, canary_key)
    return repo


def plant_canary_key(repo: Path, key: bytes) -> Path:
    """Write ``key`` (32 bytes) as ``repo``'s ``.homefield/canary.key`` (0600), as the first grading would
    (:func:`pytest_homefield.run.canary_key.canary_key`); its path. The fixture's commits are the same in
    every build (fixed dates and identity), so with one key a task's canary seed is the same in every
    checkout and its parent check (:func:`~pytest_homefield.run.twin_grading.parent_checked_seed`, once per
    task, seed and process) is made once per process, not once per checkout."""
    path = HomefieldDir(repo).canary_key
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    return path


def cmd_agent(command: str, name: str = "attack") -> CommandAgent:
    """A ``cmd:`` agent running ``command`` with ``sh -c`` in the workspace."""
    return CommandAgent(name=name, spec=f"cmd:{command}", command=command, settings=AgentSettings())


def writes_calc(text: str) -> str:
    """A ``cmd:`` agent's command writing ``text`` as ``src/calc/__init__.py`` (through base64, so any text passes the
    shell): a fix, or a fix followed by code its import runs in the test process."""
    return f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > src/calc/__init__.py"


def unsandboxed_attempt(task: Task, cache: SnapshotCache, command: str, n: int,
                        run_dir: Path) -> tuple[str, str | None]:
    """Attempt ``n`` of a ``cmd:`` agent running ``command``, agent and test runs under ``--sandbox none`` (what the
    host must survive without bubblewrap): its outcome and error."""
    spec = AttemptSpec(task=task, agent=cmd_agent(command), attempt=n, run_id="r", run_dir=run_dir,
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"))
    r = run_attempt(spec, cache)
    return r.outcome, r.error


def one_unsandboxed_attempt(fx: Fixture, run_dir: Path, command: str) -> tuple[str, str | None]:
    """:func:`unsandboxed_attempt` 1 of :func:`task_for` ``fx`` in a snapshot cache of its own (kept and closed
    here): its outcome and error."""
    task = task_for(fx)
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task])
        return unsandboxed_attempt(task, cache, command, 1, run_dir)
    finally:
        cache.close()


def script_agent(folder: Path, files: dict[str, str], shell: str = "", name: str = "attack") -> CommandAgent:
    """A ``cmd:`` agent that writes ``files`` (path relative to the workspace → text) and then runs
    ``shell``. The file contents travel inside the command (base64), so the agent needs nothing from
    outside its sandbox, compressed (one word of a command holds at most 128 KiB, ``MAX_ARG_STRLEN``: the
    forging payloads' two copies of the reporter passed it once the reporter grew); ``folder`` keeps a copy of the
    script for reading."""
    import zlib

    folder.mkdir(parents=True, exist_ok=True)
    script = (
        "import os, sys\n"
        f"FILES = {files!r}\n"
        "for rel, text in FILES.items():\n"
        "    d = os.path.dirname(rel)\n"
        "    if d:\n"
        "        os.makedirs(d, exist_ok=True)\n"
        "    with open(rel, 'w') as f:\n"
        "        f.write(text)\n"
    )
    (folder / f"{name}.py").write_text(script, encoding="utf-8")
    code = base64.b64encode(zlib.compress(script.encode(), 9)).decode()
    run = f"import base64, zlib; exec(zlib.decompress(base64.b64decode({code!r})))"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(run)}"
    if shell:
        command += f" && {shell}"
    return cmd_agent(command, name)


class Both:
    """Runs ``first`` (a wrong fix, so that the hidden tests import something) and then ``then`` (the
    trick): one attempt of an agent that does both."""

    simulated = hinted = False
    reference = process = True

    def __init__(self, first: Agent, then: Agent) -> None:
        self.first, self.then = first, then
        self.name, self.spec = then.name, then.spec

    def runs_commands(self, allow_shell: bool) -> bool:
        return True

    def version(self) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        self.first.run(ctx)
        return self.then.run(ctx)
