"""The scan's reading of the ``git log -z --raw`` stream: the one-match-per-commit parser
(:func:`pytest_homefield.mine.scan_git.commits`) gives what the token-by-token one gives, wherever git's
output is cut into chunks, and hands a stream it does not fit to the token parser (issue 35); a walk spooled
to a temporary file reads the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import git
import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.errors import ScanError
from pytest_homefield.mine import scan_git

_DATES = b"2020-01-01T00:00:00+00:00\0" * 2
#: two commits: a message and a path holding the record separator, then a root commit, a trailing newline
STREAM = (
    b"\x1e" + b"a" * 40 + b"\0" + b"b" * 40 + b"\0" + _DATES + b"fix \x1e in the message\n\nbody\n\0"
    + b"\n:100644 100644 " + b"1" * 40 + b" " + b"2" * 40 + b" M\0pkg/pa\x1eth.py\0"
    + b":100644 000000 " + b"4" * 40 + b" " + b"0" * 40 + b" D\0tests/test_gone.py\0"
    + b"\x1e" + b"c" * 40 + b"\0\0" + _DATES + b"root\0"
    + b"\n:000000 100644 " + b"0" * 40 + b" " + b"3" * 40 + b" A\0caf\xc3\xa9 \xff.py\0\n"
)


def _commits(parse: Any, chunks: list[bytes]) -> list[dict[str, Any]]:
    return [vars(c) for c in parse(iter(chunks))]


def test_every_cut_of_the_stream_gives_the_same_commits() -> None:
    want = _commits(scan_git.commits_by_tokens, [STREAM])
    assert [c["sha"] for c in want] == ["a" * 40, "c" * 40]
    assert want[0]["message"] == "fix \x1e in the message\n\nbody" and want[0]["parents"] == ["b" * 40]
    assert want[0]["entries"][1::2] == ["pkg/pa\x1eth.py", "tests/test_gone.py"]
    assert want[1]["parents"] == [] and want[1]["entries"][1] == "caf\u00e9 \udcff.py"  # surrogateescape
    for size in range(1, len(STREAM) + 1):
        chunks = [STREAM[i:i + size] for i in range(0, len(STREAM), size)]
        assert _commits(scan_git.commits, chunks) == want, f"chunks of {size} bytes"


def test_a_stream_of_another_shape_goes_to_the_token_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    odd = STREAM.replace(b":100644 000000", b"X100644 000000")  # an entry the pattern does not expect
    want = _commits(scan_git.commits_by_tokens, [odd])
    assert want[0]["entries"][2].startswith("X100644") and len(want) == 2
    monkeypatch.setattr(scan_git, "_STALL", 16)
    assert _commits(scan_git.commits, [odd[i:i + 7] for i in range(0, len(odd), 7)]) == want
    assert _commits(scan_git.commits, [odd]) == want


def test_a_spooled_walk_reads_what_a_streamed_one_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`~pytest_homefield.mine.scan_git.spooled` (git writes its whole output to a temporary file,
    then it is read back) yields the bytes :func:`~pytest_homefield.mine.scan_git.stream` does, in chunks
    of any size, and fails as it does."""
    repo = GitRepo.init(tmp_path / "r")
    for i in range(3):
        repo.write(f"pkg/m{i}.py", f"X = {i}\n")
        repo.write(f"tests/test_m{i}.py", "def test_x(): ...\n")
        repo.commit(f"Add module {i}\n\nwith a body that says why")
    walk = [*scan_git.COMMON_ARGS, "--raw", "--no-abbrev", f"--format={scan_git.LOG_FORMAT}", "HEAD", "--"]
    opened = git.Repo(repo.path)
    streamed = b"".join(scan_git.stream(opened, walk))
    assert streamed.count(b"\x1e") == 3 and b"tests/test_m2.py" in streamed
    monkeypatch.setattr(scan_git, "_SPOOL_CHUNK", 7)
    chunks = list(scan_git.spooled(opened, walk))
    assert b"".join(chunks) == streamed and {len(c) for c in chunks[:-1]} == {7}
    with pytest.raises(ScanError, match="^git log failed: fatal: unrecognized argument: --bogus$"):
        list(scan_git.spooled(opened, ["--bogus"]))
