"""ms35 (nu35 on pallets/markupsafe, task dcb170b12713): a tiny real repository whose commit's FAIL_TO_PASS tests
fail at the parent only because a session fixture errors, while the parent's code already does what their
assertions check.

Commit 1 (the parent): ``esc/_native.py`` escapes ``&`` and ``<``, ``esc/__init__.py`` re-exports it as
``escape`` (returning ``Markup``, a ``str``); the tests take ``escape`` from a session fixture parametrized over
the implementation modules. Commit 2 routes ``escape`` through ``esc._escape_inner`` (the name ``_native`` now
defines) and its ``tests/conftest.py`` makes the session fixture autouse and set ``esc._escape_inner =
_native._escape_inner``; the tests import ``escape`` from the package and keep their assertions as the parent has
them, the expected side a call (``assert escape(value) == Markup(expect)``). At the parent with the commit's tests
the fixture's ``_native._escape_inner`` raises ``AttributeError`` at setup, so every test errors; the body of no
test ever ran there. Any code that gives ``_native`` that name (even a module ``__getattr__`` returning a dummy)
lets the parent's own ``escape`` pass every assertion.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import FixTask
from helpers.gitrepo import GitRepo
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.sandbox.snapshot import make_snapshot

__all__ = ["INIT", "NATIVE", "TEST", "PARENT_INIT", "PARENT_NATIVE", "F2P", "DIRECT_ID", "build_setup_red_task"]

INIT = "esc/__init__.py"
NATIVE = "esc/_native.py"
CONFTEST = "tests/conftest.py"
TEST = "tests/test_esc.py"

PARENT_INIT = ("class Markup(str):\n    pass\n\n\nfrom esc._native import escape  # noqa: E402\n\n"
               "__all__ = [\"Markup\", \"escape\"]\n")
PARENT_NATIVE = ("def escape(s):\n    from esc import Markup\n\n"
                 "    return Markup(str(s).replace(\"&\", \"&amp;\").replace(\"<\", \"&lt;\"))\n")
FIXED_INIT = ("class Markup(str):\n    pass\n\n\nfrom esc._native import _escape_inner  # noqa: E402\n\n\n"
              "def escape(s):\n    return Markup(_escape_inner(str(s)))\n")
FIXED_NATIVE = "def _escape_inner(s):\n    return s.replace(\"&\", \"&amp;\").replace(\"<\", \"&lt;\")\n"

PARENT_CONFTEST = ("import pytest\n\nfrom esc import _native\n\n\n"
                   "@pytest.fixture(scope=\"session\", params=(_native,))\ndef _mod(request):\n"
                   "    return request.param\n\n\n@pytest.fixture(scope=\"session\")\ndef escape(_mod):\n"
                   "    return _mod.escape\n")
CONFTEST_ = ("import pytest\n\nimport esc\nfrom esc import _native\n\n\n"
             "@pytest.fixture(scope=\"session\", autouse=True, params=(_native,))\ndef _mod(request):\n"
             "    esc._escape_inner = request.param._escape_inner\n")
_ROWS = ("@pytest.mark.parametrize((\"value\", \"expect\"), [(\"a&b\", \"a&amp;b\"), (\"<p>\", \"&lt;p>\"), "
         "(\"plain\", \"plain\")])\n")
PARENT_TESTS = ("import pytest\n\nfrom esc import Markup\n\n\n" + _ROWS
                + "def test_escape(escape, value, expect):\n    assert escape(value) == Markup(expect)\n\n\n"
                "def test_type(escape):\n    assert isinstance(escape(\"a\"), Markup)\n")
TESTS = ("import pytest\n\nfrom esc import Markup\nfrom esc import escape\n\n\n" + _ROWS
         + "def test_escape(value, expect):\n    assert escape(value) == Markup(expect)\n\n\n"
         "def test_type():\n    assert isinstance(escape(\"a\"), Markup)\n")

F2P = ["tests/test_esc.py::test_escape[esc._native-<p>-&lt;p>]",
       "tests/test_esc.py::test_escape[esc._native-a&b-a&amp;b]",
       "tests/test_esc.py::test_escape[esc._native-plain-plain]",
       "tests/test_esc.py::test_type[esc._native]"]


#: A test the commit may add that checks the new name's behaviour (``direct=True``): red at the parent for a real
#: reason (a dummy gives no escaped text).
DIRECT = ("\n\ndef test_inner():\n    from esc._native import _escape_inner\n\n"
          "    assert _escape_inner(\"a&b\") == \"a&amp;b\"\n")
DIRECT_ID = "tests/test_esc.py::test_inner[esc._native]"


def build_setup_red_task(dest: Path, *, direct: bool = False) -> FixTask:
    """In ``dest``/repo the two commits above (with ``direct``, the commit's test file also holds
    :data:`DIRECT`); the task of the second (FAIL_TO_PASS :data:`F2P`, and :data:`DIRECT_ID` with ``direct``, no
    PASS_TO_PASS, canaries on) and the parent's snapshot in ``dest``/pristine."""
    repo = GitRepo.init(dest / "repo")
    for rel, text in {INIT: PARENT_INIT, NATIVE: PARENT_NATIVE, CONFTEST: PARENT_CONFTEST, TEST: PARENT_TESTS,
                      "pyproject.toml": '[project]\nname = "esc"\nversion = "0"\n'}.items():
        repo.write(rel, text)
    c1 = repo.commit("esc", committer_date="2026-01-01T12:00:00+00:00")
    for rel, text in {INIT: FIXED_INIT, NATIVE: FIXED_NATIVE, CONFTEST: CONFTEST_,
                      TEST: TESTS + (DIRECT if direct else "")}.items():
        repo.write(rel, text)
    message = "Simplify the escaping implementation"
    c2 = repo.commit(message, committer_date="2026-01-02T12:00:00+00:00")
    tests = [CONFTEST, TEST]
    task = Task(id=c2[:12], commit=c2, parent=c1, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject=message, message=message,
                prompt=clean_prompt(message), source_files=[INIT, NATIVE], test_files=tests,
                test_patch=make_test_patch(repo.path, c1, c2, tests),
                gold_patch=make_gold_patch(repo.path, c1, c2, tests),
                FAIL_TO_PASS=sorted([*F2P, *([DIRECT_ID] if direct else [])]), PASS_TO_PASS=[],
                test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=1,
                canary_teardown=True)
    return FixTask(repo.path, task, make_snapshot(repo.path, c1, dest=dest / "pristine", init_git=True))
