"""soft40: a ``with`` body a jump leaves, and an ``async with`` body, under soft statements (contracts §7).

Both were left as they were (no soft statement in them): a failing twin in such a body stopped at its site and left
what the rest of the body puts back (twin37's case, ``tests/run/test_after_twin.py``; the ``modes`` task of
``helpers/modes_task.py``): another group's original after it failed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from helpers.modes_task import grade_modes

HEAD = "import contextlib\nimport warnings\n\nimport pytest\n\nfrom modes import MODE, compute\n\n\n"
REST = "\n\ndef test_negative():\n    assert compute(-2) == 2\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
BODY = "MODE['scale'] = 3\n{i}assert compute(2) == 7\n{i}MODE['scale'] = 1\n"
#: ``test_scaled`` returning from its ``with`` body (a ``break`` or ``continue`` leaving one in a loop was ``solved`` on
#: main with seeds 0 and 1: no twin's leftover met a later original there).
RETURN = ("def test_scaled():\n    with warnings.catch_warnings():\n        " + BODY.format(i=" " * 8)
          + "        return\n")
ASYNC = ("@pytest.mark.asyncio\nasync def test_scaled():\n    async with contextlib.AsyncExitStack():\n"
         "        " + BODY.format(i=" " * 8))


def _asyncio_site() -> str:
    """Where pytest-asyncio is importable from (not in the test extra): ``TEST_ASYNCIO_SITE`` (a ``pip install
    --no-deps --target`` folder), else this interpreter's; the test is skipped without it."""
    site = os.environ.get("TEST_ASYNCIO_SITE", "")
    if site and (Path(site) / "pytest_asyncio").is_dir():
        return site
    spec = importlib.util.find_spec("pytest_asyncio")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pytest-asyncio is not installed (set TEST_ASYNCIO_SITE to a pip --target folder holding it)")
    return str(Path(next(iter(spec.submodule_search_locations))).parent)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_not_failed_for_what_a_twin_in_a_with_a_return_leaves_left(tmp_path: Path, seed: int) -> None:
    """soft40: the ``with`` body runs on past the failing twin, its ``return`` returns (``soft_jump``) and the test
    fails at the twin's site: a real fix is ``solved`` (main: ``tests_failed`` on seed 0, ``forged`` on seed 1)."""
    g = grade_modes(tmp_path, HEAD + RETURN + REST, seed)
    assert g.outcome == "solved", g


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_not_failed_for_what_a_twin_in_an_async_with_left(tmp_path: Path, seed: int) -> None:
    """soft40: an ``async with`` body (a pytest-asyncio test) is soft, the reporter's contexts asynchronous ones too:
    a real fix is ``solved`` (main: ``tests_failed`` on seed 0, ``forged`` on seed 1)."""
    site = _asyncio_site()
    conftest = f"import sys\n\nsys.path.insert(0, {site!r})\npytest_plugins = ['pytest_asyncio.plugin']\n"
    g = grade_modes(tmp_path, HEAD + ASYNC + REST, seed, beside={"conftest.py": conftest})
    assert g.outcome == "solved", g
