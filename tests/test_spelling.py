"""Every option a message names is spelled for the front end in use (opt46; ux65 began it).

homefield has two front ends: ``homefield run --attempts 1`` and ``pytest --homefield --homefield-attempts 1``.
A message that wrote ``--adaptive`` told a pytest user to pass an option pytest does not know.

- By construction: no string literal of the package names a setting's flag (either spelling) in its text; a
  message takes it from :func:`pytest_homefield.settings_table.option` or :func:`pytest_homefield.spelling.spell`,
  and every such call names a flag the settings table has. Left out: an argv element (``"--homefield-agent=x"``,
  a literal that is one option, with its value or not, in a list being built), the table's help texts (spelled
  when registered: :func:`~pytest_homefield.settings_table.pytest_help`) and :data:`CHILD_COMMANDS`, another
  program's command line.
- Nor is a flag spelled for the front end in use at import (:func:`spelled_at_import`): the script sets its
  front end after its imports.
- End to end: real bad input, under both front ends as subprocesses; each option the error names is one that
  front end's ``--help`` lists.

These and the scans of the whole package (73k lines parsed: about 3 s of CPU) are in the slow tier; the checks'
own tests on a small module are in the fast one.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.settings_table import FLAGS, FRONT_ENDS, option, pytest_help
from pytest_homefield.spelling import spell, spelled_for

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_homefield"
ROOT = PACKAGE.parent
#: An option in a text: ``--`` and a lowercase name not inside a longer word; group 1 the flag without ``homefield-``.
_NAMED = re.compile(r"(?<![\w-])--(?:homefield-)?([a-z][a-z0-9-]*)")
#: A literal that is one argv element: an option, with ``=value`` or not (a child process's argument).
_ARGV = re.compile(r"--[a-z][a-z0-9-]*(=\S*)?")
#: ``(file, how the literal starts)`` of literals that are another program's command line, whose flags are that
#: program's: codex's ``--sandbox workspace-write`` is not homefield's ``--sandbox``.
CHILD_COMMANDS = frozenset({("agents/recipes.py", "codex exec --json")})


@functools.cache
def _trees(package: Path) -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of ``package`` parsed, once for the checks of this file."""
    return tuple((path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(package.rglob("*.py")))


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def _table_helps(tree: ast.AST) -> set[int]:
    """The literals of the settings table's helps: ``setting(help=…)`` and the values of ``MODE_OPTIONS``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setting":
            parts = [k.value for k in node.keywords if k.arg == "help"]
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "MODE_OPTIONS" for t in node.targets):
            parts = [node.value]
        out.update(id(n) for p in parts for n in ast.walk(p))
    return out


def _argv_elements(tree: ast.AST) -> set[int]:
    """The literals that are an element of an argv being built: an item of a list display or comprehension, or
    what ``.append``/``.extend``/``.insert`` adds (a whole f-string's parts with it). A single option anywhere
    else (a default argument, a tuple, a call's argument) is a message's text like any other."""
    items: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List):
            items += [e.value if isinstance(e, ast.Starred) else e for e in node.elts]
        elif isinstance(node, ast.ListComp):
            items.append(node.elt)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("append", "extend", "insert"):
            items += node.args
    return {id(n) for item in items if isinstance(item, (ast.Constant, ast.JoinedStr)) for n in ast.walk(item)}


def bare_flags(package: Path) -> list[str]:
    """``file:line: text`` of every literal of ``package`` naming a setting's flag in its text (see the module)."""
    flags = {s.flag for s in FLAGS}
    found = []
    for path, tree in _trees(package):
        rel = path.relative_to(package).as_posix()
        skip = _docstrings(tree) | (_table_helps(tree) if rel == "settings_table.py" else set())
        argv = _argv_elements(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in skip:
                continue
            text = node.value
            if (_ARGV.fullmatch(text) and id(node) in argv) or \
                    any(rel == f and text.startswith(t) for f, t in CHILD_COMMANDS):
                continue
            if any(m.group(1) in flags for m in _NAMED.finditer(text)):
                found.append(f"{rel}:{node.lineno}: {text[:100]!r}")
    return found


def unknown_spellings(package: Path) -> list[str]:
    """``file:line: call`` of every ``option(…)``/``spell(…)`` call whose literal flag no setting has, or whose
    literal front end is not one of :data:`FRONT_ENDS`."""
    flags = {s.flag for s in FLAGS}
    found = []
    for path, tree in _trees(package):
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("option", "spell")):
                continue
            args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
            if (args[:1] and args[0] is not None and args[0] not in flags) or \
                    (len(args) > 1 and args[1] is not None and args[1] not in FRONT_ENDS):
                found.append(f"{path.relative_to(package)}:{node.lineno}: {ast.unparse(node)}")
    return found


def spelled_at_import(package: Path) -> list[str]:
    """``file:line: call`` of every ``option(flag)``/``spell(flag)`` for the front end in use (no front end given)
    outside a function: a module's constant or a default argument, spelled once at import for whichever front end
    was in use then (the ``homefield`` script names its own only after its imports)."""
    found = []
    for path, tree in _trees(package):
        inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                  for part in (f.body if isinstance(f.body, list) else [f.body]) for n in ast.walk(part)}
        found += [f"{path.relative_to(package)}:{n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("option", "spell")
                  and len(n.args) + len(n.keywords) < 2 and id(n) not in inside]
    return found


@pytest.mark.slow  # the package parsed: 3 s of CPU, shared by the three scans
def test_no_message_names_a_bare_flag() -> None:
    assert bare_flags(PACKAGE) == []


@pytest.mark.slow  # the package parsed: 3 s of CPU, shared by the three scans
def test_every_spelled_flag_is_a_settings_flag() -> None:
    assert unknown_spellings(PACKAGE) == []


@pytest.mark.slow
def test_no_option_is_spelled_at_import_for_the_front_end_in_use() -> None:
    """opt46: bubblewrap's install hint, a module constant, said ``--homefield-sandbox`` to the script's users."""
    assert spelled_at_import(PACKAGE) == []


def test_the_import_check_catches_a_constant_spelling(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('HINT = f"pass {spell(\'sandbox\')} none"\nCUT = spell("max-output-mb", "cli")\n'
                                   'def f(why=option("max-procs")):\n    return option("attempts")\n')
    assert sorted(line.split(":")[1] for line in spelled_at_import(tmp_path)) == ["1", "3"]


def test_the_checks_catch_a_new_bare_flag(tmp_path: Path) -> None:
    """A message written today with ``--attempts`` (or ``--homefield-attempts``), or spelled through a flag no
    setting has, is found; a child's argv element and another option are not."""
    (tmp_path / "m.py").write_text(
        'def f(n, why="--max-output-mb"):\n    """Docs may say --attempts."""\n'
        '    args = ["--homefield-attempts=1", "--dist", "load", *[f"--homefield-agent={a}" for a in n]]\n'
        '    a = f"run again with --attempts {n}"\n    b = "or --homefield-max-tasks"\n'
        '    c = "git diff --stat and pytest --lf"\n    args.append(f"--since={n}")\n'
        '    d = [(f, v) for f, v in (("--seconds-per-run", n),)]\n'
        '    return option("atempts"), spell("resume", "cli")\n')
    assert sorted(line.split(":")[1] for line in bare_flags(tmp_path)) == ["1", "4", "5", "8"]
    assert [line.split(":")[1] for line in unknown_spellings(tmp_path)] == ["9"]


def test_option_and_spell_name_the_front_end_in_use() -> None:
    with spelled_for("cli"):
        assert (option("attempts"), spell("max-tasks"), option("attempts", "pytest")) == \
            ("--attempts", "--max-tasks", "--homefield-attempts")
    with spelled_for("pytest"):
        assert (option("attempts"), spell("max-tasks"), option("resume", "cli")) == \
            ("--homefield-attempts", "--homefield-max-tasks", "--resume")
    with pytest.raises(KeyError):
        option("atempts")
    with pytest.raises(ValueError):
        spell("attempts", "shell")


def test_pytest_help_spells_the_table_helps_for_pytest() -> None:
    assert pytest_help("with --env uv (uv --exclude-newer); --yes") == \
        "with --homefield-env uv (uv --exclude-newer); --homefield-yes"


# --- end to end: both front ends as subprocesses --------------------------------------------------------------

def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HOMEFIELD_NO_COLOR": "1"}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
                                  "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def _command(front: str, flags: list[str]) -> list[str]:
    """``homefield run FLAGS…`` (``cli``) or ``pytest --homefield --homefield-FLAGS…`` (``pytest``)."""
    if front == "cli":
        return [sys.executable, "-c", "import sys; from pytest_homefield.cli import main; sys.exit(main())", "run",
                *flags]
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--homefield",
            *(f.replace("--", "--homefield-", 1) if f.startswith("--") else f for f in flags)]


def _accepted(front: str, repo: Path) -> set[str]:
    """The long options that front end's ``--help`` lists (``homefield run --help``, ``pytest --help``)."""
    out = subprocess.run(_command(front, ["--help"]) if front == "cli" else
                         [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--help"],
                         cwd=repo, env=_env(), capture_output=True, text=True, timeout=120).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out))


#: Bad input whose error names options: the flags of ``homefield run`` (pytest's: ``--homefield-`` each). Before
#: opt46 pytest's error named ``--adaptive``, ``--shard`` and ``--max-total-memory-mb``; the other two held already.
CASES = [
    pytest.param(["--agent", "oracle", "--adaptive", "--shard", "1/2"], id="adaptive-with-shard",
                 marks=pytest.mark.slow),
    pytest.param(["--agent", "oracle", "--max-total-memory-mb", "1"], id="memory-budget", marks=pytest.mark.slow),
    pytest.param(["--agent", "preds:x.jsonl", "--preds-policy", "bogus"], id="preds-policy", marks=pytest.mark.slow),
    pytest.param(["--agent", "oracle", "--sandbox", "bogus"], id="sandbox", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("flags", CASES)
def test_both_front_ends_name_options_they_accept(tmp_path: Path, flags: list[str]) -> None:
    repo = _repo(tmp_path)
    for front in FRONT_ENDS:
        proc = subprocess.run(_command(front, flags), cwd=repo, env=_env(), capture_output=True, text=True,
                              timeout=120)
        text = proc.stdout + proc.stderr
        error = [line for line in text.splitlines() if "ERROR" in line or line.startswith("homefield run:")]
        assert proc.returncode != 0 and error, (front, text[-2000:])
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", "\n".join(error)))
        assert named, (front, error)
        assert named <= _accepted(front, repo), (front, error)
