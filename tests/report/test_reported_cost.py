"""A cost homefield did not measure decides no order (issue 30, atk23): a ``cmd:`` agent's cost is the number
on its own usage line, so one that claims $0 won the ranking's tie-break on cost per solved task against an
agent of equal pass@1. A cost is measured only for the kinds of ``report/family.py`` ``MEASURED_COST_KINDS``
(docs/contracts.md §8); any other is labelled "reported by the agent" wherever it is shown, and a tie breaks on
cost only where every agent of the tie has a measured cost."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.report_tasks import plain_task

from pytest_homefield.records import Result
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.view import build_site

IDS = [f"t{i:02d}" for i in range(10)]


def _run(folder: Path, agents: dict[str, tuple[str, float]], solved: int = 6) -> Path:
    """A run of :data:`IDS` × 1 attempt where every agent solves the first ``solved`` tasks: ``agents``
    {name: (spec, cost_usd of each attempt)}."""
    folder.mkdir()
    lines = [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, solved=i < solved, cost_usd=usd,
                    outcome="solved" if i < solved else "tests_failed")
             for a, (_spec, usd) in agents.items() for i, t in enumerate(IDS)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in lines))
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "attempts": 1, "task_ids": IDS,
                                                  "agents": [{"name": a, "spec": spec}
                                                             for a, (spec, _usd) in agents.items()]}))
    return folder


def test_an_agent_claiming_zero_cost_does_not_win_the_tie_break(tmp_path: Path) -> None:
    """Two agents solve the same 6 of 10 tasks; ``zero`` prints ``{"cost_usd": 0}`` on every attempt, ``paid``
    reports 0.12 USD. On main ``zero`` ranked first ($0 per solved against $0.20); now the tie breaks on the
    name, and both costs say whose word they are."""
    report = build_report([_run(tmp_path / "r", {"paid": ("cmd:paid", 0.12), "zero": ("cmd:zero", 0.0)})],
                          [plain_task(t) for t in IDS])
    agents = report["agents"]
    assert agents["paid"]["pass_at_1"] == agents["zero"]["pass_at_1"] == 0.6
    assert (agents["paid"]["rank"], agents["zero"]["rank"]) == (1, 2), {n: a["rank"] for n, a in agents.items()}
    assert agents["zero"]["cost_usd"] == 0.0 and agents["zero"]["cost_reported"] == "reported by the agent"
    assert agents["paid"]["cost_reported"] == "reported by the agent"
    assert "its cost is reported by the agent (its own output, which homefield cannot check), not measured by " \
           "homefield; it breaks no tie in the ranking." in " ".join(report["notes"])
    assert headline(Report.from_dict(report)).endswith("cost known for 1 of 2 agents (reported by the agent).")
    for doc in (render_markdown(report), render_html(report)):
        assert "$0.000 (reported by the agent)" in doc.replace("\\$", "$")
        assert "$0.200 (reported by the agent)" in doc.replace("\\$", "$")  # paid's cost per solved
    assert "cost of paid, zero: reported by the agent, not measured by homefield; it breaks no tie" in \
        render_text_plain(report, verbose=False)
    # a cost homefield measures (the reference agents': 0, no model) carries no label, and the leaderboard's
    # footnote explains the label only where a cost carries it
    measured = build_report([_run(tmp_path / "m", {"oracle": ("oracle", 0.0), "sim": ("sim:0.5", 0.0)})],
                            [plain_task(t) for t in IDS])
    assert "cost_reported" not in measured["agents"]["oracle"] and "cost_reported" not in measured["agents"]["sim"]
    for doc in (render_markdown(measured), render_html(measured)):
        assert "reported by the agent" not in doc
    for doc in (render_markdown(report), render_html(report)):
        assert "reported by the agent*: its own output" in doc or "reported by the agent: its own output" in doc
    # one reported cost in a tie is enough to leave cost out of it: the measured agent does not win on it either
    mixed = build_report([_run(tmp_path / "x", {"zz": ("openai:m", 0.01), "aa": ("cmd:c", 0.5)})],
                         [plain_task(t) for t in IDS])
    assert (mixed["agents"]["aa"]["rank"], mixed["agents"]["zz"]["rank"]) == (1, 2)


def test_the_view_labels_a_cost_the_agent_reported(tmp_path: Path) -> None:
    """``homefield view``: the attempt page's Cost row and the task page's attempt line say "reported by the
    agent" for a cmd: agent's cost, and nothing for the oracle's."""
    run = _run(tmp_path / "r", {"zero": ("cmd:zero", 0.0), "oracle": ("oracle", 0.0)})
    site = tmp_path / "site"
    build_site([run], [plain_task(t) for t in IDS], site)
    attempt = (site / "attempts" / "t00--zero--1.html").read_text()
    assert "<th>Cost</th><td>$0.000 (reported by the agent)</td>" in attempt, attempt
    assert "<th>Cost</th><td>$0.000</td>" in (site / "attempts" / "t00--oracle--1.html").read_text()
    task = (site / "tasks" / "t00.html").read_text()
    assert task.count("$0.000 (reported by the agent)") == 1


def test_the_hosts_own_seconds_are_reported_next_to_the_agents(tmp_path: Path) -> None:
    """host30: an attempt's ``host_s`` (homefield's own seconds outside the agent and the test runs) has its
    p50/p95 in the JSON, the Markdown and HTML leaderboards and the terminal's, next to the wall times; a run
    recorded before ``host_s`` shows no such column and no such key."""
    folder = _run(tmp_path / "r", {"a": ("cmd:a", 0.0)})
    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    for i, line in enumerate(lines):
        line.update(wall_s=2.0, host_s=10.0 + 10 * i)
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = build_report([folder], [plain_task(t) for t in IDS])
    a = report["agents"]["a"]
    assert (a["host_s_p50"], a["host_s_p95"]) == (55.0, 95.5)
    md, html = render_markdown(report), render_html(report)
    assert "p50 host" in md and "p95 host" in md and "| 55s | 96s |" in md.replace("  ", " "), md
    assert "p50 host" in html and ">96s<" in html
    assert "host p50/p95" in render_text_plain(report, verbose=False)
    old = build_report([_run(tmp_path / "old", {"a": ("cmd:a", 0.0)})], [plain_task(t) for t in IDS])
    assert "host_s_p50" not in old["agents"]["a"]
    assert "p50 host" not in render_markdown(old) and "host p50/p95" not in render_text_plain(old, verbose=False)


def test_token_sums_stay_within_what_a_record_may_hold(tmp_path: Path) -> None:
    """xatk31: each attempt's token count is the agent's word up to 2^63−1 (``agents/base.py`` ``MAX_COUNT``), but
    the report summed them unbounded: a ``cmd:`` agent printing the largest count on 10 attempts made
    ``report.json``'s totals 92233720368547758070, which no int64 or uint64 reader (Go, Rust, Java) can parse:
    the whole report was lost to them, every agent's row with it. A sum saturates at ``MAX_COUNT``."""
    from pytest_homefield.records import MAX_COUNT
    from pytest_homefield.report.formats import render_json

    folder = _run(tmp_path / "r", {"big": ("cmd:big", 0.0), "fair": ("cmd:fair", 0.1)})
    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    for line in lines:
        n = MAX_COUNT if line["agent"] == "big" else 1000
        line.update(input_tokens=n, output_tokens=n, cache_read_tokens=n, cache_write_tokens=n)
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    agents = json.loads(render_json(build_report([folder], [plain_task(t) for t in IDS])))["agents"]
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    assert [agents["big"][k] for k in keys] == [MAX_COUNT] * 4, agents["big"]
    assert [agents["fair"][k] for k in keys] == [10_000] * 4  # an honest sum is unchanged


def test_the_cost_of_an_attempt_counts_every_try_of_it(tmp_path: Path) -> None:
    """xatk31: the report's cost summed the last record of each attempt, though it means to count unscored
    attempts too ("the money was spent"): a try that spent 9 USD and claimed a rate limit, tried again by
    ``--resume`` for 0.01 USD, left 0.01 USD in the agent's cost and cost per solved. Every try of it counts;
    the same key in two folders (shards, reconciled as one) is one try."""
    folder = _run(tmp_path / "r", {"a": ("openai:m", 0.01)}, solved=10)
    tried = Result(run_id="r", task_id=IDS[0], agent="a", attempt=1, outcome="rate_limited", cost_usd=9.0,
                   error="429", started_at="2026-01-01T10:00:00+00:00", finished_at="2026-01-01T10:05:00+00:00")
    lines = (folder / "results.jsonl").read_text()
    (folder / "results.jsonl").write_text(json.dumps(tried.to_dict()) + "\n" + lines)
    a = build_report([folder], [plain_task(t) for t in IDS])["agents"]["a"]
    assert (a["cost_usd"], a["cost_per_solved_usd"]) == (9.1, 0.91), a
    assert a["solved"] == 10 and a.get("incomplete") is None  # the retry's record is still the attempt's result


def test_numbers_recorded_before_the_check_are_read_as_unknown(tmp_path: Path) -> None:
    """xatk31 left: results written before ``believable`` held the agent's numbers (``890014a``) were summed as
    they stood, so an old line's −2,000 USD cost made its agent the cheapest (first of a tie on cost per solved),
    and a negative token count lowered its total. A record's numbers are checked where it is read too: the old
    line's cost and counts are unknown, as a new record of the same claim would say; and a cost with attempts
    left out breaks no tie (it would be cheaper by what it hid), so the tie breaks on the name."""
    folder = _run(tmp_path / "r", {"fair": ("openai:fair", 0.1), "sly": ("openai:sly", 0.1)})
    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    for line in lines:
        line.update(input_tokens=100, output_tokens=10)
        if line["agent"] == "sly" and line["task_id"] == IDS[0]:
            line.update(cost_usd=-2000.0, input_tokens=-10**9, output_tokens=2**64, turns=-1)
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = Result.from_dict(next(x for x in lines if x["agent"] == "sly" and x["task_id"] == IDS[0]))
    assert (read.cost_usd, read.input_tokens, read.output_tokens, read.turns) == (None, None, None, None)
    agents = build_report([folder], [plain_task(t) for t in IDS])["agents"]
    assert (agents["fair"]["cost_usd"], agents["fair"]["input_tokens"]) == (1.0, 1000), agents["fair"]
    assert (agents["sly"]["cost_usd"], agents["sly"]["cost_missing"]) == (0.9, 1), agents["sly"]
    assert (agents["sly"]["input_tokens"], agents["sly"]["output_tokens"]) == (900, 90), agents["sly"]
    # 6 of 10 each: "sly" was first on a cost per solved that leaves out the attempt it hid (0.15 against 0.167 USD);
    # now the tie breaks on the name
    assert (agents["fair"]["rank"], agents["sly"]["rank"]) == (1, 2)


def test_an_openai_servers_token_counts_are_its_own_words(tmp_path: Path) -> None:
    """ratk54: an ``openai:`` cost was "measured" (it broke ranking ties) though it is homefield's pricing of the
    counts the server writes in its ``usage``, and the server is the model under test (§8). Two scripted servers on
    127.0.0.1 send the same fixing reply; ``zz`` says it used no tokens (``usage`` 0 and 0, in range, so read as
    written), ``aa`` what it used. Both solve the same 6 of 10: on main ``zz`` ranked first on cost per solved ($0
    against $0.025), its cost shown as homefield's own; now the tie breaks on the name and both costs say whose
    word they are."""
    from helpers.fakeapi.openai_chat import openai_chat_server
    from helpers.fakeapi.workspace import FIXED, make_calc_repo

    from pytest_homefield.agents.base import AgentContext, AgentSettings, render_prompt
    from pytest_homefield.agents.environment import build_agent_env
    from pytest_homefield.agents.openai_compat import OpenAIAgent

    reply = "```calc.py\n" + FIXED + "```\n"
    costs: dict[str, float | None] = {}
    for name, usage in (("aa", {"input_tokens": 3000, "output_tokens": 400}),
                        ("zz", {"input_tokens": 0, "output_tokens": 0})):
        workspace = make_calc_repo(tmp_path / f"ws-{name}")
        with openai_chat_server([{"text": reply, "usage": usage}]) as server:
            agent = OpenAIAgent(name=name, spec="openai:coder", model="coder", settings=AgentSettings(
                base_url=server.url + "/v1", prices={"coder": {"input": 3.0, "output": 15.0}}))
            prompt = render_prompt("Fix add() in calc.py: it subtracts.", allow_shell=False)
            env = build_agent_env(prompt=prompt, attempt=1, tmpdir=tmp_path / f"tmp-{name}",
                                  passthrough=agent.env_passthrough, source={"PATH": "/usr/bin:/bin",
                                                                             "HOME": str(tmp_path)})
            res = agent.run(AgentContext(workspace=workspace, prompt=prompt, env=env, timeout_s=20,
                                         artifacts=tmp_path / f"art-{name}", hint_files=["calc.py"]))
        assert res.outcome is None and (workspace / "calc.py").read_text() == FIXED, res
        costs[name] = res.cost_usd
    assert costs == {"aa": 0.015, "zz": 0.0}, costs  # homefield priced what each server said
    report = build_report([_run(tmp_path / "r", {n: ("openai:coder", c or 0.0) for n, c in costs.items()})],
                          [plain_task(t) for t in IDS])
    agents = report["agents"]
    assert agents["aa"]["pass_at_1"] == agents["zz"]["pass_at_1"] == 0.6
    assert (agents["aa"]["rank"], agents["zz"]["rank"]) == (1, 2), {n: a["rank"] for n, a in agents.items()}
    assert agents["zz"]["cost_reported"] == agents["aa"]["cost_reported"] == "reported by the agent"
    assert "$0.000 (reported by the agent)" in render_markdown(report).replace("\\$", "$")
