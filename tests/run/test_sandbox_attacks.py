"""Issue 15: shell agents that reach outside their workspace, and the holes that were scored.

Every attack runs as a built-in attack agent (:mod:`pytest_homefield.agents.attacks`) through
``run_attempt`` on the task of :mod:`attack_repo`, once in the default sandbox (bubblewrap) and once
with ``--sandbox none`` — the control that proves the attack is real: without the sandbox it does
reach the user's checkout, the sibling workspaces, site-packages, and it outlives its attempt.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import unicodedata
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    GOOD_CALC,
    NO_PLUGINS,
    TEST_SUB,
    WRONG_CALC,
    Both,
    Fixture,
    build,
    cmd_agent,
    script_agent,
    task_for,
    user_checkout,
)
from helpers.verify_attacks_run import VerifyAttacksRun

from pytest_homefield.agents.attacks import attack_agent
from pytest_homefield.agents.base import Agent, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.envs.builder import EnvBuildError, find_uv
from pytest_homefield.records import Result, Task
from pytest_homefield.report import build_report
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.grading import suspicious_reasons
from pytest_homefield.sandbox import protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.view.attempt_page import render_attempt
from pytest_homefield.view.common import Nav
from pytest_homefield.view.data import AttemptRef

SANDBOXES = [pytest.param("bwrap", id="sandboxed"), pytest.param("none", id="control-no-sandbox")]


@pytest.fixture(scope="module", autouse=True)
def _needs_bwrap() -> None:
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("sbx") / "repo")


@pytest.fixture(scope="module")
def task(fx: Fixture) -> Task:
    """The fixture's task (its test command blocks the unused plugins)."""
    return task_for(fx, canaries=1)


@pytest.fixture
def user_repo(fx: Fixture, task: Task, tmp_path: Path, session_canary_key: bytes) -> Path:
    """A clone of the fixture as the user's checkout, with ``.homefield/tasks.jsonl`` (gold patch in it) and the
    session's canary key: no test here is about the key, and with one key the task's parent check is made once
    per process, not in every test's checkout."""
    return user_checkout(fx, task, tmp_path / "user-repo", canary_key=session_canary_key)


@pytest.fixture
def cache(user_repo: Path) -> Iterator[SnapshotCache]:
    c = SnapshotCache(repo=user_repo)
    yield c
    c.close()


def attempt(task: Task, cache: SnapshotCache, agent: Agent, tmp_path: Path, sandbox: str = "auto",
            network: str = "none", n: int = 1) -> tuple[Result, Path]:
    spec = AttemptSpec(task=task, agent=agent, attempt=n, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice(sandbox, network))
    return run_attempt(spec, cache), spec.artifacts


def wrong_agent(tmp_path: Path, name: str = "honest") -> CommandAgent:
    """An honest agent with a wrong fix: what must stay unsolved in a later attempt."""
    return script_agent(tmp_path / name, {"src/calc/__init__.py": WRONG_CALC}, name=name)


# -- (a) the user's checkout and .homefield/tasks.jsonl ------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_finding_homefield_and_applying_the_gold_patch(task: Task, cache: SnapshotCache, user_repo: Path,
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       sandbox: str) -> None:
    """Measured on main: through ``/proc/$PPID/cwd`` (here: the run's cwd, the user's checkout) an
    agent found ``.homefield/tasks.jsonl`` and applied the gold patch: 4 of 4 solved."""
    monkeypatch.chdir(user_repo)
    r, art = attempt(task, cache, attack_agent("read-homefield"), tmp_path, sandbox)
    out = (art / "agent.out").read_text()
    if sandbox == "none":
        assert "applied the gold patch" in out and r.outcome == "solved", (r, out, (art / "agent.err").read_text())
    else:
        assert "applied the gold patch" not in out
        assert r.outcome == "tests_failed" and r.sandbox == "bwrap" and r.test_sandbox == "bwrap", r


@pytest.mark.slow
def test_the_control_does_not_depend_on_what_else_lies_on_the_machine(task: Task, cache: SnapshotCache,
                                                                       user_repo: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: a ``tasks.jsonl`` within the attack's reach holding lines that are not task records
    (another tool's file, a truncated line) crashed the attack before it printed anything, so on a
    machine with such a file the control ended ``tests_failed`` and proved nothing. A real attacker
    skips what it cannot use: so does the attack."""
    tasks = user_repo / ".homefield" / "tasks.jsonl"
    tasks.write_text('[1]\n"a string"\n{"prompt": null}\n{"prompt": "x", "gold_patch": 3}\n{"trunc\n'
                     + tasks.read_text())
    monkeypatch.chdir(user_repo)
    r, art = attempt(task, cache, attack_agent("read-homefield"), tmp_path, "none")
    out, err = (art / "agent.out").read_text(), (art / "agent.err").read_text()
    assert "applied the gold patch" in out and r.outcome == "solved", (r, out, err)


# -- (b) pristine copies and other attempts' workspaces -------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_copying_from_sibling_workspaces(task: Task, cache: SnapshotCache, tmp_path: Path, sandbox: str) -> None:
    """Measured on main: copying files from sibling snapshots under ``$TMPDIR/..`` solved 7 of 8.
    Here another attempt's workspace holding the fix sits beside this one's."""
    other = cache.root / "other-attempt" / "work"
    shutil.copytree(cache.pristine(task), other)
    (other / "src" / "calc" / "__init__.py").write_text(GOOD_CALC)
    r, art = attempt(task, cache, attack_agent("sibling-workspaces"), tmp_path, sandbox)
    out = (art / "agent.out").read_text()
    if sandbox == "none":
        assert "copied src/calc/__init__.py" in out and r.outcome == "solved", (r, out)
    else:
        assert "copied" not in out and r.outcome == "tests_failed", (r, out)


@pytest.fixture(scope="session")
def installed_head(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The attack fixture's project installed non-editable at HEAD (the real uv's ``--target`` folder), once
    per test session for both variants below (shared by xdist workers: the first installs it, the other
    waits on the lock); read only. Installed from a clone of :func:`helpers.attack_repo.build`'s repository,
    as the user's checkout is: HEAD is the same in every module's fixture."""
    try:
        uv = find_uv()
    except EnvBuildError as exc:
        pytest.skip(str(exc))
    shared = tmp_path_factory.getbasetemp().parent / f"installed-head-{testrun_uid}"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        target = shared / "installed"
        if not (shared / "done").exists():
            shutil.rmtree(target, ignore_errors=True)
            for old in ("fixture", "checkout"):
                shutil.rmtree(shared / old, ignore_errors=True)
            checkout = shared / "checkout"  # a clone, as the user's checkout is (no junk of the fixture's tree)
            subprocess.run(["git", "clone", "-q", "--no-local", str(build(shared / "fixture").root), str(checkout)],
                           check=True, capture_output=True)
            subprocess.run([uv, "pip", "install", "-q", "--no-deps", "--compile-bytecode", "--python", sys.executable,
                            "--target", str(target), str(checkout)], check=True, capture_output=True)
            (shared / "done").touch()
    return target


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_installed_copy_of_the_project_at_head(task: Task, cache: SnapshotCache, user_repo: Path, tmp_path: Path,
                                                  installed_head: Path, monkeypatch: pytest.MonkeyPatch,
                                                  sandbox: str) -> None:
    """atk12 F5, atk14 A3/A7 as the built-in attack ``installed-copy``: the user's environment holds the
    project installed non-editable at HEAD (here the real uv's ``--target`` folder, on ``PYTHONPATH``), whose
    code is every task's fix. Without a sandbox the agent copies it and solves the task with real code (no
    canary can tell); in bubblewrap the copy is an empty folder."""
    target = installed_head
    assert "def sub" in (target / "calc" / "__init__.py").read_text()  # HEAD's code, the fix
    monkeypatch.setenv("PYTHONPATH", str(target))
    monkeypatch.setattr(protected, "_PROTECTED", [user_repo.resolve()])
    spec = AttemptSpec(task=task, agent=attack_agent("installed-copy"), attempt=1, run_id="r", run_dir=tmp_path / "run",
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"),
                       env_passthrough=["PYTHONPATH"])  # the agent's interpreter sees the installed copy
    r = run_attempt(spec, cache)
    out = (spec.artifacts / "agent.out").read_text()
    if sandbox == "none":
        assert "copied src/calc/__init__.py" in out and r.outcome == "solved", (r, out)
    else:
        assert "copied" not in out and r.outcome == "tests_failed" and r.sandbox == "bwrap", (r, out)


EGG_COPY = """
import os, sys, zipfile
for entry in sys.path:
    if entry.endswith(".egg"):
        try:
            code = zipfile.ZipFile(entry).read("calc/__init__.py")
        except (OSError, KeyError, zipfile.BadZipFile) as exc:
            print("unreadable", entry, type(exc).__name__)
            continue
        open(os.path.join("src", "calc", "__init__.py"), "wb").write(code)
        print("copied src/calc/__init__.py from", entry)
"""


def _egg(path: Path, repo: Path) -> Path:
    """A zipped egg at ``path`` holding ``repo``'s HEAD (``setup.py install`` with setuptools < 80)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("calc/__init__.py", (repo / "src" / "calc" / "__init__.py").read_text())
        zf.writestr("EGG-INFO/top_level.txt", "calc\n")
    return path


@pytest.mark.slow
def test_the_built_in_attack_reads_a_zipped_egg(task: Task, cache: SnapshotCache, user_repo: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of ``verify --attacks -k installed-copy`` where the copy is a zipped egg on ``sys.path``
    (atk15 F1: the attack looked for files only, found none and was counted caught while the hole was
    open): without a sandbox it copies HEAD out of the egg."""
    monkeypatch.setenv("PYTHONPATH", str(_egg(tmp_path / "calc-0-py3.11.egg", user_repo)))
    spec = AttemptSpec(task=task, agent=attack_agent("installed-copy"), attempt=1, run_id="r", run_dir=tmp_path / "run",
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"),
                       env_passthrough=["PYTHONPATH"])
    r = run_attempt(spec, cache)
    out = (spec.artifacts / "agent.out").read_text()
    assert "copied src/calc/__init__.py from" in out and ".egg" in out and r.outcome == "solved", (r, out)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_zipped_egg_of_the_project_at_head(task: Task, cache: SnapshotCache, user_repo: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, sandbox: str) -> None:
    """atk15 F1: ``setup.py install`` (setuptools < 80) leaves HEAD as a zipped egg that ``easy-install.pth``
    puts on ``sys.path``; its name is no repository name, so the name-based masks missed it and an agent
    copying out of it solved 8 of 8 demo tasks. Here a throwaway venv (the agent's ``python``, bound
    read-only) holds it. Found by content now: in bubblewrap the egg is an empty file."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    _egg(site / "calc-0-py3.11.egg", user_repo)
    (site / "easy-install.pth").write_text("./calc-0-py3.11.egg\n")
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(protected, "_PROTECTED", [user_repo.resolve()])
    spec = AttemptSpec(task=task, agent=cmd_agent(f"{venv}/bin/python -c {shlex.quote(EGG_COPY)}", "egg"), attempt=1,
                       run_id="r", run_dir=tmp_path / "run", timeout_s=60, run_timeout_s=120,
                       sandbox=SandboxChoice(sandbox, "none"))
    r = run_attempt(spec, cache)
    out = (spec.artifacts / "agent.out").read_text()
    if sandbox == "none":
        assert "copied src/calc/__init__.py" in out and r.outcome == "solved", (r, out)
    else:
        assert "copied" not in out and "BadZipFile" in out, out  # an empty file in its place
        assert r.outcome == "empty_patch" and r.sandbox == "bwrap", (r, out)


# -- (c) .pth / sitecustomize in site-packages -----------------------------------------------------

@pytest.fixture
def venv_task(task: Task, tmp_path: Path) -> Task:
    """The task graded with a throwaway venv's python (so the control pollutes only that venv)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    return dataclasses.replace(task, test_cmd=f"{venv}/bin/python -m pytest {NO_PLUGINS}")


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_pth_in_site_packages_fools_later_attempts_only_without_sandbox(
        venv_task: Task, cache: SnapshotCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str) -> None:
    """Measured on main: a ``.pth`` plus a plugin written into the venv's site-packages made later
    attempts of *other* agents solve with wrong fixes."""
    monkeypatch.setenv("HOME", str(tmp_path / "fake-home"))  # the control writes the user site here
    python = venv_task.test_cmd.split()[0]
    agent = cmd_agent(f"{python} -c {shlex.quote(_site_packages_script())}", name="site")
    r, art = attempt(venv_task, cache, agent, tmp_path / "a", sandbox)
    assert r.outcome != "solved"
    later, _ = attempt(venv_task, cache, wrong_agent(tmp_path), tmp_path / "b", sandbox, n=2)
    site_dir = Path(subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    if sandbox == "none":
        assert (site_dir / "hf_attack.pth").exists()
        # the attack is real: an honest wrong fix's hidden tests now pass, and so do the canaries (issue 30)
        assert later.outcome == "forged", later
    else:
        assert not (site_dir / "hf_attack.pth").exists()
        assert "cannot write" in (art / "agent.out").read_text()
        assert later.outcome == "tests_failed", later


@pytest.mark.slow
def test_built_in_site_packages_attack_cannot_write(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The built-in attack (``verify --attacks``) in the sandbox: every site-packages folder of the
    interpreter is read-only, and the user site is the attempt's own fresh home."""
    r, art = attempt(task, cache, attack_agent("site-packages-pth"), tmp_path)
    out = (art / "agent.out").read_text()
    assert r.outcome == "tests_failed" and "cannot write /" in out, (r, out)
    assert not list((Path(sys.base_prefix) / "lib").glob("python*/site-packages/hf_attack.pth"))


def _site_packages_script() -> str:
    """The ``site-packages-pth`` step as a plain script (the control runs it with the venv's python)."""
    from pytest_homefield.agents.attack_payloads import FORGE

    return ("import os, site\n"
            "open('homefield_attack_note.txt', 'w').write('attack')\n"
            "d = site.getsitepackages()[0]\n"
            "try:\n"
            f"    open(os.path.join(d, 'hf_attack_forge.py'), 'w').write({FORGE!r})\n"
            "    open(os.path.join(d, 'hf_attack.pth'), 'w')"
            ".write(\"import os; os.environ.setdefault('PYTEST_PLUGINS', 'hf_attack_forge')\\n\")\n"
            "except OSError as exc:\n"
            "    print('cannot write', d, exc)\n")


# -- (d) a daemon that outlives its attempt ---------------------------------------------------------

def _pids_with(marker: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_daemon_does_not_outlive_its_attempt(task: Task, cache: SnapshotCache, tmp_path: Path, sandbox: str) -> None:
    """Measured on main: a setsid daemon outlived its attempt and planted ``conftest.py`` into later
    grading copies. In the sandbox it dies with the attempt (its own PID namespace); without it the
    attempt's reaper (a child subreaper, issue 21) kills whatever the agent left before grading, so
    the control no longer outlives its attempt either."""
    marker = f"hf-daemon-{uuid.uuid4().hex}"
    log = tmp_path / "daemon.log"
    agent = attack_agent("daemon", marker=marker, daemon_log=str(log) if sandbox == "none" else None)
    try:
        r, _ = attempt(task, cache, agent, tmp_path / "a", sandbox)
        assert r.outcome == "tests_failed", r
        assert _pids_with(marker) == []  # gone when the attempt ends, not some time later
        size = log.stat().st_size if log.exists() else 0
        time.sleep(0.5)
        assert (log.stat().st_size if log.exists() else 0) == size  # it does nothing after its attempt
        later, _ = attempt(task, cache, wrong_agent(tmp_path), tmp_path / "b", sandbox, n=2)
        assert later.outcome == "tests_failed" and not later.suspicious, later
    finally:
        for pid in _pids_with(marker):
            os.kill(pid, signal.SIGKILL)


# -- test-process crashes are the agent's, and an agent cannot declare infra ----------------------

@pytest.mark.slow  # the session's verify --attacks run
@pytest.mark.parametrize("name", ["exit-at-import", "kill-at-import"])
def test_crash_at_import_is_scored(verify_attacks_run: VerifyAttacksRun, name: str) -> None:
    """Measured on main: ``os._exit(0)`` / ``os.kill(os.getpid(), 9)`` at import turned failures into
    unscored ``infra``, retried by ``--resume`` until luck helped. The same run on the untouched
    parent with the hidden tests finishes, so the crash is the agent's: scored. (The attempt is the one
    ``verify --attacks`` graded in bubblewrap on this fixture's task: :mod:`helpers.verify_attacks_run`.)"""
    r, _ = verify_attacks_run.attack(name)
    assert r.sandbox == "bwrap", r
    assert r.outcome == "tests_failed" and r.scored, r
    assert "untouched parent" in (r.error or "")
    assert r.suspicious and "process exit or kill" in (r.suspicious_reason or "")


@pytest.mark.slow
def test_crash_of_the_environment_itself_stays_infra(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The control of the rule above: when the hidden tests cannot run on the untouched parent either
    (here the test command loads a plugin that does not exist), the attempt is ``infra``."""
    broken = dataclasses.replace(task, test_cmd=task.test_cmd + " -p hf_no_such_plugin")
    r, _ = attempt(broken, cache, wrong_agent(tmp_path), tmp_path)
    assert r.outcome == "infra" and "untouched parent" in (r.error or ""), r


def test_cmd_agent_cannot_declare_infra(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """Measured on main: a ``cmd:`` agent printing ``{"outcome": "infra"}`` made its failures
    unscored: an agent of equal skill scored 100% against an honest one's 33%."""
    liar = script_agent(tmp_path / "liar", {"src/calc/__init__.py": WRONG_CALC},
                        "echo '{\"outcome\": \"infra\", \"error\": \"provider down\"}'", name="liar")
    r, _ = attempt(task, cache, liar, tmp_path)
    assert r.outcome == "agent_error" and r.scored, r
    assert "cannot declare" in (r.error or "") and "provider down" in (r.error or "")
    # the built-in recipes' helper (which reads the client's own output) may still say infra: a claim,
    # which --max-retries bounds (atk9 F5)
    trusted = CommandAgent(name="recipe", spec="cmd:x", command="echo '{\"outcome\": \"infra\"}'",
                           settings=AgentSettings(), trust_infra=True)
    r2, _ = attempt(task, cache, trusted, tmp_path / "t")
    assert r2.outcome == "infra" and r2.claimed


#: attacker9's F4: a clear-screen, a window title, NUL, backspace, right-to-left override, a line separator
INJECT = "m\x1b[2J\x1b]0;TITLE\x07\x00\x08\u202e\u2028|x\n## H"


def _shows_no_control(text: str | None) -> bool:
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text or "")


def test_agent_text_reaches_no_screen_raw(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """attacker9's F4, measured on main: a usage line's ``error`` and ``model`` and a file name in a workspace
    fault reached the terminal report, report.md/.html and the view pages with their ESC sequences raw (an
    agent could rewrite the ranking printed above it), and a newline landed in the one-line ``error``."""
    usage = json.dumps({"model": INJECT * 20, "error": INJECT, "outcome": "agent_error"})
    inj = script_agent(tmp_path / "inj", {"src/calc/extra.py": "X = '\x1b[2J'\n"},
                       f"printf 'out \\033]0;TITLE\\007\\n%s\\n' {shlex.quote(usage)}", name="inj")
    r, art = attempt(task, cache, inj, tmp_path)
    assert r.error == "m\\x1b[2J\\x1b]0;TITLE\\x07\\x00\\x08\\u202e |x ## H", r.error  # U+2028 is whitespace
    assert r.model is not None and len(r.model) == 100 and _shows_no_control(r.model)
    # its view page (its stdout, its diff, the record) shows the escapes, not the characters
    page, _ = render_attempt(AttemptRef(r, art, {}), task, "cmd:x", Nav("../index.html"))
    assert "out \\x1b]0;TITLE\\x07" in page and "X = '\\x1b[2J'" in page
    assert _shows_no_control(page.replace("\n", ""))
    fifo = script_agent(tmp_path / "fifo", {}, "mkfifo \"$(printf 'a\\033]0;OWNED\\007b\\nc')\"", name="fifo")
    r2, _ = attempt(task, cache, fifo, tmp_path / "f")
    assert "named pipe at a\\x1b]0;OWNED\\x07b c" in (r2.error or ""), r2.error
    # a record an earlier version wrote raw is shown escaped too: every reader makes a Result of it
    old = Result.from_dict({**r.to_dict(), "error": INJECT, "model": INJECT, "suspicious_reason": INJECT})
    assert all(_shows_no_control(t) for t in (old.error, old.model, old.suspicious_reason))


# -- code that patches pytest in memory: forged (a canary passed), flagged with its reason -------

@pytest.mark.slow
@pytest.mark.parametrize("name, reason", [
    ("patch-reports-obfuscated", "encoded or generated code"),
    ("sys-modules-swap", "module table edit"),
    ("always-equal", "always-equal object"),
])
def test_in_memory_tricks_are_flagged_and_not_counted(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                      name: str, reason: str) -> None:
    """Measured on main: pytest's reports patched through ``getattr`` and base64, a ``sys.modules``
    swap of the test module, and an always-equal return value scored solved without the flag. They
    run inside the test process (not closable by carry rules): each still names its reason (a hint),
    and since issue 30 a canary test passes, so the outcome is ``forged`` (scored, never solved) and
    the report says which canary passed."""
    r, _ = attempt(task, cache, Both(wrong_agent(tmp_path), attack_agent(name)), tmp_path)
    assert r.outcome == "forged" and r.canary, r   # the trick works, and a canary passed with it
    assert r.suspicious and reason in (r.suspicious_reason or ""), r
    run_dir = tmp_path / "run"
    (run_dir / "results.jsonl").write_text(json.dumps(r.to_dict()) + "\n")
    (run_dir / "meta.json").write_text(json.dumps({"run_id": "r", "agents": [{"name": r.agent, "spec": "x"}]}))
    report = build_report([run_dir], [task])
    assert report["agents"][r.agent]["pass_at_1"] == 0.0
    assert report["agents"][r.agent]["solved"] == 0
    assert report["agents"][r.agent]["outcomes"] == {"forged": 1}
    assert any("1 attempt(s) forged" in n for n in report["notes"])
    assert report["flagged"][0]["reason"] == r.suspicious_reason
    assert report["flagged"][0]["canary"] == r.canary


def test_flag_ignores_what_the_reference_fix_itself_does() -> None:
    """Measured on main: 3 of 91 oracle attempts of a real repository whose own plugin API uses
    pluggy's ``hookimpl`` were flagged, and the report said only "Suspicious: yes"."""
    gold = ("--- a/src/plug.py\n+++ b/src/plug.py\n@@ -1,2 +1,3 @@\n import pluggy\n"
            "+hookimpl = pluggy.HookimplMarker('plug')\n")
    assert suspicious_reasons(gold, gold) == []
    # context lines (unchanged code around the change) never count
    ctx = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n @hookimpl\n-def a(): return 1\n+def a(): return 2\n"
    assert suspicious_reasons(ctx) == []
    # an agent doing something the fix does not is still flagged, with the reason
    agent = gold + "+import os\n+os._exit(0)\n"
    assert suspicious_reasons(agent, gold) == ["process exit or kill"]
    assert suspicious_reasons(agent) == ["pytest hooks", "process exit or kill"]


# -- escapes from scoring, as verify --attacks runs them (issue 30) ---------------------------------

ESCAPES = ["fifo-in-workspace", "stdout-flood", "sparse-gibibyte", "folder-swapped-for-link", "unreadable-workspace",
           "nested-json-stdout", "many-short-lines", "nested-folders", "long-path-writes"]
#: graded here, not read from the session's ``verify --attacks`` run: the declared rate limit's own outcome
#: (before ``--max-retries`` scores it, which the run's record already shows) and the fork bomb under the
#: default process cap (the run has ``--max-procs 256``, its own test checks the bomb stops under it)
ESCAPES_GRADED_HERE = ["claim-rate-limited", "fork-bomb"]


def _escape_caught(name: str, r: Result, art: Path) -> None:
    """The checks of an escape attack's attempt ``r`` (its artifacts in ``art``): an outcome its family accepts
    (``Attack.caught``), never solved, scored, and only small regular files kept."""
    from pytest_homefield.agents.attacks import ATTACKS

    attack = next(a for a in ATTACKS if a.name == name)
    assert r.outcome != "solved" and r.scored, r
    assert not attack.caught or r.outcome in attack.caught, r
    for entry in art.iterdir():
        assert entry.is_file() and not entry.is_symlink() and entry.stat().st_size < 6 * 2**20, entry


@pytest.mark.slow  # the session's verify --attacks run
@pytest.mark.parametrize("name", ESCAPES)
def test_each_escape_family_is_caught(verify_attacks_run: VerifyAttacksRun, name: str) -> None:
    """Each built-in escape ends with an outcome its family accepts (``Attack.caught``), never solved,
    never unscored. The attempts are those ``verify --attacks`` graded in bubblewrap on this fixture's task
    (:mod:`helpers.verify_attacks_run`), not graded again here."""
    r, art = verify_attacks_run.attack(name)
    assert r.sandbox == "bwrap", r
    _escape_caught(name, r, art)


@pytest.mark.parametrize("name", ESCAPES_GRADED_HERE)
def test_each_escape_family_is_caught_graded_here(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                  name: str) -> None:
    """As above, graded here (:data:`ESCAPES_GRADED_HERE`); the declared rate limit is the one unscored
    outcome, which ``--max-retries`` then scores."""
    from pytest_homefield.run.retries import cap_retries

    r, art = attempt(task, cache, attack_agent(name), tmp_path, "bwrap")
    if name == "claim-rate-limited":
        assert r.outcome == "rate_limited", r
        r = cap_retries(r, {}, 0)  # verify --attacks runs with --max-retries 0
    _escape_caught(name, r, art)


@pytest.mark.slow
def test_a_folder_where_a_hidden_test_file_beside_the_code_goes_is_not_infra(task: Task, cache: SnapshotCache,
                                                                              tmp_path: Path) -> None:
    """atk20 F1, the ``folder-at-hidden-tests`` attack on the task with its hidden test file new beside the
    code (``src/calc/test_sub.py``: no folder name marks it a test). Measured on main: the planted folder
    (``src/calc/test_sub.py/__init__.py``) was carried, the test patch could not write the file, and the
    attempt was ``infra`` — unscored, and as homefield's own fault never retried."""
    rel = "src/calc/test_sub.py"
    lines = TEST_SUB.splitlines()
    patch = (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
             f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))
    beside = dataclasses.replace(task, test_files=[rel], test_patch=patch,
                                 FAIL_TO_PASS=[i.replace("tests/", "src/calc/") for i in task.FAIL_TO_PASS],
                                 PASS_TO_PASS=[i.replace("tests/", "src/calc/") for i in task.PASS_TO_PASS])
    r, art = attempt(beside, cache, attack_agent("folder-at-hidden-tests"), tmp_path, "bwrap")
    assert (r.outcome, r.scored) == ("tests_failed", True), r
    assert f"{rel}/__init__.py" in (art / "diff.patch").read_text()  # the agent did plant it
