"""pytest_homefield/plugin.py: how a session is named to another that waits for it (contracts §9)."""

from __future__ import annotations

from pytest_homefield.plugin import _session_name


def test_a_session_is_named_by_its_command_never_its_arguments() -> None:
    """ux30: another session's waiting line showed this one's whole command line (paths, tokens): the CLI's
    sessions are named by their subcommand, pytest's by their mode's flag."""
    token = "x=cmd:API_KEY=s3cret ./agent.sh"
    assert _session_name(["/usr/local/bin/homefield", "run", "--agent", token], "--homefield") == "homefield run"
    assert _session_name(["/src/pytest_homefield/__main__.py", "verify", "--attacks"], "--homefield") == \
        "homefield verify"
    assert _session_name(["/venv/bin/pytest", "--homefield-probe", f"--homefield-agent={token}", "/home/u/repo"],
                         "--homefield-probe") == "pytest --homefield-probe"
    assert _session_name(["/usr/local/bin/homefield", "--agent=s3cret"], "--homefield") == "homefield"
    assert _session_name([], "") == "python"
