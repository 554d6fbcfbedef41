"""Build the sample repository that ``homefield demo`` mines: ``textkit``, a small text library.

Usage::

    python build_history.py DEST          # DEST must not exist or be an empty folder
    python build_history.py DEST --no-config

Importable too: :func:`build` returns the commit shas, oldest first, and :data:`COMMITS` says what
every commit changes and which mining outcome it is meant to show (``expect``: ``"task"`` or a drop
reason of contracts §7). Authors, committers and dates are fixed and git's own configuration is
ignored, so the same shas come out every time, on every machine.

The history (16 commits, oldest first) shows every mining outcome:

* eight valid tasks of different sizes (one-line fixes, new modules, a four-file feature), one of
  them with a vague three-word message ("Handle edge cases") and a low ``spec_score``;
* ``no_test_change`` (the skeleton; type hints without tests), ``docs_only``, ``dependency_change``
  (a new entry in pyproject's dependency table), ``message_too_short`` ("wip");
* ``passes_without_change`` (a refactor whose new test already passed before it),
  ``reference_fails`` (a new feature whose own tests fail at the commit, fixed later by a valid
  task), ``flaky`` (``tests/test_retry.py`` fails on every other run, counted in the file named by
  ``$TEXTKIT_FLAKY_COUNTER`` or ``<tempdir>/textkit-flaky-counter``).

Unless ``--no-config``, an uncommitted ``.homefield.yml`` (listed in ``.git/info/exclude``) sets
``test_cmd`` to this interpreter's pytest with plugin autoloading off: the sample's tests need no
plugin, and skipping the installed ones makes each test run several times faster.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Commit", "COMMITS", "AUTHOR", "build", "write_config", "expected_counts", "main"]

AUTHOR = ("Ada Example", "ada@example.com")
#: Author and committer date of the first commit; every next commit is one day and 37 minutes later.
START = 1704704400  # 2024-01-08T09:00:00Z
STEP_S = 86400 + 37 * 60
FLAKY_ENV = "TEXTKIT_FLAKY_COUNTER"


@dataclass(frozen=True)
class Commit:
    """One step of the history: ``files`` maps a path to its full new content, or ``None`` to
    delete it; ``expect`` is ``"task"`` or the reason mining drops the commit."""

    message: str
    files: dict[str, str | None]
    expect: str
    notes: str = ""
    author: tuple[str, str] = field(default=AUTHOR)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


def _t(text: str) -> str:
    """File content: dedented, without leading blank lines, ending in exactly one newline."""
    return textwrap.dedent(text).lstrip("\n").rstrip() + "\n"


def _more(base: str, text: str) -> str:
    """``base`` with the code ``text`` appended after two blank lines."""
    return base + "\n\n" + _t(text)


# --- file contents that several steps share ---------------------------------------------------

_PYPROJECT = _t('''
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "textkit"
    version = "0.1.0"
    description = "Small text utilities: slugs, word statistics, wrapping"
    requires-python = ">=3.8"
    dependencies = []

    [tool.setuptools]
    packages = ["textkit"]

    [tool.pytest.ini_options]
    testpaths = ["tests"]
''')

_README_1 = _t('''
    # textkit

    Small text utilities for Python: URL slugs, word statistics and wrapping.
''')

_README_2 = _t('''
    # textkit

    Small text utilities for Python: URL slugs, word statistics and wrapping.

    ```python
    >>> from textkit.slug import slugify
    >>> slugify("Crème Brûlée")
    'creme-brulee'
    >>> from textkit.stats import top_words
    >>> top_words("a b a", 1)
    [('a', 2)]
    ```

    See `docs/usage.md` for every function.
''')

_SLUG_1 = _t('''
    """URL slugs."""

    import unicodedata


    def slugify(text):
        """Lowercase ``text`` and replace each character that is not a letter or digit with "-"."""
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        out = []
        for ch in text.lower():
            out.append(ch if ch.isalnum() else "-")
        return "".join(out).strip("-")
''')

_SLUG_2 = _t('''
    """URL slugs."""

    import re
    import unicodedata

    _SEPARATORS = re.compile(r"[^a-z0-9]+")


    def slugify(text):
        """Lowercase ``text`` and turn each run of characters that are not letters or digits into one "-"."""
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        return _SEPARATORS.sub("-", text.lower()).strip("-")
''')

_TEST_SLUG_1 = _t('''
    from textkit.slug import slugify


    def test_lowercases_and_hyphenates():
        assert slugify("Hello World") == "hello-world"


    def test_strips_accents():
        assert slugify("Crème Brûlée") == "creme-brulee"


    def test_strips_separators_at_both_ends():
        assert slugify("  hello ") == "hello"
''')

_TEST_SLUG_2 = _more(_TEST_SLUG_1, '''


    def test_collapses_repeated_separators():
        assert slugify("Hello,  World") == "hello-world"
        assert slugify("a -- b") == "a-b"
''')

_STATS_1 = _t('''
    """Word statistics."""

    import re
    from collections import Counter

    _WORD = re.compile(r"[a-z0-9']+")


    def word_count(text):
        """Number of words in ``text``."""
        return len(_WORD.findall(text.lower()))


    def top_words(text, n=3):
        """The ``n`` most common words of ``text`` as ``(word, count)`` pairs, most common first."""
        return Counter(_WORD.findall(text.lower())).most_common(n)
''')

_STATS_2 = _t('''
    """Word statistics."""

    import re
    from collections import Counter

    _WORD = re.compile(r"[a-z0-9']+")


    def _words(text):
        return _WORD.findall(text.lower())


    def word_count(text):
        """Number of words in ``text``."""
        return len(_words(text))


    def top_words(text, n=3):
        """The ``n`` most common words of ``text`` as ``(word, count)`` pairs, most common first."""
        return Counter(_words(text)).most_common(n)
''')

_STATS_3 = _t('''
    """Word statistics."""

    from __future__ import annotations

    import re
    from collections import Counter

    _WORD = re.compile(r"[a-z0-9']+")


    def _words(text: str) -> list[str]:
        """The words of ``text``, lowercased: runs of letters, digits and apostrophes."""
        return _WORD.findall(text.lower())


    def word_count(text: str) -> int:
        """Number of words in ``text``; punctuation and case do not matter."""
        return len(_words(text))


    def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
        """The ``n`` most common words of ``text`` as ``(word, count)`` pairs, most common first."""
        return Counter(_words(text)).most_common(n)
''')

_STATS_4 = _STATS_3.replace(
    '''    return Counter(_words(text)).most_common(n)\n''',
    '''    counts = Counter(_words(text))\n'''
    '''    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]\n''',
).replace("most common first.", "most common first, ties in\n    alphabetical order.")

_TEST_STATS_1 = _t('''
    from textkit.stats import top_words, word_count


    def test_word_count_ignores_punctuation():
        assert word_count("Hello, world! Hello again.") == 4


    def test_word_count_keeps_apostrophes():
        assert word_count("don't stop") == 2


    def test_top_words():
        assert top_words("a b a c a b", 2) == [("a", 3), ("b", 2)]
''')

_TEST_STATS_2 = _more(_TEST_STATS_1, '''


    def test_case_does_not_matter():
        assert word_count("The the THE") == 3
        assert top_words("The the THE", 1) == [("the", 3)]
''')

_TEST_STATS_3 = _more(_TEST_STATS_2, '''


    def test_top_words_breaks_ties_alphabetically():
        assert top_words("b a c a b", 2) == [("a", 2), ("b", 2)]
        assert top_words("zeta alpha", 5) == [("alpha", 1), ("zeta", 1)]
''')

_WRAP_1 = _t('''
    """Wrapping text to a width."""


    def wrap(text, width=70):
        """Break ``text`` into lines of at most ``width`` characters.

        Words are separated by whitespace; a word longer than ``width`` is split across lines.
        """
        lines = []
        line = ""
        for word in text.split():
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for piece in pieces:
                if not line:
                    line = piece
                elif len(line) + 1 + len(piece) <= width:
                    line += " " + piece
                else:
                    lines.append(line)
                    line = piece
        lines.append(line)
        return lines
''')

_WRAP_2 = _WRAP_1.replace('"""Wrapping text to a width."""\n', _t('''
    """Wrapping text to a width."""

    try:
        from wcwidth import wcswidth as _wcswidth
    except ImportError:  # pragma: no cover - wcwidth is a dependency; code points are the fallback
        _wcswidth = None


    def display_width(text):
        """Columns ``text`` takes in a terminal: wide (e.g. CJK) characters count 2."""
        if _wcswidth is None:
            return len(text)
        width = _wcswidth(text)
        return len(text) if width < 0 else width
'''))

_WRAP_3 = _more(_WRAP_2, '''


    def shorten(text, width, placeholder="..."):
        """``text`` cut to at most ``width`` characters, ending in ``placeholder`` when cut."""
        if len(text) <= width:
            return text
        return text[: max(width - len(placeholder), 0)] + placeholder
''')

_WRAP_4 = _WRAP_3.replace(
    '''    lines = []\n    line = ""\n''',
    '''    if width < 1:\n'''
    '''        raise ValueError(f"width must be at least 1, got {width}")\n'''
    '''    lines = []\n    line = ""\n''',
).replace(
    '''    lines.append(line)\n    return lines\n''',
    '''    if line:\n        lines.append(line)\n    return lines\n''',
).replace(
    "split across lines.\n",
    "split across lines.\n    Text without words gives no lines.\n",
)

_TEST_WRAP_1 = _t('''
    from textkit.wrap import wrap


    def test_wraps_at_width():
        assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


    def test_short_text_is_one_line():
        assert wrap("hello", 70) == ["hello"]


    def test_long_words_are_split():
        assert wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]
''')

_TEST_WRAP_2 = _more(_TEST_WRAP_1.replace("import wrap", "import display_width, wrap"), '''


    def test_display_width_of_ascii():
        assert display_width("hello") == 5
''')

_TEST_WRAP_3 = _more(_TEST_WRAP_2.replace("import display_width, wrap", "import display_width, shorten, wrap"), '''


    def test_shorten():
        assert shorten("hello world", 8) == "hello..."
        assert shorten("hello", 8) == "hello"
''')

_TEST_WRAP_4 = "import pytest\n\n" + _more(_TEST_WRAP_3, '''


    def test_text_without_words_gives_no_lines():
        assert wrap("", 10) == []
        assert wrap("  \\n ", 10) == []


    def test_width_must_be_positive():
        with pytest.raises(ValueError, match="width must be at least 1"):
            wrap("abc", 0)
''')

_CASE_1 = _t('''
    """Title case."""

    SMALL_WORDS = frozenset("a an and as at but by for in of on or the to")


    def titlecase(text):
        """``text`` in title case; small words such as "of" and "the" stay lowercase unless first."""
        out = []
        for i, word in enumerate(text.split()):
            if i and word.lower() in SMALL_WORDS:
                out.append(word.lower())
            else:
                out.append(word.title())
        return " ".join(out)
''')

_CASE_2 = _t('''
    """Title case."""

    SMALL_WORDS = frozenset("a an and as at but by for in of on or the to".split())


    def titlecase(text):
        """``text`` in title case; small words such as "of" and "the" stay lowercase unless first."""
        out = []
        for i, word in enumerate(text.split()):
            if i and word.lower() in SMALL_WORDS:
                out.append(word.lower())
            else:
                out.append(word[:1].upper() + word[1:].lower())
        return " ".join(out)
''')

_TEST_CASE_1 = _t('''
    from textkit.case import titlecase


    def test_small_words_stay_lowercase():
        assert titlecase("the lord of the rings") == "The Lord of the Rings"


    def test_first_word_is_always_capitalised():
        assert titlecase("of mice and men") == "Of Mice and Men"
''')

_TEST_CASE_2 = _more(_TEST_CASE_1, '''


    def test_apostrophes_do_not_start_a_word():
        assert titlecase("don't look back") == "Don't Look Back"
''')

_RETRY = _t('''
    """Calling a function again when it fails."""


    def retry(func, attempts=3, exceptions=(Exception,)):
        """Call ``func()`` up to ``attempts`` times until it returns without raising one of
        ``exceptions``; re-raise the last exception when every attempt failed."""
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        for attempt in range(attempts):
            try:
                return func()
            except exceptions:
                if attempt == attempts - 1:
                    raise
''')

_TEST_RETRY = _t(f'''
    """retry() tests.

    test_retry_recovers is deliberately flaky: it fails on every other run, counted in the file named
    by ${FLAKY_ENV} (default: textkit-flaky-counter in the temp folder), so that mining this history
    drops the commit that added it as "flaky".
    """

    import os
    import tempfile
    from pathlib import Path

    from textkit.retry import retry


    def _bump_run_counter():
        path = Path(os.environ.get("{FLAKY_ENV}") or Path(tempfile.gettempdir()) / "textkit-flaky-counter")
        try:
            runs = int(path.read_text() or "0")
        except (OSError, ValueError):
            runs = 0
        path.write_text(str(runs + 1))
        return runs + 1


    def test_retry_recovers():
        calls = []

        def sometimes():
            calls.append(1)
            if len(calls) < 2:
                raise OSError("transient")
            return "ok"

        assert retry(sometimes, attempts=3) == "ok"
        assert _bump_run_counter() % 2 == 1, "this test fails on every other run (deliberately flaky)"
''')

_CLI = _t('''
    """Command line: ``python -m textkit slug|count|wrap TEXT``."""

    import argparse
    import sys

    from .slug import slugify
    from .stats import word_count
    from .wrap import wrap


    def main(argv=None):
        """Run one command; returns the exit status (2 for a usage error)."""
        parser = argparse.ArgumentParser(prog="textkit", description="Small text utilities.")
        sub = parser.add_subparsers(dest="command", required=True)
        p = sub.add_parser("slug", help="print the URL slug of TEXT")
        p.add_argument("text")
        p = sub.add_parser("count", help="print the number of words in TEXT")
        p.add_argument("text")
        p = sub.add_parser("wrap", help="print TEXT wrapped at --width columns")
        p.add_argument("text")
        p.add_argument("--width", type=int, default=70)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:
            return int(exc.code or 0)
        if args.command == "slug":
            print(slugify(args.text))
        elif args.command == "count":
            print(word_count(args.text))
        else:
            for line in wrap(args.text, args.width):
                print(line)
        return 0


    if __name__ == "__main__":  # pragma: no cover
        sys.exit(main())
''')

_MAIN = _t('''
    import sys

    from .cli import main

    sys.exit(main())
''')

_INIT_1 = _t('''
    """textkit: small text utilities."""

    __version__ = "0.1.0"
''')

_INIT_2 = _t('''
    """textkit: small text utilities."""

    from .case import titlecase
    from .slug import slugify
    from .stats import top_words, word_count
    from .wrap import shorten, wrap

    __version__ = "0.1.0"
    __all__ = ["slugify", "titlecase", "top_words", "word_count", "shorten", "wrap"]
''')

_TEST_CLI = _t('''
    import pytest

    import textkit
    from textkit.cli import main


    def test_slug(capsys):
        assert main(["slug", "Hello, World"]) == 0
        assert capsys.readouterr().out == "hello-world\\n"


    def test_count(capsys):
        assert main(["count", "one two three"]) == 0
        assert capsys.readouterr().out == "3\\n"


    def test_wrap(capsys):
        assert main(["wrap", "the quick brown fox", "--width", "10"]) == 0
        assert capsys.readouterr().out == "the quick\\nbrown fox\\n"


    def test_unknown_command_is_a_usage_error(capsys):
        assert main(["shout", "hi"]) == 2
        assert "invalid choice" in capsys.readouterr().err


    @pytest.mark.parametrize("name", ["slugify", "titlecase", "top_words", "word_count", "shorten", "wrap"])
    def test_package_exports(name):
        assert callable(getattr(textkit, name))
''')

_USAGE = _t('''
    # Using textkit

    ## Slugs

    `slugify(text)` lowercases `text`, drops accents and joins the words with hyphens.

    ## Word statistics

    `word_count(text)` counts words: runs of letters, digits and apostrophes, in any case.
    `top_words(text, n=3)` returns the `n` most common words with their counts.
''')


# --- the history, oldest first ----------------------------------------------------------------

COMMITS: list[Commit] = [
    Commit(
        "Start textkit: package skeleton, README and pyproject",
        {".gitignore": "__pycache__/\n*.egg-info/\n.venv*/\n", "README.md": _README_1, "pyproject.toml": _PYPROJECT,
         "textkit/__init__.py": _INIT_1},
        expect="no_test_change", notes="the root commit: no tests yet",
    ),
    Commit(
        "Add slugify() to turn titles into URL-safe slugs\n\n"
        "slugify(text) lowercases the text, drops accents, replaces anything that is not a letter or digit\n"
        "with a hyphen and strips hyphens from both ends.",
        {"textkit/slug.py": _SLUG_1, "tests/test_slug.py": _TEST_SLUG_1},
        expect="task", notes="new module, medium",
    ),
    Commit(
        "Add word_count() and top_words() for simple text statistics (#3)\n\n"
        "Words are runs of letters, digits and apostrophes; case and punctuation do not matter.\n"
        "top_words(text, n) returns the n most common words with their counts, most common first.",
        {"textkit/stats.py": _STATS_1, "tests/test_stats.py": _TEST_STATS_1},
        expect="task", notes="new module, medium; the (#3) suffix is not shown to agents",
    ),
    Commit(
        "Document slugify and the word statistics in the README and docs/usage.md",
        {"README.md": _README_2, "docs/usage.md": _USAGE},
        expect="docs_only",
    ),
    Commit(
        'Collapse runs of separators in slugify: "Hello,  World" gave "hello---world"\n\n'
        "Each run of characters that are not letters or digits should become a single hyphen.",
        {"textkit/slug.py": _SLUG_2, "tests/test_slug.py": _TEST_SLUG_2},
        expect="task", notes="small bug fix",
    ),
    Commit(
        "Share one tokenizer between word_count and top_words (refactor, no behaviour change)\n\n"
        "Adds a regression test that mixed case counts as one word.",
        {"textkit/stats.py": _STATS_2, "tests/test_stats.py": _TEST_STATS_2},
        expect="passes_without_change", notes="its new test already passes at the parent",
    ),
    Commit(
        "Add type hints and docstrings to the stats module",
        {"textkit/stats.py": _STATS_3},
        expect="no_test_change",
    ),
    Commit(
        "Add wrap() to break text into lines of at most width characters\n\n"
        "Words are separated by whitespace. A word longer than the width is split across lines.",
        {"textkit/wrap.py": _WRAP_1, "tests/test_wrap.py": _TEST_WRAP_1},
        expect="task", notes="new module, medium",
    ),
    Commit(
        "Add display_width() backed by wcwidth so wide characters can be measured\n\n"
        "wcwidth becomes a dependency; without it display_width falls back to counting code points.",
        {"pyproject.toml": _PYPROJECT.replace("dependencies = []", 'dependencies = ["wcwidth>=0.2.6"]'),
         "textkit/wrap.py": _WRAP_2, "tests/test_wrap.py": _TEST_WRAP_2},
        expect="dependency_change", notes="pyproject's [project] dependencies changed",
    ),
    Commit(
        "Add retry() to call a function again when it raises, up to a number of attempts",
        {"textkit/retry.py": _RETRY, "tests/test_retry.py": _TEST_RETRY},
        expect="flaky", notes="its only test fails on every other run",
    ),
    Commit(
        'Add titlecase() that keeps small words such as "of" and "the" lowercase',
        {"textkit/case.py": _CASE_1, "tests/test_case.py": _TEST_CASE_1},
        expect="reference_fails", notes="SMALL_WORDS is a set of letters: its own tests fail at the commit",
    ),
    Commit(
        "Fix titlecase(): small words were capitalised and \"don't\" became \"Don'T\"\n\n"
        "SMALL_WORDS was built from the letters of the string instead of its words, and str.title()\n"
        "starts a new word after an apostrophe. Capitalise only the first letter of each word instead.",
        {"textkit/case.py": _CASE_2, "tests/test_case.py": _TEST_CASE_2},
        expect="task", notes="small fix of the previous commit",
    ),
    Commit(
        "wip",
        {"textkit/wrap.py": _WRAP_3, "tests/test_wrap.py": _TEST_WRAP_3},
        expect="message_too_short",
    ),
    Commit(
        "Handle edge cases",
        {"textkit/wrap.py": _WRAP_4, "tests/test_wrap.py": _TEST_WRAP_4},
        expect="task", notes="vague three-word message: low spec_score, not well specified",
    ),
    Commit(
        "Add a command line: python -m textkit slug|count|wrap TEXT\n\n"
        "`slug` prints the slug of TEXT, `count` its number of words and `wrap` the text wrapped at\n"
        "--width columns (default 70), one line per line. An unknown command is a usage error (exit\n"
        "status 2). The package now exports its functions at the top level, and pyproject declares a\n"
        "`textkit` console script.\n\n"
        "Co-authored-by: Grace Example <grace@example.com>",
        {"textkit/cli.py": _CLI, "textkit/__main__.py": _MAIN, "textkit/__init__.py": _INIT_2,
         "pyproject.toml": _PYPROJECT.replace("dependencies = []", 'dependencies = ["wcwidth>=0.2.6"]').replace(
             "[tool.setuptools]", '[project.scripts]\ntextkit = "textkit.cli:main"\n\n[tool.setuptools]'),
         "tests/test_cli.py": _TEST_CLI},
        expect="task", notes="largest: four source files; a pyproject change outside its dependency tables",
    ),
    Commit(
        "Break ties in top_words() alphabetically so the result does not depend on word order",
        {"textkit/stats.py": _STATS_4, "tests/test_stats.py": _TEST_STATS_3},
        expect="task", notes="small fix",
    ),
]


# --- building ---------------------------------------------------------------------------------

def _git_env(when: int, author: tuple[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    date = f"@{when} +0000"
    env.update(
        GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1], GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=AUTHOR[0], GIT_COMMITTER_EMAIL=AUTHOR[1], GIT_COMMITTER_DATE=date,
        # the user's and the system's git configuration (signing, hooks, templates) must not matter
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def _git(dest: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=dest, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {dest}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def write_config(dest: Path, python: str | None = None) -> Path:
    """Write the uncommitted ``.homefield.yml`` of the sample (``test_cmd`` with ``python``, default
    this interpreter) and list it in ``.git/info/exclude``. Returns its path."""
    python = python or sys.executable
    path = Path(dest) / ".homefield.yml"
    cmd = f"{shlex.quote(python)} -m pytest -q --disable-plugin-autoload"
    path.write_text(
        "# Written by examples/sample-project/build_history.py (not committed).\n"
        "# The sample's tests need no pytest plugin: skipping the installed ones keeps each run fast.\n"
        f"test_cmd: {json.dumps(cmd)}\n",  # a JSON string is a YAML double-quoted scalar
        encoding="utf-8",
    )
    exclude = Path(dest) / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lines = exclude.read_text().splitlines() if exclude.exists() else []
    if "/.homefield.yml" not in lines:
        exclude.write_text("\n".join([*lines, "/.homefield.yml"]) + "\n")
    return path


def build(dest: str | os.PathLike[str], *, config: bool = True, python: str | None = None,
          commits: list[Commit] | None = None) -> list[str]:
    """Create the sample repository in ``dest`` (created; must be empty or absent) and return its
    commit shas, oldest first. The branch is ``main``. With ``config``, also write the uncommitted
    ``.homefield.yml`` (:func:`write_config`)."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    env = _git_env(START, AUTHOR)
    _git(dest, env, "init", "-q")
    _git(dest, env, "symbolic-ref", "HEAD", "refs/heads/main")
    # fixed, local settings: no hooks, no line-ending or file-mode surprises
    for key, value in (("core.autocrlf", "false"), ("core.filemode", "true"), ("commit.gpgsign", "false"),
                       ("core.hooksPath", os.devnull), ("user.name", AUTHOR[0]), ("user.email", AUTHOR[1])):
        _git(dest, env, "config", key, value)
    shas = []
    for i, commit in enumerate(commits if commits is not None else COMMITS):
        for rel, content in commit.files.items():
            path = dest / rel
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8"))
        env = _git_env(START + i * STEP_S, commit.author)
        _git(dest, env, "add", "-A", "--", *commit.files)
        _commit(dest, env, commit.message)
        shas.append(_git(dest, env, "rev-parse", "HEAD"))
    if config:
        write_config(dest, python)
    return shas


def _commit(dest: Path, env: dict[str, str], message: str) -> None:
    proc = subprocess.run(["git", "commit", "-q", "--no-verify", "--cleanup=strip", "-F", "-"], cwd=dest, env=env,
                          input=message + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git commit failed in {dest}: {proc.stderr.strip()}")


def expected_counts(commits: list[Commit] | None = None) -> dict[str, int]:
    """How many commits are meant to end as each outcome (``"task"`` or a drop reason)."""
    counts: dict[str, int] = {}
    for c in commits if commits is not None else COMMITS:
        counts[c.expect] = counts.get(c.expect, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the textkit sample repository for pytest-homefield.")
    parser.add_argument("dest", help="folder to create (absent or empty)")
    parser.add_argument("--no-config", action="store_true", help="do not write the uncommitted .homefield.yml")
    parser.add_argument("--python", default=None, help="interpreter for test_cmd in .homefield.yml (default: this one)")
    ns = parser.parse_args(argv)
    try:
        shas = build(ns.dest, config=not ns.no_config, python=ns.python)
    except (FileExistsError, RuntimeError, OSError) as exc:
        print(f"build_history: {exc}", file=sys.stderr)
        return 2
    for sha, commit in zip(shas, COMMITS, strict=True):
        print(f"{sha[:12]}  {commit.expect:<22}  {commit.subject}")
    print(f"{len(shas)} commits in {Path(ns.dest).resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
