"""The package's layering (issue 29): every name lives with its owner, so imports point one way.

Layers, lowest first; a module may import from its own layer and the layers below, never above, and
no two packages (or top-level modules) import each other, directly or round a longer circle:

0. ground modules, which know no stage: errors, store, records, layout, shard, transport, collect,
   hookspecs, paths, capabilities, probe_records, key_shapes, pins, change_id, spelling and the package's
   ``__init__``;
1. where agents run and what they are: sandbox, agents, envs, export;
2. settings and the terminal: settings, settings_table (the light option table the pytest entry point
   imports in every pytest run; settings re-exports it), argv, terminal;
3. the stages: mine, run;
4. report;
5. view (the static site of a run, built on the report);
6. the modes built on a run: probe, ablate;
7. commands (``homefield`` subcommands that are more than one pytest session);
8. the entry points: cli, plugin.

Imports are read with :mod:`ast` from every module (inside functions and ``TYPE_CHECKING`` blocks
too), relative ones resolved; :func:`test_imports._own_module` decides what is the package's own.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_imports import PACKAGE, _own_module

#: (layer name, its units): a unit is a sub-package or a top-level module of ``pytest_homefield``
#: (``pytest_homefield`` itself is the package's ``__init__``).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("ground", frozenset({"pytest_homefield", "errors", "store", "records", "layout", "shard", "transport",
                          "collect", "hookspecs", "paths", "capabilities", "probe_records",
                          "key_shapes", "pins", "change_id", "spelling"})),
    ("sandbox/agents/envs/export", frozenset({"sandbox", "agents", "envs", "export"})),
    ("settings/terminal", frozenset({"settings", "settings_table", "argv", "terminal", "modes"})),
    ("mine/run", frozenset({"mine", "run"})),
    ("report", frozenset({"report"})),
    ("view", frozenset({"view"})),
    ("probe/ablate", frozenset({"probe", "ablate"})),
    ("commands", frozenset({"commands"})),
    ("cli/plugin", frozenset({"cli", "plugin"})),
)

#: Imports against the layering allowed for now: ``(importing module, imported module)``; each must still
#: exist (a stale entry fails), so the list only shrinks. None: ``run/`` asks the report package for its
#: report through the ``RunReports`` protocol, passed in by the entry point.
KNOWN: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Import:
    """One import of the package's own code: ``source`` imports ``target`` (dotted module names) at
    ``path``:``line`` (``path`` relative to the package's parent folder, POSIX)."""

    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.source} imports {self.target}"


def module_name(package: Path, path: Path) -> str:
    """The dotted name of the module at ``path`` inside ``package`` (``__init__.py`` names its folder)."""
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def own_imports(package: Path) -> list[Import]:
    """Every import of ``package``'s own modules by its modules, in file and line order. ``from X import
    Y`` counts as importing ``X.Y`` when that is a module or package of ``package``, else ``X``."""
    modules = {module_name(package, p) for p in package.rglob("*.py")}
    found: list[Import] = []
    for path in sorted(package.rglob("*.py")):
        source = module_name(package, path)
        rel = path.relative_to(package.parent).as_posix()
        here = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or not _own_module(node):
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            found += [Import(source, t, rel, node.lineno) for t in dict.fromkeys(targets)]
    return found


def unit_of(module: str) -> str:
    """The unit of a dotted module name: ``pytest_homefield.run.session`` → ``run``, ``pytest_homefield.cli``
    → ``cli``, ``pytest_homefield`` → ``pytest_homefield``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _circles(edges: dict[tuple[str, str], Import]) -> list[list[str]]:
    """The strongly connected groups of more than one unit (Tarjan), each sorted; sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


def layering_problems(imports: Sequence[Import], layers: Sequence[tuple[str, frozenset[str]]],
                      known: frozenset[tuple[str, str]] = frozenset()) -> list[str]:
    """One line per problem: a unit in no layer, an import from a higher layer (except the ``known``
    ones), a circle of units (each import that closes it named), a ``known`` import that is gone."""
    layer_of = {unit: (i, name) for i, (name, units) in enumerate(layers) for unit in units}
    problems: list[str] = []
    unplaced = sorted({unit_of(m) for imp in imports for m in (imp.source, imp.target)} - set(layer_of))
    problems += [f"{unit}: in no layer (add it to LAYERS in tests/test_layering.py)" for unit in unplaced]
    edges: dict[tuple[str, str], Import] = {}
    seen_known: set[tuple[str, str]] = set()
    for imp in imports:
        a, b = unit_of(imp.source), unit_of(imp.target)
        if a == b or a not in layer_of or b not in layer_of:
            continue
        edges.setdefault((a, b), imp)
        if layer_of[b][0] > layer_of[a][0]:
            if (imp.source, imp.target) in known:
                seen_known.add((imp.source, imp.target))
                continue
            problems.append(f"{imp}: {a} ({layer_of[a][1]}) imports from a higher layer ({layer_of[b][1]})")
    for group in _circles(edges):
        closing = [str(edges[(a, b)]) for a in group for b in group if (a, b) in edges]
        problems.append(f"{' and '.join(group)} import each other: " + "; ".join(closing))
    problems += [f"{a} -> {b}: listed in KNOWN but no longer imported (remove it)"
                 for a, b in sorted(known - seen_known)]
    return problems


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root / "pytest_homefield"


def test_the_rule_sees_upward_imports_and_circles(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "pytest_homefield/__init__.py": "",
        "pytest_homefield/errors.py": "",
        "pytest_homefield/low/__init__.py": "",
        "pytest_homefield/low/a.py": "from pytest_homefield.errors import X\nfrom ..high import b\n",
        "pytest_homefield/high/__init__.py": "",
        "pytest_homefield/high/b.py": "from . import c\ndef f():\n    from pytest_homefield.peer import d\n",
        "pytest_homefield/high/c.py": "import pytest_homefield.low.a\nimport os\n",
        "pytest_homefield/peer.py": "from pytest_homefield import high\n",
        "pytest_homefield/loose.py": "from pytest_homefield.errors import X\n",
    })
    imports = own_imports(package)
    assert [str(i) for i in imports if i.source == "pytest_homefield.low.a"] == [
        "pytest_homefield/low/a.py:1: pytest_homefield.low.a imports pytest_homefield.errors",
        "pytest_homefield/low/a.py:2: pytest_homefield.low.a imports pytest_homefield.high.b",
    ]
    layers = (("ground", frozenset({"errors", "pytest_homefield"})), ("low", frozenset({"low"})),
              ("high", frozenset({"high", "peer"})))
    assert layering_problems(imports, layers) == [
        "loose: in no layer (add it to LAYERS in tests/test_layering.py)",
        "pytest_homefield/low/a.py:2: pytest_homefield.low.a imports pytest_homefield.high.b: low (low) imports "
        "from a higher layer (high)",
        "high and low and peer import each other: "
        "pytest_homefield/high/c.py:1: pytest_homefield.high.c imports pytest_homefield.low.a; "
        "pytest_homefield/high/b.py:3: pytest_homefield.high.b imports pytest_homefield.peer; "
        "pytest_homefield/low/a.py:2: pytest_homefield.low.a imports pytest_homefield.high.b; "
        "pytest_homefield/peer.py:1: pytest_homefield.peer imports pytest_homefield.high",
    ]
    known = frozenset({("pytest_homefield.low.a", "pytest_homefield.high.b"),
                       ("pytest_homefield.x", "pytest_homefield.y")})
    problems = layering_problems(imports, layers, known)
    assert not any("higher layer" in p for p in problems)
    assert problems[-1] == ("pytest_homefield.x -> pytest_homefield.y: listed in KNOWN but no longer imported "
                            "(remove it)")


def test_every_unit_is_in_one_layer() -> None:
    names = [unit for _, units in LAYERS for unit in units]
    assert len(names) == len(set(names))
    on_disk = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    on_disk |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")} | {"pytest_homefield"}
    assert sorted(on_disk - set(names)) == []


@pytest.mark.slow
def test_no_import_against_the_layering_and_no_circle() -> None:
    problems = layering_problems(own_imports(PACKAGE), LAYERS, KNOWN)
    assert problems == [], "imports against the layering (tests/test_layering.py):\n" + "\n".join(problems)
