"""``--sandbox-network allowlist`` (the default) end to end: a sandboxed ``cmd:`` agent reaches the hosts
on its allowlist through the filtering proxy and nothing else of the host's 127.0.0.1, neither through
the proxy (403, logged in ``proxy.log``) nor around it (a raw socket, ``curl --noproxy``).

Real bubblewrap and real HTTP servers on 127.0.0.1 (skipped with the probe's reason where bubblewrap
cannot create namespaces); the agent runs through run/attempt.py's :func:`agent_sandbox`, as
``homefield run`` runs it. The real claude CLI through the allowlist is in tests/agents/test_claude.py.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.hello_servers import hello_servers

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.run.agent_sandbox import agent_sandbox
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice


@pytest.fixture
def servers() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the host's 127.0.0.1: (the listed port, a second listener)."""
    with hello_servers() as ports:
        yield ports


#: What the agent tries, one line each: urllib (honours the proxy variables) to both ports, a raw
#: socket to the second listener, and curl with and without the proxy.
PROBE = """\
import os, socket, subprocess, sys, urllib.error, urllib.request
allowed, other = sys.argv[1:3]
print("proxy", os.environ.get("HTTP_PROXY"), "no_proxy" in {k.lower() for k in os.environ})
for port in (allowed, other):
    try:
        print("urllib", port, urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode())
    except urllib.error.HTTPError as exc:
        print("urllib", port, "http", exc.code)
    except OSError as exc:
        print("urllib", port, "unreachable", type(exc).__name__)
try:
    socket.create_connection(("127.0.0.1", int(other)), timeout=5).close()
    print("socket", other, "connected")
except OSError as exc:
    print("socket", other, "unreachable", type(exc).__name__)
if len(sys.argv) > 3:
    for extra in ([], ["--noproxy", "*"]):
        r = subprocess.run([sys.argv[3], "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", *extra,
                            f"http://127.0.0.1:{other}/"], capture_output=True, text=True)
        print("curl", "direct" if extra else "proxy", r.stdout or "000")
"""


def _run(tmp_path: Path, ports: tuple[int, int], allow: tuple[str, ...]) -> list[str]:
    """Run the probe as a ``cmd:`` agent under ``allowlist`` with ``--allow-host`` ``allow``; its stdout."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "probe.py").write_text(PROBE)
    curl = shutil.which("curl")
    command = f"{sys.executable} probe.py {ports[0]} {ports[1]} {curl or ''}"
    agent = CommandAgent(name="net", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    box = tmp_path / "box"
    env = build_agent_env(prompt="p", attempt=1, tmpdir=box / "tmp", passthrough=[],
                          source={"PATH": "/usr/bin:/bin", "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path)})
    choice = SandboxChoice("bwrap", "allowlist", allow)
    art = tmp_path / "art"
    art.mkdir()
    sb = agent_sandbox(agent, choice.for_agent(agent, False), workspace=ws, box=box, env=env, sandbox=choice,
                       proxy_log=art / "proxy.log")
    try:
        agent.run(AgentContext(workspace=ws, prompt="p", env=env, timeout_s=60, artifacts=art, wrap=sb.wrap,
                               sandbox="bwrap"))
    finally:
        sb.close()
    assert sb.recorded == "bwrap"
    assert not list((box / "net").glob("*.sock"))  # the proxy's and relay's sockets are gone after it
    return (art / "agent.out").read_text().splitlines() + ["ERR " + (art / "agent.err").read_text()]


def test_the_allowlist_reaches_the_listed_port_only(tmp_path: Path, servers: tuple[int, int]) -> None:
    allowed, other = servers
    out = _run(tmp_path, servers, (f"127.0.0.1:{allowed}",))
    assert out[0] == "proxy http://127.0.0.1:3128 False", out  # NO_PROXY was dropped
    assert out[1] == f"urllib {allowed} hello from {allowed}", out
    assert out[2] == f"urllib {other} http 403", out  # through the proxy: refused
    assert out[3].startswith(f"socket {other} unreachable"), out  # around it: nothing there
    if shutil.which("curl"):
        assert out[4:6] == ["curl proxy 403", "curl direct 000"], out
    log = [ln.split()[1:4] for ln in (tmp_path / "art" / "proxy.log").read_text().splitlines()]
    assert ["allowed", "GET", f"127.0.0.1:{allowed}"] in log
    assert log.count(["refused", "GET", f"127.0.0.1:{other}"]) == (2 if shutil.which("curl") else 1)
    assert not any(v == "allowed" and t.endswith(f":{other}") for v, _, t in log)


def test_an_agent_without_provider_hosts_reaches_nothing(tmp_path: Path, servers: tuple[int, int]) -> None:
    allowed, other = servers
    out = _run(tmp_path, servers, ())
    assert out[1:3] == [f"urllib {allowed} http 403", f"urllib {other} http 403"], out
    assert out[3].startswith(f"socket {other} unreachable"), out


@pytest.mark.slow
def test_an_openai_agent_still_reaches_its_local_server(tmp_path: Path) -> None:
    """``openai:`` runs in homefield's own process (nothing to filter): under the default allowlist
    it still calls its local server, solves, and records ``sandbox: none`` with no ``proxy.log``."""
    from helpers.attack_repo import GOOD_CALC, build, task_for
    from helpers.fakeapi.openai_chat import openai_chat_server

    from pytest_homefield.agents.openai_compat import OpenAIAgent
    from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt

    fx = build(tmp_path / "repo")
    reply = f"```src/calc/__init__.py\n{GOOD_CALC}```\n"
    with openai_chat_server([{"text": reply, "usage": {"input_tokens": 10, "output_tokens": 5}}]) as server:
        agent = OpenAIAgent(name="local", spec="openai:local", model="local",
                            settings=AgentSettings(base_url=server.url + "/v1"))
        assert agent.provider_hosts({}) == [server.url + "/v1/chat/completions"]
        cache = SnapshotCache(repo=fx.root)
        try:
            spec = AttemptSpec(task=task_for(fx), agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",
                               timeout_s=60)
            assert spec.sandbox.allowlist  # the default
            r = run_attempt(spec, cache)
        finally:
            cache.close()
    assert r.outcome == "solved", r
    assert r.sandbox == "none" and len(server.requests) == 1
    assert not (spec.artifacts / "proxy.log").exists()


def test_each_kind_declares_its_provider_hosts(tmp_path: Path) -> None:
    from pytest_homefield.agents.claude import ClaudeAgent
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.capabilities import provider_hosts_of
    from pytest_homefield.settings import resolve_settings

    claude = ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(), executable="/bin/true")
    assert provider_hosts_of(claude, {}) == ["api.anthropic.com:443"]
    assert provider_hosts_of(claude, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}) == ["http://127.0.0.1:9/"]
    agents = {a.name: a for a in build_agents(["aider", "codex", "gemini", "cmd:true", "oracle"],
                                              resolve_settings(tmp_path, {}))}
    assert provider_hosts_of(agents["aider"], {"OPENAI_API_BASE": "http://10.0.0.5:8000/v1",
                                               "ANTHROPIC_API_KEY": "k"}) == ["http://10.0.0.5:8000/v1",
                                                                              "api.anthropic.com:443"]
    assert "api.openai.com:443" in provider_hosts_of(agents["codex"], {})
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text('[model_providers.fake]\nbase_url = "http://127.0.0.1:5/v1"\n')
    assert provider_hosts_of(agents["codex"], {"CODEX_HOME": str(tmp_path / "codex")})[-1] == "http://127.0.0.1:5/v1"
    assert provider_hosts_of(agents["gemini"], {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:7"}) == [
        "http://127.0.0.1:7"]
    assert provider_hosts_of(agents["cmd"], {}) == [] and provider_hosts_of(agents["oracle"], {}) == []


def test_a_session_says_once_where_the_allowlist_is_not_enforced(tmp_path: Path) -> None:
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.run.runner import sandbox_summary
    from pytest_homefield.settings import resolve_settings

    settings = resolve_settings(tmp_path, {"sandbox": "none", "allow_host": ["pypi.org"]})
    assert settings.sandbox_network == "allowlist"
    agents = build_agents(["cmd:true", "oracle"], settings)
    summary = sandbox_summary(settings, agents)
    assert summary["allow_hosts"] == ["pypi.org"]
    assert "not enforced for cmd (no sandbox)" in summary["unenforced"] and "oracle" not in summary["unenforced"]
    assert "unenforced" not in sandbox_summary(resolve_settings(tmp_path, {"sandbox_network": "shared"}), agents)
