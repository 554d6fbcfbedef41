"""pytest-homefield conftest template: grade with a test runner that is not pytest.

homefield reads each test's outcome from JUnit XML whenever the test command contains ``{junit}``:
it replaces ``{junit}`` with the path the XML must be written to, replaces an argument that is
exactly ``{files}`` with the test files to run (or appends them when there is none), and does not
add its pytest reporter. A test id is ``classname::name`` from the XML; ``<failure>`` is a failed
test, ``<error>`` an error, ``<skipped>`` a skip, and an ``<error message="collection failure">``
marks a test file that could not be loaded (its tests then count as failing).

Copy this file to your repository root as ``conftest.py`` (or merge it into yours; it need not be
committed). As written it grades a ``unittest`` code base with the small runner at the bottom of
this file (standard library only): ``pytest_homefield_test_command`` returns
``<python> <this file> --junit {junit} {files}``. The runner names tests the way pytest does
(``tests/test_x.py::TestX::test_y``), so tasks mined with the default ``python -m pytest`` grade
the same ids with it, and the other way round.

For another language, return its command instead (sketches; check the ids your runner writes)::

    go:    gotestsum --junitfile {junit} -- ./...
    jest:  sh -c 'JEST_JUNIT_OUTPUT_FILE={junit} npx jest --ci --reporters=jest-junit "$@"' sh
    cargo: sh -c 'cargo nextest run --profile ci && cp target/nextest/ci/junit.xml {junit}'

(the command is split like a shell would but run without one: use ``sh -c`` for variables, pipes
and ``&&``; the test files are appended after ``sh`` and arrive as ``"$@"``.)

Mining: ``homefield mine`` verifies tasks with ``test_cmd`` from ``.homefield.yml`` and records it
in every task; this hook replaces it when agents are graded. For a repository pytest cannot run at
all, set the same command as ``test_cmd`` in ``.homefield.yml`` so that mining and grading agree
on the test ids (this file prints it: ``python conftest.py --print-command``).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import pytest

    hookimpl = pytest.hookimpl(optionalhook=True)
except ImportError:  # run as the test runner by an interpreter without pytest

    def hookimpl(func):  # type: ignore[no-untyped-def]
        return func


RUNNER = Path(__file__).resolve()


def command() -> str:
    """The test command: this file run as a script by this interpreter."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(RUNNER))} --junit {{junit}} {{files}}"


@hookimpl
def pytest_homefield_test_command(task: object, config: object) -> str:
    return command()


# --- the runner: python conftest.py --junit OUT.xml tests/test_a.py [tests/test_b.py::TestB::test_x …] ---

def _import_test_file(path: Path) -> Any:
    """Import a test file the way pytest's default ("prepend") import mode does: as a module of the
    package it sits in, with the folder above the package's top on ``sys.path``."""
    import importlib

    path = path.resolve()
    parts = [path.stem]
    base = path.parent
    while (base / "__init__.py").is_file():
        parts.insert(0, base.name)
        base = base.parent
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return importlib.import_module(".".join(parts))


def _cases(suite: Any) -> Iterator[Any]:
    import unittest

    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _cases(test)
        else:
            yield test


def run_unittest(targets: list[str], junit: Path) -> int:
    """Run the ``unittest`` tests of ``targets`` (files, or ``file::Class[::method]``) and write JUnit
    XML to ``junit``. Returns 0 (all passed), 1 (a failure or error) or 5 (no tests), like pytest."""
    import time
    import traceback
    import unittest
    import xml.etree.ElementTree as ET

    suite_el = ET.Element("testsuite", name="unittest")
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for target in targets:
        rel, _, select = target.partition("::")
        try:
            module = _import_test_file(Path(rel))
        except Exception:  # the file does not import: a collection failure, as pytest reports it
            case = ET.SubElement(suite_el, "testcase", classname="", name=rel, time="0")
            ET.SubElement(case, "error", message="collection failure").text = traceback.format_exc()
            print(f"ERROR collecting {rel}\n{traceback.format_exc()}")
            counts["error"] += 1
            continue
        for test in _cases(unittest.defaultTestLoader.loadTestsFromModule(module)):
            method = getattr(test, "_testMethodName", str(test))
            test_id = f"{type(test).__name__}::{method}"
            if select and test_id != select and not test_id.startswith(select + "::"):
                continue
            result = unittest.TestResult()
            start = time.perf_counter()
            test.run(result)
            case = ET.SubElement(suite_el, "testcase", classname=f"{rel}::{type(test).__name__}", name=method,
                                 time=f"{time.perf_counter() - start:.3f}")
            problems = result.errors + result.failures
            if problems or result.unexpectedSuccesses:
                # an exception is a failure too, as pytest reports a unittest test that raises
                text = problems[0][1] if problems else "unexpected success"
                ET.SubElement(case, "failure", message="failure").text = text
                outcome = "failed"
            elif result.expectedFailures:
                ET.SubElement(case, "skipped", type="pytest.xfail", message="expected failure")
                outcome = "skipped"
            elif result.skipped:
                ET.SubElement(case, "skipped", message=result.skipped[0][1])
                outcome = "skipped"
            else:
                outcome = "passed"
            counts[outcome] += 1
            print(f"{rel}::{test_id} {outcome.upper()}")
            if outcome in ("failed", "error"):
                print(case[0].text)
    for key, value in counts.items():
        suite_el.set({"passed": "tests", "failed": "failures", "error": "errors", "skipped": "skipped"}[key],
                     str(value if key != "passed" else sum(counts.values())))
    root = ET.Element("testsuites")
    root.append(suite_el)
    junit.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(junit, encoding="utf-8", xml_declaration=True)
    print(", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no tests ran")
    if counts["failed"] or counts["error"]:
        return 1
    return 0 if sum(counts.values()) else 5


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Run unittest files and write JUnit XML (pytest-style ids).")
    parser.add_argument("--junit", help="where to write the JUnit XML")
    parser.add_argument("--print-command", action="store_true", help="print the test_cmd for .homefield.yml")
    parser.add_argument("targets", nargs="*")
    ns = parser.parse_args(argv)
    if ns.print_command:
        print(command())
        return 0
    if not ns.junit:
        parser.error("--junit is required")
    # Python put this file's folder (your working tree) first on sys.path: the snapshot under test,
    # the current folder, must win over it.
    here = str(RUNNER.parent)
    sys.path[:] = [p for p in sys.path if p not in (here, "")]
    sys.path.insert(0, os.getcwd())
    return run_unittest(ns.targets, Path(ns.junit))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
