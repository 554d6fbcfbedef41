"""Tasks as SWE-bench instances (``homefield export --format swe-bench``).

One instance per task with the fields of the published SWE-bench dataset (princeton-nlp/SWE-bench),
every value a string as the dataset stores them:

==========================  =====================================================================
``instance_id``             ``<repo name>__<task id>`` (``llm__c2838a49d539``)
``repo``                    ``owner/name`` from the ``origin`` remote URL, else the folder name
``base_commit``             the task's parent (the starting state)
``patch``                   the gold patch (non-test files)
``test_patch``              the hidden tests
``problem_statement``       the task's cleaned ``prompt`` (never the raw message)
``hints_text``              ``""``
``created_at``              the commit's author date, ISO 8601
``version``                 the task's environment key (``env.key``) or ``"0"``
``environment_setup_commit`` the parent again: the tree whose declaration builds the environment
``FAIL_TO_PASS``            JSON-encoded list of pytest node ids
``PASS_TO_PASS``            JSON-encoded list of pytest node ids
==========================  =====================================================================

Instance ids end in ``__<task id>``, so :mod:`pytest_homefield.agents.predictions` matches a
predictions file back to tasks whatever repository name was used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.records import Task
from pytest_homefield.store import write_atomic

__all__ = ["FORMATS", "FIELDS", "repo_slug", "instance", "instances", "write_instances", "task_id_of"]

#: ``--format`` values: one JSON object a line, or one JSON array.
FORMATS = ("swe-bench", "swe-bench-json")
#: The columns of the published dataset, in its order.
FIELDS = ("repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement", "hints_text",
          "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS", "environment_setup_commit")

_REMOTE_RE = re.compile(r"(?:[:/])([^/:]+)/([^/]+?)(?:\.git)?/?$")


def repo_slug(root: Path, remote_url: str | None) -> str:
    """``owner/name`` from a remote URL (``https://host/o/n.git``, ``git@host:o/n.git``, a local path
    ending in ``o/n``), else the folder name of ``root``."""
    if remote_url:
        m = _REMOTE_RE.search(remote_url.strip())
        if m:
            return f"{m.group(1)}/{m.group(2)}"
    return Path(root).resolve().name


def instance(task: Task, repo: str) -> dict[str, str]:
    """The SWE-bench instance of ``task`` for repository ``repo`` (``owner/name`` or ``name``); keys
    in :data:`FIELDS` order, every value a string."""
    env = getattr(task, "env", None)
    version = str(env.get("key")) if isinstance(env, dict) and env.get("key") else "0"
    name = repo.rsplit("/", 1)[-1]
    record = {
        "repo": repo,
        "instance_id": f"{name}__{task.id}",
        "base_commit": task.parent,
        "patch": task.gold_patch,
        "test_patch": task.test_patch,
        "problem_statement": task.prompt,
        "hints_text": "",
        "created_at": task.authored_at,
        "version": version,
        "FAIL_TO_PASS": json.dumps(list(task.FAIL_TO_PASS)),
        "PASS_TO_PASS": json.dumps(list(task.PASS_TO_PASS)),
        "environment_setup_commit": task.parent,
    }
    return {k: record[k] for k in FIELDS}


def instances(tasks: Iterable[Task], repo: str) -> list[dict[str, str]]:
    """:func:`instance` of every task, in task order."""
    return [instance(t, repo) for t in tasks]


def write_instances(rows: Sequence[dict[str, Any]], out: Path, fmt: str) -> Path:
    """Write ``rows`` to ``out`` atomically as JSONL (``swe-bench``) or one JSON array
    (``swe-bench-json``); returns ``out``. Raises ``ValueError`` for an unknown format."""
    if fmt == "swe-bench":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    elif fmt == "swe-bench-json":
        text = json.dumps(list(rows), ensure_ascii=False, indent=1) + "\n"
    else:
        raise ValueError(f"unknown export format {fmt!r}: use {' or '.join(FORMATS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)
    return out


def task_id_of(instance_id: str) -> str:
    """The task id an instance id names: the part after the last ``__`` (the whole id if none)."""
    return instance_id.rsplit("__", 1)[-1]
