"""link46 (issue 30, contracts §9 "host-side file work never follows the agent's links"): under ``--sandbox none``
the agent and the graded code run as the user and can swap a file of the attempt's folder for a link between two
of homefield's writes. Before: ``diff.patch`` was written with ``Path.write_text`` (through a link: the user's file
it named was overwritten), ``agent.out`` was read through a link (another file's last line read as the agent's
usage line), and the note written into an ``agent.err`` that is missing followed a dangling link (a file made where
it pointed, outside ``.homefield``). Now each is reached without following a link: a write replaces the entry
(:func:`~pytest_homefield.sandbox.nofollow.write_bytes`), a read refuses a link
(:func:`~pytest_homefield.store.open_own`)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    GOOD_CALC,
    Fixture,
    build,
    cmd_agent,
    one_unsandboxed_attempt,
    task_for,
    writes_calc,
)

from pytest_homefield.layout import attempt_dir
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

USER_TEXT = "the user's own notes\n"
FORGED_USAGE = '{"cost_usd": 123.5, "model": "forged-by-a-link"}\n'


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    yield build(tmp_path_factory.mktemp("own-files") / "repo")


@pytest.mark.slow
def test_an_attempt_never_writes_or_reads_through_links_the_agent_put_in_its_folder(repo: Fixture,
                                                                                       tmp_path: Path) -> None:
    task = task_for(repo)
    run_dir = tmp_path / "run"
    art = attempt_dir(run_dir, task.id, "attack", 1)
    user = tmp_path / "user"
    user.mkdir()
    notes, usage, made = user / "notes.txt", user / "usage.txt", user / "made-by-homefield.txt"
    notes.write_text(USER_TEXT)
    usage.write_text(FORGED_USAGE)
    q = shlex.quote
    command = " && ".join([
        writes_calc(GOOD_CALC),
        f"ln -s {q(str(notes))} {q(str(art / 'diff.patch'))}",  # homefield writes the diff here after the run
        f"rm {q(str(art / 'agent.err'))} && ln -s {q(str(made))} {q(str(art / 'agent.err'))}",  # dangling
        f"rm {q(str(art / 'agent.out'))} && ln -s {q(str(usage))} {q(str(art / 'agent.out'))}",
    ])
    spec = AttemptSpec(task=task, agent=cmd_agent(command), attempt=1, run_id="r", run_dir=run_dir,
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"))
    cache = SnapshotCache(repo=repo.root)
    try:
        cache.keep([task])
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert (r.outcome, r.error) == ("solved", None)
    assert notes.read_text() == USER_TEXT  # before: the diff was written over it
    assert not made.exists()  # before: the "wrote nothing" note made it, outside the run folder
    assert r.cost_usd != 123.5 and r.model != "forged-by-a-link"  # before: the linked file's line was read
    diff = art / "diff.patch"
    assert not diff.is_symlink() and "src/calc/__init__.py" in diff.read_text()


# -- the appenders of an attempt's, a run's and a service's folder ------------------------------------------


def _linked(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """``(link, user file)``: ``tmp_path/folder/name`` a link to a file of the user's holding :data:`USER_TEXT`."""
    user = tmp_path / "user.txt"
    user.write_text(USER_TEXT)
    link = tmp_path / "folder" / name
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(user)
    return link, user


@pytest.mark.parametrize("append", [False, True])
def test_an_output_file_is_never_opened_through_a_link(tmp_path: Path, append: bool) -> None:
    """``agent.out`` / ``agent.err`` and a test run's log (:class:`CappedSink`). Before: opened with ``open(path,
    "wb")`` / ``"ab"``, which followed the link: the user's file emptied, the output written into it."""
    from pytest_homefield.sandbox.streams import CappedSink
    from pytest_homefield.store import NotOwnFile

    link, user = _linked(tmp_path, "agent.out")
    with pytest.raises(NotOwnFile) as err:
        CappedSink(link, 1 << 20, append=append).write(b"output\n")
    assert str(err.value) == f"{link}: a symlink, never followed"
    assert user.read_text() == USER_TEXT and link.is_symlink()


def test_a_command_output_file_is_never_opened_through_a_link(tmp_path: Path) -> None:
    """:func:`run_process` without a cap (a service's ``ready`` command's output). Before: ``open(path, "wb")``."""
    import os

    from pytest_homefield.sandbox.procs import run_process
    from pytest_homefield.store import NotOwnFile

    link, user = _linked(tmp_path, "ready.tmp")
    with pytest.raises(NotOwnFile, match="a symlink, never followed"):
        run_process(["/bin/sh", "-c", "echo hi"], cwd=tmp_path, env=os.environ, timeout_s=30, stdout_path=link,
                    stderr_path=None)
    assert user.read_text() == USER_TEXT


def test_the_proxy_log_is_never_appended_through_a_link(tmp_path: Path) -> None:
    """``proxy.log``, opened at each request while the agent runs. Before: ``open(path, "ab")`` followed a link
    the agent put there and wrote the request lines into the user's file."""
    from pytest_homefield.sandbox.proxy import ProxyLog

    link, user = _linked(tmp_path, "proxy.log")
    log = ProxyLog(link)
    log.write("refused", "CONNECT", "example.com:443", "not on the allowlist")
    log.write("refused", "CONNECT", "example.org:443", "not on the allowlist")
    assert user.read_text() == USER_TEXT and log.counts["refused"] == 2


def test_a_service_log_is_never_written_through_a_link(tmp_path: Path) -> None:
    """A service's log. Before: its start line was appended to the user's file through the link (and the server's
    output after it). Now the start stops in one line naming the log."""
    from pytest_homefield.sandbox.services import Instance, ServiceError, ServiceSpec, free_port

    link, user = _linked(tmp_path, "svc.log")
    with pytest.raises(ServiceError) as err:
        Instance(ServiceSpec("svc", "sleep 30", timeout_s=5), free_port(), link).start()
    assert str(err.value) == f"service 'svc' cannot write its log {link}: a symlink, never followed"
    assert user.read_text() == USER_TEXT


@pytest.mark.slow
def test_resume_of_a_run_whose_results_are_a_link_exits_2_in_one_line(mined: Path, tmp_path: Path) -> None:
    """fix45 left: ``--resume`` of a run whose ``results.jsonl`` graded code linked elsewhere refused to start with
    pytest's usage-error status, 4 (``ERROR: …``), as for a wrong flag. Now exit 2, one line naming the file, as
    ``homefield report`` of that run; nothing read or written through the link."""
    from helpers.e2e_repo import copy_mined, homefield

    repo = copy_mined(mined, tmp_path / "repo")
    base = ["run", "--agent", "noop", "--attempts", "1", "--max-tasks", "1", "--run-id", "r", "-n", "0"]
    assert homefield(repo, *base).returncode == 0
    results = repo / ".homefield" / "runs" / "r" / "results.jsonl"
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(results.read_bytes())
    results.unlink()
    results.symlink_to(forged)
    before = forged.read_bytes()
    proc = homefield(repo, *base, "--resume")
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    assert (proc.returncode, lines) == (2, [f"Exit: pytest-homefield: {results}: a symlink, never followed"]), lines
    assert forged.read_bytes() == before and results.is_symlink()
    report = homefield(repo, "report", "r")
    assert report.returncode == 2 and report.stderr == f"homefield report: {results}: a symlink, never followed\n"


@pytest.mark.slow
def test_a_retried_attempt_whose_folder_was_made_a_link_writes_nothing_through_it(repo: Fixture,
                                                                                   tmp_path: Path) -> None:
    """An unscored attempt is made again in the same folder (``--resume``); graded code of the try before ran as
    the user and replaced that folder with a link to a folder of the user's. Before: ``shutil.rmtree`` refused the
    link (``ignore_errors`` hid it) and ``mkdir(exist_ok=True)`` took the linked folder: ``prompt.txt``,
    ``agent.out`` and ``diff.patch`` were written into the user's folder. Now the link is removed as a link and the
    attempt gets a folder of its own."""
    task = task_for(repo)
    run_dir = tmp_path / "run"
    art = attempt_dir(run_dir, task.id, "attack", 1)
    art.parent.mkdir(parents=True)
    user = tmp_path / "user"
    user.mkdir()
    (user / "notes.txt").write_text(USER_TEXT)
    art.symlink_to(user)
    outcome, _ = one_unsandboxed_attempt(repo, run_dir, "true")
    assert outcome == "empty_patch"
    assert sorted(p.name for p in user.iterdir()) == ["notes.txt"] and (user / "notes.txt").read_text() == USER_TEXT
    assert not art.is_symlink() and (art / "prompt.txt").is_file() and (art / "diff.patch").is_file()


@pytest.mark.slow
def test_an_attempt_below_a_linked_folder_of_the_run_is_infra_and_writes_nothing(repo: Fixture,
                                                                                  tmp_path: Path) -> None:
    """The run's ``attempts/`` folder made a link to a folder of the user's (as above, by graded code of an earlier
    attempt): the attempt is ``infra``, one line naming its folder, and nothing is written through the link."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    user = tmp_path / "user"
    user.mkdir()
    (run_dir / "attempts").symlink_to(user)
    outcome, error = one_unsandboxed_attempt(repo, run_dir, "true")
    assert outcome == "infra" and error is not None and "cannot make the attempt's folder" in error
    assert "\n" not in error and list(user.iterdir()) == []


def test_an_environment_user_note_is_never_written_or_read_through_a_link(tmp_path: Path) -> None:
    """The environment cache's ``.users/<key>/<digest>`` notes (which repositories use a built environment; under
    ``--sandbox none`` graded code can write the cache). Before: ``write_text`` through a link put at a note's
    path overwrote the user's file with the repository's path, and :func:`_users` read a linked file's text as
    a user (a link to a fifo blocked it)."""
    import hashlib
    import os

    from pytest_homefield.envs.builder import _note_user, _users

    root = tmp_path / "envs"
    folder = root / ".users" / "k1"
    folder.mkdir(parents=True)
    user_file = tmp_path / "notes.txt"
    user_file.write_text(USER_TEXT)
    repo_path = "/home/u/repo"
    (folder / hashlib.sha256(repo_path.encode()).hexdigest()[:16]).symlink_to(user_file)
    (folder / "0000000000000000").symlink_to(user_file)  # a user read from another file
    os.mkfifo(folder / "1111111111111111")
    _note_user(root, "k1", repo_path)
    assert user_file.read_text() == USER_TEXT
    assert _users(root, "k1") == {repo_path}


def test_an_agents_output_is_never_read_through_a_link(tmp_path: Path) -> None:
    """The built-in agents read their output back from the attempt's folder (claude's ``agent.out`` stream and its
    last line for an error, a recipe client's JSON lines): before, a link put there was followed and another
    file's lines read as the agent's (a link to a fifo blocked the host)."""
    from pytest_homefield.agents.claude import _last_line
    from pytest_homefield.agents.recipes import _json_lines

    user = tmp_path / "user.jsonl"
    user.write_text('{"cost": 9.5, "main_model": "forged"}\n')
    link = tmp_path / "agent.out"
    link.symlink_to(user)
    assert _last_line(link) == "" and _json_lines(link) == []


@pytest.mark.slow
def test_an_attempt_in_a_linked_homefield_folder_is_made_as_before(repo: Fixture, tmp_path: Path) -> None:
    """Users link ``.homefield`` (or ``runs/``) elsewhere: the folders above the run's are followed as before, and the
    attempt's files land in the linked folder."""
    real = tmp_path / "real"
    (real / "runs").mkdir(parents=True)
    (tmp_path / ".homefield").symlink_to(real)
    run_dir = tmp_path / ".homefield" / "runs" / "r"
    outcome, error = one_unsandboxed_attempt(repo, run_dir, "true")
    assert (outcome, error) == ("empty_patch", None)
    art = attempt_dir(real / "runs" / "r", task_for(repo).id, "attack", 1)
    assert {p.name for p in art.iterdir()} >= {"prompt.txt", "agent.out", "agent.err", "diff.patch"}


def test_a_service_log_made_a_link_while_it_runs_is_never_written_through(tmp_path: Path) -> None:
    """The log swapped for a link after the service started (its ``ready`` command does it here, as graded code
    could under ``--sandbox none``): the ``ready`` lines homefield appends are not written (the user's file is
    untouched) and the service still starts and stops cleanly. Before: appended through the link."""
    from pytest_homefield.sandbox.services import Instance, ServiceSpec, free_port

    user = tmp_path / "user.txt"
    user.write_text(USER_TEXT)
    log = tmp_path / "logs" / "svc.log"
    q = shlex.quote
    ready = (f"if [ -e {q(str(tmp_path / 'swapped'))} ]; then exit 0; fi; touch {q(str(tmp_path / 'swapped'))}; "
             f"rm -f {q(str(log))}; ln -s {q(str(user))} {q(str(log))}; exit 1")
    inst = Instance(ServiceSpec("svc", "sleep 30", ready=ready, timeout_s=20), free_port(), log).start()
    try:
        assert inst.proc is not None and inst.proc.poll() is None
    finally:
        inst.stop()
    assert user.read_text() == USER_TEXT and log.is_symlink()
