"""SWE-bench export (issue 19): instances that another harness can run, checked with git apply."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.e2e_repo import homefield, homefield_in_process

from pytest_homefield.export.swebench import FIELDS, instance, repo_slug, task_id_of, write_instances
from pytest_homefield.export.taskrepo import escaped_id
from pytest_homefield.records import EMPTY_TREES, Task, load_tasks
from pytest_homefield.sandbox.testrun import run_tests

pytestmark = pytest.mark.slow

#: what the flat instance file adds for swebench 5's make_test_spec and mini-swe-agent (issue 33)
SWEBENCH5_FIELDS = ("image", "image_name", "eval_script", "log_parser", "eval_type")


def _task(**kw: object) -> Task:
    base = dict(id="abcdef123456", commit="c" * 40, parent="p" * 40, committed_at="2026-01-02T00:00:00+00:00",
                authored_at="2026-01-01T00:00:00+00:00", mode="commit", subject="Add x", message="Add x\n\nCloses #1",
                prompt="Add x", source_files=["a.py"], test_files=["tests/test_a.py"], test_patch="T", gold_patch="G",
                FAIL_TO_PASS=["tests/test_a.py::test_x"], PASS_TO_PASS=[])
    base.update(kw)
    return Task(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("url", "slug"), [
    ("https://github.com/simonw/llm.git", "simonw/llm"),
    ("git@github.com:more-itertools/more-itertools.git", "more-itertools/more-itertools"),
    ("/work/repos/owner/name/", "owner/name"),
    (None, "myrepo"),
])
def test_repo_slug(url: str | None, slug: str, tmp_path: Path) -> None:
    assert repo_slug(tmp_path / "myrepo", url) == slug


def test_instance_fields_are_strings_in_dataset_order() -> None:
    row = instance(_task(), "simonw/llm")
    assert tuple(row) == FIELDS
    assert all(isinstance(v, str) for v in row.values())
    assert row["instance_id"] == "llm__abcdef123456" and task_id_of(row["instance_id"]) == "abcdef123456"
    assert row["problem_statement"] == "Add x"  # the prompt, never the raw message
    assert json.loads(row["FAIL_TO_PASS"]) == ["tests/test_a.py::test_x"] and json.loads(row["PASS_TO_PASS"]) == []
    assert row["base_commit"] == row["environment_setup_commit"] == "p" * 40
    assert (row["version"], row["hints_text"]) == ("0", "")


def test_write_formats(tmp_path: Path) -> None:
    rows = [instance(_task(), "o/n"), instance(_task(id="bbbbbbbbbbbb"), "o/n")]
    lines = write_instances(rows, tmp_path / "a.jsonl", "swe-bench").read_text().splitlines()
    assert [json.loads(x) for x in lines] == rows
    assert json.loads(write_instances(rows, tmp_path / "a.json", "swe-bench-json").read_text()) == rows
    with pytest.raises(ValueError, match="unknown export format"):
        write_instances(rows, tmp_path / "x", "csv")


def _outcomes(repo: Path, task_cmd: str, ids: list[str], out: Path) -> dict[str, str]:
    files = sorted({i.split("::")[0] for i in ids})
    return run_tests(repo, task_cmd, files, out_dir=out, timeout_s=120).outcomes


@pytest.fixture(scope="module")
def exported(mined: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the mined fixture repository and its ``homefield export`` (default format and path),
    exported once for the tests of this module."""
    repo = tmp_path_factory.mktemp("export") / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    proc = homefield(repo, "export")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = repo / ".homefield" / "export" / "swe-bench" / "instances" / "test.jsonl"
    assert f"flat instances: {out}" in proc.stdout and "private" in proc.stdout
    return repo, out


def test_exported_instances_apply_and_verify(exported: tuple[Path, Path], tmp_path: Path) -> None:
    repo, out = exported
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    tasks = {t.id: t for t in load_tasks(repo / ".homefield" / "tasks.jsonl") if t.parent not in EMPTY_TREES}
    assert len(rows) == len(tasks) >= 3
    test_cmd = f"{sys.executable} -m pytest --disable-plugin-autoload"
    for row in rows:
        f2p, p2p = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
        for name, patches in (("both", ("patch", "test_patch")), ("tests", ("test_patch",))):
            clone = tmp_path / f"{row['instance_id']}-{name}"
            subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
            subprocess.run(["git", "checkout", "-q", row["base_commit"]], cwd=clone, check=True)
            for key in patches:
                subprocess.run(["git", "apply", "-"], cwd=clone, input=row[key].encode(), check=True)
            got = _outcomes(clone, test_cmd, f2p + p2p, tmp_path / f"out-{row['instance_id']}-{name}")
            got = {escaped_id(k): v for k, v in got.items()}  # an id with whitespace is exported escaped (nu28)
            if name == "both":
                assert all(got.get(i) == "passed" for i in f2p + p2p), (row["instance_id"], got)
            else:
                assert all(got.get(i) != "passed" for i in f2p), (row["instance_id"], got)
                assert all(got.get(i) == "passed" for i in p2p), (row["instance_id"], got)
    array = homefield_in_process(repo, "export", "--format", "swe-bench-json", "--out", str(tmp_path / "all.json"),
                                 "--repo-name", "me/calc")  # main() here: the fixture's export had a process
    assert array.returncode == 0, array.stderr
    assert "Dockerfile" not in array.stdout, array.stdout  # nu28: notes on Dockerfiles a JSON export has none of
    names = [r["instance_id"].split("__")[0] for r in json.loads((tmp_path / "all.json").read_text())]
    assert names == ["calc"] * len(rows)


def test_export_without_tasks_is_one_line(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    proc = homefield_in_process(tmp_path, "export")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "run `homefield mine` first" in proc.stderr


def test_loads_with_datasets(exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")  # the packaged json builder needs no hub
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets", reason="the datasets library is not installed")
    data = str(exported[1])  # what `homefield export` wrote (--out: test_exported_instances_apply_and_verify)
    plain = datasets.load_dataset("json", data_files=data, split="train", cache_dir=str(tmp_path / "cache"))
    assert set(plain.column_names) == set(FIELDS) | set(SWEBENCH5_FIELDS)
    # the published dataset's schema: every column a string (the JSON loader alone would read created_at,
    # an ISO 8601 string, as a timestamp); casting to it must succeed value for value
    published = datasets.Features({name: datasets.Value("string") for name in FIELDS + SWEBENCH5_FIELDS})
    typed = datasets.load_dataset("json", data_files=data, split="train", features=published,
                                  cache_dir=str(tmp_path / "cache2"))
    assert typed.features == published and typed.num_rows == plain.num_rows
    rows = [json.loads(line) for line in Path(data).read_text().splitlines()]
    loaded = [dict(r) for r in typed]
    # pyarrow reads the ISO 8601 date as a timestamp before the cast back to string re-formats it
    # ("2026-01-05T12:00:00+00:00" → "2026-01-05 12:00:00"): the instant is kept, every other value is byte-equal
    for got, want in zip(loaded, rows, strict=True):
        assert datetime.fromisoformat(got.pop("created_at")).replace(tzinfo=timezone.utc) == \
            datetime.fromisoformat(want.pop("created_at"))
        assert got == want


def test_one_task_is_one_instance(mined: Path, tmp_path: Path) -> None:
    """ref28 on simonw/llm: a mine that kept one task exported "wrote 1 SWE-bench instances" and "1 task(s)
    have no recorded Python"; one is said in the singular."""
    repo = tmp_path / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    tasks = repo / ".homefield" / "tasks.jsonl"
    tasks.write_text(tasks.read_text().splitlines(keepends=True)[0])
    proc = homefield_in_process(repo, "export")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "homefield export: wrote 1 SWE-bench instance of " in proc.stdout, proc.stdout
    assert "Note: 1 task has no recorded Python (mined without --env uv): its Dockerfile uses " in proc.stdout
