"""Opt-in: each recipe of :mod:`pytest_homefield.agents.recipes` driving the REAL client inside the sandbox.

Run with ``python -m pytest tests/agents/test_clients.py -m clients``; without ``-m clients`` every
test here is deselected at collection (``tests/conftest.py``), so no installer fixture runs. The
clients are installed on first use (heavy: aider ≈ 700 MB venv, codex and gemini ≈ 500 MB of npm
packages) into ``.ci/clients/`` unless ``HOMEFIELD_AIDER_BIN``, ``HOMEFIELD_CODEX_BIN`` or
``HOMEFIELD_GEMINI_BIN`` name a binary. Each recipe is built by the registry (``--agent NAME``) and
runs in the attempt sandbox of run/attempt.py, as ``homefield run`` runs it by default: real
bubblewrap, a fresh ``HOME`` with the client's configuration copied in, the client's install
read-only, and no network but the scripted model server's port on 127.0.0.1
(``--sandbox-network loopback:PORT``). It must fix the fixture repository's bug through the recipe's
``cmd:`` spec, and the usage line must carry the scripted token counts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.fakeapi.gemini import gemini_server
from helpers.fakeapi.openai_chat import openai_chat_server
from helpers.fakeapi.openai_responses import openai_responses_server
from helpers.fakeapi.workspace import BUGGY, FIXED, make_calc_repo

from pytest_homefield.agents.base import AgentContext, AgentResult, render_prompt
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.agents.registry import build_agents
from pytest_homefield.run.agent_sandbox import AgentSandbox, agent_sandbox
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.settings import resolve_settings

pytestmark = pytest.mark.clients

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / ".ci" / "clients"
INSTALL_TIMEOUT_S = 900


def _install(cmd: list[str], what: str, cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot install {what}: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"cannot install {what}: {(proc.stderr or proc.stdout).strip()[-300:]}")


@pytest.fixture(scope="session")
def aider_bin() -> str:
    if os.environ.get("HOMEFIELD_AIDER_BIN"):
        return os.environ["HOMEFIELD_AIDER_BIN"]
    venv = CLIENTS / "aider-venv"
    exe = venv / "bin" / "aider"
    if not exe.exists():
        CLIENTS.mkdir(parents=True, exist_ok=True)
        _install([sys.executable, "-m", "venv", str(venv)], "aider (venv)", CLIENTS)
        _install([str(venv / "bin" / "pip"), "install", "-q", "aider-chat"], "aider-chat", CLIENTS)
    return str(exe)


def _npm_bin(name: str, package: str, env_var: str) -> str:
    if os.environ.get(env_var):
        return os.environ[env_var]
    prefix = CLIENTS / "node"
    exe = prefix / "node_modules" / ".bin" / name
    if not exe.exists():
        if not shutil.which("npm"):
            pytest.skip("npm not found")
        prefix.mkdir(parents=True, exist_ok=True)
        if not (prefix / "package.json").exists():
            (prefix / "package.json").write_text('{"name": "homefield-clients", "private": true}\n')
        _install(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", package], package, prefix)
    return str(exe)


@pytest.fixture(scope="session")
def codex_bin() -> str:
    return _npm_bin("codex", "@openai/codex", "HOMEFIELD_CODEX_BIN")


@pytest.fixture(scope="session")
def gemini_bin() -> str:
    return _npm_bin("gemini", "@google/gemini-cli", "HOMEFIELD_GEMINI_BIN")


class RecipeRun:
    """One run of a recipe: its result, workspace, artifacts folder and the sandbox it had."""

    def __init__(self, res: AgentResult, ws: Path, art: Path, sandbox: AgentSandbox) -> None:
        self.res, self.ws, self.art, self.sandbox = res, ws, art, sandbox


def run_recipe(name: str, tmp_path: Path, client_bin: str, home: Path, extra_env: dict[str, str],
               port: int, timeout_s: float = 180) -> RecipeRun:
    """Run recipe ``name`` the way ``homefield run --agent NAME`` does under the default sandbox: the agent
    from the registry, its environment, and its attempt sandbox from run/attempt.py (bubblewrap, a fresh
    ``HOME`` filled from ``home``, the client's install read-only), with the network limited to the
    scripted server's port on 127.0.0.1 (``--sandbox-network loopback:PORT``)."""
    ws = make_calc_repo(tmp_path / "ws")
    (tmp_path / "cfg").mkdir()
    (agent,) = build_agents([name], resolve_settings(tmp_path / "cfg", {}))
    assert isinstance(agent, CommandAgent) and agent.client is not None and agent.trust_infra
    # the scripted server's own key variables (a user adds them under agents.<name>.env), and this
    # checkout for the recipe's helper (`python -m pytest_homefield.agents.recipes`) inside the sandbox
    agent.env_passthrough += [k for k in [*extra_env, "PYTHONPATH"] if k not in agent.env_passthrough]
    prompt = render_prompt("Fix add() in calc.py: it subtracts instead of adding.", allow_shell=False)
    source = {"PATH": f"{Path(client_bin).parent}:{os.environ['PATH']}", "HOME": str(home), "LANG": "C.UTF-8",
              "TERM": "dumb", **extra_env}
    if os.environ.get("PYTHONPATH"):
        source["PYTHONPATH"] = os.environ["PYTHONPATH"]
    box = tmp_path / "box"
    env = build_agent_env(prompt=prompt, attempt=1, tmpdir=box / "tmp", passthrough=agent.env_passthrough,
                          source=source)
    choice = SandboxChoice("auto", f"loopback:{port}")
    backend = choice.for_agent(agent, allow_shell=False)
    assert backend == "bwrap"
    sb = agent_sandbox(agent, backend, workspace=ws, box=box, env=env, sandbox=choice)
    art = tmp_path / "art"
    try:
        res = agent.run(AgentContext(workspace=ws, prompt=prompt, env=env, timeout_s=timeout_s, artifacts=art,
                                     wrap=sb.wrap, sandbox=backend))
    finally:
        sb.close()
    assert sb.recorded == "bwrap"
    assert env["HOME"] == str(sb.home) != str(home)
    return RecipeRun(res, ws, art, sb)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _show(art: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(art.glob("agent.*")))


# --- aider ---------------------------------------------------------------------------------------

AIDER_METADATA = {"openai/fake-model": {
    "max_tokens": 8192, "max_input_tokens": 128000, "max_output_tokens": 8192,
    "input_cost_per_token": 0.000003, "output_cost_per_token": 0.000015,
    "litellm_provider": "openai", "mode": "chat"}}
AIDER_REPLY = "The operator is wrong.\n\ncalc.py\n```python\n" + FIXED + "```\n"


def _aider_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".aider.model.metadata.json").write_text(json.dumps(AIDER_METADATA))
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.invalid\n")
    return home


def _aider_env(url: str) -> dict[str, str]:
    return {"AIDER_MODEL": "openai/fake-model", "AIDER_EDIT_FORMAT": "whole", "OPENAI_API_BASE": url + "/v1",
            "OPENAI_API_KEY": "test-key"}


def test_aider_recipe_solves(tmp_path: Path, aider_bin: str) -> None:
    home = _aider_home(tmp_path)
    with openai_chat_server([{"text": AIDER_REPLY, "usage": {"input_tokens": 1000, "output_tokens": 40}}]) as srv:
        run = run_recipe("aider", tmp_path, aider_bin, home, _aider_env(srv.url), _port(srv.url))
        paths = [r.path for r in srv.requests]
    res, ws = run.res, run.ws
    assert (ws / "calc.py").read_text() == FIXED, _show(run.art)
    assert res.outcome is None, _show(run.art)
    assert (res.input_tokens, res.output_tokens, res.turns) == (1000, 40, 1)
    assert res.cost_usd == pytest.approx(1000 * 3e-6 + 40 * 15e-6)
    assert res.model == "openai/fake-model"
    assert paths == ["/v1/chat/completions"]
    assert not (ws / ".aider.tags.cache.v4").exists()
    assert sorted(p.name for p in ws.iterdir()) == [".git", "calc.py", "test_calc.py"]
    # aider ran with the sandbox's fresh HOME: its metadata copied in, its caches written there only
    inside = run.sandbox.home
    assert (inside / ".aider.model.metadata.json").read_text() == json.dumps(AIDER_METADATA)
    assert (inside / ".aider" / "caches" / "model_prices_and_context_window.json").stat().st_size > 1000
    assert sorted(p.name for p in home.iterdir()) == [".aider.model.metadata.json", ".gitconfig"]


def test_aider_recipe_reports_auth_failure_as_infra(tmp_path: Path, aider_bin: str) -> None:
    home = _aider_home(tmp_path)
    with openai_chat_server([{"error": {"status": 401, "type": "invalid_api_key",
                                        "message": "Incorrect API key provided"}}]) as srv:
        run = run_recipe("aider", tmp_path, aider_bin, home, _aider_env(srv.url), _port(srv.url))
    assert run.res.outcome == "infra", _show(run.art)
    assert (run.ws / "calc.py").read_text() == BUGGY


# --- codex ---------------------------------------------------------------------------------------

PATCH = ("*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n"
         "+    return a + b\n*** End Patch\n")


def _codex_home(tmp_path: Path, url: str) -> Path:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "Fake"\n'
        f'base_url = "{url}/v1"\nenv_key = "FAKE_OPENAI_KEY"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n")
    return codex_home


def test_codex_recipe_solves_edit_only(tmp_path: Path, codex_bin: str) -> None:
    script: list[dict[str, Any]] = [
        {"text": "Fixing it.", "tool_calls": [{"type": "custom", "name": "apply_patch", "input": PATCH}],
         "usage": {"input_tokens": 1000, "output_tokens": 40, "cache_read_tokens": 200}},
        {"text": "Fixed: add now returns a + b.", "usage": {"input_tokens": 1100, "output_tokens": 30}},
    ]
    home = tmp_path / "home"
    home.mkdir()
    with openai_responses_server(script) as srv:
        codex_home = _codex_home(tmp_path, srv.url)
        env = {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "test-key"}
        run = run_recipe("codex", tmp_path, codex_bin, home, env, _port(srv.url))
        requests = list(srv.requests)
    res, ws = run.res, run.ws
    assert (ws / "calc.py").read_text() == FIXED, _show(run.art)
    assert res.outcome is None, _show(run.art)
    assert (res.input_tokens, res.cache_read_tokens, res.output_tokens) == (2100, 200, 70)
    assert [r.path for r in requests] == ["/v1/responses", "/v1/responses"]
    tools = {t.get("name") for t in requests[0].body.get("tools", [])}
    assert "apply_patch" in tools and not tools & {"exec_command", "shell", "write_stdin"}
    # codex used a copy of its CODEX_HOME inside the sandbox: its databases stay there
    assert sorted(p.name for p in codex_home.iterdir()) == ["config.toml"]
    assert (run.sandbox.home / ".codex" / "config.toml").read_text() == (codex_home / "config.toml").read_text()
    assert list(home.iterdir()) == []


def test_codex_recipe_reports_rate_limit(tmp_path: Path, codex_bin: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with openai_responses_server([{"error": {"status": 429, "type": "rate_limit_exceeded",
                                             "message": "Rate limit reached"}}]) as srv:
        env = {"CODEX_HOME": str(_codex_home(tmp_path, srv.url)), "FAKE_OPENAI_KEY": "test-key"}
        run = run_recipe("codex", tmp_path, codex_bin, home, env, _port(srv.url))
    assert run.res.outcome == "rate_limited", _show(run.art)
    assert (run.ws / "calc.py").read_text() == BUGGY


# --- gemini --------------------------------------------------------------------------------------


def _gemini_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}}, "model": {"name": "gemini-2.5-flash"}}))
    return home


def test_gemini_recipe_solves_edit_only(tmp_path: Path, gemini_bin: str) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "replace", "input": {"file_path": "calc.py", "old_string": "    return a - b",
                                                      "new_string": "    return a + b", "instruction": "fix add"}}],
         "usage": {"input_tokens": 1000, "output_tokens": 40, "cache_read_tokens": 100}},
        {"text": "Fixed: add now returns a + b.", "usage": {"input_tokens": 1100, "output_tokens": 30}},
    ]
    home = _gemini_home(tmp_path)
    with gemini_server(script) as srv:
        env = {"GOOGLE_GEMINI_BASE_URL": srv.url, "GEMINI_API_KEY": "test-key"}
        run = run_recipe("gemini", tmp_path, gemini_bin, home, env, _port(srv.url))
        requests = list(srv.requests)
    res, ws, art = run.res, run.ws, run.art
    assert (ws / "calc.py").read_text() == FIXED, _show(art)
    assert res.outcome is None, _show(art)
    assert (res.input_tokens, res.cache_read_tokens, res.output_tokens, res.turns) == (2100, 100, 70, 2)
    assert res.model == "gemini-2.5-flash"
    assert all(":streamGenerateContent" in r.path for r in requests)
    names = {d["name"] for t in requests[0].body.get("tools", []) for d in t.get("functionDeclarations", [])}
    assert "replace" in names and "run_shell_command" not in names
    # the system settings were written under the sandbox's HOME, whose folders the CLI accepts even
    # though the host folder lies under the world-writable /tmp (inside, /tmp is the sandbox's own)
    settings = run.sandbox.home / ".cache" / "pytest-homefield" / "gemini-system-settings.json"
    assert json.loads(settings.read_text())["privacy"] == {"usageStatisticsEnabled": False}
    assert "Skipping system settings" not in (art / "agent.err").read_text()
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == [".gemini", ".gemini/settings.json"]


def test_gemini_recipe_reports_auth_failure_as_infra(tmp_path: Path, gemini_bin: str) -> None:
    home = _gemini_home(tmp_path)
    with gemini_server([{"error": {"status": 401, "type": "UNAUTHENTICATED", "message": "API key not valid"}}]) as srv:
        env = {"GOOGLE_GEMINI_BASE_URL": srv.url, "GEMINI_API_KEY": "test-key"}
        run = run_recipe("gemini", tmp_path, gemini_bin, home, env, _port(srv.url))
    assert run.res.outcome == "infra", _show(run.art)
    assert (run.ws / "calc.py").read_text() == BUGGY
