"""gatk39: a test whose decorator's text says "fixture" without making it one, under soft statements (contracts §7).

``canary_soft`` softens every test function but a fixture, and told a fixture by the word ``fixture`` anywhere in a
decorator's text: ``@pytest.mark.usefixtures("…")`` (and ``@pytest.mark.parametrize("fixture_name", …)``, a
``lazy_fixture`` row) made a test no soft statement at all. A failing twin there stopped at its site and left what the
rest of its body puts back (twin37's case, ``tests/run/test_after_twin.py``): another group's original after it
failed, a real fix ``tests_failed``. Now a fixture is a function whose decorator *is* ``fixture`` (``pytest.fixture``,
``fixture(...)``, ``pytest_asyncio.fixture``, ``yield_fixture``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import grade_modes

from pytest_homefield.sandbox.canary_soft import SOFT, softened

TESTS = ("import pytest\n\nfrom modes import MODE, compute\n\n\n@pytest.mark.usefixtures('tmp_path')\n"
         "def test_scaled():\n    MODE['scale'] = 3\n    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\n"
         "def test_negative():\n    assert compute(-2) == 2\n\n\ndef test_plain():\n    assert compute(2) == 2\n")


@pytest.mark.parametrize("decorator", ["@pytest.mark.usefixtures('db')",
                                       "@pytest.mark.parametrize('fixture_name', ['a', 'b'])",
                                       "@pytest.mark.parametrize('x', [lazy_fixture('a')])"])
def test_a_marked_test_is_softened(decorator: str) -> None:
    text = f"import pytest\n\n\n{decorator}\ndef test_x(request):\n    assert 1 == 2\n    x = 3\n"
    assert softened(text).count(SOFT) == 2, softened(text)


@pytest.mark.parametrize("decorator", ["@pytest.fixture", "@pytest.fixture(scope='module')", "@fixture",
                                       "@pytest_asyncio.fixture", "@pytest.yield_fixture()"])
def test_a_fixture_is_not_softened(decorator: str) -> None:
    text = f"import pytest\n\n\n{decorator}\ndef test_x():\n    assert 1 == 2\n    return 3\n"
    assert softened(text) == text


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_what_a_marked_twin_left(tmp_path: Path) -> None:
    """The commit's fix with a comment, ``test_scaled`` marked ``usefixtures``: ``solved`` (``tests_failed``
    before: seed 0's run holding the twin of ``test_scaled`` failed ``test_negative``'s original after it)."""
    g = grade_modes(tmp_path, TESTS, 0)
    assert g.outcome == "solved", g
