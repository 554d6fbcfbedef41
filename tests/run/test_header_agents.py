"""The session header names a run's agents and their sandboxes in lines a terminal can show: up to
``HEADER_AGENTS`` one by one as before, more grouped by sandbox with the first three of each named and
the rest counted, ``-v`` naming them all (nu30: ``homefield verify --attacks`` on tkem/cachetools opened
with two lines of about 3,000 characters, 50 agents each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined, homefield

from pytest_homefield.run.run_plugin import HEADER_AGENTS, header_agent_lines


def test_few_agents_are_named_one_by_one_and_many_grouped_by_sandbox() -> None:
    few = [("oracle", "oracle"), ("claude", "claude:claude-sonnet-4-5")]
    assert header_agent_lines(few, {"oracle": "none", "claude": "bwrap:net"}, "bwrap", False) == (
        "oracle (oracle), claude (claude:claude-sonnet-4-5)", "oracle none, claude bwrap; test runs bwrap")
    many = [("oracle", "oracle")] + [(f"attack-{i}", f"attack:{i}") for i in range(49)]
    boxes = {"oracle": "none", **{f"attack-{i}": "bwrap" for i in range(49)}}
    named, boxed = header_agent_lines(many, boxes, "bwrap", False)
    assert named == "oracle (oracle), attack-0 (attack:0), attack-1 (attack:1) and 47 more agents (-v names them all)"
    assert boxed == "oracle none; attack-0, attack-1, attack-2 and 46 more bwrap; test runs bwrap"
    named, boxed = header_agent_lines(many, boxes, "bwrap", True)  # -v
    assert named.count("(attack:") == 49 and boxed.count(" bwrap") == 50


@pytest.mark.slow
def test_a_run_of_many_agents_opens_with_short_lines(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    specs = ["oracle", "noop"] + [f"sim:0.{i}" for i in range(1, HEADER_AGENTS)]
    args = ["run", *(a for s in specs for a in ("--agent", s)), "--sandbox", "none", "-k", "no-such-item"]
    proc = homefield(repo, *args)
    header = {line.split(":", 1)[0]: line for line in proc.stdout.splitlines() if line.startswith("homefield ")}
    assert header["homefield agents"] == ("homefield agents: oracle (oracle), noop (noop), sim-0.1 (sim:0.1) "
                                          f"and {len(specs) - 3} more agents (-v names them all)")
    (sandbox,) = [line for key, line in header.items() if key.startswith("homefield sandbox (none")]
    assert sandbox.endswith(
        f"oracle, noop, sim-0.1 and {len(specs) - 3} more none; test runs none")
    verbose = homefield(repo, *args, "-v").stdout
    assert all(f"sim-0.{i} (sim:0.{i})" in verbose for i in range(1, HEADER_AGENTS))


@pytest.mark.slow
def test_the_header_says_so_for_oracle_and_noop_only(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    line = "homefield: oracle and noop make the same change on every attempt: the 1 after the first only repeat it"
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--attempts", "2", "-k", "no-such-item")
    assert line in proc.stdout and "; --attempts 1 is the sanity check" in proc.stdout, proc.stdout
    # under pytest the option is pytest's (ux65: the header said --attempts, which pytest has not)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--homefield", "--homefield-agent", "oracle",
                           "--homefield-agent", "noop", "--homefield-attempts", "2", "-k", "no-such-item", "-p",
                           "no:cacheprovider"], cwd=repo, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert line in proc.stdout and "; --homefield-attempts 1 is the sanity check" in proc.stdout, proc.stdout
    for args in (["--agent", "oracle", "--agent", "noop", "--attempts", "1"],  # already one attempt
                 ["--agent", "oracle", "--agent", "sim:0.5", "--attempts", "2"]):  # sim:P draws per attempt
        proc = homefield(repo, "run", *args, "-k", "no-such-item")
        assert "make the same change" not in proc.stdout and "homefield agents:" in proc.stdout, proc.stdout
