"""cli.pytest_args: the argv homefield's own pytest session gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.argv import pytest_args
from pytest_homefield.cli import build_parser


def _args(root: Path, *argv: str) -> list[str]:
    ns = build_parser().parse_args(list(argv))
    return pytest_args(ns, argv[0], root, [])


def _tasks(root: Path, *envs: dict[str, str] | None) -> None:
    (root / ".homefield").mkdir(exist_ok=True)
    lines = [json.dumps({"id": f"t{i}", "env": env}) for i, env in enumerate(envs)]
    (root / ".homefield" / "tasks.jsonl").write_text("".join(f"{line}\n" for line in lines))


@pytest.mark.parametrize("command", ["mine", "run", "verify"])
def test_env_uv_keeps_the_repositorys_conftest_out(tmp_path: Path, command: str) -> None:
    # its conftest.py imports test dependencies that live only in the task environments
    assert "--noconftest" in _args(tmp_path, command, "--env", "uv")
    assert "--noconftest" not in _args(tmp_path, command)
    (tmp_path / ".homefield.yml").write_text("env: uv\n")
    assert "--noconftest" in _args(tmp_path, command)


def test_tasks_mined_with_an_environment_are_graded_without_the_conftest(tmp_path: Path) -> None:
    _tasks(tmp_path, None, None)
    assert "--noconftest" not in _args(tmp_path, "run", "--agent", "oracle")
    _tasks(tmp_path, None, {"key": "abc", "how": "uv pip install"})
    assert "--noconftest" in _args(tmp_path, "run", "--agent", "oracle")
    assert "--noconftest" in _args(tmp_path, "verify")
    # mining follows --env alone: a new mine in the current environment imports the conftest
    assert "--noconftest" not in _args(tmp_path, "mine")


def test_mine_verifies_newest_first_under_xdist(tmp_path: Path) -> None:
    # load scheduling hands candidates out in order; worksteal gives the second worker the older half
    # first, so --max-tasks / --stop-after-tasks / --time-budget kept older commits (issue 35)
    mine = _args(tmp_path, "mine", "-n", "2")
    assert mine[mine.index("--dist") + 1] == "load" and mine[mine.index("--maxschedchunk") + 1] == "1"
    run = _args(tmp_path, "run", "-n", "2")
    assert run[run.index("--dist") + 1] == "worksteal"


def test_flags_are_named_as_typed(tmp_path: Path) -> None:
    """Issue 35: a bad value exited 4 naming ``--homefield-attempts``, an option the user never typed.
    It is named as typed (an abbreviation too), or by the ``.homefield.yml`` key it came from."""
    from pytest_homefield.argv import as_typed, check_flags, typed_flag

    assert typed_flag("max-tasks", ["--max-ta=0"]) == "--max-ta"
    assert typed_flag("attempts", ["--agent", "oracle", "--attempts", "0"]) == "--attempts"
    assert typed_flag("attempts", ["--agent", "oracle"]) is None
    ns = build_parser().parse_args(["run", "--max-ta", "0"])
    assert check_flags(ns, "run", tmp_path, ["--max-ta", "0"]) == "--max-ta must be at least 1, got 0"
    assert check_flags(build_parser().parse_args(["run"]), "run", tmp_path, []) is None
    (tmp_path / ".homefield.yml").write_text("mine:\n  max_tasks: 0\n")
    ns = build_parser().parse_args(["mine"])
    assert check_flags(ns, "mine", tmp_path, []) == ".homefield.yml mine.max_tasks must be at least 1, got 0"
    assert as_typed("--homefield-resume: run r; --homefield-mine", [], tmp_path) == "--resume: run r; --homefield-mine"


def test_a_usage_error_is_one_line_under_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_homefield.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["run", "--attempts", "x"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "homefield run: argument --attempts: invalid int value: 'x' " \
        "(see homefield run --help)\n"
    assert main(["run", "--no-such"]) == 2
    assert capsys.readouterr().err == "homefield run: unrecognized arguments: --no-such (see homefield run --help)\n"
    # nu30: `homefield ablate FILE --plan` (as `homefield plan`); ablate prints its plan unless --yes
    assert main(["ablate", "AGENTS.md", "--plan"]) == 2
    assert capsys.readouterr().err == (
        "homefield ablate: unrecognized arguments: --plan (see homefield ablate --help); "
        "homefield ablate prints its plan unless --yes is given: leave out --plan\n")


def test_export_takes_the_format_names_without_their_hyphens(capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's ``homefield export --format swebench`` met argparse's generic refusal."""
    for given, name in (("swebench", "swe-bench"), ("swebench-json", "swe-bench-json"),
                        ("SWE_Bench_JSON", "swe-bench-json"), ("swe-bench", "swe-bench")):
        assert build_parser().parse_args(["export", "--format", given]).format == name, given
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["export", "--format", "csv"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'csv'" in err and "swe-bench-json" in err and err.count("\n") == 1, err


def test_demo_help_says_what_n_is(capsys: pytest.CaptureFixture[str]) -> None:
    """ux33: ``homefield demo --help`` listed ``-n NUMPROCESSES`` with no word of what it is or its default."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--help"])
    assert "xdist workers of its mine and its run" in " ".join(capsys.readouterr().out.split())
    assert build_parser().parse_args(["demo"]).numprocesses == "auto"


@pytest.mark.parametrize("command", ["mine", "run", "verify", "probe"])
def test_the_session_of_a_command_names_the_scripts_flags(tmp_path: Path, command: str) -> None:
    """ux65: the script's session, and its xdist workers from the same argv, spell options as the script does."""
    args = _args(tmp_path, command, *(["--agent", "oracle"] if command in ("run", "probe") else []))
    assert "--homefield-front-end=cli" in args


def test_a_session_given_the_scripts_front_end_spells_its_flags_until_it_ends(pytester: pytest.Pytester) -> None:
    """ux65: ``--homefield-front-end=cli`` makes :func:`~pytest_homefield.settings_table.option` say ``--attempts``
    in the session; the front end before is restored when it ends."""
    from pytest_homefield.settings_table import front_end, option

    seen: list[str] = []

    class Spy:
        def pytest_unconfigure(self) -> None:  # before the session's clean-up restores the front end before it
            seen.append(option("attempts"))

    pytester.chdir()  # no git repository: the session stops in its configure, after it took its front end
    pytester.runpytest_inprocess("--homefield-front-end=cli", "--homefield", "--homefield-agent", "oracle",
                                 "--collect-only", plugins=[Spy()])
    assert seen == ["--attempts"] and front_end() == "pytest", seen
