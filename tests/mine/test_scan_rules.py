"""The scan's rules for one commit (:mod:`pytest_homefield.mine.scan_rules`): the quick verdict from the
paths' classes alone (:func:`path_reason`, issue 35) is the full rules' verdict whenever it gives one."""

from __future__ import annotations

import pytest

from pytest_homefield.mine.scan import ScanOptions
from pytest_homefield.mine.scan_git import Commit
from pytest_homefield.mine.scan_rules import cheap_reason, path_reason, split_change
from pytest_homefield.paths import Classifier

_SHA = "1" * 40


def _entries(*changes: str) -> list[str]:
    """``"M docs/a.md"`` -> a ``--raw`` line and its path; ``"S docs/theme"`` is a submodule pointer."""
    out = []
    for change in changes:
        status, path = change.split(" ", 1)
        mode = "160000" if status == "S" else "100644"
        out += [f":{mode} {mode} {_SHA} {'2' * 40} {'M' if status == 'S' else status}", path]
    return out


_NO_TEST = ("no_test_change", "no test file changed")
#: name -> (changes, path_reason's verdict, the full rules' verdict)
CASES = {
    "docs only": (["M README.md", "A docs/usage.rst"], ("docs_only", "2 docs files"), ("docs_only", "2 docs files")),
    "config only": (["M .github/workflows/ci.yml", "M tox.ini", "M docs/a.md", "M .gitignore", "M .flake8"],
                    ("config_only", ".github/workflows/ci.yml, tox.ini, .gitignore, … 1 more and 1 docs file"), "same"),
    "setup.cfg alone": (["M setup.cfg"], ("config_only", "setup.cfg"), "same"),
    "source only": (["M src/pkg/core.py", "M CHANGELOG.md"], _NO_TEST, _NO_TEST),
    "empty": ([], ("no_test_change", "empty commit"), "same"),
    "dependency only": (["M requirements-dev.lock", "M docs/a.md"], _NO_TEST, _NO_TEST),
    "a submodule among docs": (["M README.md", "S docs/theme"], None, _NO_TEST),
    "a submodule alone": (["S vendor/lib"], _NO_TEST, _NO_TEST),
    "test support only": (["M tests/conftest.py", "M src/pkg/core.py"], None,
                          ("no_test_change", "only test support changed (tests/conftest.py), which names no tests")),
    "a deleted test module": (["D tests/test_old.py", "M src/pkg/core.py"], None,
                              ("no_test_change", "test modules only deleted (tests/test_old.py)")),
    "a runnable test": (["M tests/test_core.py", "M src/pkg/core.py"], None, None),
    "homefield's records": (["M .homefield/x.json", "M README.md"], None, ("docs_only", "1 docs file")),
}


@pytest.mark.parametrize("name", CASES)
def test_path_reason_is_the_full_rules_verdict(name: str) -> None:
    changes, quick_want, full_want = CASES[name]
    entries = _entries(*changes)
    classifier = Classifier()
    slots: dict[str, int] = {}
    quick = path_reason(entries, classifier, slots)
    commit = Commit(_SHA, ["0" * 40], "2020-01-01T00:00:00+00:00", "2020-01-01T00:00:00+00:00", "Fix it", entries)
    full = cheap_reason(commit, split_change(entries, classifier, slots), ScanOptions(min_message_words=0), None,
                        classifier)
    assert quick == quick_want
    assert full == (quick_want if full_want == "same" else full_want)
    assert quick is None or quick == full
