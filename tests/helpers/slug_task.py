"""The slug task (the demo's ``4ca7def00780`` in small): ``slugify()`` collapses runs of white space into one
separator. Its FAIL_TO_PASS assertion ``assert slugify("hello   world") == "hello-world"`` is a sealable site
(contracts §7 "Sealed sites"): the fixture of tests/run/test_nearness_tell.py and tests/run/test_sealed_run.py."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

__all__ = ["SLUG_SOURCE", "SLUG_TEST", "SLUG_PARENT", "SLUG_FIXED", "SLUG_OTHER_FIX", "SLUG_TESTS", "SLUG_F2P",
           "SLUG_SITE", "build_slugs"]

SLUG_SOURCE = "src/slugs/__init__.py"
SLUG_TEST = "tests/test_slugs.py"
SLUG_PARENT = "def slugify(s):\n    return s.strip().lower().replace(' ', '-')\n"
SLUG_FIXED = "def slugify(s):\n    return '-'.join(s.split()).lower()\n"
#: A real fix other than the commit's.
SLUG_OTHER_FIX = "import re\n\n\ndef slugify(s):\n    return re.sub(r'\\s+', '-', s.strip()).lower()\n"
SLUG_TESTS = ("from slugs import slugify\n\n\n"
              "def test_collapses_repeated_separators():\n"
              "    assert slugify(\"hello   world\") == \"hello-world\"\n\n\n"
              "def test_plain():\n    assert slugify(\"Hello\") == \"hello\"\n")
SLUG_F2P = f"{SLUG_TEST}::test_collapses_repeated_separators"
#: The key of its sealed site (function id @ line).
SLUG_SITE = f"{SLUG_F2P}@5"


def build_slugs(dest: Path) -> FixTask:
    """The slug repository and task in ``dest`` (:func:`~helpers.fix_task.build_fix_task`)."""
    return build_fix_task(dest, name="slugs", source=SLUG_SOURCE, parent=SLUG_PARENT, fixed=SLUG_FIXED,
                          test=SLUG_TEST, tests=SLUG_TESTS, first="Add slugify()",
                          message="slugify(): runs of white space are one separator",
                          fail_to_pass=[SLUG_F2P], pass_to_pass=[f"{SLUG_TEST}::test_plain"])
