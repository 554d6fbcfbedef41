"""link48 (issue 30, contracts §9 "host-side file work never follows the agent's links"): link46 opened the last
component of every file of an attempt's folder with ``O_NOFOLLOW``, but the folders above it were still followed.
Under ``--sandbox none`` the agent (or the graded code) runs as the user and can move ``attempts/<task>/<agent>/``
away and put a link in its place while the attempt runs: before, every file the host wrote after that
(``diff.patch``, ``tests.log``, ``outcomes.jsonl``, ``canaries.json`` …) landed in the folder the link named, and
what it read back came from there. Now the attempt's folder is opened once, reached from the run's folder without
following a link, and pinned (:func:`~pytest_homefield.sandbox.nofollow.pinned`): every host-side open of a file in
it goes through that descriptor; the swap itself is the agent's doing, ``agent_error``."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import GOOD_CALC, Fixture, build, one_unsandboxed_attempt, task_for, writes_calc

from pytest_homefield.layout import attempt_dir
from pytest_homefield.pins import _PINS, pinned
from pytest_homefield.sandbox import nofollow
from pytest_homefield.store import NotOwnFile, open_own_file, own_text


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    yield build(tmp_path_factory.mktemp("pinned") / "repo")


def _swap(agent_dir: Path, away: Path, outside: Path) -> str:
    """Shell (or Python) steps: move ``agent_dir`` to ``away`` and put a link to ``outside`` (holding a ``1/``) in
    its place."""
    q = shlex.quote
    return (f"mkdir -p {q(str(outside / '1'))} && mv {q(str(agent_dir))} {q(str(away))} && "
            f"ln -s {q(str(outside))} {q(str(agent_dir))}")


@pytest.mark.slow
def test_a_folder_the_agent_swaps_above_its_attempt_folder_is_never_followed(repo: Fixture, tmp_path: Path) -> None:
    """The agent moves its ``attempts/<task>/attack/`` away and links a folder of its choosing there. Before: the
    attempt was graded (``solved``) and ``diff.patch``, ``tests.log`` and ``outcomes.jsonl`` were written into
    ``outside/1/``. Now nothing is written there, the files stay in the attempt's own folder (moved with it), and
    the attempt is ``agent_error``."""
    run_dir = tmp_path / "run"
    agent_dir = attempt_dir(run_dir, task_for(repo).id, "attack", 1).parent
    away, outside = tmp_path / "away", tmp_path / "outside"
    command = f"{writes_calc(GOOD_CALC)} && {_swap(agent_dir, away, outside)}"
    outcome, error = one_unsandboxed_attempt(repo, run_dir, command)
    assert sorted(os.listdir(outside / "1")) == []  # before: diff.patch, tests.log, outcomes.jsonl, …
    assert outcome == "agent_error" and error is not None and "was replaced or moved: never followed" in error
    assert (away / "1" / "diff.patch").is_file() and (away / "1" / "prompt.txt").is_file()


@pytest.mark.slow
def test_a_folder_the_graded_code_swaps_above_the_attempt_folder_is_never_followed(repo: Fixture,
                                                                                     tmp_path: Path) -> None:
    """The same swap made by the graded code (``calc``'s import, in the hidden tests' process, ``--sandbox none``).
    Before: the grading's later files (``canaries.json``, the twin runs' logs) went to ``outside/1/`` and the attempt
    was scored as graded. Now nothing is written there and the attempt is ``agent_error`` (``hidden tests: …``)."""
    run_dir = tmp_path / "run"
    agent_dir = attempt_dir(run_dir, task_for(repo).id, "attack", 1).parent
    away, outside = tmp_path / "away", tmp_path / "outside"
    swap = (f"\n\nimport os as _os\nif not _os.path.islink({str(agent_dir)!r}):\n"
            f"    _os.makedirs({str(outside / '1')!r}, exist_ok=True)\n"
            f"    _os.rename({str(agent_dir)!r}, {str(away)!r})\n"
            f"    _os.symlink({str(outside)!r}, {str(agent_dir)!r})\n")
    outcome, error = one_unsandboxed_attempt(repo, run_dir, writes_calc(GOOD_CALC + swap))
    assert sorted(os.listdir(outside / "1")) == []
    assert outcome == "agent_error" and error is not None and error.startswith("hidden tests: a folder on the way")


# -- the pin itself (no attempt) ------------------------------------------------------------------------------


def _pinned_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(art, away, outside)``: ``tmp_path/run/a/1`` made, the caller pins it, then swaps ``a`` for a link."""
    art = tmp_path / "run" / "a" / "1"
    art.mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "1").mkdir(parents=True)
    return art, tmp_path / "away", outside


def test_a_pinned_folder_is_reached_by_its_descriptor_after_a_folder_above_it_is_swapped(tmp_path: Path) -> None:
    """Every opener of homefield's own files (``nofollow.write_bytes``, ``read_bytes``, ``read_tail``,
    ``store.open_own_file``, ``own_text``) below a pinned folder. Before (no pin: the path's folders followed) each
    wrote into or read from ``outside/1``."""
    art, away, outside = _pinned_folder(tmp_path)
    (outside / "1" / "agent.out").write_text("planted\n")
    with pinned(art, nofollow.open_folder(tmp_path / "run", "a/1")):
        (tmp_path / "run" / "a").rename(away)
        (tmp_path / "run" / "a").symlink_to(outside)
        nofollow.write_bytes(art, "diff.patch", b"diff\n")
        nofollow.write_bytes(art, "sub/x", b"x", make_parents=True)
        with open_own_file(art / "agent.out", "ab") as f:
            f.write(b"own\n")
        assert own_text(art / "agent.out") == "own\n"
        assert nofollow.read_bytes(art, "diff.patch") == b"diff\n"
        assert nofollow.read_tail(art / "diff.patch", 3) == b"ff\n"
        assert not nofollow.still_at(tmp_path / "run", "a/1", _PINS[os.path.abspath(art)])
    assert sorted(os.listdir(outside / "1")) == ["agent.out"]
    assert (outside / "1" / "agent.out").read_text() == "planted\n"
    assert sorted(os.listdir(away / "1")) == ["agent.out", "diff.patch", "sub"]
    assert _PINS == {}


def test_a_link_below_a_pinned_folder_is_refused_with_the_users_line(tmp_path: Path) -> None:
    """A folder below the pin swapped for a link: refused as a link is (``<file>: a symlink, never followed``)."""
    art, _, outside = _pinned_folder(tmp_path)
    (art / "net").symlink_to(outside / "1")
    with pinned(art, nofollow.open_folder(tmp_path / "run", "a/1")):
        with pytest.raises(NotOwnFile) as err:
            open_own_file(art / "net" / "log", "ab")
        assert str(err.value) == f"{art / 'net' / 'log'}: a symlink, never followed"
        with pytest.raises(nofollow.LinkInTheWay):
            nofollow.write_bytes(art / "net", "log", b"x")
    assert os.listdir(outside / "1") == []


def test_an_openai_replys_diff_is_never_written_through_a_link_in_its_scratch_folder(tmp_path: Path) -> None:
    """The ``openai:`` agent's diff files (``<attempt>/scratch/reply-N.patch``, N the count of those there). Before:
    ``Path.write_text`` wrote the reply's diff into the user's file a link there named."""
    from pytest_homefield.agents.openai_compat import Edits, apply_edits

    work, scratch = tmp_path / "work", tmp_path / "art" / "scratch"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    scratch.mkdir(parents=True)
    user = tmp_path / "user.txt"
    user.write_text("the user's own notes\n")
    (scratch / "reply-1.patch").symlink_to(user)  # one reply file there already: the next is reply-1
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    applied, _ = apply_edits(Edits(diffs=[diff]), work, scratch=scratch)
    assert user.read_text() == "the user's own notes\n"
    assert applied == 1 and (work / "a.txt").read_text() == "two\n"


def test_folders_made_below_a_pinned_folder_are_made_from_its_descriptor(tmp_path: Path) -> None:
    """link52: folders made by path below the attempt's pinned folder (``run_tests``' output folder, the agent's
    artifacts folder, the ``openai:`` agent's ``scratch/``, ``pins.make_folder`` itself) after a folder above it was
    swapped for a link to an empty ``outside/``. Before: ``mkdir(parents=True, exist_ok=True)`` by path made
    ``outside/1/`` and ``outside/1/scratch/``. Now each is made in the pinned folder (moved to ``away/1/``) and
    ``outside/`` stays empty."""
    import sys

    from pytest_homefield.agents.openai_compat import Edits, apply_edits
    from pytest_homefield.pins import make_folder
    from pytest_homefield.sandbox.procs import run_agent
    from pytest_homefield.sandbox.testrun import run_tests

    art = tmp_path / "run" / "a" / "1"
    art.mkdir(parents=True)
    outside, away, work = tmp_path / "outside", tmp_path / "away", tmp_path / "work"
    outside.mkdir()
    work.mkdir()
    with pinned(art, nofollow.open_folder(tmp_path / "run", "a/1")):
        (tmp_path / "run" / "a").rename(away)
        (tmp_path / "run" / "a").symlink_to(outside)
        make_folder(art / "made" / "deeper")
        make_folder(art / "fresh", fresh=True)
        with pytest.raises(FileExistsError):
            make_folder(art / "fresh", fresh=True)
        run_agent([sys.executable, "-c", "pass"], cwd=work, env={"PATH": "/usr/bin:/bin"}, timeout_s=30,
                  artifacts=art)
        run_tests(work, "true", [], out_dir=art, timeout_s=30)
        apply_edits(Edits(diffs=[]), work, scratch=art / "scratch")
    assert sorted(os.listdir(outside)) == []  # before: ['1'], holding scratch/
    assert {"made", "fresh", "agent.out", "tests.log", "scratch"} <= set(os.listdir(away / "1"))
    assert (away / "1" / "made" / "deeper").is_dir()


def test_a_test_runs_outcomes_file_is_written_from_the_pinned_folder(tmp_path: Path) -> None:
    """link52: ``outcomes.write_counted`` (a test run's ``outcomes.jsonl`` in the attempt's folder, for people to
    read) unlinked and created the file by path, the folders above followed: before, with ``a/`` swapped for a link
    after the pin, ``outside/1/outcomes.jsonl`` got the run's events."""
    from pytest_homefield.sandbox.outcomes import write_counted

    art, away, outside = _pinned_folder(tmp_path)
    with pinned(art, nofollow.open_folder(tmp_path / "run", "a/1")):
        (tmp_path / "run" / "a").rename(away)
        (tmp_path / "run" / "a").symlink_to(outside)
        write_counted(art / "outcomes.jsonl", ['{"event": "x"}'])
    assert os.listdir(outside / "1") == []
    assert (away / "1" / "outcomes.jsonl").read_text() == '{"event": "x"}\n'
