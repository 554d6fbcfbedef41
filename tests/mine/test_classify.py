"""Path classes, runnable test modules, globs, manifest content checks and message words."""

from __future__ import annotations

import ast
import warnings

import pytest

from pytest_homefield import paths
from pytest_homefield.mine.classify import (
    _chunks,
    _tables_of,
    dependency_tables,
    dependency_tables_changed,
    message_words,
    tomllib,
)
from pytest_homefield.paths import Classifier, classify_path, compile_globs, is_test_module, runnable_tests

# (path, class, runnable test module)
PATHS = [
    # Python tests
    ("tests/test_core.py", "test", True),
    ("test/test_core.py", "test", True),
    ("pkg/test_inline.py", "test", True),
    ("pkg/core_test.py", "test", True),
    ("pkg/core_tests.py", "test", True),
    ("app/tests.py", "test", True),  # Django
    ("conftest.py", "test", False),
    ("pkg/conftest.py", "test", False),
    ("tests/conftest.py", "test", False),
    ("testing/test_assertion.py", "test", True),  # pytest's own layout
    ("testing/example_scripts/foo.py", "test", False),
    # test-side support files: hidden with the tests, not runnable
    ("tests/data/sample.json", "test", False),
    ("tests/helpers.py", "test", False),
    ("tests/fixtures/ünï côde.txt", "test", False),
    ("tests/README.md", "test", False),
    ("tests/requirements.txt", "test", False),
    ("pkg/testdata/input.bin", "test", False),
    # other languages
    ("src/app.test.js", "test", True),
    ("src/app.spec.ts", "test", True),
    ("src/widget.test.tsx", "test", True),
    ("src/__tests__/widget.js", "test", True),
    ("src/__tests__/__snapshots__/widget.js.snap", "test", False),
    ("cmd/server/main_test.go", "test", True),
    ("src/test/java/org/x/FooTest.java", "test", True),
    ("src/test/resources/log4j.xml", "test", False),
    ("core/FooTest.java", "test", True),
    ("lib/foo_spec.rb", "test", True),
    ("spec/models/user_spec.rb", "test", True),
    ("spec/spec_helper.rb", "test", False),
    ("tests/Unit/UserTest.php", "test", True),
    ("src/main/UserTest.php", "test", True),
    ("core/src/test/scala/x/ParserSpec.scala", "test", True),
    ("app/src/test/kotlin/x/ParserTest.kt", "test", True),
    ("tests/integration.rs", "test", True),
    ("tests/common/mod.rs", "test", False),
    ("crates/x/tests/api.rs", "test", True),
    ("Tests/AppTests/AppTests.swift", "test", True),
    # docs
    ("README.md", "docs", False),
    ("docs/index.rst", "docs", False),
    ("docs/conf.py", "docs", False),
    ("docs/requirements.txt", "docs", False),
    ("doc/guide.html", "docs", False),
    ("changelog/1234.bugfix.rst", "docs", False),
    ("CHANGELOG", "docs", False),
    ("LICENSE", "docs", False),
    ("LICENSE-MIT", "docs", False),
    ("AUTHORS", "docs", False),
    ("notes.txt", "docs", False),
    ("mkdocs.yml", "docs", False),
    (".github/ISSUE_TEMPLATE/bug.md", "docs", False),
    # tooling configuration: neither docs nor source
    (".github/workflows/ci.yml", "config", False),
    (".github/dependabot.yml", "config", False),
    (".gitignore", "config", False),
    ("pkg/.gitignore", "config", False),
    ("mypy.ini", "config", False),
    (".pre-commit-config.yaml", "config", False),
    (".flake8", "config", False),
    ("ruff.toml", "config", False),
    (".eslintrc.json", "config", False),
    ("renovate.json", "config", False),
    # dependencies
    ("requirements.txt", "dependency", False),
    ("requirements-dev.txt", "dependency", False),
    ("dev-requirements.txt", "dependency", False),
    ("requirements/testing.txt", "dependency", False),
    ("constraints.txt", "dependency", False),
    ("pyproject.toml", "dependency", False),
    ("setup.py", "dependency", False),
    ("setup.cfg", "dependency", False),
    ("Pipfile", "dependency", False),
    ("Pipfile.lock", "dependency", False),
    ("poetry.lock", "dependency", False),
    ("uv.lock", "dependency", False),
    ("package.json", "dependency", False),
    ("web/package-lock.json", "dependency", False),
    ("yarn.lock", "dependency", False),
    ("go.mod", "dependency", False),
    ("go.sum", "dependency", False),
    ("Cargo.toml", "dependency", False),
    ("Cargo.lock", "dependency", False),
    ("Gemfile", "dependency", False),
    ("Gemfile.lock", "dependency", False),
    ("mygem.gemspec", "dependency", False),
    ("composer.json", "dependency", False),
    ("pom.xml", "dependency", False),
    # source
    ("pkg/core.py", "source", False),
    ("src/app.ts", "source", False),
    ("CMakeLists.txt", "source", False),
    ("tox.ini", "config", False),
    ("pkg/license.py", "source", False),
    ("numpy/testing/utils.py", "source", False),  # `testing` is a test folder only at the top
    ("pkg/contest.py", "source", False),
    ("Makefile", "source", False),
    ("pkg/dir with space/ä b.py", "source", False),
    # what a path's folders say (worked out once per folder, issue 35)
    ("crates/core/tests/parse.rs", "test", True),  # a Rust integration test crate
    ("tests/unit/parse.rs", "test", False),  # only directly under tests/
    ("web/__tests__/app.js", "test", True),
    ("web/__tests__/fixture.json", "test", False),
    ("docs/tests/conf.py", "test", False),  # a test folder wins over a docs folder
    ("ci/requirements/x.txt", "dependency", False),
    (".github/workflows/README.md", "docs", False),
]


@pytest.mark.parametrize(("path", "cls", "runnable"), PATHS)
def test_classify_path(path: str, cls: str, runnable: bool) -> None:
    assert classify_path(path) == cls
    assert is_test_module(path) is runnable


def test_runnable_tests_keeps_order_and_drops_support_files() -> None:
    paths = ["tests/data/a.json", "tests/test_b.py", "tests/conftest.py", "pkg/x.py", "tests/test_a.py"]
    assert runnable_tests(paths) == ["tests/test_b.py", "tests/test_a.py"]


def test_test_globs_add_runnable_test_patterns() -> None:
    assert classify_path("checks/foo_check.py") == "source"
    assert classify_path("checks/foo_check.py", ["*_check.py"]) == "test"
    assert is_test_module("checks/foo_check.py", ["*_check.py"])
    assert classify_path("qa/anything.txt", ["qa/"]) == "test"
    assert runnable_tests(["qa/data.json", "qa/check_x.py", "qa/conftest.py"], ["qa/"]) == ["qa/check_x.py"]
    assert Classifier(["integration/**/*.py"]).info("integration/a/b/c.py") == ("test", True)


def test_test_globs_naming_data_files_make_them_runnable() -> None:
    """pygments' lexer fixes add golden files its conftest collects (``tests/snippets/<lexer>/*.txt``,
    node id ``tests/snippets/python/test_x.txt::``): a glob that names such files makes them test
    modules, so the 35 commits since 2026-05 whose only test is a snippet become candidates; a glob
    naming a folder still leaves the data files under it support files."""
    snippet = "tests/snippets/python/test_frozendict_builtin.txt"
    assert runnable_tests([snippet]) == []
    assert runnable_tests([snippet, "tests/snippets/python/x.txt.output"], ["tests/snippets/**/*.txt"]) == [snippet]
    assert runnable_tests([snippet], ["*.txt"]) == [snippet]
    for folder in (["tests/snippets/"], ["tests/snippets"], ["snippets"], ["tests/snippets/**"]):
        assert runnable_tests([snippet], folder) == [], folder
        assert classify_path(snippet, folder) == "test"


@pytest.mark.parametrize(
    ("globs", "path", "hit"),
    [
        (["pkg"], "pkg/a.py", True),
        (["pkg"], "src/pkg/a.py", True),  # no slash: any component
        (["pkg/"], "pkg/a.py", True),
        (["src/pkg"], "src/pkg/sub/a.py", True),
        (["src/pkg"], "other/src/pkg/a.py", False),  # a slash anchors at the root
        (["/src/*.py"], "src/a.py", True),
        (["src/*.py"], "src/sub/a.py", False),  # * stays in one component
        (["src/**/*.py"], "src/a.py", True),
        (["src/**/*.py"], "src/x/y/a.py", True),
        (["**/*.md"], "a/b/c.md", True),
        (["*.md"], "a/b/c.md", True),
        (["*.md"], "a/b/c.py", False),
        (["data?.txt"], "x/data1.txt", True),
        (["[ab].py"], "b.py", True),
        (["[!ab].py"], "b.py", False),
        ([], "a.py", False),
        (["docs", "pkg/*.py"], "pkg/x.py", True),
    ],
)
def test_compile_globs(globs: list[str], path: str, hit: bool) -> None:
    assert compile_globs(globs)(path) is hit


PYPROJECT = b"""\
[build-system]
requires = ["setuptools>=68"]

[project]
name = "demo"
version = "1.0"
dependencies = ["click>=8"]

[project.optional-dependencies]
test = ["pytest"]

[tool.ruff]
line-length = 100
"""


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        (b'version = "1.0"', b'version = "1.1"', False),
        (b"line-length = 100", b"line-length = 120", False),
        (b"[tool.ruff]", b"# a comment\n[tool.ruff]", False),
        (b'dependencies = ["click>=8"]', b'dependencies = ["click>=8", "rich"]', True),
        (b'test = ["pytest"]', b'test = ["pytest", "hypothesis"]', True),
        (b'requires = ["setuptools>=68"]', b'requires = ["hatchling"]', True),
        (b"[tool.ruff]", b"[dependency-groups]\ndev = ['mypy']\n\n[tool.ruff]", True),
        (b"[tool.ruff]", b'[tool.poetry.group.dev.dependencies]\nmypy = "*"\n\n[tool.ruff]', True),
        (b"[tool.ruff]", b"[tool.ruff", True),  # no longer parses: counted as a change
    ],
)
def test_pyproject_inside_vs_outside_dependency_tables(old: bytes, new: bytes, changed: bool) -> None:
    assert dependency_tables_changed("pyproject.toml", PYPROJECT, PYPROJECT.replace(old, new)) is changed


def test_pyproject_versions_that_differ_in_tool_settings_are_parsed_once() -> None:
    """Issue 35: a scan's memo keeps pyproject tables per text of the part read; a version that changes
    only ``[tool.*]`` reuses them, one that changes a dependency does not, and a broken one still raises."""
    memo: dict[str, object] = {}
    first = dependency_tables("pyproject.toml", PYPROJECT, memo=memo)
    tool = dependency_tables("pyproject.toml", PYPROJECT.replace(b"100", b"120"), memo=memo)
    assert tool is first and len(memo) == 1
    deps = dependency_tables("pyproject.toml", PYPROJECT.replace(b'"click>=8"', b'"click>=9"'), memo=memo)
    assert deps != first and len(memo) == 2
    assert deps == dependency_tables("pyproject.toml", PYPROJECT.replace(b'"click>=8"', b'"click>=9"'))
    with pytest.raises(ValueError, match="does not parse"):
        dependency_tables("pyproject.toml", PYPROJECT.replace(b"[project]", b"[project"), memo=memo)


def test_added_or_deleted_manifest() -> None:
    assert dependency_tables_changed("pyproject.toml", None, PYPROJECT)
    assert dependency_tables_changed("sub/pyproject.toml", PYPROJECT, None)
    assert not dependency_tables_changed("pyproject.toml", None, b"[tool.ruff]\nline-length = 1\n")


def test_setup_cfg_and_setup_py() -> None:
    cfg = b"[metadata]\nname = x\nversion = 1\n[options]\ninstall_requires =\n    click\n"
    assert not dependency_tables_changed("setup.cfg", cfg, cfg.replace(b"version = 1", b"version = 2"))
    assert dependency_tables_changed("setup.cfg", cfg, cfg + b"    rich\n")
    extras = cfg + b"[options.extras_require]\ntest = pytest\n"
    assert dependency_tables_changed("setup.cfg", cfg, extras)

    py = b"from setuptools import setup\nREQS = ['click']\nsetup(name='x', version='1', install_requires=REQS)\n"
    assert not dependency_tables_changed("setup.py", py, py.replace(b"version='1'", b"version='2'"))
    assert not dependency_tables_changed("setup.py", py, py.replace(b"['click']", b"[\n  'click',\n]"))
    assert dependency_tables_changed("setup.py", py, py.replace(b"['click']", b"['click', 'rich']"))
    nested = b"import setuptools\ndef main():\n    setuptools.setup(name='x', extras_require={'t': ['a']})\n"
    assert dependency_tables_changed("setup.py", nested, nested.replace(b"['a']", b"['b']"))
    assert not dependency_tables_changed("setup.py", nested, nested.replace(b"name='x'", b"name='y'"))


def test_an_invalid_escape_in_setup_py_warns_nothing() -> None:
    """pallets/markupsafe's old setup.py read its version with ``'^__version__\\s+=…'``: every mine of it
    opened with ``<unknown>:3: DeprecationWarning: invalid escape sequence '\\s'``, the compiler's word on
    the user's code, naming no file."""
    py = b"import re\nV = re.search('^v\\s+', '')\nsetup(name='x', install_requires=['a'])\n"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert dependency_tables("setup.py", py) == dependency_tables("setup.py", py, memo={})
        assert dependency_tables_changed("setup.py", py, py.replace(b"['a']", b"['b']"))
    assert [str(w.message) for w in seen] == []


def test_package_json_cargo_composer() -> None:
    pkg = b'{"name": "x", "version": "1.0.0", "scripts": {"t": "jest"}, "dependencies": {"a": "1"}}'
    assert not dependency_tables_changed("package.json", pkg, pkg.replace(b"1.0.0", b"1.0.1"))
    assert dependency_tables_changed("package.json", pkg, pkg.replace(b'"a": "1"', b'"a": "2"'))
    cargo = b'[package]\nname = "x"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n'
    assert not dependency_tables_changed("Cargo.toml", cargo, cargo.replace(b"0.1.0", b"0.2.0"))
    assert dependency_tables_changed("Cargo.toml", cargo, cargo + b'\n[target.x.dev-dependencies]\na = "1"\n')
    comp = b'{"name": "x/y", "require": {"php": ">=8"}, "autoload": {}}'
    assert not dependency_tables_changed("composer.json", comp, comp.replace(b'{}}', b'{"a": 1}}'))


def test_dependency_tables_errors() -> None:
    with pytest.raises(ValueError, match="not a content-checked"):
        dependency_tables("requirements.txt", b"click\n")
    with pytest.raises(ValueError, match="does not parse"):
        dependency_tables("setup.py", b"setup(\n")
    assert dependency_tables_changed("uv.lock", b"a", b"a")  # not content-checked: always a change


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("Fix the parser", 3),
        ("Fix parser (#123)", 2),
        ("Fix parser (#123, #124)\n", 2),
        ("Fix parser\n\nSigned-off-by: A B <a@b.c>\nCo-authored-by: C <c@d.e>\n", 2),
        ("Fix parser\n\nCo-authored-by: C <c@d.e>\nMore context here\n", 5),
        ("Fix parser\n\nNote: the body is words too", 8),  # a lone `Key: value` paragraph stays
        ("Merge pull request #12 from user/branch\n\nAdd the frob feature", 4),
        ("Merge branch 'feature-x'", 0),
        ("Merge branch 'main' into feature\n", 0),
        ("- * -", 0),
        ("", 0),
        ("Ünïcode wörds count too", 4),
    ],
)
def test_message_words(message: str, words: int) -> None:
    assert message_words(message) == words


def test_test_named_source_package_decided_by_what_pytest_collects() -> None:
    tree = ["src/pkg/__init__.py", "src/pkg/test/__init__.py", "src/pkg/test/runner.py",
            "src/pkg/tests/__init__.py", "src/pkg/tests/test_core.py", "src/pkg/tests/data/input.json",
            "tests/helpers.py", "tests/fixtures/a.txt"]
    with_tree = Classifier(tree=tree)
    assert with_tree.classify("src/pkg/test/runner.py") == "source"  # holds nothing pytest collects
    assert with_tree.classify("src/pkg/test/__init__.py") == "source"
    assert with_tree.info("src/pkg/tests/test_core.py") == ("test", True)
    assert with_tree.classify("src/pkg/tests/data/input.json") == "test"  # fixtures beside test modules
    assert with_tree.classify("tests/helpers.py") == "test"  # top-level test folders stay tests
    assert Classifier().classify("src/pkg/test/runner.py") == "test"  # without a tree: the name alone
    # a test_globs pattern makes a folder's files collectable
    assert Classifier(["check_*.py"], tree=[*tree, "src/pkg/test/check_runner.py"]).classify(
        "src/pkg/test/runner.py") == "test"


SETUP_PY_SHAPES = [
    "from setuptools import setup\nREQS = ['click']\nsetup(name='x', install_requires=REQS)\n",
    "try:\n    from setuptools import setup\nexcept ImportError:\n    from distutils.core import setup\n"
    "REQS = ['a']\nif REQS:\n    pass\nelif 1:\n    pass\nelse:\n    REQS = []\nsetup(install_requires=REQS)\n",
    "import os\nlong_description = '''\nsetup(install_requires=['fake'])\nREQS = 1\n'''\n"
    "REQS = ['real']\nsetup(install_requires=REQS, long_description=long_description)\n",
    "@decorator\ndef main():\n    setup(install_requires=['a'])\n\n@other\n\nclass C:\n    pass\nmain()\n",
    "REQS = [\n'a',\n'b'\n]\nX = 1 + \\\n2\nsetup(\n**dict(install_requires=REQS)\n)\n",
    "def main():\n    setup(install_requires=['a'])\n# a comment\n\n\nif __name__ == '__main__':\n    main()\n",
    "print 'python 2'\nsetup(install_requires=['a'])\n",  # does not parse, in pieces or whole
    "x = (\n1)\ny = '''\n'''\nsetup(extras_require={'t': ['a']})\n",
    "REQS = ['a']\nsetup(install_requires=REQS, **OPTS)\nREQS = ['b']\nOPTS = {}\n",  # the last binding counts
    "",
]


@pytest.mark.parametrize("text", SETUP_PY_SHAPES, ids=["plain", "clauses", "triple-quoted", "decorators",
                                                  "brackets-and-backslash", "main", "python-2", "closed-string",
                                                  "rebound", "empty"])
def test_setup_py_read_in_chunks_is_read_whole(text: str) -> None:
    """Issue 35: a scan parses each top-level chunk of a setup.py once (memo); the tables are those of the
    whole text, for chunks cut inside strings, brackets, continued lines, clauses and decorators too, and a
    text that does not parse still raises."""
    memo: dict[object, object] = {}
    versions = [text, text.replace("'a'", "'b'"), text + "VERSION = '2'\n"]
    for version in versions:
        try:
            whole = dependency_tables("setup.py", version.encode())
        except ValueError:
            with pytest.raises(ValueError, match="does not parse"):
                dependency_tables("setup.py", version.encode(), memo=memo)
            continue
        assert dependency_tables("setup.py", version.encode(), memo=memo) == whole
    assert "".join(_chunks(text)) == text


def test_setup_py_chunks_are_parsed_once() -> None:
    """A version that changes one top-level statement parses that statement's chunk only."""
    head = "import setuptools\nREQS = ['click']\n"
    memo: dict[object, object] = {}
    dependency_tables("setup.py", (head + "setuptools.setup(install_requires=REQS, version='1')\n").encode(), memo=memo)
    assert len(_chunk_keys(memo)) == 3
    second = dependency_tables("setup.py", (head + "setuptools.setup(install_requires=REQS, version='2')\n").encode(),
                               memo=memo)
    assert len(_chunk_keys(memo)) == 4
    assert second == {"install_requires": "List(elts=[Constant(value='click')], ctx=Load())"}


def _chunk_keys(memo: dict[object, object]) -> list[object]:
    return [k for k in memo if isinstance(k, tuple) and k[0] == "setup.py"]


SETUP_CALL = ("from setuptools import setup\nREQS = ['click']\ndef docs():\n    return '''\n"
              "    version='0.1',\n'''\nsetup(\n    name='x',\n    version='1.0.dev1',  # bumped\n"
              "    url='https://x.example/1.0.dev1',\n    install_requires=REQS,\n    tests_require='pytest',\n"
              "    extras_require=dict(\n        docs='sphinx',\n    ),\n)\n")


@pytest.mark.parametrize(("old", "new", "parsed"), [
    ("version='1.0.dev1'", "version='1.0.dev2'", 0),  # a version bump: the chunk is not parsed again
    ("/1.0.dev1'", "/1.0.dev2'", 0),
    ("    version='0.1',", "    version='0.2',", 0),  # inside a string
    ("tests_require='pytest'", "tests_require='pytest-cov'", 1),  # a dependency keyword's value
    ("docs='sphinx'", "docs='mkdocs'", 1),  # inside one
    ("REQS = ['click']", "REQS = ['flask']", 1),  # a bound value
    ("name='x'", "name='y\\n'", 1),  # a backslash
    ("name='x'", "nom='x'", 1),  # a keyword
    ("name='x',", "name='x', # '", 1),  # the rest of the line
])
def test_setup_py_string_changes_outside_the_tables_are_not_parsed(
        old: str, new: str, parsed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: a chunk that differs from one parsed before only inside a plain string that no dependency
    table holds (a version bump in a long ``setup(...)`` call) is not parsed again; its tables are still
    the whole text's, and any other change is parsed."""
    assert old in SETUP_CALL
    memo: dict[object, object] = {}
    dependency_tables("setup.py", SETUP_CALL.encode(), memo=memo)
    calls: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: calls.append(text) or real_parse(text, *a, **k))
    version = SETUP_CALL.replace(old, new, 1)
    try:
        got: object = dependency_tables("setup.py", version.encode(), memo=memo)
    except ValueError:
        got = "does not parse"
    assert len(calls) == parsed
    monkeypatch.undo()
    try:
        whole: object = dependency_tables("setup.py", version.encode())
    except ValueError:
        whole = "does not parse"
    assert got == whole


@pytest.mark.parametrize("name", [
    "test_x.py", "x_test.py", "x_tests.py", "tests.py", "a.test.ts", "a.spec.jsx", "a_test.go", "a_unittest.cc",
    "test_a.rb", "a_spec.rb", "TestFoo.java", "FooIT.java", "FooTestCase.java", "FooSpec.kt", "FooSuite.scala",
    "FooTest.php", "FooTests.cs", "tests.rs", "testing.py", "contest.py", "Tester.java", "IT.java", "xSuite.py",
    "spec.rb", "a.spec.py", "readme.md", "TEST_X.PY", "test_.py",
])
def test_the_test_module_name_precheck_agrees_with_the_patterns(name: str) -> None:
    """Issue 35: the substring precheck before the fourteen test-module patterns only skips work."""
    assert paths._is_test_module_name(name) == (paths._TEST_MODULE_RE.fullmatch(name) is not None)


@pytest.mark.parametrize("text", [
    b"[project]\ndependencies = ['a']\n[tool.ruff]\nx = 1\n",
    b"name = 'x'\n[tool.black]\n[[tool.poetry.source]]\nname = 'y'\n[build-system]\nrequires = ['b']\n",
    b"\n\n  [ project ]  # c\ndependencies = []\n[tool.x]\n[tool.uv]\ndev-dependencies = ['c']\n",
])
def test_pyproject_tables_are_found_on_every_line_the_first_too(text: bytes) -> None:
    """Issue 35: the header search skips from newline to newline; a header on the first line, right after
    another or indented is still one (the tables read are those of a full parse)."""
    assert dependency_tables("pyproject.toml", text) == _tables_of(tomllib.loads(text.decode()), "pyproject.toml")


def test_tool_settings_changed_names_only_inert_tool_tables() -> None:
    from pytest_homefield.mine.classify import tool_settings_changed

    base = b'[project]\nname = "My_Pkg"\n\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n'
    assert tool_settings_changed(base, base.replace(b"100", b"88").replace(b"true", b"false")) == ["mypy", "ruff"]
    assert tool_settings_changed(base, base + b"# a comment\n") == []
    assert tool_settings_changed(base, base + b"[tool.coverage.run]\nbranch = true\n") == ["coverage"]
    for table in (b"[tool.pytest.ini_options]", b"[tool.pytest_env]", b"[tool.setuptools-scm]", b"[tool.hatch.build]",
                  b"[tool.poetry]", b"[tool.uv]", b"[tool.pdm]", b"[tool.flit.module]", b"[tool.my-pkg]"):
        assert tool_settings_changed(base, base + table + b'\nx = "y"\n') is None, table
    assert tool_settings_changed(base, base.replace(b"My_Pkg", b"pkg")) is None  # outside [tool]
    assert tool_settings_changed(None, base) is None and tool_settings_changed(base, None) is None
    assert tool_settings_changed(base, base + b"[tool.ruff\n") is None  # does not parse
