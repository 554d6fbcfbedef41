"""swebench 5 task repository (issue 33): layout, flat instance file, repo name, test ids. Plain unit tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.gitrepo import GitRepo

from pytest_homefield.envs.declaration import Declaration
from pytest_homefield.export.swebench import instance, project_url_slug, repo_name, upstream_url
from pytest_homefield.export.taskrepo import (
    END,
    ID_PLUGIN,
    START,
    carried_ids,
    clone_url,
    dockerfile,
    eval_script,
    image_name,
    install_lines,
    python_version,
    write_task_repo,
)
from pytest_homefield.records import Task

PATCH = "diff --git a/t/test_a.py b/t/test_a.py\n--- a/t/test_a.py\n+++ b/t/test_a.py\n@@ -1 +1 @@\n-x\n+y\n"
#: what swebench.task.checks requires in task.yaml and of every task folder
REQUIRED_KEYS = {"instance_id", "repo", "version", "base_commit", "split", "image", "log_parser", "eval_type",
                 "datasets"}
REQUIRED_FILES = {"task.yaml", "tests.json", "Dockerfile", "gold.patch", "test.patch", "eval.sh",
                  "problem_statement.md"}


def _task(**kw: object) -> Task:
    base = dict(id="abcdef123456", commit="c" * 40, parent="p" * 40, committed_at="2026-01-02T00:00:00+00:00",
                authored_at="2026-01-01T00:00:00+00:00", mode="commit", subject="Add x", message="Add x",
                prompt="Add x\nplease", source_files=["a.py"], test_files=["t/test_a.py", "t/test new.py"],
                test_patch=PATCH, gold_patch=PATCH.replace("t/test_a", "a"),
                FAIL_TO_PASS=["t/test_a.py::test_x", "t/test new.py::test_y"], PASS_TO_PASS=["t/test_a.py::test_z"],
                test_cmd="/usr/bin/python3.11 -m pytest -p no:cacheprovider")
    base.update(kw)
    return Task(**base)  # type: ignore[arg-type]


def _decl(task: Task) -> tuple[Declaration, list[str], list[str]]:
    return Declaration({"pyproject.toml": b"[project]\nname='x'\n"}), ["test"], []


def test_ids_with_whitespace_are_exported_escaped_with_one_note(tmp_path: Path) -> None:
    """nu28 on andialbrecht/sqlparse: ids with whitespace were left out (swebench's log parser splits at it):
    2 of 13 tasks whole, 266 ids of 11 more. They are exported escaped and eval.sh prints them so."""
    p2p = [f"t/test_a.py::test_p[case {i}]" for i in range(5)] + ["t/test_a.py::test_z"]
    tasks = [_task(PASS_TO_PASS=p2p), _task(id="bbbbbbbbbbbb", FAIL_TO_PASS=["t/test a.py::test_q"]),
             _task(id="cccccccccccc", FAIL_TO_PASS=["t/test_a.py::test_x"], test_files=["t/test_a.py"])]
    done = write_task_repo(tmp_path, [(t, instance(t, "me/calc")) for t in tasks], split="test",
                           dataset="calc-homefield", repo_url=None, declaration=_decl)
    assert not done.left_out and [r["instance_id"] for r in done.instances] == \
        ["calc__abcdef123456", "calc__bbbbbbbbbbbb", "calc__cccccccccccc"]
    assert done.whitespace_notes() == [
        "7 test ids of 2 instance(s) hold whitespace, which swebench's log parser splits at (2 of them FAIL_TO_PASS): "
        "exported escaped, e.g. t/test\\x20new.py::test_y; eval.sh prints a status line for each in that form"]
    tests = json.loads((tmp_path / "tasks" / "calc__bbbbbbbbbbbb" / "tests.json").read_text())
    assert tests["FAIL_TO_PASS"] == ["t/test\\x20a.py::test_q"] == json.loads(done.instances[1]["FAIL_TO_PASS"])
    script = (tmp_path / "tasks" / "calc__bbbbbbbbbbbb" / "eval.sh").read_text()
    assert "PYTEST_PLUGINS=" in script and "'t/test a.py'" in script  # the file as it is named, not escaped
    # loaded for every task (a failed subtest too): an id without whitespace is printed as -rA prints it
    assert "PYTEST_PLUGINS=" in (tmp_path / "tasks" / "calc__cccccccccccc" / "eval.sh").read_text()


def test_the_id_plugin_prints_what_swebench_parses(tmp_path: Path) -> None:
    """A real pytest run with eval.sh's plugin: each test whose id holds whitespace gets one status line, the
    id escaped as exported, which a parser splitting status lines at whitespace (swebench's ``parse_log_pytest``)
    maps to the test's outcome."""
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "homefield_swebench_ids.py").write_text(ID_PLUGIN)
    (tmp_path / "test_s.py").write_text("import pytest\n\n\n"
                                        "@pytest.mark.parametrize('v', [1, 2], ids=['one a', 'two b'])\n"
                                        "def test_p(v):\n    assert v == 1\n\n\ndef test_plain():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "plug"), "PYTEST_PLUGINS": "homefield_swebench_ids"}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "test_s.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    parsed = {}
    for line in proc.stdout.splitlines():
        if line.startswith(("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")):
            words = line.replace(" - ", " ").split()
            parsed[words[1]] = words[0]
    ids, _ = carried_ids(["test_s.py::test_p[one a]", "test_s.py::test_p[two b]", "test_s.py::test_plain"])
    assert [parsed.get(i) for i in ids] == ["PASSED", "FAILED", "PASSED"], proc.stdout[-2000:]


def test_layout_and_flat_file(tmp_path: Path) -> None:
    tasks = [_task(), _task(id="bbbbbbbbbbbb", FAIL_TO_PASS=["t/test a.py::test_q"], env={"python": "3.12.4"})]
    rows = [(t, instance(t, "me/calc")) for t in tasks]
    done = write_task_repo(tmp_path, rows, split="test", dataset="calc-homefield", repo_url=None, declaration=_decl)
    # ids with whitespace are exported escaped (the second task has only such an id)
    assert not done.left_out
    assert done.escaped_ids == {"calc__abcdef123456": ["t/test new.py::test_y"],
                                "calc__bbbbbbbbbbbb": ["t/test a.py::test_q"]}
    assert done.guessed_python == ["calc__abcdef123456"]
    folder = tmp_path / "tasks" / "calc__abcdef123456"
    assert {p.name for p in folder.iterdir()} == REQUIRED_FILES
    assert (tmp_path / "tasks" / "calc__bbbbbbbbbbbb").is_dir()
    meta = yaml.safe_load((folder / "task.yaml").read_text())
    assert REQUIRED_KEYS <= set(meta)
    assert meta["image"] == "swebench/sweb.eval.x86_64.calc_1776_abcdef123456:latest" == image_name(meta["instance_id"])
    assert (meta["repo"], meta["base_commit"], meta["datasets"], meta["split"]) == \
        ("me/calc", "p" * 40, ["calc-homefield"], "test")
    assert json.loads((folder / "tests.json").read_text()) == {
        "FAIL_TO_PASS": ["t/test_a.py::test_x", "t/test\\x20new.py::test_y"], "PASS_TO_PASS": ["t/test_a.py::test_z"]}
    assert (folder / "problem_statement.md").read_text() == "Add x\nplease"
    assert yaml.safe_load((tmp_path / "sweb.yaml").read_text()) == {"datasets": ["calc-homefield"], "splits": ["test"]}
    # the flat file sits alone in its folder (a folder loader reads each task once), every value a string
    assert done.flat == tmp_path / "instances" / "test.jsonl" and list(done.flat.parent.iterdir()) == [done.flat]
    flat = [json.loads(line) for line in done.flat.read_text().splitlines()]
    assert len(flat) == 2 and all(isinstance(v, str) for row in flat for v in row.values())
    assert flat[0]["eval_script"] == (folder / "eval.sh").read_text()
    assert (flat[0]["log_parser"], flat[0]["eval_type"]) == ("parse_log_pytest", "pass_and_fail")
    assert flat[0]["image"] == flat[0]["image_name"] == meta["image"]
    # a second export of another split keeps the first split registered
    write_task_repo(tmp_path, rows[:1], split="dev", dataset="calc-homefield", repo_url=None, declaration=_decl)
    assert yaml.safe_load((tmp_path / "sweb.yaml").read_text())["splits"] == ["test", "dev"]


def test_an_export_under_another_name_replaces_the_earlier_folders_of_its_tasks(tmp_path: Path) -> None:
    """nu28: exported as ``repo/…`` (a guessed name), then again with ``--repo-name``: every task was held twice,
    ``repo__<id>`` and ``sqlparse__<id>``, and ``sweb.yaml`` listed both datasets. Another task's folder stays."""
    task, other = _task(), _task(id="dddddddddddd", parent="q" * 40)
    write_task_repo(tmp_path, [(t, instance(t, "x/repo")) for t in (task, other)], split="test",
                    dataset="repo-homefield", repo_url=None, declaration=_decl)
    (tmp_path / "tasks" / "mine__abcdef123456").mkdir()  # same task id, another base commit: not this task
    (tmp_path / "tasks" / "mine__abcdef123456" / "task.yaml").write_text(f"base_commit: {'z' * 40}\n")
    done = write_task_repo(tmp_path, [(task, instance(task, "andialbrecht/sqlparse"))], split="test",
                           dataset="sqlparse-homefield", repo_url=None, declaration=_decl)
    assert done.replaced == {"repo__abcdef123456": "sqlparse__abcdef123456"}
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == \
        ["mine__abcdef123456", "repo__dddddddddddd", "sqlparse__abcdef123456"]
    # repo-homefield still names a task folder (the other task's), so it stays listed
    assert yaml.safe_load((tmp_path / "sweb.yaml").read_text())["datasets"] == ["repo-homefield", "sqlparse-homefield"]
    write_task_repo(tmp_path, [(other, instance(other, "andialbrecht/sqlparse"))], split="test",
                    dataset="sqlparse-homefield", repo_url=None, declaration=_decl)
    assert yaml.safe_load((tmp_path / "sweb.yaml").read_text())["datasets"] == ["sqlparse-homefield"]


def test_a_failed_subtest_fails_its_test_in_what_swebench_parses(tmp_path: Path) -> None:
    """hukkin/tomli (nu34): pytest ≥ 9 prints ``PASSED <id>`` for a unittest test whose ``subTest`` failed (beside
    ``SUBFAILED[…] <id>``, which swebench's parser does not read), so the empty patch resolved 3 of 12 instances
    homefield grades as failed. eval.sh's plugin prints ``FAILED <id>`` after pytest's own lines; a test whose
    subtests all pass stays ``PASSED``."""
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "homefield_swebench_ids.py").write_text(ID_PLUGIN)
    (tmp_path / "test_u.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_sub(self):\n        for i in range(3):\n            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, 1)\n\n"
        "    def test_all_pass(self):\n        for i in range(3):\n            with self.subTest(i=i):\n"
        "                self.assertTrue(True)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "plug"), "PYTEST_PLUGINS": "homefield_swebench_ids"}
    env.pop("PYTEST_ADDOPTS", None)
    argv = [sys.executable, "-m", "pytest", "-rA", "--color=no", "-p", "no:cacheprovider", "-p", "no:randomly",
            "test_u.py"]

    def parsed(environ: dict[str, str]) -> dict[str, str]:
        out = subprocess.run(argv, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120).stdout
        got = {}
        for line in out.splitlines():  # swebench's parse_log_pytest, as it reads a status line
            if line.startswith(("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")):
                words = line.replace(" - ", " ").split()
                if len(words) > 1:
                    got[words[1]] = words[0]
        return got

    assert parsed(env) == {"test_u.py::T::test_sub": "FAILED", "test_u.py::T::test_all_pass": "PASSED"}
    without = {k: v for k, v in env.items() if k != "PYTEST_PLUGINS"}
    if tuple(int(x) for x in pytest.__version__.split(".")[:2]) >= (9, 0):  # native subtests: PASSED without it
        assert parsed(without)["test_u.py::T::test_sub"] == "PASSED"


def test_eval_script_markers_and_resets() -> None:
    task = _task()
    script = eval_script(task, ["t/test_a.py::test_x", "t/test_a.py::test_z"])
    lines = script.splitlines()
    assert lines[:3] == ["#!/bin/bash", "set -uxo pipefail", "cd /testbed"]
    assert lines.count(f": '{START}'") == 1 and lines.count(f": '{END}'") == 1
    run = lines[lines.index(f": '{START}'") + 1]
    # the host's interpreter path dropped; each test process under mining's memory cap (max_test_memory_mb),
    # the command under grading's time bound (run_timeout)
    assert run == ("(ulimit -v 4194304 && timeout --verbose -k 10 600 python -m pytest -p no:cacheprovider "
                   "-rA --color=no t/test_a.py)")
    resets = [ln for ln in lines if ln.startswith("for f in ")]
    assert len(resets) == 2 and "'t/test new.py'" in resets[0] and "rm -f" in resets[0]
    assert PATCH in script
    at = [n for n, ln in enumerate(lines) if ln.startswith("for f in ")]
    assert at[0] < lines.index(f": '{START}'") < lines.index(f": '{END}'") < at[1]


def test_dockerfile() -> None:
    task = _task(setup_cmd="make build")
    text = dockerfile(task, python="3.12", repo_url="https://github.com/me/calc.git",
                      decl=_decl(task)[0], extras=["test"], groups=[])
    lines = text.splitlines()
    assert lines[0] == "FROM python:3.12-slim"
    assert "ARG REPO_URL=https://github.com/me/calc.git" in lines
    assert f'RUN git clone "$REPO_URL" /testbed && git -C /testbed checkout -q {"p" * 40}' in lines
    assert "RUN uv pip install --system -e '.[test]'" in lines and "RUN make build" in lines
    assert "ARG REPO_URL" in dockerfile(task, python="3.12", repo_url=None, decl=Declaration({}), extras=[], groups=[])


def test_install_lines_follow_the_declaration() -> None:
    locked = Declaration({"pyproject.toml": b"[project]\nname='x'\n", "uv.lock": b""})
    assert install_lines(locked, extras=["test"], groups=["dev"])[1] == \
        "UV_PROJECT_ENVIRONMENT=/usr/local uv sync --frozen --extra test --group dev"
    reqs = Declaration({"requirements.txt": b"", "requirements-dev.txt": b""})
    assert install_lines(reqs, extras=[], groups=[])[1] == \
        "uv pip install --system -r requirements-dev.txt -r requirements.txt"
    assert install_lines(Declaration({}), extras=[], groups=[])[-1].endswith("uv pip install --system pytest")


def test_python_version() -> None:
    assert python_version(_task(env={"python": "3.10.14"})) == ("3.10", True)
    version, known = python_version(_task())
    assert not known and version.count(".") == 1


@pytest.mark.parametrize(("url", "clone"), [
    ("https://github.com/simonw/llm.git", "https://github.com/simonw/llm.git"),
    ("https://user:s3cret@github.com/o/n.git", "https://github.com/o/n.git"),  # never a credential in a Dockerfile
    ("git@github.com:more-itertools/more-itertools.git", "https://github.com/more-itertools/more-itertools.git"),
    ("ssh://git@gitlab.com:2222/g/n.git", "https://gitlab.com/g/n.git"),
    ("/work/repos/owner/name", None),
    (None, None),
])
def test_clone_url(url: str | None, clone: str | None) -> None:
    assert clone_url(url) == clone


@pytest.mark.parametrize(("url", "slug", "guessed"), [
    ("https://github.com/simonw/llm", "simonw/llm", False),
    ("git@github.com:o/n.git", "o/n", False),
    ("ssh://git@host/o/n.git", "o/n", False),
    ("/tmp/nu/mit", "nu/mit", True),
    ("file:///tmp/nu/mit", "nu/mit", True),
    (None, "myrepo", True),
])
def test_repo_name_says_when_it_guesses(url: str | None, slug: str, guessed: bool, tmp_path: Path) -> None:
    name, note = repo_name(tmp_path / "myrepo", url)
    assert name == slug and (note is not None) == guessed
    if note:
        assert "--repo-name" in note and "\n" not in note


def test_repo_name_of_a_clone_of_a_clone_is_the_first_network_origin(tmp_path: Path) -> None:
    """nu28: a clone of a local mirror was exported as ``<mirror folder>/repo``; the mirror's own origin names
    the repository."""
    mirror = GitRepo.init(tmp_path / "mirror")
    mirror.git("remote", "add", "origin", "git@github.com:andialbrecht/sqlparse.git")
    name, note = repo_name(tmp_path / "clone", str(mirror.path))
    assert name == "andialbrecht/sqlparse" and note is not None and str(mirror.path) in note
    assert upstream_url(tmp_path / "clone", str(mirror.path)) == "git@github.com:andialbrecht/sqlparse.git"
    mirror.git("remote", "set-url", "origin", "https://me:s3cret@github.com/andialbrecht/sqlparse.git")
    name, note = repo_name(tmp_path / "clone", str(mirror.path))
    assert name == "andialbrecht/sqlparse" and note is not None and "s3cret" not in note
    GitRepo.init(tmp_path / "bare-no-origin")  # a local origin without one of its own: no hop, the old guess
    assert repo_name(tmp_path / "clone", str(tmp_path / "bare-no-origin"))[0] == f"{tmp_path.name}/bare-no-origin"


def test_repo_name_from_the_project_urls_when_the_origin_is_a_local_path(tmp_path: Path) -> None:
    """nu28 on andialbrecht/sqlparse: its mirror has no origin, its pyproject.toml a ``Source`` URL."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "sqlparse"\n[project.urls]\n'
                                         'Funding = "https://github.com/sponsors/someone"\n'
                                         'Documentation = "https://sqlparse.readthedocs.io/"\n'
                                         'Tracker = "https://github.com/andialbrecht/sqlparse/issues"\n'
                                         'Source = "https://github.com/andialbrecht/sqlparse"\n')
    name, note = repo_name(root, str(tmp_path / "andialbrecht+sqlparse" / "repo"))
    assert name == "andialbrecht/sqlparse"
    assert note is not None and "[project.urls] Source" in note and "--repo-name" in note
    # what the export suggests as the Dockerfiles' REPO_URL
    assert upstream_url(root, str(tmp_path / "andialbrecht+sqlparse" / "repo")) == "https://github.com/andialbrecht/sqlparse"


@pytest.mark.parametrize(("files", "slug", "where"), [
    # python-hyper/h11 (nu36): a setup.py only, its url= the repository
    ({"setup.py": 'from setuptools import setup\nsetup(name="h11", url="https://github.com/python-hyper/h11",\n'
                  '      packages=["h11"])\n'}, "python-hyper/h11", "setup.py's setup(url=…)"),
    ({"setup.py": 'import setuptools\nsetuptools.setup(url="https://example.org",\n'
                  '    project_urls={"Funding": "https://github.com/sponsors/x", "Source": "https://gitlab.com/g/m"})\n'},
     "g/m", "setup.py's project_urls Source"),
    ({"setup.cfg": "[metadata]\nname = x\nproject_urls =\n    Docs = https://x.readthedocs.io\n"
                   "    Code = https://github.com/o/code\nurl = https://github.com/o/home\n"},
     "o/code", "setup.cfg's project_urls Code"),
    ({"setup.cfg": "[metadata]\nurl = https://codeberg.org/o/n.git\n"}, "o/n", "setup.cfg's [metadata] url"),
    # pyproject.toml first; a setup.py that is Python 2, or not a setup() call's literal, is nothing
    ({"pyproject.toml": '[project]\nname = "n"\n[project.urls]\nSource = "https://github.com/o/py"\n',
      "setup.py": 'from setuptools import setup\nsetup(url="https://github.com/o/setup")\n'},
     "o/py", "pyproject.toml's [project.urls] Source"),
    ({"setup.py": 'print "hi"\nsetup(url="https://github.com/o/py2")\n'}, None, None),
    ({"setup.py": 'URL = "https://github.com/o/n"\nsetup(url=URL)\nother(url="https://github.com/o/no")\n'},
     None, None),
])
def test_repo_name_from_setup_py_or_setup_cfg(files: dict[str, str], slug: str | None, where: str | None,
                                             tmp_path: Path) -> None:
    """nu36 on python-hyper/h11: its only project URL is setup.py's ``url=``; a clone of its mirror was exported
    as ``python-hyper+h11/repo``, every instance id ``repo__<id>``."""
    root = tmp_path / "repo"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    origin = str(tmp_path / "python-hyper+h11" / "repo")
    name, note = repo_name(root, origin)
    if slug is None:
        assert name == "python-hyper+h11/repo" and note is not None and "guessed" in note
        assert upstream_url(root, origin) is None
        return
    assert name == slug and note is not None and f"taken from {where} " in note and "--repo-name" in note, note
    host = {"g/m": "gitlab.com", "o/n": "codeberg.org"}.get(slug, "github.com")
    assert upstream_url(root, origin) == f"https://{host}/{slug}"


@pytest.mark.parametrize(("urls", "found"), [
    ({"Homepage": "https://github.com/o/n", "Source": "https://gitlab.com/g/m.git"},
     ("g/m", "Source", "https://gitlab.com/g/m")),
    ({"Issues": "https://github.com/o/n/issues"}, ("o/n", "Issues", "https://github.com/o/n")),
    ({"Funding": "https://github.com/sponsors/x", "Docs": "https://n.readthedocs.io"}, None),
    ({}, None),
])
def test_project_url_slug(urls: dict[str, str], found: tuple[str, str, str] | None) -> None:
    assert project_url_slug({"project": {"urls": urls}}) == found


def test_carried_ids() -> None:
    assert carried_ids(["a.py::t[1]", "a.py::t[a b]", "a.py::t[\t\u3000]"]) == (
        ["a.py::t[1]", "a.py::t[a\\x20b]", "a.py::t[\\x09\\u3000]"], ["a.py::t[a b]", "a.py::t[\t\u3000]"])
