"""The package's import rules (design/style.md, issue 12).

* Imports at the top of modules: outside the entry points (``plugin.py``, ``cli.py``, which import a
  mode's modules inside the function that chose it) no module imports another module of the package
  inside a function, so the structure is visible and types do not turn into ``Any``.
* Loading stays cheap where it matters: the inert plugin imports no git, yaml or scipy, and the
  report package imports neither pytest nor scipy until a statistic is computed.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_homefield

PACKAGE = Path(pytest_homefield.__file__).parent
ENTRY_POINTS = {"plugin.py", "cli.py"}  # the top-level ones only; run/run_plugin.py and mine/mine_plugin.py are not


def _own_module(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "pytest_homefield"
    return any(alias.name.split(".")[0] == "pytest_homefield" for alias in node.names)


def deferred_own_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of the package's own modules (absolute or relative) inside
    a function or lambda body of ``source``."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)) and _own_module(child):
                name = (
                    "." * child.level + (child.module or "")
                    if isinstance(child, ast.ImportFrom)
                    else ", ".join(a.name for a in child.names)
                )
                found.append((child.lineno, name))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(source), False)
    return found


def test_the_rule_sees_deferred_imports() -> None:
    source = (
        "import os\n"
        "from pytest_homefield.store import read_jsonl\n"
        "def f():\n"
        "    import yaml\n"
        "    from pytest_homefield.records import Task\n"
        "    from . import stats\n"
        "class C:\n"
        "    def m(self):\n"
        "        if True:\n"
        "            import pytest_homefield.mine.scan\n"
        "g = lambda: __import__('json')\n"
    )
    assert deferred_own_imports(source) == [(5, "pytest_homefield.records"), (6, "."),
                                            (10, "pytest_homefield.mine.scan")]


@pytest.mark.slow
def test_no_deferred_imports_of_own_modules() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ENTRY_POINTS:
            continue
        for line, module in deferred_own_imports(path.read_text(encoding="utf-8")):
            offenders.append(f"pytest_homefield/{rel}:{line}: {module}")
    assert offenders == [], "imports of the package inside functions:\n" + "\n".join(offenders)


def _modules_after(statement: str) -> set[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(proc.stdout))


def unguarded_tomllib(source: str) -> list[int]:
    """The lines of ``source`` importing ``tomllib`` outside an ``if sys.version_info …:`` body (the package
    supports Python 3.10, whose standard library has no ``tomllib``: ``tomli`` is its dependency there)."""
    found: list[int] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.Import) and any(a.name == "tomllib" for a in node.names) and not guarded:
            found.append(node.lineno)
        if isinstance(node, ast.If) and "version_info" in ast.unparse(node.test):
            for stmt in node.body:
                visit(stmt, True)
            for stmt in node.orelse:
                visit(stmt, guarded)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(ast.parse(source), False)
    return found


def test_tomllib_is_imported_as_python_3_10_can() -> None:
    """mine/compiled.py (bld62), mine/setup_help.py and agents/recipe_hosts.py imported ``tomllib`` unguarded: on
    Python 3.10 (declared, tox py310) ``mine.pipeline``, ``mine.mine_plugin``, ``commands.merge`` and
    ``commands.demo`` did not import, nor a codex recipe's hosts read (measured with CPython 3.10.13: 11 modules
    raised ``No module named 'tomllib'``; after, none)."""
    assert unguarded_tomllib("import tomllib\n") == [1]
    assert unguarded_tomllib("import sys\nif sys.version_info >= (3, 11):\n    import tomllib\n"
                             "else:\n    import tomli as tomllib\n") == []
    bad = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py"))
           if (lines := unguarded_tomllib(p.read_text(encoding="utf-8")))}
    assert bad == {}


def test_inert_plugin_imports_nothing_heavy() -> None:
    loaded = _modules_after("import pytest_homefield.plugin")
    assert {"git", "yaml", "scipy", "numpy"} & loaded == set()


def test_a_run_loads_no_mining_code_and_no_gitpython() -> None:
    """speed36: the run plugin (every ``homefield run``/``verify`` session and each of its xdist workers) imported
    the mining pipeline for one header line's helper (``other_python_note``), and with it GitPython and the message
    scorer: about 0.14 s of CPU per process. That helper lives with the environment fingerprint now."""
    loaded = _modules_after("import pytest, pytest_homefield.plugin, pytest_homefield.run.run_plugin")
    assert {"git", "pytest_homefield.mine.pipeline", "pytest_homefield.mine.scan"} & loaded == set()
    assert not {m for m in loaded if m.startswith("pytest_homefield.mine")}


def test_report_package_imports_neither_pytest_nor_scipy() -> None:
    loaded = _modules_after("import pytest_homefield.report")
    assert "pytest" not in loaded
    assert "scipy" not in loaded


def test_homefield_report_imports_only_what_the_report_needs(tmp_path: Path) -> None:
    """``homefield report`` end to end (the CLI entry, a run with results and diffs) loads no gitpython,
    yaml (without a settings file), pytest, xdist or uv-environment code, and of scipy at most
    scipy.special (never scipy.stats or scipy.signal) (issue 18)."""
    data = Path(__file__).parent / "data" / "report"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(data / "run-a", repo / ".homefield" / "runs" / "run-a")
    shutil.copy(data / "tasks.jsonl", repo / ".homefield" / "tasks.jsonl")
    code = ("import json, sys; from pytest_homefield.cli import main; rc = main(['report', 'run-a', '--format', "
            "'md']); print(); print(rc, json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120)
    rc, modules = proc.stdout.splitlines()[-1].split(" ", 1)
    assert rc == "0", proc.stdout[-2000:] + proc.stderr[-2000:]
    loaded = set(json.loads(modules))
    heavy = {"git", "yaml", "pytest", "_pytest", "xdist", "pluggy", "scipy.stats", "scipy.signal",
             "pytest_homefield.envs.builder", "pytest_homefield.mine.scan"}
    assert heavy & loaded == set()
    assert not {m for m in loaded if m == "scipy" or m.startswith("scipy.")}  # none at all (issue 35)
