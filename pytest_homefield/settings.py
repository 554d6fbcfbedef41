"""Every setting resolved: the ``.homefield.yml`` schema and reader, the resolution flag >
``.homefield.yml`` > default and the value checks (docs/contracts.md §2 and §3).

The table itself (:class:`Settings`, :data:`SETTINGS`, :data:`FLAGS`, the pytest options and CLI
flags) is declared once in :mod:`pytest_homefield.settings_table`, the light half that the pytest
entry point imports in every pytest run; this module re-exports all of it and derives

- the yml schema :data:`SCHEMA` (:func:`load_yaml_config`),
- the resolution flag > ``.homefield.yml`` > default (:func:`resolve_settings`), and
- the test runs' network of a resolved :class:`Settings` (:func:`network_of`).

It imports the agents' and the sandbox's parsers (the value checks), so only a homefield mode or a
``homefield`` command imports it.

A configuration or usage error raises :class:`ConfigError`, whose message is one line naming the
key and the file, or the flag.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_homefield.agents.environment import check_passthrough
from pytest_homefield.agents.openai_compat import sampling_error
from pytest_homefield.agents.recipes import recipe_agents
from pytest_homefield.errors import ConfigError
from pytest_homefield.sandbox.modes import parse_hosts, parse_network
from pytest_homefield.sandbox.pytest_config import command_problem
from pytest_homefield.sandbox.services import TestNetwork, parse_services, parse_test_network
from pytest_homefield.settings_table import (
    CHECKS,
    ENV_KINDS,
    FLAGS,
    FRONT_ENDS,
    MODE_OPTIONS,
    OPENAI_MAX_TOKENS,
    SETTINGS,
    ScanSettings,
    Setting,
    Settings,
    add_cli_options,
    add_pytest_options,
    cli_to_pytest_args,
    flags_from_pytest,
    front_end,
    join_flags,
    option,
    setting,
    spelled_for,
)
from pytest_homefield.shard import parse_shard

__all__ = [
    "CONFIG_NAME",
    "CHECKS",
    "ENV_KINDS",
    "OPENAI_MAX_TOKENS",
    "ConfigError",
    "Setting",
    "ScanSettings",
    "Settings",
    "SETTINGS",
    "FLAGS",
    "SCHEMA",
    "MODE_OPTIONS",
    "setting",
    "add_pytest_options",
    "flags_from_pytest",
    "add_cli_options",
    "cli_to_pytest_args",
    "join_flags",
    "FRONT_ENDS",
    "front_end",
    "spelled_for",
    "option",
    "load_yaml_config",
    "resolve_settings",
    "network_of",
    "parse_duration",
    "parse_gate",
]

CONFIG_NAME = ".homefield.yml"


def network_of(settings: Settings, log_dir: Path | None = None, *, reuse: bool = False) -> TestNetwork:
    """The test runs' services and ``--test-network`` ports of ``settings``, their logs in ``log_dir``;
    ``reuse``: worker-scope instances are kept and reset between runs (mining only, ``TestNetwork.reuse``).
    Each instance runs in the sandbox ``--sandbox`` gives test runs (:mod:`~.sandbox.service_box`)."""
    return TestNetwork(settings.services, parse_test_network(settings.test_network), log_dir, reuse,
                       settings.sandbox, settings.max_test_memory_mb)


# --- .homefield.yml ----------------------------------------------------------------------------

_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_OPT_STR = (str, type(None))
_OPT_DATE = (str, datetime.date, type(None))  # YAML reads 2024-01-01 as a date

#: Keys of modes not built yet (contracts §2, §3): accepted and type-checked, not resolved. The
#: change that builds a mode declares its keys as :class:`Settings` fields and drops them here.
RESERVED: dict[str, Any] = {
}

#: The keys of a named agent (``agents.<name>.*``).
AGENT_KEYS: dict[str, Any] = {
    "spec": (str,),
    "timeout": _NUM,
    "budget_usd": _OPT_NUM,
    "env": [str],
    "base_url": _OPT_STR,
    "api_key": _OPT_STR,
    "max_tokens": (int, type(None)),
    "temperature": _OPT_NUM,
    "stop": [str],
}


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for s in SETTINGS:
        if s.yml is None:
            continue
        *sections, leaf = s.yml.split(".")
        node = schema
        for part in sections:
            node = node.setdefault(part, {})
        node[leaf] = s.yml_types
    for section, keys in RESERVED.items():
        schema.setdefault(section, {}).update(keys)
    # agents and prices have user-chosen names at their second level: checked in _check_agents/_check_prices
    schema["agents"] = None
    schema["prices"] = None
    schema["services"] = None
    return schema


#: Allowed keys and types, derived from :data:`SETTINGS` and :data:`RESERVED`. A nested dict is a
#: section; a tuple of types is a leaf; ``[str]`` is a list of strings.
SCHEMA: dict[str, Any] = _schema()


def _type_name(types_: Any) -> str:
    if isinstance(types_, list):
        return "a list of strings"
    names = [
        {"NoneType": "null", "date": "a date"}.get(t.__name__, t.__name__)
        for t in types_
        if not isinstance(t, list)
    ]
    names = ["number" if n in ("int", "float") and "float" in names else n for n in names]
    return " or ".join(dict.fromkeys(names))


def _check_leaf(value: Any, types_: Any, key: str, file: str) -> None:
    if isinstance(types_, list):
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{file}: key '{key}' must be a list of strings, got {value!r}")
        return
    for t in types_:
        if isinstance(t, list):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return
            continue
        # bool is an int subclass: never accept it for a number
        if isinstance(value, bool) and t is not bool:
            continue
        if isinstance(value, t):
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{file}: key '{key}' must be a finite number, got {value!r}")
            return
    raise ConfigError(f"{file}: key '{key}' must be {_type_name(types_)}, got {type(value).__name__} {value!r}")


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
        elif key == "services" and not prefix:
            try:
                parse_services(value)
            except ValueError as exc:
                raise ConfigError(f"{file}: {exc}") from None
        elif isinstance(sub, dict):
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{file}: key '{full}' must be a mapping, got {type(value).__name__}")
            _check_section(value, sub, f"{full}.", file)
        else:
            _check_leaf(value, sub, full, file)


def _check_agents(value: Any, file: str) -> None:
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
        problem = sampling_error(body.get("max_tokens"), body.get("temperature"))
        if problem:
            raise ConfigError(f"{file}: key 'agents.{name}': {problem}")
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


def _no_alias_loader() -> Any:
    """A ``yaml.SafeLoader`` that refuses aliases (``*name``): a settings file never needs them,
    and a few hundred bytes of nested aliases expand into gigabytes (a "billion laughs" bomb)."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.constructor.ConstructorError(
                    None, None, f"aliases (*{event.anchor}) are not allowed in a homefield settings file",
                    event.start_mark)
            return super().compose_node(parent, index)

    return NoAliasLoader


def load_yaml_config(path: Path) -> dict[str, Any]:
    """Read and validate ``.homefield.yml``; a missing file gives ``{}``.

    Raises :class:`ConfigError` (one line, naming the key and file) for YAML syntax errors, a
    YAML alias (refused: :func:`_no_alias_loader`), a top level that is not a mapping, unknown keys,
    wrong types and numbers that are not finite.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    import yaml  # deferred: most repositories have no settings file

    try:
        data = yaml.load(text, Loader=_no_alias_loader())  # noqa: S506 - a SafeLoader subclass
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


# --- resolution --------------------------------------------------------------------------------

def _get(data: Mapping[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def resolve_settings(root: Path, flags: Mapping[str, Any], *, mode: str = "run") -> Settings:
    """Merge ``flags`` (``{dest: value}``; ``None`` / ``False`` / ``[]`` = not given) over
    ``<root>/.homefield.yml`` over the defaults of :data:`SETTINGS`.

    ``mode`` (``"mine"`` or ``"run"``) skips the settings declared for the other mode (so
    ``--max-tasks`` fills ``mine_max_tasks`` or ``run_max_tasks``). A YAML date becomes
    ``YYYY-MM-DD``; a scalar given for a list becomes a one-item list of its string. Raises
    :class:`ConfigError` for a bad file or a bad value (e.g. attempts < 1).
    """
    data = load_yaml_config(root / CONFIG_NAME)
    s = Settings(root=root)
    for decl in SETTINGS:
        if decl.mode is not None and decl.mode != mode:
            continue
        value = flags.get(decl.dest) if decl.dest is not None else None
        if value is None or value is False or value == []:
            value = _get(data, decl.yml) if decl.yml else None
        if value is None:
            continue
        if isinstance(value, datetime.date):
            value = value.isoformat()
        if decl.kind == "list" and not isinstance(value, list):
            value = [str(value)]
        setattr(s, decl.name, value)
    raw_agents = data.get("agents") or {}
    # the ready recipes (aider, codex, gemini) are named agents that the user's own agents: override
    s.agent_defs = {**recipe_agents(),
                    **{n: ({"spec": b} if isinstance(b, str) else dict(b)) for n, b in raw_agents.items()}}
    s.prices = dict(data.get("prices") or {})
    s.services = parse_services(data.get("services"))
    _validate(s)
    return s


def parse_gate(gate: str) -> tuple[str, float]:
    """``RATE`` → ``("", RATE)``; ``AGENT=RATE`` → ``(AGENT, RATE)``; RATE a pass@1 fraction in [0, 1].
    Raises :class:`ConfigError` (one line naming the gate) otherwise."""
    name, _, rate_s = str(gate).rpartition("=")
    try:
        rate = float(rate_s)
    except ValueError:
        raise ConfigError(f"{option('fail-under')} {gate!r}: expected RATE or AGENT=RATE") from None
    if not (math.isfinite(rate) and 0 <= rate <= 1):
        raise ConfigError(f"{option('fail-under')} {gate!r}: RATE is a fraction between 0 and 1")
    return name, rate


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def parse_duration(value: str | float) -> float:
    """Seconds of a duration: a number (seconds) or ``1h30m``, ``20m``, ``90s``, ``2h``. Raises
    ``ValueError`` (one line) for anything else or a duration that is not positive."""
    text = str(value).strip().lower()
    m = _DURATION.fullmatch(text)
    if not text or m is None or not any(m.groups()):
        raise ValueError(f"{value!r} is not a duration (use seconds or e.g. 90s, 20m, 1h30m)")
    h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    seconds = h * 3600 + mi * 60 + s
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{value!r} must be a positive duration")
    return seconds


def _validate(s: Settings) -> None:
    """Apply each setting's ``check`` (:data:`CHECKS` order, then declaration order) and ``choices``;
    the message names the pytest option."""
    for decl in SETTINGS:
        if decl.choices and getattr(s, decl.name) not in decl.choices:
            raise ConfigError(f"{decl.pytest_option or decl.yml} {getattr(s, decl.name)!r}: use one of "
                              f"{', '.join(decl.choices)}")
    # ops48: one line at the start, never a run read past an option; ops52: nor a --rootdir outside the tree
    if problem := command_problem(s.test_cmd, s.root):
        raise ConfigError(f"test_cmd: {problem}")
    for check in CHECKS:
        for decl in SETTINGS:
            if decl.check != check:
                continue
            value = getattr(s, decl.name)
            flag = decl.pytest_option
            if check == "min1" and value < 1:
                raise ConfigError(f"{flag} must be at least 1, got {value}")
            if check == "min0" and value < 0:
                raise ConfigError(f"{flag} must be at least 0, got {value}")
            if check == "count" and value is not None and value < 1:
                raise ConfigError(f"{flag} must be at least 1, got {value}")
            if check == "positive" and value is not None and not math.isfinite(value):
                raise ConfigError(f"{flag} must be a finite number of "
                                  f"{'USD' if 'budget' in str(flag) else 'seconds'}, got {value}")
            if check == "positive" and value is not None and value <= 0:
                raise ConfigError(f"{flag} must be positive, got {value}")
            if check == "shard" and value is not None:
                parse_shard(value, flag=str(flag))
            if check == "network":
                try:
                    parse_network(str(value))
                except ValueError as exc:
                    raise ConfigError(f"{flag} {exc}") from None
            if check == "hosts":
                for entry in value:
                    try:
                        parse_hosts([str(entry)])
                    except ValueError as exc:
                        raise ConfigError(f"{flag} {exc}") from None
            if check == "test_network":
                try:
                    parse_test_network(str(value))
                except ValueError as exc:
                    raise ConfigError(f"{flag} {exc}") from None
            if check == "fraction" and not 0 < value < 1:
                raise ConfigError(f"{flag} must be between 0 and 1, got {value}")
            if check == "gates":
                for gate in value:
                    parse_gate(gate)
            if check == "duration" and value is not None:
                try:
                    parse_duration(value)
                except ValueError as exc:
                    raise ConfigError(f"{flag} {exc}") from None
            if check == "date" and value is not None:
                try:
                    datetime.datetime.fromisoformat(str(value))
                except ValueError:
                    raise ConfigError(f"{flag}: {value!r} is not a date (use YYYY-MM-DD)") from None
