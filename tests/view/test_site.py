"""``homefield view`` end to end: the site of a real run (the real claude CLI against the scripted API,
and oracle, on the mined e2e fixture repository: tests/helpers/view_run.py), and of the demo's run.

Every link of every page must lead to a page that exists, every cell of the per-task grid to its
attempt; an attempt page shows claude's transcript with its tool calls; a task page shows both
agents' diffs beside the reference fix. The Chromium checks are opt-in (``-m clients``): Debian's
``chromium`` renders the pages, runs their script and takes screenshots."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.demo_run import DemoRun
from helpers.e2e_repo import cli_env
from helpers.view_run import claude_and_oracle_run, find_claude

from pytest_homefield.cli import main
from pytest_homefield.records import load_tasks
from pytest_homefield.store import read_jsonl
from pytest_homefield.view import build_site
from pytest_homefield.view.attempt_files import AttemptFiles
from pytest_homefield.view.common import PAGE_BUDGET
from pytest_homefield.view.data import saved_report
from pytest_homefield.view.transcript import parse_transcript


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[tuple[str, str]] = []  # (tag classes, href)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("href", "src"):
            if a.get(key):
                self.hrefs.append((str(a.get("class") or ""), str(a[key])))


def check_links(site: Path) -> dict[str, list[tuple[str, str]]]:
    """Every page's links, checked: each relative link names a file of the site; none leaves it or is
    absolute (nothing fetched). Returns the links per page (relative path → [(class, href)])."""
    out = {}
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        rel = page.relative_to(site).as_posix()
        for _cls, href in parser.hrefs:
            assert not re.match(r"^(https?:)?//", href), f"{rel}: fetches {href}"
            target = (page.parent / href.split("?")[0].split("#")[0]).resolve()
            assert target.is_file(), f"{rel}: broken link {href}"
            assert site.resolve() in target.parents, f"{rel}: {href} leaves the site"
        assert page.stat().st_size < PAGE_BUDGET, rel
        out[rel] = parser.hrefs
    return out


@pytest.fixture(scope="session")
def claude_run(mined: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The run of :func:`helpers.view_run.claude_and_oracle_run` with its report and site, made once per
    test session by the first xdist worker that asks (the others wait on a file lock: a module fixture
    made it once per worker, about 3 s of CPU each); the tests only read it."""
    claude = find_claude()
    if claude is None:
        pytest.skip("Claude Code CLI not installed (run .ci/install-claude.sh or set HOMEFIELD_CLAUDE_BIN)")
    shared = tmp_path_factory.getbasetemp().parent / f"view-claude-run-{testrun_uid}"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "done").exists():
            shutil.rmtree(shared / "repo", ignore_errors=True)  # a half-made one from a worker that failed
            _make_claude_run(mined, shared / "repo", claude)
            (shared / "done").touch()
    return shared / "repo"


def _make_claude_run(mined: Path, dest: Path, claude: str) -> None:
    repo, out = claude_and_oracle_run(mined, dest, claude)
    lines = out.rstrip().splitlines()  # the homefield section ends with it; only pytest's own lines follow
    i = lines.index("See each attempt: homefield view view-e2e")
    assert lines[i - 1].startswith("Reports: ") and all(ln.startswith("=") for ln in lines[i + 1:]), lines[i - 1:]
    report = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "report", "view-e2e", "--format", "json"],
                            cwd=repo, env=cli_env(), capture_output=True, text=True)
    assert report.returncode == 0 and report.stdout.startswith("{"), report.stderr
    assert report.stderr.rstrip().splitlines()[-1] == "See each attempt: homefield view view-e2e"
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "view", "view-e2e"], cwd=repo,
                          env=cli_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "pages in .homefield/runs/view-e2e/view/" in proc.stdout


@pytest.mark.slow
def test_claude_transcript_of_the_real_cli(claude_run: Path) -> None:
    """The parser on what the real CLI printed (stream-json): the Read and Edit calls, their results, the
    final text and the result line."""
    run = claude_run / ".homefield/runs/view-e2e"
    (task_dir,) = (run / "attempts").iterdir()
    files = AttemptFiles.read(task_dir / "claude-sonnet-4-5" / "1")
    t = parse_transcript(files.agent_out or "", spec="claude:claude-sonnet-4-5")
    assert t.format == "claude stream-json"
    calls = [e for e in t.entries if e.kind == "tool_call"]
    assert [c.title for c in calls] == ["Read", "Edit"]
    assert "calc/__init__.py" in calls[0].text and "def neg(a)" in calls[1].text
    results = [e for e in t.entries if e.kind == "tool_result"]
    assert len(results) == 2 and "def add(a, b)" in results[0].text
    assert any(e.kind == "assistant" and "Added neg(a)" in e.text for e in t.entries)
    assert t.entries[-1].kind == "result" and "3 turns" in t.entries[-1].title
    assert files.prompt is not None and "Add neg() returning the negation of a" in files.prompt


@pytest.mark.slow
def test_site_of_a_real_run(claude_run: Path) -> None:
    """The run page links every attempt and task; the attempt page shows the transcript with its tool
    calls, the hidden tests and canaries; the task page shows both agents' diffs beside the reference."""
    site = claude_run / ".homefield/runs/view-e2e/view"
    links = check_links(site)
    results = list(read_jsonl(claude_run / ".homefield/runs/view-e2e/results.jsonl"))
    cells = [href for cls, href in links["index.html"] if "att " in cls + " "]
    assert sorted(cells) == sorted(f"attempts/{r['task_id']}--{r['agent']}--{r['attempt']}.html" for r in results)
    (tid,) = {r["task_id"] for r in results}
    assert f"tasks/{tid}.html" in [h for c, h in links["index.html"] if c == "task"]
    page = (site / f"attempts/{tid}--claude-sonnet-4-5--1.html").read_text()
    assert "tool call · Read" in page and "tool call · Edit" in page and "claude stream-json" in page
    assert "tests/test_neg.py::test_neg" in page and "FAIL_TO_PASS: 1 of 1 passed" in page
    assert 'id="canaries"' in page and "None passed." in page
    assert '<span class="da">+def neg(a):</span>' in page
    assert "Exactly as sent (prompt.txt)" in page and "test-key" not in page
    task = (site / f"tasks/{tid}.html").read_text()
    assert 'id="reference"' in task and 'data-agent="oracle"' in task and 'data-agent="claude-sonnet-4-5"' in task
    assert task.count('<span class="da">+def neg(a):</span>') == 3  # reference, oracle, claude
    assert '<span class="da">+    return 0 - a</span>' in task and "Spec score" in task


@pytest.mark.slow
def test_site_of_the_demo_run(demo_run: DemoRun, tmp_path: Path) -> None:
    """The demo's run (8 tasks × 4 agents × 3 attempts), copied: every link of every page exists, one
    page per attempt and per task, and building again replaces the site."""
    home = demo_run.repo / ".homefield"
    (run,) = [d for d in (home / "runs").iterdir() if d.is_dir()]
    copy = tmp_path / "run"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("view"))
    tasks = load_tasks(home / "tasks.jsonl")
    stats = build_site([copy], tasks, copy / "view")
    links = check_links(copy / "view")
    assert len([p for p in links if p.startswith("attempts/")]) == 8 * 4 * 3
    assert len([p for p in links if p.startswith("tasks/")]) == 8
    assert stats.pages == 8 * 4 * 3 + 8 + 1 and stats.largest < PAGE_BUDGET
    grid = [h for c, h in links["index.html"] if c.startswith("att ")]
    assert len(grid) == 8 * 4 * 3
    (copy / "view" / "stale.html").write_text("old")
    saved = saved_report(copy, 0.0)  # the report.json the run wrote, reused while it is the newest
    assert saved is not None and saved.to_dict() == json.loads((copy / "report.json").read_text())
    assert saved_report(copy, (copy / "report.json").stat().st_mtime + 1) is None  # tasks.jsonl changed since
    build_site([copy], tasks, copy / "view", tasks_mtime=0.0)
    assert not (copy / "view" / "stale.html").exists()
    assert not [p for p in copy.iterdir() if p.name.startswith(".view-")]


def test_view_command_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["view"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no runs in" in err
    (tmp_path / ".homefield/runs/r1").mkdir(parents=True)
    assert main(["view", "r2"]) == 2
    err = capsys.readouterr().err
    assert "no run 'r2'" in err and err.count("\n") == 1
    (tmp_path / ".homefield/runs/r1/meta.json").write_text('{"schema_version": 1, "run_id": "r1"}')
    (tmp_path / ".homefield/runs/r1/results.jsonl").write_text('{"schema_version": 1, "task_id": 3}\n')
    assert main(["view", "r1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("homefield view: ") and "results.jsonl" in err and err.count("\n") == 1
    assert not (tmp_path / ".homefield/runs/r1/view").exists()


# ------------------------------------------------------------------------------------------ chromium

SCREENS = Path(os.environ.get("HOMEFIELD_SCREENS", "/work/screens"))


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    return exe


def _render(exe: str, url: str, shot: Path | None = None) -> tuple[str, str]:
    """(DOM after the page's script ran, console lines) of ``url`` in headless Chromium; with ``shot``
    also a screenshot there."""
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr",
            "--v=0", "--window-size=1400,1800"]
    proc = subprocess.run([*args, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    if shot is not None:
        shot.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([*args, f"--screenshot={shot}", url], capture_output=True, timeout=120)
    return proc.stdout, "\n".join(console)


@pytest.mark.clients
@pytest.mark.slow
def test_chromium_renders_the_site(claude_run: Path) -> None:
    """No console error on the run, attempt and task pages; the filter script ran (a filter in the
    address hides rows and dims cells); screenshots into $HOMEFIELD_SCREENS (default /work/screens)."""
    exe = _chromium()
    site = claude_run / ".homefield/runs/view-e2e/view"
    (tid,) = [p.stem for p in (site / "tasks").iterdir()]
    pages = {"run": "index.html", "attempt": f"attempts/{tid}--claude-sonnet-4-5--1.html", "task": f"tasks/{tid}.html"}
    for name, rel in pages.items():
        dom, console = _render(exe, (site / rel).as_uri(), SCREENS / f"e2e-{name}.png")
        assert console == "", f"{rel}: {console}"
        assert "</html>" in dom or "</body>" in dom
        if name == "attempt":
            assert "tool call · Read" in dom and "tool call · Edit" in dom
        if name == "task":
            assert dom.count('class="da"') >= 9
    dom, console = _render(exe, (site / "index.html").as_uri() + "?agent=oracle&outcome=solved")
    assert console == ""
    assert re.search(r'<span id="shown">1</span>', dom), dom[-2000:]
    assert 'class="hide"' in dom  # the other agent's column


def test_view_takes_the_run_homefield_report_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """nu56 on Suor/funcy: a ``--collect-only`` of ``pytest --homefield -k …`` left a newer run holding no result;
    ``homefield view`` built its empty site, where ``homefield report`` reports on the run before it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    runs = tmp_path / ".homefield" / "runs"
    for rid, created, finished in (("r-real", "2026-12-01T10:00:00+00:00", 1),
                                   ("r-co", "2026-12-01T11:00:00+00:00", 0)):
        (runs / rid).mkdir(parents=True)
        (runs / rid / "meta.json").write_text(json.dumps({
            "run_id": rid, "created_at": created, "agents": [{"name": "noop", "spec": "noop"}], "attempts": 1,
            "task_ids": ["t0"], "cut_short": None}))
        (runs / rid / "results.jsonl").write_text("".join(
            json.dumps({"run_id": rid, "task_id": "t0", "agent": "noop", "attempt": 1, "outcome": "empty_patch"})
            + "\n" for _ in range(finished)))
    (tmp_path / ".homefield" / "tasks.jsonl").write_text("")
    monkeypatch.chdir(tmp_path)
    assert main(["view"]) == 0
    assert (runs / "r-real" / "view" / "index.html").exists() and not (runs / "r-co" / "view").exists()
    assert "run r-co (started 2026-12-01 11:00 UTC) holds no result" in capsys.readouterr().err
