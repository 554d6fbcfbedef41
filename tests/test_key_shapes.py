"""An API key an agent printed never reaches a reader through a result's words (ratk46).

An agent's ``error`` is its usage line's or the last line of its stderr: a client failing on
``401 invalid x-api-key sk-ant-…`` put the key in the terminal summary, report.md, report.html, the JUnit
XML and results.jsonl, which CI keeps and users share; only ``homefield view`` redacted it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.key_shapes import redact
from pytest_homefield.records import Result, Task, agent_words, load_results
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain
from pytest_homefield.store import write_jsonl_atomic

#: 108 characters, as Anthropic's keys are.
KEY = "sk-ant-api03-" + ("a1B2c3D4e5F6g7H8i9J0" * 5)[:93] + "AA"
GH = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"


def record(**words: str) -> dict[str, object]:
    return {"schema_version": 1, "run_id": "r1", "task_id": "a" * 12, "agent": "a", "attempt": 1,
            "variant": "base", "outcome": "agent_error", "solved": False, "scored": True, **words}


def test_a_results_agent_words_hold_no_key_shape() -> None:
    """Where the result is made (and so where it is written): error, model, version and reason redacted, a key
    wrapped over two lines of stderr whole, before ``model`` is cut to its 100 characters."""
    r = Result.from_dict(record(error=f"anthropic.AuthenticationError: 401 invalid x-api-key {KEY[:50]}\n{KEY[50:]}",
                                model=f"{'m' * 60} {KEY}", agent_version=f"v1 {GH}", suspicious_reason=f"read {GH}"))
    words = json.dumps(r.to_dict())
    assert KEY[20:] not in words and KEY[50:] not in words and GH[8:] not in words
    assert r.error == "anthropic.AuthenticationError: 401 invalid x-api-key [redacted sk-ant-…] "
    assert r.model == f"{'m' * 60} [redacted sk-ant-…]"
    assert (r.agent_version, r.suspicious_reason) == ("v1 [redacted ghp_…]", "read [redacted ghp_…]")


def test_an_older_records_key_is_redacted_in_every_report(tmp_path: Path) -> None:
    """A results.jsonl written before holds the key as the agent printed it: read back, no report shows it."""
    run = tmp_path / "r1"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-12-01T10:00:00+00:00",
                                               "agents": [{"name": "a", "spec": "cmd:x"}], "attempts": 1,
                                               "task_ids": ["a" * 12]}))
    write_jsonl_atomic(run / "results.jsonl", [record(error=f"401 invalid x-api-key {KEY}")])
    assert [r.error for r in load_results(run / "results.jsonl")] == ["401 invalid x-api-key [redacted sk-ant-…]"]
    t = Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode="commit",
             subject="Fix it", message="Fix it", prompt="Fix it", source_files=[], test_files=["tests/t.py"],
             test_patch="", gold_patch="", FAIL_TO_PASS=["tests/t.py::test_x"], PASS_TO_PASS=[])
    report = build_report([run], [t])
    for render in (render_text_plain, render_markdown, render_html):
        out = render(report)
        assert "[redacted sk-ant-" in out, render.__name__  # the error line is shown, its key not
        assert KEY[20:] not in out, render.__name__


@pytest.mark.parametrize("text", ["sk-learn and task-key", "model claude-sonnet-4-5", "no such file"])
def test_words_without_a_key_are_kept(text: str) -> None:
    assert Result.from_dict(record(error=text, model=text)).error == text


def test_agent_words_redact_before_the_cut() -> None:
    """A key near the limit is redacted whole before the words are cut: cut first, its head (``sk-ant-api03``)
    would be too short for any shape and shown (a probe record's ``model`` and ``error`` are made so too)."""
    assert agent_words("x" * 80 + " " + KEY, 100) == "x" * 80 + " [redacted sk-ant-…]"
    assert agent_words("x" * 80 + " sk-ant-api03-ab", 100) == "x" * 80 + " sk-ant-api03-ab"  # no key shape: kept


@pytest.mark.parametrize("key", [KEY, GH, "github_pat_" + "11ABCDEFG" * 3, "AKIAIOSFODNN7EXAMPLE",
                                 "ASIAIOSFODNN7EXAMPLE", "AIza" + "S" * 35, "xoxb-1234567890-abcdefghij",
                                 "sk-" + "q" * 40])
def test_every_shape_passes_the_quick_check(key: str) -> None:
    """The substring check that lets most texts through without a regular expression misses no shape."""
    assert redact(f"x {key} y").count("[redacted") == 1
    assert redact(f"x {key}\ny").count("[redacted") == 1


@pytest.mark.parametrize("word", ["Bearer", "bearer", "BEARER"])
def test_a_bearer_token_passes_the_quick_check(word: str) -> None:
    assert redact(f"Authorization: {word} abcdefgh12345") == f"Authorization: {word} [redacted token]"


@pytest.mark.parametrize(("line", "shown"), [
    ("Authorization: Bearer abcdefgh\\/ijklmnop\\/qrstuvwx==", "Authorization: Bearer [redacted token]"),
    ('{"h":"Bearer\\u0020eyJhbGciOiJIUzI1NiJ9.e30.sig"}', '{"h":"Bearer\\u0020[redacted token]"}'),
    ("Bearer \\u0041bcdefghijkl\\u003d", "Bearer [redacted token]"),
    ("GET /?auth=Bearer%20abcd%2Fefghijkl%3D%3D HTTP/1.1", "GET /?auth=Bearer%20[redacted token] HTTP/1.1"),
    ("auth=Bearer+abcdefgh12345&x=1", "auth=Bearer+[redacted token]&x=1"),
])
def test_a_bearer_token_written_with_escapes_is_redacted(line: str, shown: str) -> None:
    """ratk48's left item: a JSON text may write a token's ``/`` as ``\\/`` and any character as ``\\u00XX``, a
    URL as ``%XX``: the token's head before the first escape was redacted and the rest shown (or, with the space
    escaped, all of it)."""
    assert redact(line) == shown


def test_a_key_written_with_json_escapes_is_redacted() -> None:
    """ratk48: an agent's stderr line of JSON text (a client's error body, a JSON log) may write any character of a
    key as ``\\u00XX`` and a key its client wrapped as ``\\n``: the key's head ended at the backslash, too short for
    any shape, and the whole key reached every report. Each run of key characters and such escapes is decoded
    where the result is made; one holding a key is its marker, any other is kept as written."""
    escaped = KEY[:13] + "".join(f"\\u{ord(c):04x}" for c in KEY[13:16]) + KEY[16:]
    lines = {
        f'{{"error":"invalid x-api-key {escaped}"}}': '{"error":"invalid x-api-key [redacted sk-ant-…]"}',
        f'{{"e":"\\u0073k-ant-{KEY[7:]}\\u0022"}}': '{"e":"[redacted sk-ant-…]\\u0022"}',
        # the wrap's break kept, as a wrapped key's is
        f'{{"log":"key {KEY[:60]}\\n{KEY[60:]}\\nnext"}}': '{"log":"key [redacted sk-ant-…]\\n\\nnext"}',
        f'{{"t":"{GH[:20]}\\r\\n{GH[20:]}"}}': '{"t":"[redacted ghp_…]\\n"}',
    }
    for line, shown in lines.items():
        r = Result.from_dict(record(error=line, model=line))
        assert (r.error, redact(line)) == (shown, shown)
        assert KEY[20:40] not in json.dumps(r.to_dict()) and GH[8:] not in json.dumps(r.to_dict())


@pytest.mark.parametrize("text", ['print("\\u0041\\n")', 'x = "sk-learn\\nfoo"', "a\\\\nb sk-\\u0041",
                                  '{"k":"KEY\\u002dvalue\\r\\n"}'])
def test_escapes_without_a_key_are_kept_as_written(text: str) -> None:
    assert redact(text) == text and Result.from_dict(record(error=text)).error == text


def test_a_key_wrapped_over_an_agents_last_lines_is_redacted_whole(tmp_path: Path) -> None:
    """ratk48: the error line is taken from the agent's output before the result is made, and the taking broke a
    key its client wrapped: a command's exit error and claude's took the last line of stderr alone (the key's
    tail, 58 characters, no shape left), a usage line's ``error`` was joined into one line (the key's head
    redacted, its tail shown after it), and so was a recipe helper's line of its client's error. Each is now
    redacted before its lines are taken or joined."""
    from pytest_homefield.agents.claude import _last_line
    from pytest_homefield.agents.cmd_agent import exit_error, parse_usage_line
    from pytest_homefield.agents.recipes import _one_line as recipe_line

    err = f"anthropic.AuthenticationError: 401 invalid x-api-key {KEY[:50]}\n{KEY[50:]}\n"
    (tmp_path / "agent.err").write_text(err)
    usage = parse_usage_line(json.dumps({"error": err, "cost_usd": 0.1}))
    lines = [exit_error(1, err.splitlines()), _last_line(tmp_path / "agent.err"), usage["error"],
             recipe_line(err)]  # the line a recipe's helper writes of its client's error (aider's, codex's, gemini's)
    for line in lines:
        words = Result.from_dict(record(error=line)).error
        assert words is not None and KEY[50:] not in words and "[redacted sk-ant-…]" in words, line
    assert lines[0] == "command exited 1: anthropic.AuthenticationError: 401 invalid x-api-key [redacted sk-ant-…]"
