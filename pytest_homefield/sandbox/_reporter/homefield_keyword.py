"""A pytest plugin of the confirmation runs (docs/contracts.md §7, ``run/twin_grading.py`` ``_together_run``), loaded
with ``-p homefield_keyword`` beside the reporter: the configuration's keyword selection (``-k`` in ``addopts`` or
the command) is dropped before pytest's ``mark`` plugin reads it.

A confirmation run lays every member of a group side by side, one under the function's own name and the others
under fresh names drawn from the file's words, and selects them by node id. A ``-k`` (``addopts = -k total``) read
those fresh names and deselected the members without the word, the original among them when it drew one: the real
fix's original "not reported there", ``tests_failed`` (gatk56). The runs apart and mining's runs keep the
configuration's ``-k``: there every member runs under its function's own name, which it selects."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "keyword", ""):
        config.option.keyword = ""
