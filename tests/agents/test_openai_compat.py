"""The openai: adapter against a scripted chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.fakeapi.openai_chat import openai_chat_server
from helpers.fakeapi.workspace import BUGGY, FIXED, make_calc_repo

from pytest_homefield.agents.base import OPENAI_MAX_TOKENS, AgentContext, AgentResult, AgentSettings, render_prompt
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.agents.openai_compat import OpenAIAgent, parse_reply
from pytest_homefield.agents.registry import build_agents
from pytest_homefield.errors import AgentSpecError, ConfigError
from pytest_homefield.settings import resolve_settings

PRICES = {"local-coder": {"input": 0.5, "output": 2.0, "cache_read": 0.05}}
DIFF = """--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.workspace = make_calc_repo(tmp_path / "ws")
        self.artifacts = tmp_path / "art"
        self.server: Any = None

    def agent(self, base_url: str | None, **kw: Any) -> OpenAIAgent:
        settings = AgentSettings(base_url=base_url, prices=PRICES, **kw)
        return OpenAIAgent(name="local-coder", spec="openai:local-coder", model="local-coder", settings=settings)

    def ctx(self, agent: OpenAIAgent, timeout_s: float, source: dict[str, str] | None = None) -> AgentContext:
        prompt = render_prompt("Fix add() in calc.py: it subtracts.", allow_shell=False)
        env = build_agent_env(prompt=prompt, attempt=1, tmpdir=self.tmp / "tmp", passthrough=agent.env_passthrough,
                              source=source or {"PATH": os.environ["PATH"], "HOME": str(self.tmp)})
        return AgentContext(workspace=self.workspace, prompt=prompt, env=env, timeout_s=timeout_s,
                            artifacts=self.artifacts, hint_files=["calc.py", "new/module.py"])

    def run(self, script: list[dict[str, Any]], *, timeout_s: float = 20, **kw: Any) -> AgentResult:
        with openai_chat_server(script) as server:
            self.server = server
            agent = self.agent(server.url + "/v1", **kw)
            return agent.run(self.ctx(agent, timeout_s))

    @property
    def calc(self) -> str:
        return (self.workspace / "calc.py").read_text()


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def test_whole_file_reply(harness: Harness) -> None:
    reply = f"The bug is the operator.\n\n```calc.py\n{FIXED}```\n"
    res = harness.run([{"text": reply, "usage": {"input_tokens": 800, "output_tokens": 40,
                                                  "cache_read_tokens": 200}}], api_key="sk-test")
    assert harness.calc == FIXED
    assert res.outcome is None and res.error is None
    assert (res.input_tokens, res.cache_read_tokens, res.output_tokens, res.turns) == (800, 200, 40, 1)
    assert res.cost_usd == pytest.approx((800 * 0.5 + 200 * 0.05 + 40 * 2.0) / 1e6)
    assert res.model == "local-coder"
    [req] = harness.server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.body["model"] == "local-coder"
    user = req.body["messages"][-1]["content"]
    assert "Fix add() in calc.py" in user and BUGGY.strip() in user and "new/module.py: does not exist yet" in user
    assert (harness.artifacts / "agent.out").read_text() == reply


def test_diff_reply_applied_with_git_apply(harness: Harness) -> None:
    res = harness.run([{"text": f"```diff\n{DIFF}```"}])
    assert harness.calc == FIXED
    assert res.outcome is None
    assert "git apply: ok" in (harness.artifacts / "agent.err").read_text()
    assert res.cost_usd is not None  # priced even without cache tokens


def test_diff_whose_context_does_not_match(harness: Harness) -> None:
    (harness.workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n# tail\n")
    fuzzy = DIFF.replace(" def add(a, b):", " def add(a,b):")  # a context line that does not match
    res = harness.run([{"text": fuzzy}])  # a bare diff, no fence
    assert harness.calc == FIXED + "# tail\n"
    assert res.outcome is None
    log = (harness.artifacts / "agent.err").read_text()
    assert "git apply -C0: ok" in log and "git apply: ok" not in log
    assert not list(harness.workspace.glob("*.orig")) and not list(harness.workspace.glob("*.rej"))


def test_a_reply_cannot_configure_git(harness: Harness, tmp_path: Path) -> None:
    """attacker9's F1: a reply writes ``.gitattributes`` naming a clean filter and a diff to
    ``.git/config`` defining it (GNU ``patch`` wrote it on main), then a diff that makes homefield's
    ``git apply`` read the workspace: the filter ran as the user, on the host."""
    marker = tmp_path / "filter-ran"
    config = (harness.workspace / ".git" / "config").read_text()
    reply = ("```.gitattributes\n* filter=hf\n```\n\n"
             f"```diff\n--- a/.git/config\n+++ b/.git/config\n@@ -5,0 +6,2 @@\n+[filter \"hf\"]\n"
             f"+\tclean = \"touch {marker}; cat\"\n```\n\n"
             "```.GIT/config\nx\n```\n\n"
             f"```diff\n{DIFF}```\n")
    res = harness.run([{"text": reply}])
    assert not marker.exists()
    assert (harness.workspace / ".git" / "config").read_text() == config
    assert not (harness.workspace / ".GIT").exists()
    assert harness.calc == FIXED and res.outcome is None


def test_diff_that_does_not_apply_is_agent_error(harness: Harness) -> None:
    res = harness.run([{"text": DIFF.replace("a - b", "a * b")}])
    assert res.outcome == "agent_error" and "could be applied" in (res.error or "")
    assert harness.calc == BUGGY


@pytest.mark.parametrize(
    "turn",
    [
        {"raw": {"status": 200, "body": "<html>not json</html>"}},
        {"raw": {"status": 200, "body": '{"object": "chat.completion", "choices": []}'}},
        {"raw": {"status": 200, "body": '{"choices": [{"message": {"content": null}}]}'}},
        {"text": "I would change the minus sign to a plus sign."},
    ],
    ids=["not-json", "no-choices", "null-content", "no-edit"],
)
def test_malformed_reply_is_agent_error(harness: Harness, turn: dict[str, Any]) -> None:
    res = harness.run([turn])
    assert res.outcome == "agent_error"
    assert harness.calc == BUGGY


def test_a_lone_surrogate_in_the_reply_is_text_not_an_exception(harness: Harness) -> None:
    """host29: JSON's ``\\ud800`` reached ``write_text`` of a whole-file block, which raised
    ``UnicodeEncodeError``; ``run_attempt`` recorded ``agent raised: …`` as ``infra``, unscored, retried."""
    content = "```calc.py\\ndef add(a, b):\\n    return a + b  # \\ud800\\n```\\n"
    body = '{"choices": [{"message": {"content": "' + content + '"}}]}'
    res = harness.run([{"raw": {"status": 200, "body": body}}])
    assert res.outcome is None, res  # graded as any edit
    assert harness.calc == "def add(a, b):\n    return a + b  # ?\n"


#: A reply whose whole-file block is the fix, with the ``usage`` object (JSON text) put in.
FIXED_REPLY = '{"choices": [{"message": {"content": "```calc.py\\n' + FIXED.replace("\n", "\\n") + '```\\n"}}], '


@pytest.mark.parametrize("usage", [
    '{"prompt_tokens": 0, "completion_tokens": -1000000000}',  # main: cost -2000 USD, measured
    '{"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": -1000000000}}',
    '{"prompt_tokens": 10, "completion_tokens": 1' + "0" * 400 + '}',  # main: OverflowError, an unscored infra
    '{"prompt_tokens": 10, "completion_tokens": 100000000000000000000}',  # past 2^63-1: main recorded it
    '{"prompt_tokens": 10, "completion_tokens": 2.5}',
    '{"prompt_tokens": 10}',  # main: a missing count was 0, so the cost 0.000005 USD, measured
    '{}',  # main: cost 0, measured (it breaks ties: report/family.py MEASURED_COST_KINDS)
])
def test_a_servers_usage_outside_what_a_count_can_be_leaves_the_cost_unknown(harness: Harness, usage: str) -> None:
    """xatk31: an ``openai:`` cost is homefield's own pricing of the server's ``usage`` and counts as measured (it
    breaks ties in the ranking), but the counts were taken as written: a negative one priced the attempt at -2000
    USD (cost per solved below zero, first in every tie, and its budget share never spent), a missing one at 0, a
    huge one raised. A count is read as every other agent's is (``reported_count``: an integer from 0 to 2^63-1);
    one that is not, or is missing, leaves that count and the cost unknown. The reply is still graded."""
    res = harness.run([{"raw": {"status": 200, "body": FIXED_REPLY + '"usage": ' + usage + '}'}}])
    assert res.outcome is None and harness.calc == FIXED, res
    assert res.cost_usd is None, res
    for n in (res.input_tokens, res.output_tokens, res.cache_read_tokens):
        assert n is None or 0 <= n <= 2**63 - 1, res


@pytest.mark.parametrize("status,outcome", [(500, "infra"), (502, "infra"), (503, "rate_limited"),
                                            (429, "rate_limited"), (401, "infra"), (400, "agent_error")])
def test_http_errors(harness: Harness, status: int, outcome: str) -> None:
    res = harness.run([{"error": {"status": status, "message": "scripted"}}])
    assert res.outcome == outcome
    assert f"HTTP {status}" in (res.error or "")
    assert res.cost_usd is None


def test_timeout(harness: Harness) -> None:
    start = time.monotonic()
    res = harness.run([{"text": "never sent", "hang": True}], timeout_s=1.0)
    assert res.outcome == "timeout"
    assert time.monotonic() - start < 5
    assert harness.calc == BUGGY


def test_slow_server_is_timeout(harness: Harness) -> None:
    res = harness.run([{"text": f"```calc.py\n{FIXED}```", "delay": 3}], timeout_s=1.0)
    assert res.outcome == "timeout"


def test_connection_refused_is_infra(harness: Harness) -> None:
    with openai_chat_server([]) as server:
        url = server.url
    agent = harness.agent(url + "/v1")
    res = agent.run(harness.ctx(agent, 5))
    assert res.outcome == "infra" and "cannot reach" in (res.error or "")


def test_base_url_and_key_from_environment(harness: Harness) -> None:
    with openai_chat_server([{"text": f"```calc.py\n{FIXED}```"}]) as server:
        agent = harness.agent(None)
        source = {"PATH": os.environ["PATH"], "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "env-key"}
        res = agent.run(harness.ctx(agent, 10, source))
        headers = server.requests[0].headers
    assert res.outcome is None and harness.calc == FIXED
    assert headers["authorization"] == "Bearer env-key"


def test_complete(harness: Harness) -> None:
    with openai_chat_server([{"text": "2021", "usage": {"input_tokens": 12, "output_tokens": 2}}]) as server:
        c = harness.agent(server.url + "/v1").complete("When?", timeout_s=10, gold_answer="ignored")
        body = server.requests[0].body
    assert c.text == "2021" and c.outcome is None and c.error is None
    assert body["messages"] == [{"role": "user", "content": "When?"}]
    assert "ignored" not in json.dumps(body)
    assert c.cost_usd == pytest.approx((12 * 0.5 + 2 * 2.0) / 1e6)
    assert (c.input_tokens, c.output_tokens) == (12, 2)


def test_complete_rate_limit_is_an_outcome(harness: Harness) -> None:
    with openai_chat_server([{"error": {"status": 429, "type": "rate_limit_error", "message": "slow down"}}]) as server:
        c = harness.agent(server.url + "/v1").complete("When?", timeout_s=10)
    assert c.outcome == "rate_limited" and c.text == "" and "429" in (c.error or "")


# --- what the request asks of the server (issue 33) ------------------------------------------------


def test_the_request_caps_the_reply_by_default(harness: Harness) -> None:
    """A real 135M model looped until the context filled without a cap: every request carries one."""
    harness.run([{"text": f"```calc.py\n{FIXED}```"}])
    body = harness.server.requests[0].body
    assert body["max_tokens"] == OPENAI_MAX_TOKENS == 4096
    assert "temperature" not in body and "stop" not in body  # the server's defaults
    assert "max_tokens=4096" in (harness.artifacts / "agent.err").read_text().splitlines()[0]


def test_yml_settings_and_flags_reach_the_request(harness: Harness, tmp_path: Path) -> None:
    """``.homefield.yml`` ``agents:`` values over the flags, through settings and the registry, as the
    recorded request bodies of run() and complete() show; ``max_tokens: null`` sends no cap."""
    root = tmp_path / "root"
    root.mkdir()
    (root / ".homefield.yml").write_text(
        "agents:\n  local: {spec: 'openai:local-coder', max_tokens: 64, stop: [\"\\n\\n\", '</answer>']}\n"
        "  uncapped: {spec: 'openai:local-coder', max_tokens: null}\n")
    s = resolve_settings(root, {"agent": ["local", "uncapped"], "temperature": 0.2, "max_tokens": 100})
    local, uncapped = build_agents(s.agents, s)
    assert isinstance(local, OpenAIAgent) and isinstance(uncapped, OpenAIAgent)
    with openai_chat_server([{"text": f"```calc.py\n{FIXED}```"}, {"text": "2021"}, {"text": "2022"}]) as server:
        for agent in (local, uncapped):
            agent.settings.base_url = server.url + "/v1"
        local.run(harness.ctx(local, 10))
        local.complete("When?", timeout_s=10)
        uncapped.complete("When?", timeout_s=10)
        bodies = [r.body for r in server.requests]
    for body in bodies[:2]:
        assert (body["max_tokens"], body["temperature"], body["stop"]) == (64, 0.2, ["\n\n", "</answer>"])
    assert "max_tokens" not in bodies[2] and bodies[2]["temperature"] == 0.2 and "stop" not in bodies[2]
    flags_only = resolve_settings(root, {"agent": ["openai:m"], "max_tokens": 100, "stop": ["END"]})
    (m,) = build_agents(flags_only.agents, flags_only)
    assert isinstance(m, OpenAIAgent) and m.request([])["max_tokens"] == 100 and m.request([])["stop"] == ["END"]


def test_a_reply_cut_at_the_cap_says_so(harness: Harness) -> None:
    res = harness.run([{"text": "I will now explain the bug in great detail and", "finish": "length"}], max_tokens=8)
    assert res.outcome == "agent_error"
    assert res.error == "reply has no file block or diff (cut at max_tokens 8)"
    assert "the reply ended at the token cap (cut at max_tokens 8)" in (harness.artifacts / "agent.err").read_text()


@pytest.mark.parametrize(("flags", "yml", "message"), [
    ({"temperature": 2.5}, "", "temperature must be a number from 0 to 2, got 2.5"),
    ({"max_tokens": 0}, "", "max_tokens must be an integer of at least 1 (or null: no cap), got 0"),
    ({}, "agents:\n  a: {spec: 'openai:m', temperature: -1}\n", "key 'agents.a': temperature must be a number"),
    ({}, "agents:\n  a: {spec: 'openai:m', max_tokens: 1.5}\n", "key 'agents.a.max_tokens' must be int or null"),
])
def test_bad_sampling_settings_are_one_line(tmp_path: Path, flags: dict[str, Any], yml: str, message: str) -> None:
    (tmp_path / ".homefield.yml").write_text(yml)
    with pytest.raises((AgentSpecError, ConfigError)) as err:
        s = resolve_settings(tmp_path, {"agent": ["openai:m"], **flags})
        build_agents(s.agents, s)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_attributes() -> None:
    agent = OpenAIAgent(name="m", spec="openai:m", model="m", settings=AgentSettings())
    assert agent.hinted is True and agent.simulated is False and agent.version() is None
    assert agent.env_passthrough == ["OPENAI_API_KEY", "OPENAI_BASE_URL"]


# --- parse_reply ---------------------------------------------------------------------------------


def test_parse_labels() -> None:
    reply = (
        "calc.py\n```python\nA\n```\n"
        "```python src/pkg/mod.py\nB\n```\n"
        "```python title=\"docs/x.md\"\nC\n```\n"
        "**lib/util.py**\n```\nD\n```\n"
        "```Makefile\nE\n```\n"
        "```python\nprint('no label')\n```\n"
    )
    edits = parse_reply(reply, known_paths={"Makefile"})
    assert edits.files == {"calc.py": "A\n", "src/pkg/mod.py": "B\n", "docs/x.md": "C\n", "lib/util.py": "D\n",
                           "Makefile": "E\n"}
    assert edits.diffs == []


def test_parse_rejects_unsafe_paths() -> None:
    reply = ("```../evil.py\nx\n```\n```/etc/passwd\nx\n```\n```.git/config\nx\n```\n```./ok/../../x.py\nx\n```\n"
             "```sub/.Git/hooks/pre-commit\nx\n```\n")
    edits = parse_reply(reply)
    assert not edits and len(edits.rejected) == 5


def test_parse_longer_fences_hold_inner_fences() -> None:
    reply = "````README.md\n# T\n```sh\nmake\n```\n````\n"
    assert parse_reply(reply).files == {"README.md": "# T\n```sh\nmake\n```\n"}


def test_parse_diff_block_without_label() -> None:
    edits = parse_reply(f"```\n{DIFF}```")
    assert edits.diffs == [DIFF] and not edits.files


def test_symlink_escape_is_skipped(harness: Harness, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (harness.workspace / "link").symlink_to(outside)
    res = harness.run([{"text": f"```link/pwned.py\nx\n```\n```calc.py\n{FIXED}```"}])
    assert res.outcome is None and harness.calc == FIXED
    assert not (outside / "pwned.py").exists()
