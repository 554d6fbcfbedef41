"""The viewer's plain parts: redaction and caps, the diff highlighter, the transcript parsers, and what
an attempt's artifacts say (outcome events, failure sections of a real pytest log).

The claude transcripts here are the REAL CLI's output (tests/view/test_site.py runs it against the
scripted API and checks the parser on that); the codex, gemini and aider samples follow the formats
observed with the real clients (/work/shared/reference/agent-clients.md), whose installs are opt-in
(``-m clients``)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pytest_homefield.records import Result, Task
from pytest_homefield.view.attempt_files import AttemptFiles, failure_sections, headline_of, id_statuses, read_capped
from pytest_homefield.view.attempt_page import render_attempt
from pytest_homefield.view.common import PAGE_BUDGET, Nav
from pytest_homefield.view.data import AttemptRef
from pytest_homefield.view.highlight import diff_files, diff_html, diff_stats
from pytest_homefield.view.redact import cap, redact
from pytest_homefield.view.site import make_server
from pytest_homefield.view.task_page import render_task
from pytest_homefield.view.transcript import parse_transcript

ANT = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 3
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"


def test_redact_key_shapes_and_keeps_lookalikes() -> None:
    text = (f"ANTHROPIC_API_KEY={ANT}\nOPENAI_API_KEY={OPENAI} and sk-{'q' * 40}\n"
            "aws AKIAIOSFODNN7EXAMPLE id\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig\n"
            "google AIza" + "S" * 35 + "\ngh ghp_" + "x" * 36 + "\n"
            "keep: sk-learn, task-key, test-key, risk-averse, AKIA short, bearer of news")
    out = redact(text)
    for secret in (ANT, OPENAI, "sk-" + "q" * 40, "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9.payload.sig",
                   "AIza" + "S" * 35, "ghp_" + "x" * 36):
        assert secret not in out
    assert "[redacted sk-ant-…]" in out and "[redacted sk-…]" in out and "[redacted AKIA…]" in out
    assert "Bearer [redacted token]" in out
    assert "keep: sk-learn, task-key, test-key, risk-averse, AKIA short, bearer of news" in out
    assert redact("nothing here") == "nothing here"


def test_cap_cuts_at_a_line_with_a_marker() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    short, left = cap(text, 100, where="agent.out")
    assert left > 0 and short.startswith("line 0\n") and short.count("\n") < 30
    assert short.rstrip().endswith("characters more not shown; the whole text is in agent.out]")
    assert cap("small", 100, where="x") == ("small", 0)


DIFF = """diff --git a/calc/__init__.py b/calc/__init__.py
index c35b171..5d8371e 100644
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -8,3 +8,7 @@ def mul(a, b):
 def sub(a, b):
-    return a + b
+    return a - b
+# <script>alert(1)</script>
\\ No newline at end of file
"""


def test_diff_html_classes_every_line_and_escapes() -> None:
    html = diff_html(DIFF)
    assert html.count('<span class="df">') == 4  # diff --git, index, ---, +++ (not a removed/added line)
    assert '<span class="dh">@@ -8,3 +8,7 @@</span><span class="dn"> def mul(a, b):</span>' in html
    assert '<span class="dd">-    return a + b</span>' in html
    assert '<span class="da">+    return a - b</span>' in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<span class="dm">' in html
    assert diff_stats(DIFF) == (1, 2, 1)
    assert diff_files(DIFF) == ["calc/__init__.py"]


CODEX = "\n".join(json.dumps(x) for x in [
    {"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "look at calc"}},
    {"type": "item.started", "item": {"id": "i1", "type": "command_execution", "command": "bash -lc cat calc.py"}},
    {"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "bash -lc cat calc.py",
                                        "aggregated_output": "def add(a, b):\n    return a - b\n", "exit_code": 0,
                                        "status": "completed"}},
    {"type": "item.completed", "item": {"id": "i2", "type": "file_change",
                                        "changes": [{"path": "calc.py", "kind": "update"}], "status": "completed"}},
    {"type": "item.completed", "item": {"id": "i3", "type": "agent_message", "text": "Fixed: add returns a + b."}},
    {"type": "turn.completed", "usage": {"input_tokens": 2100, "cached_input_tokens": 200, "output_tokens": 70}},
]) + '\n\n{"input_tokens": 1900, "cache_read_tokens": 200, "output_tokens": 70}\n'


def test_codex_events() -> None:
    t = parse_transcript(CODEX, spec="cmd:codex exec --json …")
    assert t.format == "codex json"
    kinds = [(e.kind, e.title) for e in t.entries]
    assert ("tool_call", "shell") in kinds and ("tool_call", "apply_patch") in kinds
    assert [e.text for e in t.entries if e.kind == "tool_result"][0].startswith("def add")
    assert t.entries[-1].kind == "usage" and t.entries[-1].title == "usage line"
    assert any(e.kind == "assistant" and "Fixed" in e.text for e in t.entries)
    assert t.tool_calls == 2


GEMINI = json.dumps({"session_id": "s", "response": "Fixed: add now returns a + b.", "stats": {
    "models": {"gemini-2.5-flash": {"api": {"totalRequests": 2, "totalErrors": 0},
                                    "tokens": {"input": 2000, "prompt": 2100, "candidates": 70, "cached": 100}}},
    "tools": {"totalCalls": 1, "byName": {"replace": {"count": 1, "success": 1, "fail": 0}}},
    "files": {"totalLinesAdded": 1, "totalLinesRemoved": 1}}}, indent=2) + '\n\n{"input_tokens": 2000}\n'


def test_gemini_json_stats() -> None:
    t = parse_transcript(GEMINI)
    assert t.format == "gemini json"
    assert [(e.kind, e.title) for e in t.entries if e.kind == "tool_call"] == [("tool_call", "replace")]
    assert any(e.kind == "assistant" and "a + b" in e.text for e in t.entries)
    assert any(e.kind == "usage" and e.title == "gemini-2.5-flash" for e in t.entries)
    err = parse_transcript(json.dumps({"session_id": "s", "error": {"type": "Error", "message": "401", "code": 401}}))
    assert err.format == "gemini json" and err.entries[-1].is_error


AIDER = """Aider v0.86.2
Model: openai/fake-model with diff edit format
Git repo: .git with 1 files
Added calc.py to the chat.

I will fix the bug.

calc.py
```python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
```

Tokens: 1.0k sent, 40 received. Cost: $0.0036 message, $0.0036 session.
Applied edit to calc.py

{"input_tokens": 1000, "output_tokens": 40, "cost_usd": 0.0036}
"""


def test_aider_stdout() -> None:
    t = parse_transcript(AIDER)
    assert t.format == "aider"
    calls = [e for e in t.entries if e.kind == "tool_call"]
    assert len(calls) == 1 and calls[0].title == "edit calc.py" and "+    return a + b" not in calls[0].text
    assert ">>>>>>> REPLACE" in calls[0].text
    assert any(e.kind == "assistant" and e.text == "I will fix the bug." for e in t.entries)
    assert any(e.kind == "tool_result" and "Applied edit to calc.py" in e.text for e in t.entries)
    assert t.entries[-1].kind == "usage"


def test_plain_stdout_and_empty() -> None:
    t = parse_transcript("hello\nworld\n")
    assert t.format == "stdout" and t.entries[0].text == "hello\nworld"
    assert parse_transcript("").format == "empty"
    assert parse_transcript('{"cost_usd": 0.5}\n').entries[0].kind == "usage"


#: One JSON line nested deeper than the decoder goes (what an attack agent prints, atk19).
DEEP = '{"type":"x","a":' + "[" * 100_000 + "]" * 100_000 + "}"


def test_a_line_nested_past_the_decoder_is_shown_not_raised(tmp_path: Path) -> None:
    """atk19: an agent that printed one JSON line nested 100,000 deep made ``homefield view`` of its run exit
    with a ``RecursionError`` traceback: no page of any attempt. Now the line is an ordinary line of output,
    alone (the pretty-printed-object path), among a claude stream (the joined parse) or as a ``cmd:`` agent's
    output; the attempt page is built."""
    alone = parse_transcript(DEEP + "\n")
    assert alone.format == "stdout" and alone.entries[0].text == DEEP
    stream = parse_transcript('{"type":"system","subtype":"init","session_id":"s","model":"m"}\n' + DEEP + "\n"
                              '{"type":"result","is_error":false,"result":"done","num_turns":1}\n')
    assert stream.format == "claude stream-json" and stream.entries[-1].kind == "result"
    art = tmp_path / "art"
    art.mkdir()
    (art / "agent.out").write_text("working\n" + DEEP + "\n")
    (art / "outcomes.jsonl").write_text(DEEP + "\n")  # json_lines: joined, then line by line
    result = Result(run_id="r", task_id="abc123abc123", agent="cmd", attempt=1, outcome="tests_failed")
    page, _ = render_attempt(AttemptRef(result, art, {}), _task(), "cmd:./agent", Nav("../index.html"))
    assert "working" in page and "[[[[" in page
    assert "Host time" not in page  # a record made before host_s has none to show
    timed = dataclasses.replace(result, wall_s=1.8, test_s=2.7, host_s=87.2)  # host30: where the 91.7 s went
    page, _ = render_attempt(AttemptRef(timed, art, {}), _task(), "cmd:./agent", Nav("../index.html"))
    assert "<tr><th>Host time (homefield's copies, diff, clean-up)</th><td>87s</td></tr>" in page, page


def test_output_in_no_shape_of_its_format_is_shown_not_raised() -> None:
    """esc30: ``parse_transcript`` says it never raises, yet two lines a ``cmd:`` agent printed (an init line,
    then a list where claude's ``message`` goes) and a result line whose cost is too large for a float made
    ``homefield view`` of the run exit with a traceback. Now such output is shown as the text it is."""
    init = '{"type":"system","subtype":"init","session_id":"s","model":"m"}'
    for text in (f'{init}\n{{"type":"assistant","message":[1]}}\n',
                 '{"type":"result","is_error":false,"total_cost_usd":1' + "0" * 400 + "}\n",
                 '{"type":"item.completed","item":[1]}\n'):
        t = parse_transcript(text, spec="cmd:./agent")
        assert t.format == "stdout" and t.entries[0].text == text.strip("\n")


def _real_pytest_run(tmp_path: Path) -> tuple[str, str]:
    """(tests.log, outcomes-like events) of a real pytest run of a failing, a passing and an erroring test."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('setup broke')\n\n"
        "class TestCalc:\n    def test_add(self):\n        assert 1 + 1 == 3\n\n"
        "def test_ok():\n    pass\n\ndef test_err(broken):\n    pass\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # a lean pytest: 0.3 s, not 1 s
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_x.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    return proc.stdout, ""


def test_failure_sections_of_a_real_pytest_log(tmp_path: Path) -> None:
    log, _ = _real_pytest_run(tmp_path)
    sections = failure_sections(log)
    assert "assert 1 + 1 == 3" in sections[headline_of("test_x.py::TestCalc::test_add")]
    assert "setup broke" in sections[headline_of("test_x.py::test_err")]
    assert "test_ok" not in sections


def test_statuses_from_reporter_events() -> None:
    ev = [{"event": "start", "pid": 1},
          {"event": "phase", "nodeid": "t.py::a", "when": "setup", "outcome": "passed"},
          {"event": "phase", "nodeid": "t.py::a", "when": "call", "outcome": "failed", "message": "boom"},
          {"event": "phase", "nodeid": "t.py::b", "when": "setup", "outcome": "failed", "message": "fixture"},
          {"event": "phase", "nodeid": "t.py::c", "when": "call", "outcome": "passed", "duration": 0.5},
          {"event": "phase", "nodeid": "t.py::d", "when": "setup", "outcome": "skipped", "message": "no"},
          {"event": "collect_error", "nodeid": "u.py", "message": "ImportError"},
          {"event": "finish", "exitstatus": 1}]
    statuses, collect, finished = id_statuses("\n".join(json.dumps(x) for x in ev) + "\n{torn")
    assert {k: v.status for k, v in statuses.items()} == {"t.py::a": "failed", "t.py::b": "error",
                                                          "t.py::c": "passed", "t.py::d": "skipped"}
    assert statuses["t.py::a"].message == "boom" and statuses["t.py::c"].duration == 0.5
    assert collect == [("u.py", "ImportError")] and finished


def test_a_scopes_failed_teardown_shows_on_every_one_of_its_ids() -> None:
    """gatk50: a module's failed teardown (``torn``) is every one of its ids' in the attempt's page, as grading reads
    it; another module's ids and a ``torn`` naming no scope around the reporting id are left as they are."""
    def ph(nodeid: str, teardown: str = "passed", **extra: object) -> list[dict[str, object]]:
        return [{"event": "phase", "nodeid": nodeid, "when": "call", "outcome": "passed"},
                {"event": "phase", "nodeid": nodeid, "when": "teardown", "outcome": teardown, **extra}]
    ev = [{"event": "start", "pid": 1}, *ph("t.py::a"), *ph("t.py::b", "failed", torn=["t.py", "u.py"]),
          *ph("u.py::c"), *ph("v.py::d", "failed", torn=["u.py"]), {"event": "finish", "exitstatus": 1}]
    statuses, _, _ = id_statuses("\n".join(json.dumps(x) for x in ev) + "\n")
    assert {k: v.status for k, v in statuses.items()} == {"t.py::a": "error", "t.py::b": "error", "u.py::c": "passed",
                                                          "v.py::d": "error"}
    assert statuses["t.py::a"].message == "the teardown of its scope failed"


def test_artifacts_are_read_capped_and_never_through_a_link(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    (art / "agent.out").write_text("x" * 5000)
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    (art / "diff.patch").symlink_to(secret)
    (art / "canaries.json").write_text('{"seed": 7, "canaries": []}')
    (art / "dropped.txt").write_text("")
    files = AttemptFiles.read(art)
    assert files.agent_out == "x" * 5000 and files.sizes["agent.out"] == 5000
    assert files.diff is None  # a link is not followed
    assert files.canaries == {"seed": 7, "canaries": []}
    assert files.others == ["dropped.txt"]
    assert read_capped(art / "agent.out", 10) == ("x" * 10, 5000)


def test_a_gradings_runs_are_read_in_the_order_it_made_them(tmp_path: Path) -> None:
    """The sealed run first (``sealed.log``, §7 "Sealed sites"), the twin runs by number, then the confirmation run,
    its run on the parent, and the run of the rows set apart (``rows.log``, §7); the originals run (gatk37) after the
    twin runs; the attempt page names each."""
    art = tmp_path / "art"
    art.mkdir()
    for name in ("rows", "confirm-parent", "twin-10", "sealed", "confirm", "originals", "twin-2"):
        (art / f"{name}.log").write_text(f"log of {name}\n")
    (art / "rows.outcomes.jsonl").write_text('{"event": "finish"}\n')
    files = AttemptFiles.read(art)
    assert [r.name for r in files.runs] == ["sealed", "twin-2", "twin-10", "originals", "confirm", "confirm-parent",
                                            "rows"]
    assert files.runs[-1].log == "log of rows\n" and files.runs[-1].outcomes == '{"event": "finish"}\n'
    assert files.others == []
    result = Result(run_id="r", task_id="abc123abc123", agent="cmd", attempt=1, outcome="regression")
    page, _ = render_attempt(AttemptRef(result, art, {}), _task(), "cmd:./agent", Nav("../index.html"))
    assert "run of the rows set apart, with the test files unmodified" in page and "twin run 10" in page
    assert "sealed run, the sealed expected values in no file of it (made first)" in page
    assert "originals run, the hidden tests as written with no twin" in page


def _task(**kw: object) -> Task:
    base: dict[str, object] = dict(
        id="abc123abc123", commit="a" * 40, parent="b" * 40, committed_at="2026-01-01T00:00:00+00:00",
        authored_at="2026-01-01T00:00:00+00:00", mode="commit", subject="Fix add", message="Fix add",
        prompt="Fix add", source_files=["calc.py"], test_files=["tests/test_calc.py"], test_patch="",
        gold_patch=DIFF, FAIL_TO_PASS=["tests/test_calc.py::test_add"],
        PASS_TO_PASS=["tests/test_calc.py::test_mul", "tests/test_calc.py::test_div"])
    base.update(kw)
    return Task(**base)  # type: ignore[arg-type]


def test_attempt_page_redacts_caps_and_shows_regressions(tmp_path: Path) -> None:
    """A whole attempt page from an artifacts folder: a key in the transcript, the prompt and the diff is
    redacted; a 3 MB agent.out is capped with a marker and the page stays under the budget; a failed
    PASS_TO_PASS id is listed as a regression with its failure text from tests.log."""
    art = tmp_path / "art"
    art.mkdir()
    (art / "prompt.txt").write_text(f"Fix add. Use key {ANT}\n")
    (art / "agent.out").write_text(f"export OPENAI_API_KEY={OPENAI}\n" + ("noise " * 20 + "\n") * 25_000)
    bearer = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig"
    (art / "diff.patch").write_text(DIFF.replace("<script>alert(1)</script>", bearer))
    ev = [{"event": "phase", "nodeid": "tests/test_calc.py::test_add", "when": "call", "outcome": "passed"},
          {"event": "phase", "nodeid": "tests/test_calc.py::test_mul", "when": "call", "outcome": "failed",
           "message": "assert 6 == 5"},
          {"event": "phase", "nodeid": "tests/test_calc.py::test_div", "when": "call", "outcome": "passed"}]
    (art / "outcomes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in ev))
    (art / "tests.log").write_text("____ test_mul ____\n\n>   assert mul(2, 3) == 5\nE   assert 6 == 5\n"
                                   "==== short test summary info ====\n")
    result = Result(run_id="r", task_id="abc123abc123", agent="cmd", attempt=1, outcome="regression",
                    error="a PASS_TO_PASS test broke", cost_usd=0.25, wall_s=12.5, wait_s=7.25)
    page, summary = render_attempt(AttemptRef(result, art, {}), _task(), "cmd:./agent", Nav("../index.html"))
    assert "<th>Waited for the phase lock</th>" in page  # outside the agent's and the grading's time
    for secret in (ANT, OPENAI, "eyJhbGciOiJIUzI1NiJ9.e30.sig"):
        assert secret not in page
    assert page.count("[redacted sk-") >= 2 and "Bearer [redacted token]" in page
    assert "characters more not shown; the whole text is in" in page and len(page.encode()) < PAGE_BUDGET
    assert 'id="regressions"' in page and "assert mul(2, 3) == 5" in page
    assert "FAIL_TO_PASS: 1 of 1 passed · PASS_TO_PASS: 1 of 2 passed" in page
    assert "$0.250" in page or "$0.25" in page
    assert summary.failing == ("tests/test_calc.py::test_mul",) and summary.graded


def test_each_agent_text_is_redacted_before_it_is_rendered(tmp_path: Path) -> None:
    """A key in each text an agent leaves is on neither its attempt page nor its task page: claude's
    text, a tool call's input, a tool result, a cmd: program's stdout, the diff (on both pages), a
    failing test's message and failure text, agent.err, the prompt; and the task's reference fix and
    the result's error line. An entry cut by its cap is redacted before the cut (the key's head, too
    short to match, is not left on the page)."""
    secrets = {
        "text": ANT, "tool call": "abcDEF123456.xyz", "tool result": "AKIAQWERTYUIOPASDFGH",
        "stdout": "ghp_" + "A1b2" * 9, "diff": "github_pat_" + "11ABCDEFG" * 3,
        "failure text": "xoxb-1234567890-abcdefghij", "message": "AIza" + "B" * 35, "agent.err": OPENAI,
        "prompt": "sk-" + "p" * 40, "gold": "AIza" + "C" * 35, "error": "sk-ant-api03-" + "E" * 20,
    }
    cut_key = "sk-ant-Cut0123456789abcdefgh"
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": ["Bash"]},
             {"type": "assistant", "session_id": "s", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": f"I found {secrets['text']}"},
                 {"type": "tool_use", "id": "t1", "name": "Bash",
                  "input": {"command": f"curl -H 'Authorization: Bearer {secrets['tool call']}'"}}]}},
             {"type": "user", "session_id": "s", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": f"KEY={secrets['tool result']}"},
                 {"type": "tool_result", "tool_use_id": "t2", "content": "x" * 7990 + " " + cut_key}]}},
             {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "result": "done"}]
    claude, cmd = tmp_path / "claude", tmp_path / "cmd"
    for art in (claude, cmd):
        art.mkdir()
        (art / "prompt.txt").write_text(f"Fix add. Key: {secrets['prompt']}\n")
        (art / "diff.patch").write_text(DIFF.replace("<script>alert(1)</script>", f"TOKEN = '{secrets['diff']}'"))
        (art / "agent.err").write_text(f"warning: OPENAI_API_KEY={secrets['agent.err']}\n")
        (art / "outcomes.jsonl").write_text(json.dumps(
            {"event": "phase", "nodeid": "tests/test_calc.py::test_add", "when": "call", "outcome": "failed",
             "message": f"AssertionError: {secrets['message']}"}) + "\n")
        (art / "tests.log").write_text(f"____ test_add ____\n\n>   assert add(1, 1) == '{secrets['failure text']}'\n"
                                       "==== short test summary info ====\n")
    (claude / "agent.out").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (cmd / "agent.out").write_text(f"step 1\nexport GH_TOKEN={secrets['stdout']}\n")
    task = _task(gold_patch=DIFF.replace("<script>alert(1)</script>", f"KEY = '{secrets['gold']}'"))
    refs, summaries, pages = {}, {}, []
    for agent, art, spec in (("claude", claude, "claude:sonnet"), ("cmd", cmd, "cmd:./agent")):
        ref = AttemptRef(Result(run_id="r", task_id=task.id, agent=agent, attempt=1, outcome="tests_failed",
                                error=f"401: invalid key {secrets['error']}"), art, {})
        page, summaries[ref.key] = render_attempt(ref, task, spec, Nav("../index.html"))
        refs[agent] = [ref]
        pages.append(page)
    pages.append(render_task(task.id, task, None, ["claude", "cmd"], refs, summaries, Nav("../index.html")))
    claude_page, cmd_page, task_page = pages
    assert "tool call · Bash" in claude_page and "characters more not shown" in claude_page
    for where, secret in secrets.items():
        for page in pages:
            assert secret not in page, where
    assert "sk-ant-Cu" not in claude_page  # the head of the key the entry's cap cut through
    assert claude_page.count("[redacted") >= 9 and cmd_page.count("[redacted") >= 6
    assert task_page.count("[redacted ghp_…]") == 2  # the two diffs (github_pat_ keys are of the ghp_ kind)
    assert "[redacted AIza…]" in task_page and "[redacted sk-ant-…]" in task_page


def test_serve_is_loopback_only_and_stays_in_the_site(tmp_path: Path) -> None:
    site = tmp_path / "view"
    site.mkdir()
    (site / "index.html").write_text("<p>hello</p>")
    (tmp_path / "secret.txt").write_text("outside")
    server = make_server(site)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as resp:
            assert resp.read() == b"<p>hello</p>"
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/../secret.txt", timeout=10)
        with urllib.request.urlopen(f"http://localhost:{port}/index.html", timeout=10) as resp:
            assert resp.read() == b"<p>hello</p>"
        # hatk35: a page of another site whose name DNS points at 127.0.0.1 (DNS rebinding) names its own host
        for host in (f"rebind.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", ""):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/index.html", headers={"Host": host})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 403, host
    finally:
        server.shutdown()
        server.server_close()


def test_a_key_wrapped_over_lines_is_redacted_whole() -> None:
    """A client that wraps its output at the terminal's width (rich, aider at 80 columns) splits a long key:
    before, the shape matched the head alone and the next line showed the rest (67 of the 108 characters of
    an ``sk-ant-`` key), and a 40-character ``ghp_`` token split anywhere matched nowhere, shown whole. The
    marker keeps the line break; a whole key ending its line is not joined to the next line's word."""
    ant = "sk-ant-api03-" + ("a1B2c3D4e5F6g7H8i9J0" * 5)[:93] + "AA"  # 108 characters, as Anthropic's are
    gh = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
    assert len(ant) == 108 and len(gh) == 40
    text = (f"Using key {ant[:41]}\n{ant[41:]} from the environment\n"
            f"token {gh[:20]}\r\n{gh[20:]} ok\n"
            f"ANTHROPIC_API_KEY={ant}\nOPENAI_API_KEY=unset\n+KEY = {ant}\n+next line\n")
    out = redact(text)
    for piece in (ant[20:41], ant[41:], gh[8:20], gh[20:]):
        assert piece not in out
    assert out == ("Using key [redacted sk-ant-…]\n from the environment\n"
                   "token [redacted ghp_…]\n ok\n"
                   "ANTHROPIC_API_KEY=[redacted sk-ant-…]\nOPENAI_API_KEY=unset\n"
                   "+KEY = [redacted sk-ant-…]\n+next line\n")
