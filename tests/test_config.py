"""``.homefield.yml`` validation and flag precedence (contracts §2, §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.config import ConfigError, load_yaml_config, resolve_settings


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / ".homefield.yml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("mine:\n  bogus: 1\n", "unknown key 'mine.bogus'"),
        ("nonsense: 1\n", "unknown key 'nonsense'"),
        ("run:\n  attempts: two\n", "key 'run.attempts' must be int"),
        ("run:\n  allow_shell: 1\n", "key 'run.allow_shell' must be bool"),
        ("run:\n  attempts: true\n", "key 'run.attempts' must be int"),
        ("test_globs: tests/*.py\n", "key 'test_globs' must be a list of strings"),
        ("agents:\n  fast: {timeout: 3}\n", "key 'agents.fast.spec' is required"),
        ("agents:\n  fast: {spec: claude, colour: red}\n", "unknown key 'agents.fast.colour'"),
        ("agents:\n  'bad name': claude\n", "agents.bad name"),
        ("prices:\n  m: {input: cheap, output: 1}\n", "key 'prices.m.input' must be"),
        ("[1, 2]\n", "top level must be a mapping"),
        ("agents:\n  fast: {spec: claude, env: [PYTEST_ADDOPTS]}\n", "key 'agents.fast.env'"),
        ("mine: [\n", "invalid YAML"),
    ],
)
def test_bad_config_is_one_line_naming_key_and_file(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_yaml_config(path)
    msg = str(err.value)
    assert needle in msg
    assert str(path) in msg
    assert "\n" not in msg


def test_precedence_flag_over_yaml_over_default(tmp_path: Path) -> None:
    write(tmp_path, "run:\n  attempts: 2\n  timeout: 60\nmine:\n  since: 2024-01-01\n  max_tasks: 7\n")
    s = resolve_settings(tmp_path, {"attempts": 5})
    assert s.attempts == 5  # flag
    assert s.timeout == 60  # yaml
    assert s.run_timeout == 600  # default
    assert s.run_max_tasks is None
    m = resolve_settings(tmp_path, {}, mode="mine")
    assert m.since == "2024-01-01"
    assert m.mine_max_tasks == 7


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    s = resolve_settings(tmp_path, {})
    assert (s.attempts, s.stability_runs, s.max_source_files, s.min_message_words) == (3, 3, 10, 3)


def test_bad_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--homefield-attempts must be at least 1"):
        resolve_settings(tmp_path, {"attempts": 0})
    with pytest.raises(ConfigError, match="not a date"):
        resolve_settings(tmp_path, {"since": "last tuesday"}, mode="mine")


def test_usage_error_under_pytest(pytester: pytest.Pytester) -> None:
    pytester.run("git", "init", "-q")
    pytester.makefile(".yml", **{".homefield": "mine:\n  bogus: 1\n"})
    result = pytester.runpytest_subprocess("--homefield-mine")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*.homefield.yml*unknown key 'mine.bogus'*"])


def test_usage_error_outside_git(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--homefield", "--homefield-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not inside a git repository*"])


def test_recipes_are_named_agents_the_user_can_override(tmp_path: Path) -> None:
    assert resolve_settings(tmp_path, {}).agent_defs["aider"]["spec"].startswith("cmd:")
    write(tmp_path, "agents:\n  aider: 'cmd:my-aider'\n")
    assert resolve_settings(tmp_path, {}).agent_defs["aider"] == {"spec": "cmd:my-aider"}
