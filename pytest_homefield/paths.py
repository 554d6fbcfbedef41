"""Classify a repository path: ``test``, ``docs``, ``config``, ``dependency`` or ``source``, from the
path alone (one rule for mining, grading and the report's similarity to the gold patch).

Every changed path is one of five classes (:func:`classify_path`):

``test``
    Test modules (``test_*.py``, ``*_test.go``, ``*.spec.ts``, ``FooTest.java``, … see
    :data:`TEST_MODULE_PATTERNS`) and test-side support files: anything under a test directory
    (``tests/``, ``test/``, ``__tests__/``, ``testdata/``, top-level ``testing/``, ``spec/``, …),
    ``conftest.py``, ``spec_helper.rb``, …, and paths matching the extra ``test_globs`` of
    ``.homefield.yml``. The scan also knows the tree: a test-named folder below the top level that
    holds nothing pytest would collect (``src/pkg/test/runner.py``) is a source package
    (:class:`Classifier`, ``tree``). Test files are hidden from the agent and restored at grading. Only test
    *modules* are runnable (:func:`runnable_tests`): fixtures, data files, helpers and conftest
    files travel with the tests but name no tests of their own. A ``test_globs`` match is a test
    module when it is a code file (``.py``, ``.js``, ``.go``, …) or when the glob names the file itself,
    its last part a file pattern (``tests/snippets/**/*.txt``: golden files a conftest's
    ``pytest_collect_file`` makes tests of, as pygments' are); a data file below a folder a glob names
    (``qa/``, ``integration/**``) is a support file.
``docs``
    Documentation and project metadata that no test exercises: ``*.md``, ``*.rst``, ``*.txt``
    (except requirement/constraint lists and ``CMakeLists.txt``), anything under ``docs/``,
    ``doc/``, ``changelog/``, ``LICENSE*``, ``CHANGELOG*``, ``CITATION.cff``, ….
``config``
    Tooling configuration that no test exercises (:data:`CONFIG_DIRS`, :data:`CONFIG_NAMES`): CI
    (``.github/`` except its Markdown, ``.circleci/``, ``.gitlab-ci.yml``, …), version-control
    metadata (``.gitignore``, ``.gitattributes``, ``.mailmap``), linters, formatters and type
    checkers (``mypy.ini``, ``.flake8``, ``ruff.toml``, ``.pre-commit-config.yaml``, …) and bots
    (``renovate.json``). Neither source nor docs: a commit of config alone is ``config_only``, and a
    config file gives a task no language. ``tox.ini`` is config too, and so are the sections of
    ``setup.cfg`` outside its dependency tables: neither is the project's source (issue 35).
    ``pytest.ini`` and ``pyproject.toml`` stay with their own class.
``dependency``
    Dependency manifests and lock files: ``requirements*.txt``, ``pyproject.toml``, ``setup.py``,
    ``setup.cfg``, ``Pipfile(.lock)``, ``poetry.lock``, ``uv.lock``, ``package.json``,
    ``package-lock.json``, ``yarn.lock``, ``go.mod``/``go.sum``, ``Cargo.toml``/``Cargo.lock``,
    ``Gemfile(.lock)``, ``composer.json``, ``pom.xml``, …. Some manifests also hold non-dependency
    settings (:data:`CONTENT_CHECKED`); for those
    :func:`pytest_homefield.mine.classify.dependency_tables_changed` compares the two
    versions' dependency tables, and a change outside them counts as a source change (except, in
    the scan, a ``pyproject.toml`` changed only in linter-like ``[tool.X]`` tables:
    :func:`pytest_homefield.mine.classify.tool_settings_changed`).
``source``
    Everything else.

Order of the rules: test, then a docs directory, then a config directory or name, then dependency
file names, then docs names, then source. So ``tests/README.md`` is a test file,
``docs/requirements.txt`` is docs and ``.github/workflows/ci.yml`` config.

Globs (``test_globs``, and the scan's ``paths``) follow ``.gitignore`` conventions: a glob without a
``/`` matches any single path component (``*_check.py``, ``fixtures``); a glob with a ``/`` is
anchored at the repository root (a leading ``/`` is ignored); ``*`` and ``?`` stay within one
component, ``**`` spans any number of them; a glob that matches a directory matches everything
below it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

__all__ = [
    "TEST",
    "DOCS",
    "DEPENDENCY",
    "CONFIG",
    "SOURCE",
    "CLASSES",
    "CONTENT_CHECKED",
    "Classifier",
    "classify_path",
    "is_test_module",
    "runnable_tests",
    "compile_globs",
]

TEST = "test"
DOCS = "docs"
DEPENDENCY = "dependency"
CONFIG = "config"
SOURCE = "source"
CLASSES = (TEST, DOCS, DEPENDENCY, CONFIG, SOURCE)

# --- tests -------------------------------------------------------------------------------------

_CODE_EXT = r"(?:[cm]?[jt]sx?|vue|svelte|coffee)"
#: File-name patterns of runnable test modules, by ecosystem (regexes on the base name).
TEST_MODULE_PATTERNS: tuple[str, ...] = (
    # Python: pytest defaults, Django's tests.py, *_tests.py
    r"test_.*\.py",
    r".*_tests?\.py",
    r"tests\.py",
    # JavaScript / TypeScript: *.test.js, *.spec.ts, …
    rf".*\.(?:test|spec)\.{_CODE_EXT}",
    # Go, Dart, Elixir, Ruby minitest, C/C++
    r".*_test\.(?:go|dart|exs|rb|c|cc|cpp|cxx)",
    r".*_unittest\.(?:c|cc|cpp|cxx)",
    r"test_.*\.(?:rb|c|cc|cpp|cxx)",
    # Ruby RSpec
    r".*_spec\.rb",
    # JVM: Maven surefire defaults for Java, Kotlin/Scala/Groovy specs and suites
    r"(?:Test[A-Z0-9_].*|.*(?:Test|Tests|TestCase|IT))\.java",
    r".*(?:Test|Tests|Spec)\.(?:kt|kts|groovy)",
    r".*(?:Test|Tests|Spec|Suite)\.scala",
    # PHP, C#, Swift
    r".*Test\.php",
    r".*Tests?\.(?:cs|swift)",
    # Rust: a separate `mod tests` file
    r"tests\.rs",
)
_TEST_MODULE_RE = re.compile("|".join(f"(?:{p})" for p in TEST_MODULE_PATTERNS))
#: What a name matching :data:`_TEST_MODULE_RE` holds (each pattern one of these, case as written): most names
#: hold none, and a substring test is far cheaper than the fourteen patterns (issue 35: they were 40 % of
#: classifying a path).
_TEST_MODULE_MARKS = ("test", "Test", "spec", "Spec", "IT.", "Suite.")


def _is_test_module_name(name: str) -> bool:
    """Whether the base ``name`` matches one of :data:`TEST_MODULE_PATTERNS`."""
    return any(mark in name for mark in _TEST_MODULE_MARKS) and _TEST_MODULE_RE.fullmatch(name) is not None
_JS_FILE_RE = re.compile(rf".*\.{_CODE_EXT}")  # under __tests__/, every script is a test module
_CODE_FILE_RE = re.compile(
    rf".*\.(?:py|{_CODE_EXT}|go|rb|java|kts?|scala|groovy|php|cs|swift|rs|exs?|dart|c|cc|cpp|cxx)"
)

#: Directory names that hold tests at any depth.
TEST_DIRS = frozenset(
    {"test", "tests", "__tests__", "testdata", "test_data", "__snapshots__", "__mocks__",
     "__fixtures__", "androidTest", "testFixtures", "integrationTest"}
)
#: Directory names that hold tests only as a top-level folder (``numpy/testing`` is source).
TOP_TEST_DIRS = frozenset({"testing", "spec", "specs", "e2e"})
#: Test support files by name: travel with the tests, are not test modules.
TEST_SUPPORT_NAMES = frozenset(
    {"conftest.py", "spec_helper.rb", "rails_helper.rb", "test_helper.rb", "test_helper.exs",
     "setupTests.js", "setupTests.ts", "jest.setup.js", "jest.setup.ts"}
)

# --- docs --------------------------------------------------------------------------------------

DOC_DIRS = frozenset({"doc", "docs", "documentation", "changelog", "changelog.d", "changes",
                      "newsfragments"})
_DOC_EXT = (".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".txt", ".rdoc")
_DOC_STEMS = re.compile(
    r"(?:license|licence|copying|notice|changelog|changes|history|news|authors|contributors|"
    r"readme|contributing|code_of_conduct|security|support|maintainers|codeowners|citation)(?:[._-].*)?",
    re.IGNORECASE,
)
DOC_NAMES = frozenset(
    {".readthedocs.yml", ".readthedocs.yaml", "mkdocs.yml", "mkdocs.yaml", "CITATION.cff", "FUNDING.yml"}
)
_NOT_DOC_TXT = frozenset({"cmakelists.txt"})

# --- config ------------------------------------------------------------------------------------

#: Top-level folders of CI and editor configuration (``.github/*.md`` stays docs).
CONFIG_DIRS = frozenset({".github", ".circleci", ".gitlab", ".buildkite", ".azure-pipelines", ".devcontainer",
                         ".vscode", ".idea", ".husky", ".changeset"})
#: File names of tooling configuration (any folder).
CONFIG_NAMES = frozenset(
    {
        # version control
        ".gitignore", ".gitattributes", ".gitmodules", ".mailmap", ".git-blame-ignore-revs", ".dockerignore",
        ".hgignore", ".editorconfig",
        # CI and bots
        ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".appveyor.yml", "azure-pipelines.yml",
        "codecov.yml", ".codecov.yml", "renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json",
        "dependabot.yml", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", ".coveragerc",
        # linters, formatters, type checkers
        "mypy.ini", ".mypy.ini", ".flake8", ".pylintrc", "pylintrc", ".isort.cfg", "ruff.toml", ".ruff.toml",
        ".yamllint", ".yamllint.yml", ".yamllint.yaml", ".markdownlint.json", ".markdownlint.yaml",
        ".markdownlint-cli2.yaml", ".prettierrc", ".prettierignore", ".eslintignore", ".stylelintrc",
        ".clang-format", ".clang-tidy", "rustfmt.toml", ".rustfmt.toml", "clippy.toml", ".golangci.yml",
        ".golangci.yaml", ".rubocop.yml", ".typos.toml", "_typos.toml", ".codespellrc", ".cspell.json",
        "pyrightconfig.json", ".bandit", ".pep8", ".pycodestyle", ".pydocstyle", ".zenodo.json",
        # test runners' and tools' settings: no source of the project (issue 35)
        "tox.ini",
    }
)
_CONFIG_NAME_RE = re.compile(r"\.(?:eslintrc|prettierrc|stylelintrc)(?:\..*)?")

# --- dependencies ------------------------------------------------------------------------------

#: Manifests that also hold other settings: a change is a dependency change only if their
#: dependency tables differ (see :func:`dependency_tables_changed`).
CONTENT_CHECKED = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "composer.json"}
)
DEPENDENCY_NAMES = CONTENT_CHECKED | frozenset(
    {
        # Python
        "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock", "pdm.lock", "pixi.lock", "pixi.toml",
        "pylock.toml", "environment.yml", "environment.yaml", "conda-lock.yml",
        # JavaScript
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock",
        "bun.lockb", "deno.lock",
        # Go, Rust, Ruby, PHP
        "go.mod", "go.sum", "go.work", "go.work.sum", "Cargo.lock", "Gemfile", "Gemfile.lock",
        "gems.rb", "gems.locked", "composer.lock",
        # JVM, .NET, Swift, Elixir, Dart, Haskell, C/C++
        "pom.xml", "build.gradle", "build.gradle.kts", "gradle.lockfile", "libs.versions.toml",
        "build.sbt", "packages.lock.json", "Directory.Packages.props", "packages.config",
        "Package.swift", "Package.resolved", "Podfile", "Podfile.lock", "Cartfile", "Cartfile.resolved",
        "mix.exs", "mix.lock", "pubspec.yaml", "pubspec.lock", "stack.yaml", "cabal.project",
        "vcpkg.json", "conanfile.txt", "conanfile.py",
    }
)
_DEPENDENCY_NAME_RE = re.compile(
    r"(?:.*[._-])?requirements(?:[._-].*)?\.(?:txt|in)|constraints(?:[._-].*)?\.txt|pylock\..*\.toml"
    r"|.*\.gemspec",
    re.IGNORECASE,
)
_DEPENDENCY_DIRS = frozenset({"requirements"})


# --- globs -------------------------------------------------------------------------------------

def _glob_regex(glob: str, *, below: bool = True) -> str:
    """Translate one glob (module docstring conventions) to a regex source matching a whole path; with
    ``below`` false, only a path the glob names itself (never one below a directory it matches)."""
    pattern = glob.strip().rstrip("/")
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(pattern[i]))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return f"{prefix}{body}(?:/.*)?" if below else f"{prefix}{body}"


def compile_globs(globs: Iterable[str], *, below: bool = True) -> Callable[[str], bool]:
    """Compile path globs (module docstring conventions) into one predicate ``path -> bool``.

    ``path`` is repository-relative with ``/`` separators. No globs: the predicate is always false.
    With ``below`` false the predicate is true only for a path a glob names itself: ``qa/`` is then
    false for ``qa/data.json``, ``tests/snippets/**/*.txt`` true for ``tests/snippets/py/a.txt``.
    Raises ``ValueError`` naming the glob if one does not compile.
    """
    sources = []
    for glob in globs:
        if not glob.strip():
            continue
        source = _glob_regex(glob, below=below)
        try:
            re.compile(source)
        except re.error as exc:
            raise ValueError(f"invalid glob {glob!r}: {exc}") from None
        sources.append(source)
    if not sources:
        return lambda path: False
    regex = re.compile("|".join(f"(?:{s})" for s in sources), re.DOTALL)
    return lambda path: regex.fullmatch(path) is not None


# --- classification ----------------------------------------------------------------------------

class Classifier:
    """Path classifier for one set of extra test globs, memoising every answer.

    One instance serves a whole scan; the cache holds one entry per distinct path seen.

    ``tree`` (optional): every file path of the tree the paths come from (e.g. ``HEAD``). A test-named
    folder below the top level that holds no file pytest would collect (no test module anywhere under
    it, by :data:`TEST_MODULE_PATTERNS` and ``test_globs``) is then a source package that happens to
    be called ``test``/``testing``: ``src/pkg/testing/helpers.py`` is source, while
    ``src/pkg/tests/test_x.py`` and its fixtures stay tests. Top-level test folders are tests whatever
    they hold. Without ``tree`` the folder name alone decides (:func:`classify_path`).
    """

    def __init__(self, test_globs: Sequence[str] = (), tree: Iterable[str] | None = None) -> None:
        self.test_globs = tuple(test_globs)
        self._extra_test = compile_globs(self.test_globs)
        # the globs that name files (their last part is a name pattern, not a folder's `**`): a file one
        # of them names is a test module whatever its type (a conftest collects `*.txt` goldens, pygments)
        self._named_test = compile_globs(
            [g for g in self.test_globs if g.strip().rstrip("/").rsplit("/", 1)[-1] not in ("", "**")
             and not g.strip().endswith("/")], below=False)
        self._cache: dict[str, tuple[str, bool]] = {}
        self._folders: dict[str, tuple[bool, bool, bool, bool, bool, bool]] = {}
        self._source_dirs = self._source_packages(tree) if tree is not None else frozenset()

    def _source_packages(self, tree: Iterable[str]) -> frozenset[str]:
        """Test-named folders (``a/b/tests``, below the top level) with no test module under them."""
        named: set[str] = set()
        with_tests: set[str] = set()
        for path in tree:
            parts = path.split("/")
            collected = _is_test_module_name(parts[-1]) or self._extra_test(path)
            for i in range(1, len(parts) - 1):
                if parts[i] in TEST_DIRS or parts[i].lower() in TEST_DIRS:
                    folder = "/".join(parts[: i + 1])
                    named.add(folder)
                    if collected:
                        with_tests.add(folder)
        return frozenset(named - with_tests)

    def _folder(self, folder: str) -> tuple[bool, bool, bool, bool, bool, bool]:
        """What :meth:`_decide` asks of a path's folders, for ``folder`` (the path up to and including its
        last ``/``, or ``""``), worked out once per folder: most paths share theirs (issue 35: 4,723 paths
        in 353 folders in pytest's history). ``(in a test folder, the last folder is a Rust ``tests``
        crate folder, under ``__tests__``, under a docs folder, under a top-level config folder, under a
        dependency folder)``."""
        hit = self._folders.get(folder)
        if hit is not None:
            return hit
        dirs = folder.split("/")[:-1]
        in_test_dir = bool(dirs) and dirs[0] in TOP_TEST_DIRS
        rust = False
        for i, d in enumerate(dirs):
            if (d in TEST_DIRS or d.lower() in TEST_DIRS) and "/".join(dirs[: i + 1]) not in self._source_dirs:
                in_test_dir = True
                rust = i == len(dirs) - 1 and d == "tests"  # Rust integration test crate: tests/<name>.rs
        hit = self._folders[folder] = (
            in_test_dir, rust, "__tests__" in dirs, any(d.lower() in DOC_DIRS for d in dirs),
            bool(dirs) and dirs[0] in CONFIG_DIRS, any(d in _DEPENDENCY_DIRS for d in dirs))
        return hit

    def _decide(self, path: str) -> tuple[str, bool]:
        name = path.rsplit("/", 1)[-1]
        if name in TEST_SUPPORT_NAMES:
            return TEST, False
        if self._extra_test(path):  # runnable unless a data file below a folder: `test_globs: [qa/]` has
            # fixtures too; a data file a glob names itself (`tests/snippets/**/*.txt`) is a test module
            return TEST, _CODE_FILE_RE.fullmatch(name) is not None or self._named_test(path)
        if _is_test_module_name(name):
            return TEST, True
        in_test_dir, rust, under_tests_js, in_docs, in_config, in_deps = self._folder(path[: len(path) - len(name)])
        if rust and name.endswith(".rs"):
            return TEST, True
        if in_test_dir:
            return TEST, under_tests_js and _JS_FILE_RE.fullmatch(name) is not None
        if in_docs:
            return DOCS, False
        lower = name.lower()
        if in_config:
            return (DOCS, False) if lower.endswith((".md", ".markdown", ".rst")) else (CONFIG, False)
        if name in CONFIG_NAMES or _CONFIG_NAME_RE.fullmatch(name):
            return CONFIG, False
        if (
            name in DEPENDENCY_NAMES
            or _DEPENDENCY_NAME_RE.fullmatch(name)
            or (in_deps and name.endswith((".txt", ".in")))
        ):
            return DEPENDENCY, False
        if (
            name in DOC_NAMES
            or (lower.endswith(_DOC_EXT) and lower not in _NOT_DOC_TXT)
            or _is_doc_stem(name)
        ):
            return DOCS, False
        return SOURCE, False

    def info(self, path: str) -> tuple[str, bool]:
        """``(class, runnable)`` of ``path``; ``runnable`` is true only for test modules."""
        hit = self._cache.get(path)
        if hit is None:
            hit = self._cache[path] = self._decide(path)
        return hit

    def classify(self, path: str) -> str:
        """The class of ``path``: one of :data:`CLASSES`."""
        return self.info(path)[0]

    def is_test_module(self, path: str) -> bool:
        """Whether ``path`` is a runnable test module (not a fixture, helper or conftest)."""
        return self.info(path)[1]


def _is_doc_stem(name: str) -> bool:
    """``LICENSE``, ``CHANGELOG.md``, ``AUTHORS.txt``, ``NOTICE`` … but not ``license.py``."""
    if not _DOC_STEMS.fullmatch(name):
        return False
    _, dot, ext = name.rpartition(".")
    return not dot or ext.lower() in {"md", "markdown", "rst", "txt", "adoc", "rdoc", "in"} or name.isupper()


@lru_cache(maxsize=32)
def _classifier(test_globs: tuple[str, ...]) -> Classifier:
    return Classifier(test_globs)


def classify_path(path: str, test_globs: Sequence[str] = ()) -> str:
    """Class of one repository-relative ``path`` (``/`` separators): ``"test"``, ``"docs"``,
    ``"dependency"``, ``"config"`` or ``"source"``, decided from the path alone (module docstring for the rules).

    ``test_globs`` are extra test patterns (config key ``test_globs``), added to the defaults.
    A dependency manifest in :data:`CONTENT_CHECKED` is reported as ``"dependency"`` here; the scan
    reclassifies it as source when its dependency tables did not change.
    """
    return _classifier(tuple(test_globs)).classify(path)


def is_test_module(path: str, test_globs: Sequence[str] = ()) -> bool:
    """Whether ``path`` is a runnable test module: a test file that names tests of its own, as
    opposed to a fixture, data file, helper or ``conftest.py`` under a test directory."""
    return _classifier(tuple(test_globs)).is_test_module(path)


def runnable_tests(paths: Iterable[str], test_globs: Sequence[str] = ()) -> list[str]:
    """The runnable test modules among ``paths``, in their order (see :func:`is_test_module`)."""
    classifier = _classifier(tuple(test_globs))
    return [p for p in paths if classifier.is_test_module(p)]
