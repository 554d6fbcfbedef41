"""Ready ``cmd:`` recipes for third-party coding agents (aider, codex, gemini), and their helpers.

:data:`RECIPES` maps a name usable as ``--agent NAME`` to a ``cmd:`` spec; :data:`RECIPE_ENV` lists
the variables each recipe needs passed through (docs/contracts.md §9 passes nothing else). Each recipe keeps
its client offline-safe (no update checks, analytics, release notes, URL scraping or price-list
downloads: the only traffic is to the model endpoint), edit-only where the client allows it, and
ends by printing the usage line that :mod:`.command` reads, made by this module's helpers::

    python -m pytest_homefield.agents.recipes prepare-aider
    python -m pytest_homefield.agents.recipes prepare-gemini            # prints a settings path
    python -m pytest_homefield.agents.recipes usage-aider ANALYTICS_LOG [CLIENT_LOG]
    python -m pytest_homefield.agents.recipes usage-codex EVENTS_JSONL  [--usd-per-mtok-in X ...]
    python -m pytest_homefield.agents.recipes usage-gemini OUTPUT_JSON [STDERR] [--usd-per-mtok-in X ...]

Sources for every flag and output format: /work/shared/reference/agent-clients.md (aider 0.86.2,
codex 0.171.0, gemini 0.61.0, each run against a scripted server on 127.0.0.1).

What each helper reads: aider's ``--analytics-log`` (``message_send`` events: ``prompt_tokens``,
``completion_tokens``, ``cost`` in USD); codex's ``--json`` events (``turn.completed.usage``;
``input_tokens`` includes ``cached_input_tokens``; no cost is printed, so the ``--usd-per-mtok-*``
prices are applied when given); gemini's ``--output-format json`` (``stats.models.*.tokens``:
``input`` excludes ``cached``; ``candidates`` + ``thoughts`` are output; no cost). A client error
that stopped the run is reported as ``outcome`` ``rate_limited`` (HTTP 429/503, overload) or
``infra`` (other 5xx, authentication, connection), so an outage is not scored as a failure while
``--max-retries`` lasts. The helper classifies the client's output, which holds the model's reply, so
either outcome is the agent's claim and is scored once the retries are spent (docs/contracts.md §8).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.agents.recipe_hosts import RECIPE_HOSTS
from pytest_homefield.key_shapes import redact
from pytest_homefield.sandbox.bwrap import program_paths
from pytest_homefield.sandbox.protected import holds_home, homes
from pytest_homefield.spelling import spell
from pytest_homefield.store import own_text

__all__ = [
    "RECIPES",
    "RECIPE_ENV",
    "RECIPE_SANDBOX",
    "RECIPE_HOSTS",
    "ClientSandbox",
    "build_recipes",
    "recipe_agents",
    "classify_error_text",
    "prepare_aider",
    "prepare_gemini",
    "usage_aider",
    "usage_codex",
    "usage_gemini",
    "main",
]

_RATE = re.compile(r"\b(429|503|529)\b|rate.?limit|too many requests|overloaded|high demand|quota|"
                   r"RateLimitError|ServiceUnavailable", re.I)
_INFRA = re.compile(r"\b(401|403|500|502|504)\b|unauthori[sz]ed|authenticat|InternalServerError|APIConnectionError|"
                    r"connection (refused|error|reset)|could not connect|stream disconnected|servers are down|"
                    r"timed? ?out", re.I)


def classify_error_text(text: str) -> str:
    """``rate_limited``, ``infra`` or ``agent_error`` for a client's error message."""
    if _RATE.search(text):
        return "rate_limited"
    if _INFRA.search(text):
        return "infra"
    return "agent_error"


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` as one line of at most ``limit`` characters, its key shapes redacted first (a key the client
    wrapped over two lines is one key only while its line break is there; ratk48)."""
    return " ".join(redact(str(text)).split())[:limit]


def _price(usage: dict[str, Any], prices: dict[str, float | None]) -> None:
    """Add ``cost_usd`` to ``usage`` when input and output prices (USD per million tokens) are
    given; cached tokens are priced at ``cache_read`` or else ``input``."""
    p_in, p_out = prices.get("input"), prices.get("output")
    if p_in is None or p_out is None:
        return
    p_cr = prices.get("cache_read")
    p_cr = p_in if p_cr is None else p_cr
    usage["cost_usd"] = (usage.get("input_tokens", 0) * p_in + usage.get("output_tokens", 0) * p_out
                         + usage.get("cache_read_tokens", 0) * p_cr) / 1e6


# --- aider ---------------------------------------------------------------------------------------


def _json_lines(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        text = own_text(path)
    except OSError:
        return out
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes (atk19)
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


#: aider prints these before giving up on a request (it exits 0 even then).
_AIDER_ERROR = re.compile(r"^(litellm\.\w+Error: .*|The API provider .*)$", re.M)


def usage_aider(analytics_log: Path, client_log: Path | None = None) -> dict[str, Any]:
    """Usage of one aider run: tokens and cost (USD) summed over the ``message_send`` events of
    its analytics log, the main model, and — when ``client_log`` (aider's stdout) shows a provider
    error and no edit was applied — an ``outcome``."""
    usage: dict[str, Any] = {}
    sends = [e.get("properties") or {} for e in _json_lines(analytics_log) if e.get("event") == "message_send"]
    if sends:
        usage["input_tokens"] = sum(int(p.get("prompt_tokens") or 0) for p in sends)
        usage["output_tokens"] = sum(int(p.get("completion_tokens") or 0) for p in sends)
        costs = [float(p["cost"]) for p in sends if isinstance(p.get("cost"), (int, float))]
        if costs:
            usage["cost_usd"] = float(sum(costs))
        usage["turns"] = len(sends)
        if sends[-1].get("main_model"):
            usage["model"] = str(sends[-1]["main_model"])
    if client_log is not None:
        try:
            log = own_text(client_log)
        except OSError:
            log = ""
        errors = _AIDER_ERROR.findall(log)
        if errors and "Applied edit to" not in log:
            usage["outcome"] = classify_error_text(errors[-1])
            usage["error"] = _one_line(errors[-1])
    return usage


def _aider_cost_map(aider_exe: str) -> Path | None:
    """litellm's bundled price list in the environment that runs ``aider_exe`` (found through the
    script's ``#!`` interpreter), or ``None``."""
    try:
        first = Path(aider_exe).read_bytes()[:400].split(b"\n", 1)[0].decode(errors="replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    interpreter = Path(first[2:].strip().split()[0])
    for root in {interpreter.parent.parent, interpreter.resolve().parent.parent}:
        found = sorted(root.glob("lib/python*/site-packages/litellm/model_prices_and_context_window_backup.json"))
        if found:
            return found[-1]
    return None


def prepare_aider(home: Path | None = None) -> str:
    """Make aider's model-info lookup need no download.

    aider fetches litellm's price list from GitHub unless ``~/.aider/caches/model_prices_and_
    context_window.json`` exists, is not empty and is younger than 24 h. This copies the list that
    ships inside the ``aider`` install (litellm's backup file) there when the cache is missing, empty
    or older than 23 h. Returns a one-line note (also when nothing could be done)."""
    home = home or Path.home()
    cache = home / ".aider" / "caches" / "model_prices_and_context_window.json"
    try:
        fresh = cache.stat().st_size > 2 and time.time() - cache.stat().st_mtime < 23 * 3600
    except OSError:
        fresh = False
    if fresh:
        return f"aider model cache is fresh: {cache}"
    exe = shutil.which("aider")
    source = _aider_cost_map(exe) if exe else None
    if source is None:
        return "aider model cache not seeded: litellm's price list was not found next to aider"
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".homefield.tmp")
    shutil.copyfile(source, tmp)
    os.replace(tmp, cache)
    return f"aider model cache seeded from {source}"


# --- codex ---------------------------------------------------------------------------------------


def usage_codex(events: Path, prices: dict[str, float | None] | None = None) -> dict[str, Any]:
    """Usage of one ``codex exec --json`` run from its event lines: tokens summed over
    ``turn.completed`` (``input_tokens`` minus ``cached_input_tokens`` is the uncached input),
    cost (USD) when ``prices`` are given, and an ``outcome`` for a ``turn.failed`` run."""
    usage: dict[str, Any] = {}
    lines = _json_lines(events)
    done = [e.get("usage") or {} for e in lines if e.get("type") == "turn.completed"]
    if done:
        cached = sum(int(u.get("cached_input_tokens") or 0) for u in done)
        usage["input_tokens"] = max(sum(int(u.get("input_tokens") or 0) for u in done) - cached, 0)
        usage["cache_read_tokens"] = cached
        usage["cache_write_tokens"] = sum(int(u.get("cache_write_input_tokens") or 0) for u in done)
        usage["output_tokens"] = sum(int(u.get("output_tokens") or 0) for u in done)
        _price(usage, prices or {})
    failed = [e for e in lines if e.get("type") == "turn.failed"]
    if failed and not done:
        message = _one_line((failed[-1].get("error") or {}).get("message") or "codex turn failed")
        usage["outcome"] = classify_error_text(message)
        usage["error"] = message
    return usage


# --- gemini --------------------------------------------------------------------------------------

#: Settings that keep the Gemini CLI from sending usage statistics or checking for updates.
GEMINI_SYSTEM_SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def _secure_dir(path: Path) -> bool:
    """True when neither ``path`` nor a parent is writable by group or others (the Gemini CLI
    ignores a system settings file in a folder that is)."""
    for p in [path, *path.parents]:
        try:
            mode = p.stat().st_mode
        except OSError:
            return False
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
    return True


def prepare_gemini(home: Path | None = None) -> Path:
    """Write :data:`GEMINI_SYSTEM_SETTINGS` to ``$XDG_CACHE_HOME`` (else ``~/.cache``)
    ``/pytest-homefield/gemini-system-settings.json`` and return its path, for
    ``GEMINI_CLI_SYSTEM_SETTINGS_PATH``. System settings override the user's and the
    repository's. A warning goes to stderr when the folder is not secure enough for the CLI."""
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else (home or Path.home()) / ".cache"
    folder = base / "pytest-homefield"
    folder.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = folder / "gemini-system-settings.json"
    text = json.dumps(GEMINI_SYSTEM_SETTINGS, indent=2) + "\n"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    if not _secure_dir(folder):
        print(f"homefield: {folder} is writable by others; the Gemini CLI will ignore {path.name}",
              file=sys.stderr)
    return path


def _first_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object that starts at the first line beginning with ``{`` (pretty-printed JSON
    after stray log lines)."""
    if text.startswith("{"):
        start = 0
    else:
        start = text.find("\n{") + 1
        if start == 0:
            return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def usage_gemini(output: Path, prices: dict[str, float | None] | None = None,
                 stderr: Path | None = None) -> dict[str, Any]:
    """Usage of one ``gemini --output-format json`` run: tokens summed over ``stats.models``,
    requests as turns, the model with the most requests, cost (USD) when ``prices`` are given, and
    an ``outcome`` from an ``error`` object (its ``code`` is the HTTP status). The CLI prints the
    result object on stdout (``output``) but an error object on stderr (``stderr``)."""
    usage: dict[str, Any] = {}
    obj = None
    for path in (output, stderr):
        try:
            obj = _first_json_object(own_text(path)) if path else None
        except OSError:
            obj = None
        if obj is not None:
            break
    if obj is None:
        return usage
    models = ((obj.get("stats") or {}).get("models") or {})
    if isinstance(models, dict) and models:
        def tok(key: str) -> int:
            return sum(int(((m.get("tokens") or {}).get(key)) or 0) for m in models.values())

        usage["input_tokens"] = tok("input")
        usage["cache_read_tokens"] = tok("cached")
        usage["output_tokens"] = tok("candidates") + tok("thoughts")
        usage["turns"] = sum(int(((m.get("api") or {}).get("totalRequests")) or 0) for m in models.values())
        usage["model"] = max(models, key=lambda k: int(((models[k].get("api") or {}).get("totalRequests")) or 0))
        _price(usage, prices or {})
    error = obj.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = _one_line(error.get("message") or "gemini error")
        usage["outcome"] = classify_error_text(f"{code} {message}")
        usage["error"] = message
    return usage


# --- the recipes ---------------------------------------------------------------------------------

RECIPE_ENV: dict[str, tuple[str, ...]] = {
    "aider": ("AIDER_MODEL", "AIDER_WEAK_MODEL", "AIDER_EDIT_FORMAT", "OPENAI_API_KEY", "OPENAI_API_BASE",
              "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY"),
    "codex": ("CODEX_HOME", "OPENAI_API_KEY"),
    "gemini": ("GEMINI_API_KEY", "GEMINI_MODEL", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
               "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "XDG_CACHE_HOME"),
}


@dataclass(frozen=True)
class ClientSandbox:
    """What a recipe's client needs inside the sandbox of run/attempt.py (docs/contracts.md §9), where
    it gets a fresh, empty ``HOME``:

    * ``executable``: the client's program, looked up on the agent's ``PATH``; its install (launcher,
      virtual environment or ``node_modules``, interpreter) is bound read-only
      (:func:`pytest_homefield.sandbox.bwrap.program_paths`);
    * ``home_files``: files relative to the user's ``HOME`` copied into the fresh one when they exist
      (configuration and credentials; never history, sessions or caches, which would carry other
      attempts' work);
    * ``config_var`` / ``config_default`` / ``config_files``: a configuration folder named by an
      environment variable (default: ``config_default`` under ``HOME``) whose ``config_files`` are
      copied into ``HOME/config_default`` inside, the variable re-pointed there;
    * ``home_vars``: variables the recipe passes that name a folder the client writes (re-pointed
      under the fresh ``HOME``, since the host folder is not visible inside);
    * ``rules_file``: the rules file the client reads at the top of its working directory (where an
      ablation puts a variant; ``None``: it reads none of its own).
    """

    executable: str
    home_files: tuple[str, ...] = ()
    config_var: str | None = None
    config_default: str = ""
    config_files: tuple[str, ...] = ()
    home_vars: tuple[tuple[str, str], ...] = ()
    rules_file: str | None = None
    #: how to install the client, said when it is not on the agent's ``PATH`` (:meth:`missing`)
    install: str = ""

    def missing(self, env: Mapping[str, str], *, confined: bool = False) -> str | None:
        """Why the client cannot start (its :attr:`executable` is not on ``env["PATH"]``; ``confined``, in a sandbox
        that binds its install: a path of it, :meth:`paths`, is or holds the user's home, which no sandbox is given,
        :func:`~pytest_homefield.sandbox.protected.holds_home`), else ``None``: homefield's own finding on the host,
        made before the attempt (inside, ``sh`` would say "not found", or the client would start without what it
        needs, the recipe's usage helper would print ``{}`` and the attempt read as an empty patch; satk60: a
        Python installed with ``--prefix=$HOME`` as its interpreter)."""
        if not shutil.which(self.executable, path=env.get("PATH", "")):
            how = f" (install it: {self.install})" if self.install else ""
            return f"cannot start {self.executable}: not found on the agent's PATH{how}"
        if confined:
            home = homes()
            held = next((p for p in self.paths(env) if holds_home(p, home)), None)
            if held is not None:
                return (f"cannot sandbox {self.executable}: it needs {held}, your home folder, which no sandbox is "
                        f"given (install it outside your home, or pass {spell('sandbox')} none to accept the risk)")
        return None

    def provider_hosts(self, env: Mapping[str, str]) -> list[str]:
        """The hosts the client calls given the attempt's ``env`` (:data:`RECIPE_HOSTS`, by
        :attr:`executable`): URLs or ``host[:port]``; ``[]`` for a client not listed there."""
        hosts = RECIPE_HOSTS.get(self.executable)
        return hosts(env) if hosts else []

    def paths(self, env: Mapping[str, str]) -> list[Path]:
        """Read-only paths of the client found on ``env["PATH"]`` (``[]`` when it is not there)."""
        return program_paths(self.executable, env.get("PATH", ""))

    def fill_home(self, home: Path, env: dict[str, str], user_home: Path) -> list[str]:
        """Copy the client's configuration from ``user_home`` into the fresh ``home`` and re-point the
        variables in ``env`` (changed in place). Returns the relative paths copied."""
        copied: list[str] = []
        for rel in self.home_files:
            src = user_home / rel
            if src.is_file():
                (home / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, home / rel)
                copied.append(rel)
        if self.config_var:
            folder = Path(env[self.config_var]) if env.get(self.config_var) else user_home / self.config_default
            dest = home / self.config_default
            for name in self.config_files:
                if (folder / name).is_file():
                    dest.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(folder / name, dest / name)
                    copied.append(f"{self.config_default}/{name}")
            if env.get(self.config_var) or dest.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                env[self.config_var] = str(dest)
        for var, rel in self.home_vars:
            if var in env:
                env[var] = str(home / rel)
        return copied


#: Per recipe: what its client needs in the sandbox (:class:`ClientSandbox`). aider: its YAML config,
#: model settings and metadata (not ``~/.env``: keys come through the passthrough list); codex:
#: ``config.toml``, ``auth.json`` (``codex login``) and the user's ``AGENTS.md`` from ``$CODEX_HOME``
#: (default ``~/.codex``), not its session databases; gemini: ``~/.gemini``'s settings and OAuth
#: files, not its ``tmp/`` chats, with ``$XDG_CACHE_HOME`` (where ``prepare-gemini`` writes) under the
#: fresh ``HOME``. codex reads ``AGENTS.md``, gemini ``GEMINI.md`` (aider no rules file of its own).
RECIPE_SANDBOX: dict[str, ClientSandbox] = {
    "aider": ClientSandbox("aider", home_files=(".aider.conf.yml", ".aider.model.settings.yml",
                                                ".aider.model.metadata.json"), install="pip install aider-chat"),
    "codex": ClientSandbox("codex", config_var="CODEX_HOME", config_default=".codex",
                           config_files=("config.toml", "auth.json", "AGENTS.md"), rules_file="AGENTS.md",
                           install="npm i -g @openai/codex"),
    "gemini": ClientSandbox("gemini", home_files=(".gemini/settings.json", ".gemini/oauth_creds.json",
                                                  ".gemini/google_accounts.json", ".gemini/installation_id",
                                                  ".gemini/GEMINI.md"),
                            home_vars=(("XDG_CACHE_HOME", ".cache"),), rules_file="GEMINI.md",
                            install="npm i -g @google/gemini-cli"),
}


def build_recipes(python: str | None = None) -> dict[str, str]:
    """The recipes as ``cmd:`` specs, with ``python`` (default: this interpreter) running the
    helpers. Client output goes to ``agent.out`` through ``tee`` and to a copy under ``$TMPDIR``
    that the helper reads; an empty line (the client's output may not end in a newline) and the helper's
    usage line are printed last."""
    py = shlex.quote(python or sys.executable)
    helper = f"{py} -m pytest_homefield.agents.recipes"
    aider = (
        f"{helper} prepare-aider >&2; "
        "LITELLM_LOCAL_MODEL_COST_MAP=True aider --yes-always --no-auto-commits --no-dirty-commits "
        "--no-gitignore --no-check-update --no-analytics --no-show-release-notes --no-show-model-warnings "
        "--no-pretty --no-stream --no-fancy-input --no-suggest-shell-commands --no-detect-urls "
        "--no-notifications --input-history-file \"$TMPDIR/aider.input.history\" "
        "--chat-history-file \"$TMPDIR/aider.chat.history.md\" --analytics-log \"$TMPDIR/aider.analytics.jsonl\" "
        "--message \"$HOMEFIELD_PROMPT\" </dev/null 2>&1 | tee \"$TMPDIR/aider.log\"; "
        "rm -rf .aider.tags.cache.v4; echo; "
        f"{helper} usage-aider \"$TMPDIR/aider.analytics.jsonl\" \"$TMPDIR/aider.log\""
    )
    codex = (
        "codex exec --json --ephemeral --skip-git-repo-check --sandbox workspace-write "
        "--disable shell_tool --disable unified_exec -c features.plugins=false -c analytics.enabled=false "
        "-c check_for_update_on_startup=false -- \"$HOMEFIELD_PROMPT\" </dev/null | tee \"$TMPDIR/codex.jsonl\"; echo; "
        f"{helper} usage-codex \"$TMPDIR/codex.jsonl\""
    )
    gemini = (
        f"GEMINI_CLI_SYSTEM_SETTINGS_PATH=\"$({helper} prepare-gemini)\" "
        "gemini -p \"$HOMEFIELD_PROMPT\" --skip-trust --approval-mode auto_edit --output-format json "
        "</dev/null 2>\"$TMPDIR/gemini.err\" | tee \"$TMPDIR/gemini.json\"; cat \"$TMPDIR/gemini.err\" >&2; echo; "
        f"{helper} usage-gemini \"$TMPDIR/gemini.json\" \"$TMPDIR/gemini.err\""
    )
    return {"aider": f"cmd:{aider}", "codex": f"cmd:{codex}", "gemini": f"cmd:{gemini}"}


#: ``--agent NAME`` → ``cmd:`` spec (see :func:`build_recipes`).
RECIPES: dict[str, str] = build_recipes()


def recipe_agents() -> dict[str, dict[str, Any]]:
    """The recipes as ``.homefield.yml`` ``agents:`` entries (``{"spec": …, "env": […]}``), for a
    registry to offer as built-in named agents that the user's own ``agents:`` may override."""
    return {name: {"spec": spec, "env": list(RECIPE_ENV[name])} for name, spec in RECIPES.items()}


# --- command line --------------------------------------------------------------------------------


def _price_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--usd-per-mtok-in", type=float, default=None, help="USD per million input tokens")
    parser.add_argument("--usd-per-mtok-out", type=float, default=None, help="USD per million output tokens")
    parser.add_argument("--usd-per-mtok-cache-read", type=float, default=None,
                        help="USD per million cached input tokens (default: the input price)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pytest_homefield.agents.recipes``. Usage commands print one JSON
    line (``{}`` when nothing was found) and exit 0; ``prepare-gemini`` prints a path."""
    parser = argparse.ArgumentParser(prog="python -m pytest_homefield.agents.recipes")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare-aider", help="seed aider's model-info cache so it downloads nothing")
    sub.add_parser("prepare-gemini", help="write settings that turn off Gemini CLI usage statistics")
    p = sub.add_parser("usage-aider", help="usage line from aider's --analytics-log (and its stdout)")
    p.add_argument("analytics_log", type=Path)
    p.add_argument("client_log", type=Path, nargs="?")
    p = sub.add_parser("usage-codex", help="usage line from codex exec --json events")
    p.add_argument("output", type=Path)
    _price_args(p)
    p = sub.add_parser("usage-gemini", help="usage line from gemini --output-format json (stdout, stderr)")
    p.add_argument("output", type=Path)
    p.add_argument("stderr", type=Path, nargs="?")
    _price_args(p)
    sub.add_parser("list", help="print the recipes")
    args = parser.parse_args(argv)
    if args.command == "prepare-aider":
        print(prepare_aider())
        return 0
    if args.command == "prepare-gemini":
        print(prepare_gemini())
        return 0
    if args.command == "list":
        for name, spec in RECIPES.items():
            print(f"{name}: {spec}")
        return 0
    if args.command == "usage-aider":
        usage = usage_aider(args.analytics_log, args.client_log)
    else:
        prices = {"input": args.usd_per_mtok_in, "output": args.usd_per_mtok_out,
                  "cache_read": args.usd_per_mtok_cache_read}
        if args.command == "usage-codex":
            usage = usage_codex(args.output, prices)
        else:
            usage = usage_gemini(args.output, prices, args.stderr)
    print(json.dumps(usage))
    return 0


if __name__ == "__main__":
    sys.exit(main())
