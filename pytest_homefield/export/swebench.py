"""Tasks as SWE-bench instances (``homefield export --format swe-bench``).

One instance per task with the fields of the published SWE-bench dataset (princeton-nlp/SWE-bench),
every value a string as the dataset stores them:

==========================  =====================================================================
``instance_id``             ``<repo name>__<task id>`` (``llm__c2838a49d539``)
``repo``                    ``owner/name`` from the ``origin`` remote URL, else :func:`repo_name`'s fallbacks
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

A task verified with ``services:`` (docs/contracts.md §2) gets one more key after these,
``homefield_services``: a note naming each service's command, readiness and ``env`` (``{port}``
left for the harness to choose), since a SWE-bench image must start them itself before the tests.

Instance ids end in ``__<task id>``, so :mod:`pytest_homefield.agents.predictions` matches a
predictions file back to tasks whatever repository name was used.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.records import Task
from pytest_homefield.sandbox.services import ServiceSpec
from pytest_homefield.store import write_atomic

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["FORMATS", "FIELDS", "repo_slug", "repo_name", "project_url_slug", "upstream_url", "instance", "instances",
           "write_instances", "task_id_of", "services_note"]

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


#: Hosts whose project URLs are ``https://host/owner/name[/…]``: a ``[project.urls]`` entry there names the
#: repository.
_FORGES = ("github.com", "gitlab.com", "codeberg.org", "bitbucket.org")
_FORGE_RE = re.compile(r"^https?://(?:www\.)?(" + "|".join(re.escape(h) for h in _FORGES)
                       + r")/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?(?:[/#?].*)?$")
#: ``[project.urls]`` keys, by preference (lower-cased, ``-``/``_``/space dropped): the repository's own
#: first; a key naming funding never (``github.com/sponsors/x`` names no repository).
_URL_KEYS = ("source", "sourcecode", "repository", "repo", "code", "github", "gitlab", "homepage", "home")


def _is_network(url: str) -> bool:
    """Whether the remote URL ``url`` names a host (``https://…``, ``ssh://…``, ``git@host:…``), not a path."""
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*://|[^@/:]+@[^/:]+:)", url)) and not url.startswith("file://")


def _local_origin_url(path: str) -> str | None:
    """The ``origin`` URL of the local repository at ``path`` (a ``file://`` URL or a path); ``None`` when
    it has none or is not a repository."""
    folder = Path(path[len("file://"):] if path.startswith("file://") else path)
    if not folder.is_dir():
        return None
    # the folder's own repository only: never one around it (a plain folder inside another clone)
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(folder.resolve().parent)}
    env.pop("GIT_DIR", None)
    proc = subprocess.run(["git", "config", "--get", "remote.origin.url"], cwd=folder, capture_output=True,
                          text=True, check=False, env=env)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def project_url_slug(pyproject: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(owner/name, key, https://<forge>/owner/name)`` from the ``[project.urls]`` of a parsed
    ``pyproject.toml``: the first entry, by :data:`_URL_KEYS` then the file's order, that is
    ``https://<forge>/owner/name…`` on a host of :data:`_FORGES`; ``None`` when none is (a funding link is
    never taken)."""
    urls = (pyproject.get("project") or {}).get("urls") if isinstance(pyproject.get("project"), dict) else None
    if not isinstance(urls, dict):
        return None
    found: list[tuple[int, int, str, str, str]] = []
    for k, (key, url) in enumerate(urls.items()):
        norm = re.sub(r"[-_ ]", "", str(key).lower())
        m = _FORGE_RE.match(str(url).strip()) if isinstance(url, str) else None
        if m is None or any(w in norm for w in ("fund", "sponsor", "donat")) or m.group(2) == "sponsors":
            continue
        rank = _URL_KEYS.index(norm) if norm in _URL_KEYS else len(_URL_KEYS)
        found.append((rank, k, f"{m.group(2)}/{m.group(3)}", str(key),
                      f"https://{m.group(1)}/{m.group(2)}/{m.group(3)}"))
    if not found:
        return None
    _, _, slug, key, url = min(found)
    return slug, key, url


def _pyproject(root: Path) -> dict[str, Any]:
    """``root``'s ``pyproject.toml`` parsed; ``{}`` when absent, unreadable or not valid TOML."""
    try:
        data: dict[str, Any] = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return data


def _setup_cfg_urls(root: Path) -> dict[str, str]:
    """The URLs ``root``'s ``setup.cfg`` declares under ``[metadata]``: each ``project_urls`` line
    ``Key = URL``, then ``url`` / ``home_page`` under those names; ``{}`` when it has none or does not parse."""
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string((Path(root) / "setup.cfg").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return {}
    if not cp.has_section("metadata"):
        return {}
    meta = cp["metadata"]
    urls: dict[str, str] = {}
    for line in (meta.get("project_urls") or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and value.strip():
            urls[key.strip()] = value.strip()
    for key in ("url", "home_page", "home-page"):
        if (meta.get(key) or "").strip():
            urls[key] = (meta.get(key) or "").strip()
    return urls


def _setup_py_urls(root: Path) -> dict[str, str]:
    """The URLs ``root``'s ``setup.py`` passes to ``setup(…)`` as string literals: ``project_urls={…}``'s
    entries, then ``url=`` / ``home_page=``. The file is parsed, never run; ``{}`` when it has no such call or
    does not parse (a Python 2 ``setup.py``)."""
    try:
        tree = ast.parse((Path(root) / "setup.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return {}
    urls: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not ((isinstance(func, ast.Name) and func.id == "setup")
                or (isinstance(func, ast.Attribute) and func.attr == "setup")):
            continue
        for kw in node.keywords:
            if kw.arg == "project_urls" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                    if (isinstance(k, ast.Constant) and isinstance(k.value, str)
                            and isinstance(v, ast.Constant) and isinstance(v.value, str)):
                        urls.setdefault(k.value, v.value)
        for kw in node.keywords:
            if kw.arg in ("url", "home_page") and isinstance(kw.value, ast.Constant) \
                    and isinstance(kw.value.value, str):
                urls.setdefault(kw.arg, kw.value.value)
    return urls


def declared_repo(root: Path) -> tuple[str, str, str] | None:
    """``(owner/name, where, https://<forge>/owner/name)`` from the project URLs ``root`` declares, in this
    order: ``pyproject.toml``'s ``[project.urls]`` (:func:`project_url_slug`), ``setup.cfg``'s ``[metadata]``,
    ``setup.py``'s ``setup(…)`` call (read, never run); ``where`` names the file and key, e.g.
    ``setup.py's setup(url=…)``. ``None`` when none names a repository on a forge. nu36: python-hyper/h11
    declares ``url="https://github.com/python-hyper/h11"`` in ``setup.py`` only, and a clone of its mirror was
    exported as ``python-hyper+h11/repo``, every instance ``repo__<id>``."""
    found = project_url_slug(_pyproject(root))
    if found is not None:
        return found[0], f"pyproject.toml's [project.urls] {found[1]}", found[2]
    plain = {"setup.cfg": "setup.cfg's [metadata] {key}", "setup.py": "setup.py's setup({key}=…)"}
    for name, urls in (("setup.cfg", _setup_cfg_urls), ("setup.py", _setup_py_urls)):
        hit = project_url_slug({"project": {"urls": urls(root)}})
        if hit is not None:
            slug, key, url = hit
            where = plain[name].format(key=key) if key in ("url", "home_page", "home-page") \
                else f"{name}'s project_urls {key}"
            return slug, where, url
    return None


def _chained_origin(url: str) -> str | None:
    """The first network URL along the ``origin`` remotes of the local repository at ``url`` (a path or
    ``file://`` URL; a clone of a clone: up to 3 hops); ``None`` when there is none."""
    local, hops = url, 0
    while local and not _is_network(local) and hops < 3:
        local, hops = _local_origin_url(local) or "", hops + 1
    return local if local and _is_network(local) else None


def upstream_url(root: Path, remote_url: str | None) -> str | None:
    """Where the repository at ``root`` (whose ``origin`` is ``remote_url``) comes from on the network: the
    origin remote when it is a network URL, else the first network origin of the local origin's chain, else
    the forge URL of ``pyproject.toml``'s ``[project.urls]`` (:func:`project_url_slug`); ``None`` when none
    is known. What an export whose origin is a local path suggests as the Dockerfiles' ``REPO_URL``."""
    url = (remote_url or "").strip()
    if url and _is_network(url):
        return url
    chained = _chained_origin(url)
    if chained:
        return chained
    found = declared_repo(root)
    return found[2] if found else None


def repo_name(root: Path, remote_url: str | None) -> tuple[str, str | None]:
    """``(owner/name, note)`` of the repository at ``root`` whose ``origin`` remote is ``remote_url``: from a
    network remote (:func:`repo_slug`; note ``None``); else, with a one-line note saying where it came
    from, from the network ``origin`` of a local origin (a clone of a clone; up to 3 hops), from the
    ``[project.urls]`` of ``root``'s ``pyproject.toml`` (:func:`project_url_slug`), or guessed from the
    local path or the folder's name. nu28: a clone of the mirror ``/work/.mirror/andialbrecht+sqlparse/repo``
    was exported as ``andialbrecht+sqlparse/repo``, its instances ``repo__<id>``, while its
    ``pyproject.toml`` says ``Source = "https://github.com/andialbrecht/sqlparse"``."""
    url = (remote_url or "").strip()
    if url and _is_network(url):
        return repo_slug(root, url), None
    chained = _chained_origin(url)
    if chained:
        slug = repo_slug(root, chained)
        shown = re.sub(r"^([a-z][a-z0-9+.-]*://)[^@/]*@", r"\1", chained)  # never a credential on the terminal
        return slug, (f"repo {slug!r} is the origin remote ({shown}) of the local origin remote ({url}): "
                      "give --repo-name OWNER/NAME for another")
    where = f"the origin remote is the local path {url}" if url else "no origin remote"
    declared = declared_repo(root)
    if declared is not None:
        slug, taken_from, _ = declared
        return slug, (f"repo {slug!r} is taken from {taken_from} ({where}): give "
                      "--repo-name OWNER/NAME for another")
    slug = repo_slug(root, remote_url)
    if not url:
        return slug, f"repo {slug!r} is the folder's name (no origin remote): give --repo-name OWNER/NAME"
    return slug, f"repo {slug!r} is guessed from the local path of the origin remote ({url}): " \
                 "give --repo-name OWNER/NAME"


def services_note(names: Sequence[str], specs: Sequence[ServiceSpec] = ()) -> str:
    """``the tests need these services running: redis: `redis-server --port {port} …` (ready: tcp;
    env REDIS_URL=redis://127.0.0.1:{port}/0)``: the note of a task verified with ``names``, each
    described by its spec in ``specs`` when there is one (else by name only)."""
    by_name = {s.name: s for s in specs}
    parts = []
    for name in names:
        spec = by_name.get(name)
        if spec is None:
            parts.append(name)
            continue
        env = ", ".join(f"{k}={v}" for k, v in spec.env)
        parts.append(f"{name}: `{spec.command}` (ready: {spec.ready}" + (f"; env {env}" if env else "") + ")")
    return "the tests need these services running: " + "; ".join(parts)


def instance(task: Task, repo: str, specs: Sequence[ServiceSpec] = ()) -> dict[str, str]:
    """The SWE-bench instance of ``task`` for repository ``repo`` (``owner/name`` or ``name``); keys
    in :data:`FIELDS` order, every value a string, then ``homefield_services`` (:func:`services_note`
    with ``specs``, the ``services:`` of the settings) when the task names services."""
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
    out = {k: record[k] for k in FIELDS}
    if getattr(task, "services", None):
        out["homefield_services"] = services_note(task.services, specs)
    return out


def instances(tasks: Iterable[Task], repo: str, specs: Sequence[ServiceSpec] = ()) -> list[dict[str, str]]:
    """:func:`instance` of every task, in task order."""
    return [instance(t, repo, specs) for t in tasks]


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
