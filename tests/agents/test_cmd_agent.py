"""The cmd: adapter: environment, usage line, exit codes and killing a whole process tree."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
from helpers.fakeapi.workspace import FIXED, make_calc_repo

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent, parse_usage_line
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.agents.recipes import (
    RECIPE_SANDBOX,
    RECIPES,
    build_recipes,
    prepare_aider,
    recipe_agents,
    usage_aider,
    usage_codex,
    usage_gemini,
)
from pytest_homefield.agents.recipes import main as recipes_main
from pytest_homefield.agents.registry import build_agents
from pytest_homefield.probe.call_sandbox import ProbeSandboxes
from pytest_homefield.sandbox import procs
from pytest_homefield.settings import resolve_settings

PY = shlex.quote(sys.executable)


def run(tmp_path: Path, command: str, *, timeout_s: float = 30, prompt: str = "fix add") -> tuple:
    ws = tmp_path / "ws"
    if not ws.exists():
        make_calc_repo(ws, git=False)
    agent = CommandAgent(name="cmd", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    source = {**os.environ, "PYTEST_CURRENT_TEST": "leak", "HOMEFIELD_TASK": "leak"}
    env = build_agent_env(prompt=prompt, attempt=3, tmpdir=tmp_path / "tmp", passthrough=agent.env_passthrough,
                          source=source)
    ctx = AgentContext(workspace=ws, prompt=prompt, env=env, timeout_s=timeout_s, artifacts=tmp_path / "art")
    return agent.run(ctx), ws, tmp_path / "art"


def test_edits_workspace_with_prompt_from_env(tmp_path: Path) -> None:
    cmd = ("test \"$HOMEFIELD_PROMPT\" = 'fix add' && sed -i 's/a - b/a + b/' calc.py && "
           "env > \"$TMPDIR/seen.env\" && echo '{\"cost_usd\": 0.25, \"input_tokens\": 1000, \"output_tokens\": 20}'")
    res, ws, art = run(tmp_path, cmd)
    assert (ws / "calc.py").read_text() == FIXED
    assert res.outcome is None and res.exit_code == 0 and res.error is None
    assert (res.cost_usd, res.input_tokens, res.output_tokens) == (0.25, 1000, 20)
    assert res.cache_read_tokens is None
    seen = (tmp_path / "tmp" / "seen.env").read_text()
    assert "HOMEFIELD_ATTEMPT=3" in seen and "leak" not in seen
    assert (art / "agent.out").read_text().endswith('"output_tokens": 20}\n')


def test_nonzero_exit_is_recorded_not_failed(tmp_path: Path) -> None:
    res, _, art = run(tmp_path, "echo working; echo 'oops' >&2; exit 3")
    assert res.outcome is None
    assert res.exit_code == 3
    # the hidden tests decide; the exit code is kept, and the error says it with stderr's last line (a
    # script the sandbox cannot see, "sh: 0: cannot open /x/agent.sh: No such file", was an empty patch
    # with no error anywhere: nothing told a broken command from an agent that chose no change)
    assert res.error == "command exited 3: oops"
    assert res.cost_usd is None
    assert (art / "agent.err").read_text() == "oops\n"
    res, _, _ = run(tmp_path / "usage", "echo '{\"error\": \"gave up\"}'; exit 1")
    assert (res.outcome, res.error) == (None, "gave up")  # its own words win
    res, _, _ = run(tmp_path / "missing", f"sh {tmp_path}/no-such-agent.sh")
    assert res.outcome is None and res.exit_code and res.error is not None  # dash: 2, bash: 127
    assert res.error.startswith(f"command exited {res.exit_code}: ") and "no-such-agent.sh" in res.error


def test_usage_line_must_be_last(tmp_path: Path) -> None:
    res, _, _ = run(tmp_path, "echo '{\"cost_usd\": 1}'; echo done")
    assert res.cost_usd is None


def test_reported_outcome(tmp_path: Path) -> None:
    line = json.dumps({"outcome": "rate_limited", "error": "429 from provider", "input_tokens": 5})
    res, _, _ = run(tmp_path, f"echo {shlex.quote(line)}; exit 1")
    assert res.outcome == "rate_limited" and res.error == "429 from provider" and res.input_tokens == 5


@pytest.mark.parametrize(
    "line,expected",
    [
        ('{"cost_usd": 0.5, "input_tokens": 10, "output_tokens": 2, "model": "m", "turns": 4}',
         {"cost_usd": 0.5, "input_tokens": 10, "output_tokens": 2, "model": "m", "turns": 4}),
        ('{"cost_usd": "cheap", "input_tokens": -1, "output_tokens": true, "outcome": "solved"}', {}),
        ('[1, 2]', {}),
        ("Tokens: 1.0k sent", {}),
        ('{"cache_read_tokens": 7, "cache_write_tokens": 8, "outcome": "infra"}',
         {"cache_read_tokens": 7, "cache_write_tokens": 8, "outcome": "infra"}),
        # numbers JSON has no spelling for (Python's json reads them) and counts past 64 bits (atk9 F6)
        ('{"cost_usd": Infinity, "input_tokens": 1e400, "output_tokens": 18446744073709551616, "turns": NaN}', {}),
        ('{"cost_usd": NaN, "turns": 3}', {"turns": 3}),
        ('{"cost_usd": 1' + "0" * 400 + '}', {}),
        ("[" * 200_000, {}),  # nested past the decoder: RecursionError, not ValueError (atk14)
    ],
)
def test_parse_usage_line(line: str, expected: dict) -> None:
    assert parse_usage_line(line) == expected


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


CHILD = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "if len(sys.argv) > 1: os.setsid()\n"
    "open(os.environ['TMPDIR'] + '/child%s.pid' % len(sys.argv), 'w').write(str(os.getpid()))\n"
    "time.sleep(120)\n"
)


def test_timeout_kills_children_that_ignore_sigterm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the reaper's SIGTERM grace 0.2 s, not 2 s: the children ignore SIGTERM, so SIGKILL after it ends them
    monkeypatch.setattr(procs, "KILL_GRACE_S", 0.2)
    (tmp_path / "child.py").write_text(CHILD)
    child = f"{PY} {shlex.quote(str(tmp_path / 'child.py'))}"
    # one child in the agent's process group, one that escaped into its own session
    cmd = f"trap '' TERM; {child} & {child} escape & sleep 120; wait"
    start = time.monotonic()
    res, _, _ = run(tmp_path, cmd, timeout_s=2.5)
    assert res.outcome == "timeout"
    assert res.exit_code is None
    assert time.monotonic() - start < 15
    pids = [int((tmp_path / "tmp" / f"child{n}.pid").read_text()) for n in (1, 2)]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if _alive(p)]


def probe_box(tmp_path: Path, sandbox: str = "none") -> ProbeSandboxes:
    """The probe's sandbox of calls under ``--sandbox SANDBOX`` (the helper scripts of these tests lie
    in ``tmp_path``, which bubblewrap does not bind: ``none`` unless the test is about the sandbox)."""
    return ProbeSandboxes(resolve_settings(tmp_path, {"sandbox": sandbox}))


def test_a_probe_call_runs_in_the_sandbox_of_an_attempt(tmp_path: Path) -> None:
    """contracts §9: the probe's ``cmd:`` agent (atk9 F2) runs in bubblewrap, as in a run: the user's
    repository and every other host folder are out of its reach, its own folder is writable."""
    repo = tmp_path / "repo"
    (repo / ".homefield").mkdir(parents=True)
    (repo / ".homefield" / "tasks.jsonl").write_text('{"gold_patch": "the answers"}\n')
    command = (f"cat {repo}/.homefield/tasks.jsonl 2>&1; echo planted 2>/dev/null > {tmp_path}/escaped; "
               "echo mine > own.txt && cat own.txt")
    agent = CommandAgent(name="x", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    c = agent.complete("def f():", timeout_s=30, sandbox=probe_box(tmp_path, "bwrap"))
    assert c.outcome is None and c.text == f"cat: {repo}/.homefield/tasks.jsonl: No such file or directory\nmine\n"
    assert not (tmp_path / "escaped").exists()


def test_complete_answers_on_stdout_in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "leak")
    script = tmp_path / "answer.py"
    script.write_text("import json, os\n"
                      "print('cwd', sorted(os.listdir('.')), 'leak' in json.dumps(dict(os.environ)))\n"
                      "print(os.environ['HOMEFIELD_PROMPT'].upper())\n"
                      "print(json.dumps({'cost_usd': 0.25, 'input_tokens': 7, 'output_tokens': 3, 'model': 'm1'}))\n")
    command = f"{PY} {shlex.quote(str(script))}"
    agent = CommandAgent(name="x", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    c = agent.complete("def add(a, b):", timeout_s=30, gold_answer="never shown", sandbox=probe_box(tmp_path))
    assert c.outcome is None and c.error is None
    assert c.text == "cwd [] False\nDEF ADD(A, B):\n"  # the usage line is not part of the answer
    assert (c.cost_usd, c.input_tokens, c.output_tokens, c.model) == (0.25, 7, 3, "m1")
    assert agent.version() is None and agent.simulated is False and agent.hinted is False


def test_complete_failures_are_outcomes(tmp_path: Path) -> None:
    fail = CommandAgent(name="x", spec="cmd:false", command="echo oops >&2; exit 3", settings=AgentSettings())
    c = fail.complete("hi", timeout_s=30, sandbox=probe_box(tmp_path))
    assert c.outcome == "agent_error" and c.text == "" and "exited 3: oops" in (c.error or "")
    slow = CommandAgent(name="x", spec="cmd:sleep", command="sleep 30", settings=AgentSettings())
    start = time.monotonic()
    c = slow.complete("hi", timeout_s=1, sandbox=probe_box(tmp_path))
    assert c.outcome == "timeout" and time.monotonic() - start < 10


# --- recipes: the helpers that turn client output into the usage line -------------------------


def test_recipes_are_offline_safe_cmd_specs() -> None:
    assert set(RECIPES) == {"aider", "codex", "gemini"}
    assert all(spec.startswith("cmd:") for spec in RECIPES.values())
    for flag in ("--no-check-update", "--no-analytics", "--no-show-release-notes", "--no-detect-urls",
                 "--no-suggest-shell-commands", "--no-auto-commits", "prepare-aider", "usage-aider"):
        assert flag in RECIPES["aider"]
    for flag in ("--disable shell_tool", "--disable unified_exec", "features.plugins=false", "usage-codex"):
        assert flag in RECIPES["codex"]
    for flag in ("--approval-mode auto_edit", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "usage-gemini"):
        assert flag in RECIPES["gemini"]
    assert build_recipes("/opt/py 3/python")["codex"].count("'/opt/py 3/python' -m") == 1
    assert recipe_agents()["codex"] == {"spec": RECIPES["codex"], "env": ["CODEX_HOME", "OPENAI_API_KEY"]}


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_recipe_clients_get_their_configuration_in_a_fresh_home(tmp_path: Path) -> None:
    """What the sandbox's fresh HOME receives per recipe: configuration and credentials, never history,
    sessions, caches or ~/.env; a variable naming a host folder is re-pointed inside."""
    user = tmp_path / "user"
    for rel in (".aider.conf.yml", ".aider.model.metadata.json", ".env", ".aider/analytics.json",
                ".codex/config.toml", ".codex/auth.json", ".codex/history.jsonl", ".codex/sessions/2026/r.jsonl",
                ".gemini/settings.json", ".gemini/oauth_creds.json", ".gemini/tmp/p/chats/s.jsonl"):
        (user / rel).parent.mkdir(parents=True, exist_ok=True)
        (user / rel).write_text(rel)
    homes = {name: tmp_path / name for name in RECIPE_SANDBOX}
    envs: dict[str, dict[str, str]] = {"aider": {}, "codex": {}, "gemini": {"XDG_CACHE_HOME": str(user / "c")}}
    for name, client in RECIPE_SANDBOX.items():
        homes[name].mkdir()
        client.fill_home(homes[name], envs[name], user)
    assert _files(homes["aider"]) == [".aider.conf.yml", ".aider.model.metadata.json"]
    assert _files(homes["codex"]) == [".codex/auth.json", ".codex/config.toml"]
    assert envs["codex"] == {"CODEX_HOME": str(homes["codex"] / ".codex")}
    assert _files(homes["gemini"]) == [".gemini/oauth_creds.json", ".gemini/settings.json"]
    assert envs["gemini"] == {"XDG_CACHE_HOME": str(homes["gemini"] / ".cache")}
    # a CODEX_HOME elsewhere is read from there
    elsewhere = tmp_path / "codex-home"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text("model = 'x'\n")
    env = {"CODEX_HOME": str(elsewhere)}
    (tmp_path / "h2").mkdir()
    RECIPE_SANDBOX["codex"].fill_home(tmp_path / "h2", env, user)
    assert (tmp_path / "h2" / ".codex" / "config.toml").read_text() == "model = 'x'\n"
    assert env["CODEX_HOME"] == str(tmp_path / "h2" / ".codex")


def test_the_registry_gives_recipes_their_client(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "aider").write_text("#!/bin/sh\n")
    (bindir / "aider").chmod(0o755)
    aider, own = build_agents(["aider", "own=cmd:aider --yes"], resolve_settings(tmp_path, {}))
    assert isinstance(aider, CommandAgent) and aider.client is RECIPE_SANDBOX["aider"] and aider.trust_infra
    assert aider.sandbox_paths({"PATH": str(bindir)}) == [bindir / "aider"]
    assert isinstance(own, CommandAgent) and own.client is None and not own.trust_infra
    assert own.sandbox_paths({"PATH": str(bindir)}) == []


def test_a_recipe_whose_client_is_not_installed_is_infra_not_an_empty_patch(tmp_path: Path) -> None:
    """nu19 on andialbrecht/sqlparse: ``homefield run --agent aider`` on a machine without aider ran the
    recipe, ``sh`` said "aider: not found", the usage helper printed ``{}`` and exit status 0, and the
    attempt was a scored empty patch (aider 0%, no error shown). The client is now looked for on the
    agent's PATH first; the same recipe with it installed runs."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("sh", "tee", "rm", "cat", "echo"):
        (bindir / name).symlink_to(shutil.which(name) or f"/bin/{name}")
    ws = tmp_path / "ws"
    ws.mkdir()
    (aider,) = build_agents(["aider"], resolve_settings(tmp_path, {}))
    env = {"PATH": str(bindir), "HOMEFIELD_PROMPT": "x", "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    res = aider.run(AgentContext(workspace=ws, prompt="x", env=env, timeout_s=60, artifacts=tmp_path / "art"))
    assert (res.outcome, res.established) == ("infra", True), res
    assert res.error == "cannot start aider: not found on the agent's PATH (install it: pip install aider-chat)"
    (bindir / "aider").write_text("#!/bin/sh\necho edited > done.txt\n")
    (bindir / "aider").chmod(0o755)
    res = aider.run(AgentContext(workspace=ws, prompt="x", env=env, timeout_s=60, artifacts=tmp_path / "art2"))
    assert res.outcome is None and (ws / "done.txt").read_text() == "edited\n", res


def test_usage_aider(tmp_path: Path) -> None:
    log = tmp_path / "analytics.jsonl"
    events = [{"event": "message_send", "properties": {"main_model": "m", "prompt_tokens": 1000,
                                                        "completion_tokens": 40, "cost": 0.0036}},
              {"event": "message_send", "properties": {"main_model": "m", "prompt_tokens": 500,
                                                        "completion_tokens": 10, "cost": 0.001}}]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n{torn")
    assert usage_aider(log) == {"input_tokens": 1500, "output_tokens": 50, "cost_usd": pytest.approx(0.0046),
                                "turns": 2, "model": "m"}
    out = tmp_path / "aider.log"
    out.write_text("Tokens: ...\nlitellm.RateLimitError: RateLimitError: OpenAIException - 429 slow down\n")
    assert usage_aider(tmp_path / "missing", out)["outcome"] == "rate_limited"
    out.write_text("litellm.AuthenticationError: bad key\nApplied edit to calc.py\n")
    assert "outcome" not in usage_aider(tmp_path / "missing", out)


def test_usage_codex(tmp_path: Path) -> None:
    events = tmp_path / "codex.jsonl"
    events.write_text('{"type":"thread.started"}\n{"type":"turn.completed","usage":{"input_tokens":2300,'
                      '"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":70}}\n')
    assert usage_codex(events, {"input": 1.0, "output": 10.0, "cache_read": 0.1}) == {
        "input_tokens": 2100, "cache_read_tokens": 200, "cache_write_tokens": 0, "output_tokens": 70,
        "cost_usd": pytest.approx((2100 * 1.0 + 70 * 10.0 + 200 * 0.1) / 1e6)}
    events.write_text('{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}\n')
    assert usage_codex(events)["outcome"] == "infra"


def test_usage_gemini(tmp_path: Path) -> None:
    out, err = tmp_path / "g.json", tmp_path / "g.err"
    stats = {"models": {"gemini-x": {"api": {"totalRequests": 2},
                                     "tokens": {"input": 2100, "cached": 100, "candidates": 60, "thoughts": 10}}}}
    out.write_text("noise\n" + json.dumps({"response": "ok", "stats": stats}, indent=2))
    assert usage_gemini(out) == {"input_tokens": 2100, "cache_read_tokens": 100, "output_tokens": 70, "turns": 2,
                                 "model": "gemini-x"}
    out.write_text("")
    err.write_text('Error when talking\n{\n  "error": {"type": "Error", "message": "quota", "code": 429}\n}\n')
    assert usage_gemini(out, None, err)["outcome"] == "rate_limited"


def test_prepare_aider_seeds_the_model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = tmp_path / "venv"
    backup = venv / "lib/python3.11/site-packages/litellm/model_prices_and_context_window_backup.json"
    backup.parent.mkdir(parents=True)
    backup.write_text('{"gpt-x": {"input_cost_per_token": 1e-06}}')
    (venv / "bin").mkdir()
    (venv / "bin" / "aider").write_text(f"#!{venv}/bin/python\nimport aider\n")
    (venv / "bin" / "aider").chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv}/bin:/usr/bin:/bin")
    home = tmp_path / "home"
    assert "seeded" in prepare_aider(home)
    cache = home / ".aider/caches/model_prices_and_context_window.json"
    assert cache.read_text() == backup.read_text()
    assert "fresh" in prepare_aider(home)


def test_prepare_gemini_and_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert recipes_main(["prepare-gemini"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == tmp_path / "cache/pytest-homefield/gemini-system-settings.json"
    assert json.loads(path.read_text())["privacy"]["usageStatisticsEnabled"] is False
    assert recipes_main(["usage-codex", str(tmp_path / "none.jsonl")]) == 0
    assert capsys.readouterr().out == "{}\n"


#: The child of :func:`test_a_probe_calls_folder_is_removed_without_following_a_link`, run as uid 1000 of a user
#: namespace: two probe calls of a ``cmd:`` agent (argv: the sandbox, a victim file outside the sandbox), one
#: leaving a link to the victim in a folder it cannot be removed from, one a chain of 3,000 folders; it prints
#: each call's outcome and answer and the victim's mode after them.
LINK_CHILD = r'''
import json, os, stat, sys
from pathlib import Path
from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.probe.call_sandbox import ProbeSandboxes
from pytest_homefield.settings import resolve_settings
sandbox, victim = sys.argv[1], Path(sys.argv[2])
victim.write_text("the user's file\n")
os.chmod(victim, 0o644)
box = ProbeSandboxes(resolve_settings(victim.parent, {"sandbox": sandbox}))
got = []
for command in (f"mkdir locked && ln -s {victim} locked/link && chmod 500 locked && echo answer",
                "python3 -c 'import os\nfor _ in range(3000): os.mkdir(\"d\"); os.chdir(\"d\")' && echo answer"):
    agent = CommandAgent(name="x", spec="cmd:" + command, command=command, settings=AgentSettings())
    try:
        c = agent.complete("hi", timeout_s=60, sandbox=box)
        got.append([c.outcome, c.text])
    except Exception as exc:
        got.append(["raised", type(exc).__name__])
print(json.dumps({"calls": got, "mode": oct(stat.S_IMODE(os.stat(victim).st_mode))}))
'''


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_a_probe_calls_folder_is_removed_without_following_a_link(tmp_path: Path, sandbox: str) -> None:
    """hatk34, as any user but root (uid 1000 of a user namespace): a probe call's folder (its cwd, ``TMPDIR``
    and fresh ``HOME``, which the agent writes) was removed by ``tempfile.TemporaryDirectory``, whose clean-up,
    when an entry cannot be unlinked (in a folder the agent made ``chmod 500``), runs ``chmod(path, 0o700)`` on
    the entry, following it when it is a symlink: a link to any file of the user made that file ``0700`` on
    the host (under bubblewrap and Landlock alike; the agent never reached the file). And it recursed: a
    chain of 3,000 folders raised ``RecursionError`` out of the call (the probe records that as the agent's
    ``infra`` claim, the answer it gave lost, and retries it) and left the folder in the temp dir. Now the
    folder is removed by descriptor, no link followed, at any depth (``tempdirs.scratch``)."""
    import json
    import subprocess

    from helpers.bwrap import bwrap_works
    from helpers.landlock import landlock_abi
    from helpers.userns import as_user_1000

    from pytest_homefield.sandbox.nofollow import remove_tree

    if sandbox == "bwrap" and not bwrap_works():
        pytest.skip("no bwrap")
    if sandbox == "landlock":
        landlock_abi()
    as_user = as_user_1000()
    temp = tmp_path / "temp"
    temp.mkdir()
    for folder in (tmp_path, temp):
        folder.chmod(0o777)  # uid 1000 writes the victim and its temp folders here
    victim = tmp_path / "victim.txt"
    try:
        proc = subprocess.run([*as_user, sys.executable, "-c", LINK_CHILD, sandbox, str(victim)],
                              capture_output=True, text=True, env={**os.environ, "TMPDIR": str(temp)}, timeout=300)
        left = sorted(p.name for p in temp.iterdir())
    finally:  # what a failing run leaves (the chain of folders) would make pytest's own clean-up recurse
        remove_tree(temp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["mode"] == "0o644", got  # the user's file: never changed
    assert got["calls"] == [[None, "answer\n"], [None, "answer\n"]], got
    assert left == []
