"""The settings table, ``.homefield.yml`` validation and flag precedence (contracts §2, §3)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_homefield.cli import build_parser
from pytest_homefield.errors import ConfigError
from pytest_homefield.mine.pipeline import scan_options
from pytest_homefield.mine.scan import ScanOptions
from pytest_homefield.settings import (
    FLAGS,
    RESERVED,
    SCHEMA,
    SETTINGS,
    ScanSettings,
    Setting,
    Settings,
    cli_to_pytest_args,
    flags_from_pytest,
    load_yaml_config,
    resolve_settings,
    setting,
)


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


def test_usage_error_under_pytest(lean_pytester: pytest.Pytester) -> None:
    lean_pytester.run("git", "init", "-q")
    lean_pytester.makefile(".yml", **{".homefield": "mine:\n  bogus: 1\n"})
    result = lean_pytester.runpytest_subprocess("--homefield-mine")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*.homefield.yml*unknown key 'mine.bogus'*"])


def test_usage_error_outside_git(lean_pytester: pytest.Pytester) -> None:
    result = lean_pytester.runpytest_subprocess("--homefield", "--homefield-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not inside a git repository*"])


def test_a_setting_with_choices_names_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--homefield-sandbox 'docker': use one of auto, bwrap, landlock, none"):
        resolve_settings(tmp_path, {"sandbox": "docker"})
    write(tmp_path, "run:\n  sandbox_network: host\n")
    with pytest.raises(ConfigError, match=r"--homefield-sandbox-network 'host': use shared, none or loopback:PORT"):
        resolve_settings(tmp_path, {})


def test_recipes_are_named_agents_the_user_can_override(tmp_path: Path) -> None:
    assert resolve_settings(tmp_path, {}).agent_defs["aider"]["spec"].startswith("cmd:")
    write(tmp_path, "agents:\n  aider: 'cmd:my-aider'\n")
    assert resolve_settings(tmp_path, {}).agent_defs["aider"] == {"spec": "cmd:my-aider"}


# --- the table: every setting reachable as flag, pytest option and yml key ----------------------

_SAMPLE = {"str": "some-value", "int": 7, "float": 2.5, "bool": True, "list": ["a", "b"]}


def _sample(decl: Setting) -> Any:
    """A valid non-default value for ``decl``."""
    if decl.check == "date":
        return "2024-02-03"
    if decl.check == "gates":
        return ["0.5"]
    if decl.choices:
        return next(c for c in decl.choices if c != decl.default)
    if decl.check == "shard":
        return "2/3"
    if decl.check == "fraction":
        return 0.1
    if decl.check == "duration":
        return "20m"
    if decl.check in ("network", "test_network"):
        return "loopback:8000"
    value = _SAMPLE[decl.kind]
    assert value != decl.default
    return value


def _mode(command: str) -> str:
    return "mine" if command == "mine" else "run"


def _yml(tmp_path: Path, dotted: str, value: Any) -> None:
    *sections, leaf = dotted.split(".")
    data: dict[str, Any] = {leaf: value}
    for part in reversed(sections):
        data = {part: data}
    write(tmp_path, yaml.safe_dump(data))


#: The flags of ``homefield <command>`` with no option, by command: the same for every setting's test, so
#: parsed once per test process.
_NO_FLAGS: dict[str, dict[str, Any]] = {}

#: ``homefield``'s parser (built once: ~0.08 s of CPU a build) and the option parser of a whole pytest
#: configuration (this machine's plugins and homefield's options registered), kept from the first
#: :func:`_pytest_options` of the test process.
_PARSERS: dict[str, Any] = {}


def _pytest_options(pytester: pytest.Pytester, args: list[str]) -> argparse.Namespace:
    """The options of ``pytest <args>``: the first call parses a whole configuration (``parseconfig``, ~0.15 s
    of CPU: the plugins loaded and registered again, as ``pytester`` forgets them after each test) and keeps
    its option parser, after checking that parser gives the same homefield flags; later calls parse with it,
    as ``Config.parse`` does last (defaults filled, then ``args``)."""
    if "pytest" not in _PARSERS:
        config = pytester.parseconfig(*args)
        parser = config._parser
        assert flags_from_pytest(parser.parse(args, namespace=argparse.Namespace())) \
            == flags_from_pytest(config.option), args
        _PARSERS["pytest"] = parser
        return config.option
    options: argparse.Namespace = _PARSERS["pytest"].parse(args, namespace=argparse.Namespace())
    return options


def _cli_parser() -> argparse.ArgumentParser:
    """``homefield``'s argument parser, built once per test process."""
    if "cli" not in _PARSERS:
        _PARSERS["cli"] = build_parser()
    parser: argparse.ArgumentParser = _PARSERS["cli"]
    return parser


def _cli_flags(pytester: pytest.Pytester, command: str, argv: list[str]) -> dict[str, Any]:
    """The flags mapping that ``homefield <command> <argv>`` hands to :func:`resolve_settings`:
    through the ``--homefield-*`` pytest options for mine/run/verify, directly for plan."""
    if not argv and command in _NO_FLAGS:
        return dict(_NO_FLAGS[command])
    ns = _cli_parser().parse_args([command, *(["CLAUDE.md"] if command == "ablate" else []), *argv])
    if command == "plan":
        flags = {**flags_from_pytest(argparse.Namespace()), **vars(ns)}
    else:
        flags = flags_from_pytest(_pytest_options(pytester, cli_to_pytest_args(ns, command)))
    if not argv:
        _NO_FLAGS[command] = dict(flags)
    return flags


def _cli_argv(decl: Setting, value: Any) -> list[str]:
    if decl.kind == "bool":
        return [f"--{decl.flag}"]
    if decl.kind == "list":
        return [arg for v in value for arg in (f"--{decl.flag}", str(v))]
    return [f"--{decl.flag}", str(value)]


def test_table_matches_the_settings_dataclass() -> None:
    names = [d.name for d in SETTINGS]
    assert len(names) == len(set(names))
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    defaults = Settings(root=Path("/r"))
    for decl in SETTINGS:
        assert decl.name in fields
        assert getattr(defaults, decl.name) == decl.default
        assert decl.flag is not None or decl.commands == ()
        assert decl.check is None or decl.flag is not None  # the check's message names the flag
    # a shared flag (max-tasks) is one flag: same kind, help and subcommands
    for flag in {d.flag for d in SETTINGS if d.flag}:
        owners = [d for d in SETTINGS if d.flag == flag]
        assert len({(d.kind, d.help, d.commands) for d in owners}) == 1
        assert len(owners) == 1 or all(d.mode for d in owners)
    assert [d.flag for d in FLAGS] == list(dict.fromkeys(d.flag for d in SETTINGS if d.flag))
    # every yml key of the table is in the schema, and no reserved key shadows one
    for decl in SETTINGS:
        if decl.yml:
            *sections, leaf = decl.yml.split(".")
            node: Any = SCHEMA
            for part in sections:
                node = node[part]
                assert part not in RESERVED or leaf not in RESERVED[part]
            assert node[leaf] == decl.yml_types


@pytest.mark.parametrize("decl", [d for d in SETTINGS if d.flag], ids=lambda d: d.name)
def test_flag_and_pytest_option_reach_the_setting(decl: Setting, lean_pytester: pytest.Pytester,
                                                  tmp_path: Path) -> None:
    value = _sample(decl)
    commands = [c for c in decl.commands if decl.mode is None or decl.mode == _mode(c)]
    assert commands, f"{decl.name}: no subcommand offers --{decl.flag} in its mode"
    for command in commands:
        mode = _mode(command)
        # not given: the table's default, whichever way the flags arrive
        assert getattr(resolve_settings(tmp_path, _cli_flags(lean_pytester, command, []), mode=mode), decl.name) \
            == decl.default
        # given on the command line
        given = resolve_settings(tmp_path, _cli_flags(lean_pytester, command, _cli_argv(decl, value)), mode=mode)
        assert getattr(given, decl.name) == value, command
    # given as the pytest option itself
    option = decl.pytest_option
    options = _pytest_options(lean_pytester, [f"{option}={v}" for v in value] if decl.kind == "list" else
                              [option] if decl.kind == "bool" else [f"{option}={value}"])
    mode = decl.mode or _mode(commands[0])
    assert getattr(resolve_settings(tmp_path, flags_from_pytest(options), mode=mode), decl.name) == value


@pytest.mark.parametrize("decl", [d for d in SETTINGS if d.yml], ids=lambda d: d.name)
def test_yml_key_reaches_the_setting_and_flag_wins(decl: Setting, tmp_path: Path) -> None:
    assert decl.yml is not None
    mode = decl.mode or "run"
    assert getattr(resolve_settings(tmp_path, {}, mode=mode), decl.name) == decl.default
    value = _sample(decl)
    if decl.kind == "bool":
        # a false flag means "not given", so a bool can only be switched on; the yml's true stays
        _yml(tmp_path, decl.yml, True)
        assert getattr(resolve_settings(tmp_path, {}, mode=mode), decl.name) is True
        return
    _yml(tmp_path, decl.yml, value)
    assert getattr(resolve_settings(tmp_path, {}, mode=mode), decl.name) == value  # yml > default
    if decl.dest is not None:
        listed = ["0.25"] if decl.check == "gates" else ["z"]
        flag_value = listed if decl.kind == "list" else "2025-05-06" if decl.check == "date" else \
            0.2 if decl.check == "fraction" else "45s" if decl.check == "duration" else \
            "none" if decl.check in ("network", "test_network") else \
            decl.choices[-1] if decl.choices and decl.choices[-1] != value else decl.choices[0] if decl.choices \
            else {"str": "other", "int": 9, "float": 4.5}[decl.kind]
        s = resolve_settings(tmp_path, {decl.dest: flag_value}, mode=mode)
        assert getattr(s, decl.name) == flag_value  # flag > yml
    if decl.mode is not None:
        other = "mine" if decl.mode == "run" else "run"
        assert getattr(resolve_settings(tmp_path, {}, mode=other), decl.name) == decl.default


@pytest.mark.parametrize("decl", [d for d in SETTINGS if d.yml], ids=lambda d: d.name)
def test_yml_wrong_type_is_one_line_naming_key_and_file(decl: Setting, tmp_path: Path) -> None:
    assert decl.yml is not None
    _yml(tmp_path, decl.yml, {"not": "a value"})
    with pytest.raises(ConfigError) as err:
        resolve_settings(tmp_path, {})
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / '.homefield.yml'}: key '{decl.yml}' must be ")
    assert "\n" not in msg


@pytest.mark.parametrize("section", ["", "mine.", "run.", "probe.", "ablate."])
def test_yml_unknown_key_is_one_line(section: str, tmp_path: Path) -> None:
    _yml(tmp_path, f"{section}colour", "red")
    with pytest.raises(ConfigError) as err:
        resolve_settings(tmp_path, {})
    assert str(err.value) == f"{tmp_path / '.homefield.yml'}: unknown key '{section}colour'"


@pytest.mark.parametrize(
    ("text", "message"),
    [  # the messages of the module before the table, pinned
        ("run:\n  timeout: x\n", "key 'run.timeout' must be number, got str 'x'"),
        ("mine:\n  since: 5\n", "key 'mine.since' must be str or a date or null, got int 5"),
        ("run:\n  fail_under: {a: 1}\n", "key 'run.fail_under' must be str or number, got dict {'a': 1}"),
        ("test_globs: 5\n", "key 'test_globs' must be a list of strings, got 5"),
        ("run_timeout: null\n", "key 'run_timeout' must be number, got NoneType None"),
        ("mine:\n  max_tasks: 1.5\n", "key 'mine.max_tasks' must be int or null, got float 1.5"),
        ("probe:\n  samples: null\n", "key 'probe.samples' must be int, got NoneType None"),
        ("run: 3\n", "key 'run' must be a mapping, got int"),
    ],
)
def test_yml_messages_are_unchanged(text: str, message: str, tmp_path: Path) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_yaml_config(path)
    assert str(err.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"timeout": -1}, "--homefield-timeout must be positive, got -1"),
        ({"run_timeout": 0}, "--homefield-run-timeout must be positive, got 0"),
        ({"test_timeout": -3}, "--homefield-test-timeout must be positive, got -3"),
        ({"budget": 0}, "--homefield-budget must be positive, got 0"),
        ({"attempt_budget": -1.5}, "--homefield-attempt-budget must be positive, got -1.5"),
        ({"stability_runs": 0}, "--homefield-stability-runs must be at least 1, got 0"),
        ({"until": "x"}, "--homefield-until: 'x' is not a date (use YYYY-MM-DD)"),
        ({"shard": "4/3"}, "--homefield-shard '4/3': expected K/N with 1 <= K <= N, e.g. 2/4"),
        ({"alpha": 1.5}, "--homefield-alpha must be between 0 and 1, got 1.5"),
    ],
)
def test_bad_flag_values_name_the_option(flags: dict[str, Any], message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_settings(tmp_path, flags, mode="mine")
    assert str(err.value) == message


def test_yml_date_and_scalar_fail_under_are_normalised(tmp_path: Path) -> None:
    write(tmp_path, "mine:\n  until: 2024-03-04\nrun:\n  fail_under: 0.5\n")
    s = resolve_settings(tmp_path, {}, mode="mine")
    assert s.until == "2024-03-04"
    assert resolve_settings(tmp_path, {}).fail_under == ["0.5"]


def test_scan_options_come_from_the_table(tmp_path: Path) -> None:
    scan_fields = [f.name for f in dataclasses.fields(ScanSettings)]
    assert [f.name for f in dataclasses.fields(ScanOptions)] == [*scan_fields, "rev", "test_cmd"]
    table = {d.name: d for d in SETTINGS}
    defaults = ScanOptions()
    assert all(getattr(defaults, n) == table[n].default for n in scan_fields)
    # every scan field of the resolved settings reaches the scan
    values = {d.name: _sample(d) for d in SETTINGS if d.name in scan_fields}
    values["paths"] = ["a,b", "c"]
    options = scan_options(dataclasses.replace(Settings(root=tmp_path), **values))
    assert options.paths == ["a", "b", "c"]
    assert all(getattr(options, n) == v for n, v in values.items() if n != "paths")
    assert options.rev == "HEAD"
    assert options.test_cmd == Settings(root=tmp_path).test_cmd  # ops61: the scan holds back what grading does


def test_setting_rejects_an_unknown_check() -> None:
    with pytest.raises(ValueError, match="check must be one of"):
        setting(1, commands=("run",), check="even")


def test_flags_and_yml_keys_are_those_of_the_contract() -> None:
    """contracts §2's table: ``(flag, yml key)`` of every setting, so that a rename shows here."""
    assert [(d.flag, d.yml) for d in SETTINGS] == [
        ("since", "mine.since"), ("until", "mine.until"), ("paths", "mine.paths"),
        ("first-parent", "mine.first_parent"), ("merges", "mine.merges"), ("max-commits", "mine.max_commits"),
        ("max-source-files", "mine.max_source_files"), ("max-diff-lines", "mine.max_diff_lines"),
        ("min-message-words", "mine.min_message_words"), (None, "test_globs"), ("env", "env"),
        ("max-tasks", "mine.max_tasks"), ("max-tasks", "run.max_tasks"), ("stability-runs", "mine.stability_runs"),
        ("spec-threshold", "spec_threshold"), ("list-candidates", None), ("reverify", None),
        ("stop-after-tasks", "mine.stop_after_tasks"), ("time-budget", "mine.time_budget"),
        ("fail-fast", "mine.fail_fast"), ("no-fail-fast", None), (None, "test_cmd"), (None, "setup_cmd"),
        ("test-timeout", "test_timeout"), ("run-timeout", "run_timeout"), ("env-extras", "env_extras"),
        ("env-groups", "env_groups"), ("env-as-of", "env_as_of"), ("max-test-memory-mb", "max_test_memory_mb"),
        ("max-test-write-mb", "max_test_write_mb"), ("max-procs", "max_procs"),
        ("max-agent-memory-mb", "max_agent_memory_mb"),
        ("max-total-memory-mb", "max_total_memory_mb"),
        ("agent", None), ("attempts", "run.attempts"),
        ("timeout", "run.timeout"),
        ("budget", "run.budget_usd"), ("attempt-budget", "run.attempt_budget_usd"),
        ("seconds-per-run", "ablate.seconds_per_run"), ("cost-per-run", "ablate.cost_per_run"),
        ("allow-shell", "run.allow_shell"),
        ("sandbox", "run.sandbox"), ("sandbox-network", "run.sandbox_network"),
        ("test-network", "test_network"), ("allow-host", "run.allow_hosts"),
        ("max-output-mb", "run.max_output_mb"), ("max-file-mb", "run.max_file_mb"),
        ("max-workspace-mb", "run.max_workspace_mb"), ("attacks", None),
        ("base-url", None), ("api-key", None), ("preds-partial", None), ("preds-policy", None),
        ("max-tokens", None), ("temperature", None), ("stop", None),
        ("exclude-memorized", "run.exclude_memorized"), ("resume", None), ("run-id", None),
        ("fail-under", "run.fail_under"), ("junit-unsolved", "run.junit_unsolved"),
        ("by-section", "ablate.by_section"), ("yes", None),
        ("samples", "probe.samples"), ("cutoff", "probe.cutoff"), ("fdr", "probe.fdr"),
        ("recite-floor", "probe.recite_floor"),
        ("shard", None), ("fail-if-worse-than", "run.fail_if_worse_than"), ("alpha", "run.alpha"),
        ("max-retries", "run.max_retries"), ("adaptive", "run.adaptive"),
        ("adaptive-margin", "run.adaptive_margin"),
    ]


# --- bad inputs refused before anything is spent (issue 21) -----------------------------------

BOMB = "".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]\n"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)]
    + ["test_globs: *i\n"]
)


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    assert len(BOMB) < 1024  # 9**9 strings once expanded
    path = write(tmp_path, BOMB)
    with pytest.raises(ConfigError) as err:
        load_yaml_config(path)
    assert str(err.value) == f"{path}: line 2 invalid YAML: aliases (*a) are not allowed in a homefield settings file"
    write(tmp_path, "run: &r {attempts: 2}\n")  # an anchor alone is harmless
    assert load_yaml_config(tmp_path / ".homefield.yml") == {"run": {"attempts": 2}}


@pytest.mark.parametrize(("flags", "text", "message"), [
    ({"timeout": float("nan")}, "", "--homefield-timeout must be a finite number of seconds, got nan"),
    ({"test_timeout": float("inf")}, "", "--homefield-test-timeout must be a finite number of seconds, got inf"),
    ({"budget": float("nan")}, "", "--homefield-budget must be a finite number of USD, got nan"),
    ({"fail_under": ["1.5"]}, "", "--homefield-fail-under '1.5': RATE is a fraction between 0 and 1"),
    ({"fail_under": ["a=nan"]}, "", "--homefield-fail-under 'a=nan': RATE is a fraction between 0 and 1"),
    ({"fail_under": ["half"]}, "", "--homefield-fail-under 'half': expected RATE or AGENT=RATE"),
    ({"max_tasks": 0}, "", "--homefield-max-tasks must be at least 1, got 0"),
    ({}, "run:\n  max_tasks: 0\n", "--homefield-max-tasks must be at least 1, got 0"),
    ({}, "run_timeout: .nan\n", "key 'run_timeout' must be a finite number, got nan"),
    ({"max_procs": 0}, "", "--homefield-max-procs must be at least 1, got 0"),
    ({}, "max_procs: 0\n", "--homefield-max-procs must be at least 1, got 0"),
])
def test_numbers_are_checked_up_front(tmp_path: Path, flags: dict[str, Any], text: str, message: str) -> None:
    write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        resolve_settings(tmp_path, flags, mode="run")
    assert str(err.value).endswith(message), str(err.value)
