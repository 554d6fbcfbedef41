"""Loaded by every Python process of a suite run under ``-p benchmarks.inner_runs`` (this folder is put on
``PYTHONPATH``): counts the test runs it starts (:mod:`benchmarks.inner_runs`)."""

import os
import sys

if os.environ.get("SUITE_INNER_RUNS_DIR"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        import inner_runs_hook

        inner_runs_hook.install()
    finally:
        del sys.path[0]
