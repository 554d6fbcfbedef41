"""``.homefield.yml`` loading, validation, and the resolved settings (docs/contracts.md §2 and §3).

Precedence: command-line flag > ``.homefield.yml`` > built-in default. :func:`load_yaml_config`
validates the file against :data:`SCHEMA`; an unknown key or a wrong type raises
:class:`ConfigError` whose message is one line naming the key and the file.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "Settings", "SCHEMA", "load_yaml_config", "resolve_settings", "CONFIG_NAME"]

CONFIG_NAME = ".homefield.yml"


class ConfigError(ValueError):
    """A configuration or usage error; ``str(err)`` is one line naming the key or flag."""


_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))
_OPT_DATE = (str, datetime.date, type(None))  # YAML reads 2024-01-01 as a date

#: Allowed keys and types. A nested dict is a section; a tuple of types is a leaf; ``list`` of str.
SCHEMA: dict[str, Any] = {
    "test_cmd": (str,),
    "setup_cmd": _OPT_STR,
    "test_globs": [str],
    "test_timeout": _OPT_NUM,
    "run_timeout": _NUM,
    "mine": {
        "since": _OPT_DATE,
        "until": _OPT_DATE,
        "paths": [str],
        "first_parent": (bool,),
        "merges": (bool,),
        "max_commits": _OPT_INT,
        "max_source_files": _OPT_INT,
        "max_diff_lines": _OPT_INT,
        "min_message_words": (int,),
        "max_tasks": _OPT_INT,
        "stability_runs": (int,),
    },
    "run": {
        "attempts": (int,),
        "timeout": _NUM,
        "budget_usd": _OPT_NUM,
        "attempt_budget_usd": _OPT_NUM,
        "allow_shell": (bool,),
        "exclude_memorized": (bool,),
        "max_tasks": _OPT_INT,
        "fail_under": ([str], str, int, float),
    },
    "probe": {"samples": (int,), "cutoff": _OPT_DATE},
    "ablate": {"by_section": (bool,), "seconds_per_run": _OPT_NUM, "cost_per_run": _OPT_NUM},
    # agents and prices have user-chosen names at their second level: checked in _check_agents/_check_prices
    "agents": None,
    "prices": None,
}

AGENT_KEYS: dict[str, Any] = {
    "spec": (str,),
    "timeout": _NUM,
    "budget_usd": _OPT_NUM,
    "env": [str],
    "base_url": _OPT_STR,
    "api_key": _OPT_STR,
}


def _type_name(types: Any) -> str:
    if isinstance(types, list):
        return "a list of strings"
    names = [
        {"NoneType": "null", "date": "a date"}.get(t.__name__, t.__name__)
        for t in types
        if not isinstance(t, list)
    ]
    names = ["number" if n in ("int", "float") and "float" in names else n for n in names]
    return " or ".join(dict.fromkeys(names))


def _check_leaf(value: Any, types: Any, key: str, file: str) -> None:
    if isinstance(types, list):
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{file}: key '{key}' must be a list of strings, got {value!r}")
        return
    for t in types:
        if isinstance(t, list):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return
            continue
        # bool is an int subclass: never accept it for a number
        if isinstance(value, bool) and t is not bool:
            continue
        if isinstance(value, t):
            return
    raise ConfigError(f"{file}: key '{key}' must be {_type_name(types)}, got {type(value).__name__} {value!r}")


def _check_section(data: Mapping[str, Any], schema: Mapping[str, Any], prefix: str, file: str) -> None:
    for key, value in data.items():
        full = f"{prefix}{key}"
        if not isinstance(key, str) or key not in schema:
            raise ConfigError(f"{file}: unknown key '{full}'")
        sub = schema[key]
        if key == "agents" and not prefix:
            _check_agents(value, file)
        elif key == "prices" and not prefix:
            _check_prices(value, file)
        elif isinstance(sub, dict):
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{file}: key '{full}' must be a mapping, got {type(value).__name__}")
            _check_section(value, sub, f"{full}.", file)
        else:
            _check_leaf(value, sub, full, file)


def _check_agents(value: Any, file: str) -> None:
    import re

    if value is None:
        return
    if not isinstance(value, dict):
        raise ConfigError(f"{file}: key 'agents' must be a mapping of agent names")
    for name, body in value.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ConfigError(f"{file}: key 'agents.{name}': agent names must match [A-Za-z0-9_.-]+")
        if isinstance(body, str):
            continue  # shorthand: name: "spec"
        if not isinstance(body, dict):
            raise ConfigError(f"{file}: key 'agents.{name}' must be a mapping or a spec string")
        if "spec" not in body:
            raise ConfigError(f"{file}: key 'agents.{name}.spec' is required")
        _check_section(body, AGENT_KEYS, f"agents.{name}.", file)
        from pytest_homefield.agents.environment import check_passthrough

        try:
            check_passthrough(body.get("env") or [])
        except ValueError as exc:
            raise ConfigError(f"{file}: key 'agents.{name}.env': {exc}") from None


def _check_prices(value: Any, file: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise ConfigError(f"{file}: key 'prices' must be a mapping of model ids")
    for model, body in value.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{file}: key 'prices.{model}' must be a mapping with input and output")
        _check_section(body, {"input": _NUM, "output": _NUM}, f"prices.{model}.", file)


def load_yaml_config(path: Path) -> dict[str, Any]:
    """Read and validate ``.homefield.yml``; a missing file gives ``{}``.

    Raises :class:`ConfigError` (one line, naming the key and file) for YAML syntax errors, a
    top level that is not a mapping, unknown keys and wrong types.
    """
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    _check_section(data, SCHEMA, "", str(path))
    return data


@dataclass
class Settings:
    """Every resolved setting (flag > yml > default). Units: seconds, USD."""

    root: Path
    # test running
    test_cmd: str = "python -m pytest"
    setup_cmd: str | None = None
    test_globs: list[str] = field(default_factory=list)
    test_timeout: float | None = None
    run_timeout: float = 600.0
    # mining
    since: str | None = None
    until: str | None = None
    paths: list[str] = field(default_factory=list)
    first_parent: bool = False
    merges: bool = False
    max_commits: int | None = None
    max_source_files: int | None = 10
    max_diff_lines: int | None = None
    min_message_words: int = 3
    mine_max_tasks: int | None = None
    stability_runs: int = 3
    list_candidates: bool = False
    # running
    agents: list[str] = field(default_factory=list)
    attempts: int = 3
    timeout: float = 900.0
    budget: float | None = None
    attempt_budget: float | None = None
    allow_shell: bool = False
    base_url: str | None = None
    api_key: str | None = None
    exclude_memorized: bool = False
    run_max_tasks: int | None = None
    resume: bool = False
    run_id: str | None = None
    fail_under: list[str] = field(default_factory=list)
    # named agents and prices from the yml
    agent_defs: dict[str, dict[str, Any]] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def homefield_dir(self) -> Path:
        """``<root>/.homefield``."""
        return self.root / ".homefield"

    @property
    def tasks_path(self) -> Path:
        """``<root>/.homefield/tasks.jsonl``."""
        return self.homefield_dir / "tasks.jsonl"


#: flag attribute name (pytest dest without the ``homefield_`` prefix) -> (yml path, Settings field)
FLAG_MAP: dict[str, tuple[str | None, str]] = {
    "since": ("mine.since", "since"),
    "until": ("mine.until", "until"),
    "paths": ("mine.paths", "paths"),
    "first_parent": ("mine.first_parent", "first_parent"),
    "merges": ("mine.merges", "merges"),
    "max_commits": ("mine.max_commits", "max_commits"),
    "max_source_files": ("mine.max_source_files", "max_source_files"),
    "max_diff_lines": ("mine.max_diff_lines", "max_diff_lines"),
    "min_message_words": ("mine.min_message_words", "min_message_words"),
    "stability_runs": ("mine.stability_runs", "stability_runs"),
    "list_candidates": (None, "list_candidates"),
    "test_timeout": ("test_timeout", "test_timeout"),
    "run_timeout": ("run_timeout", "run_timeout"),
    "agent": (None, "agents"),
    "attempts": ("run.attempts", "attempts"),
    "timeout": ("run.timeout", "timeout"),
    "budget": ("run.budget_usd", "budget"),
    "attempt_budget": ("run.attempt_budget_usd", "attempt_budget"),
    "allow_shell": ("run.allow_shell", "allow_shell"),
    "base_url": (None, "base_url"),
    "api_key": (None, "api_key"),
    "exclude_memorized": ("run.exclude_memorized", "exclude_memorized"),
    "resume": (None, "resume"),
    "run_id": (None, "run_id"),
    "fail_under": ("run.fail_under", "fail_under"),
}


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def resolve_settings(root: Path, flags: Mapping[str, Any], *, mode: str = "run") -> Settings:
    """Merge ``flags`` (``None`` / ``False`` / ``[]`` = not given) over ``<root>/.homefield.yml``
    over defaults.

    ``mode`` (``"mine"`` or ``"run"``) picks which yml key ``--max-tasks`` reads. Raises
    :class:`ConfigError` for a bad file or a bad value (e.g. attempts < 1).
    """
    data = load_yaml_config(root / CONFIG_NAME)
    s = Settings(root=root)
    for key in ("test_cmd", "setup_cmd", "test_globs", "test_timeout", "run_timeout"):
        if key in data and data[key] is not None:
            setattr(s, key, data[key])
    for flag, (yml, attr) in FLAG_MAP.items():
        value = flags.get(flag)
        if value is None or value is False or value == []:
            value = _get(data, yml) if yml else None
        if value is None:
            continue
        if isinstance(value, datetime.date):
            value = value.isoformat()
        if attr == "fail_under" and isinstance(value, (str, int, float)):
            value = [str(value)]
        setattr(s, attr, value)
    max_tasks = flags.get("max_tasks")
    if max_tasks is None:
        max_tasks = _get(data, "mine.max_tasks" if mode == "mine" else "run.max_tasks")
    if mode == "mine":
        s.mine_max_tasks = max_tasks
    else:
        s.run_max_tasks = max_tasks
    from pytest_homefield.agents.recipes import recipe_agents

    raw_agents = data.get("agents") or {}
    # the ready recipes (aider, codex, gemini) are named agents that the user's own agents: override
    s.agent_defs = {**recipe_agents(),
                    **{n: ({"spec": b} if isinstance(b, str) else dict(b)) for n, b in raw_agents.items()}}
    s.prices = dict(data.get("prices") or {})
    _validate(s)
    return s


def _validate(s: Settings) -> None:
    positive = {
        "--homefield-attempts": s.attempts,
        "--homefield-stability-runs": s.stability_runs,
    }
    for flag, value in positive.items():
        if value < 1:
            raise ConfigError(f"{flag} must be at least 1, got {value}")
    for flag, num in {
        "--homefield-timeout": s.timeout,
        "--homefield-run-timeout": s.run_timeout,
        "--homefield-test-timeout": s.test_timeout,
        "--homefield-budget": s.budget,
        "--homefield-attempt-budget": s.attempt_budget,
    }.items():
        if num is not None and num <= 0:
            raise ConfigError(f"{flag} must be positive, got {num}")
    for flag, date in {"--homefield-since": s.since, "--homefield-until": s.until}.items():
        if date is not None:
            try:
                datetime.datetime.fromisoformat(str(date))
            except ValueError:
                raise ConfigError(f"{flag}: {date!r} is not a date (use YYYY-MM-DD)") from None
