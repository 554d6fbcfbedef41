"""Payloads of the grading attacks: file sets an agent writes into its workspace (path → text).

Each forging payload makes the hidden tests of :mod:`attack_repo` report ``passed`` when it is
loaded into the test process; ``test_attacks.py::test_payload_forges_when_loaded`` proves that, so
a grading test that finds the payload neutralised is not vacuous.
"""

from __future__ import annotations

from pathlib import Path

#: A pytest plugin that rewrites every test report to "passed" (the classic conftest attack).
FORGE = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
    if hasattr(report, "wasxfail"):
        del report.wasxfail
'''

#: FORGE for a conftest above the checkout: the rootdir is then above it too, so the node ids get
#: the checkout's path as a prefix, which this strips again.
FORGE_ABOVE = FORGE + '''    if "/tests/" in report.nodeid:
        report.nodeid = "tests/" + report.nodeid.split("/tests/", 1)[1]
'''

XFAIL_ALL = '''import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xfail(run=False, reason="not today"))
'''

#: Prints what a log parser would take for success, then leaves before any test runs.
FAKE_PASS_EXIT = '''import os
import sys


def pytest_configure(config):
    for nodeid in ("tests/test_sub.py::test_sub[pos]", "tests/test_sub.py::test_sub[neg]",
                   "tests/test_sub.py::test_add_still_works"):
        sys.stdout.write(nodeid + " PASSED\\n")
    sys.stdout.write("==== 3 passed in 0.01s ====\\n")
    sys.stdout.flush()
    os._exit(0)
'''

#: sitecustomize/usercustomize body: asks pytest to load this very module as a plugin.
CUSTOMIZE = '''import os

os.environ["PYTEST_PLUGINS"] = __name__
''' + FORGE

#: A stand-in ``pytest`` module: runs the real pytest (found once the workspace is off sys.path) with
#: the forging plugin ``hf_forge`` added.
SHADOW_PYTEST = '''import os
import sys

here = os.path.realpath(os.getcwd())
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]
sys.modules.pop("pytest", None)
import pytest  # noqa: E402  (the real one)

sys.path.append(here)
sys.argv += ["-p", "hf_forge"]
raise SystemExit(pytest.console_main())
'''

#: Source code that patches pytest's report class when it is imported (by the hidden tests).
MONKEYPATCH_REPORTS = '''
import _pytest.reports as _reports

_orig_init = _reports.TestReport.__init__


def _init(self, *args, **kwargs):
    _orig_init(self, *args, **kwargs)
    self.outcome = "passed"
    self.longrepr = None


_reports.TestReport.__init__ = _init
'''


def reporter_forgery() -> str:
    """Our own reporter module with every phase outcome written as "passed"."""
    from pytest_homefield.sandbox.testrun import REPORTER_DIR

    text = (Path(REPORTER_DIR) / "homefield_reporter.py").read_text(encoding="utf-8")
    forged = text.replace('"outcome": report.outcome,', '"outcome": "passed",')
    assert forged != text
    return forged


def dist_info(root: str = "") -> dict[str, str]:
    """An installed-distribution folder whose ``pytest11`` entry point pytest autoloads."""
    prefix = f"{root}/" if root else ""
    return {
        f"{prefix}hf_forge.py": FORGE,
        f"{prefix}evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
        f"{prefix}evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = hf_forge\n",
    }


#: Forging payloads, each loaded by a different mechanism (id → files).
FORGING: dict[str, dict[str, str]] = {
    "conftest-root": {"conftest.py": FORGE},
    "sitecustomize-module": {"sitecustomize.py": CUSTOMIZE},
    "sitecustomize-module-in-src": {"src/sitecustomize.py": CUSTOMIZE},
    "sitecustomize-package": {"sitecustomize/__init__.py": CUSTOMIZE},
    "sitecustomize-package-in-src": {"src/sitecustomize/__init__.py": CUSTOMIZE},
    "usercustomize-module": {"usercustomize.py": CUSTOMIZE},
    "usercustomize-package": {"usercustomize/__init__.py": CUSTOMIZE},
    "dist-info-entry-point": dist_info(),
    "dist-info-entry-point-in-src": dist_info("src"),
    "pytest.toml": {"hf_forge.py": FORGE, "pytest.toml": '[pytest]\naddopts = ["-p", "hf_forge"]\n'},
    ".pytest.toml": {"hf_forge.py": FORGE, ".pytest.toml": '[pytest]\naddopts = ["-p", "hf_forge"]\n'},
    "pytest.ini": {"hf_forge.py": FORGE, "pytest.ini": "[pytest]\naddopts = -p hf_forge\n"},
    "tox.ini": {"hf_forge.py": FORGE, "tox.ini": "[pytest]\naddopts = -p hf_forge\n"},
    "setup.cfg": {"hf_forge.py": FORGE, "setup.cfg": "[tool:pytest]\naddopts = -p hf_forge\n"},
    "pyproject-addopts-plugin": {
        "hf_forge.py": FORGE,
        "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n\n'
                          '[tool.pytest.ini_options]\naddopts = "-p hf_forge"\n',
    },
    "shadow-homefield-reporter": {"homefield_reporter.py": "<reporter forgery>"},
    "shadow-homefield-reporter-in-src": {"src/homefield_reporter.py": "<reporter forgery>"},
    "shadow-pytest": {"hf_forge.py": FORGE, "pytest.py": SHADOW_PYTEST},
}


def resolve(files: dict[str, str]) -> dict[str, str]:
    """``files`` with the ``<reporter forgery>`` placeholder filled in."""
    return {k: (reporter_forgery() if v == "<reporter forgery>" else v) for k, v in files.items()}
