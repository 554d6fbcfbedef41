"""atk29: a twin's changed value reaching past the statement where its original stops on the parent, by a route
other than a name read there directly (``sandbox/canary_flow.py``, through ``run/twin_grading.py``'s
``_changed_after``; no test process).

On main (atk28's check: the names a changed line stores or a changed decorator lists, read past the stop) the
cases marked ``False -> True`` were not told, and ``True -> False`` was told for a column the twin left as it
is (checked by running this file against main's package: 10 of its 13 cases failed there)."""

from __future__ import annotations

import ast

import pytest

from pytest_homefield.run import twin_grading
from pytest_homefield.sandbox.canaries import Canary
from pytest_homefield.sandbox.twin_runs import TwinPlan
from pytest_homefield.sandbox.twin_together import FileLayout, Span

_ROWS = '@pytest.mark.parametrize("n, expected", [(12, [1, 2]), (345, [3, 4, 5])])\n'
_TWIN_ROWS = '@pytest.mark.parametrize("n, expected", [(12, [3, 4, 5]), (345, [1, 2])])\n'
#: the original stops on the parent at ``assert got == expected`` (line 4 from the decorator's)
_DIGITS = (_ROWS + "def test_f(n, expected):\n    got = digits(n)\n    size = len(expected)\n"
           "    assert got == expected\n    assert len(got) == size\n")


def _told(original: str, twin: str, stop: int, module: str = "", conftest: str = "") -> bool:
    """``_changed_after`` of a plan whose one group is ``original`` with ``twin``, the original stopping on the
    parent at line ``stop`` from the member's first line (0), in a test file of ``module`` then the original, under
    a ``conftest.py`` of ``conftest``."""
    assert original != twin
    text = module + original
    first = module.count("\n") + 1
    layout = FileLayout("utf-8", text, tuple(text.splitlines(True)),
                        (Span(first, text.count("\n"), (original, twin), "test_f"),), (), {"t.py::test_f": 0})
    plan = TwinPlan(seed=0, layouts={"t.py": layout})
    canary = Canary("t.py::test_f@twin1", "t.py::test_f", "contradiction", "expected of each parameter set")
    if conftest:
        return twin_grading._changed_after(plan, canary, stop, {"t.py": [ast.parse(conftest)]})
    return twin_grading._changed_after(plan, canary, stop)


def test_a_column_carried_into_another_name_read_past_the_stop_is_told() -> None:
    """atk29's task: ``size = len(expected)`` before the stop, ``len(got) == size`` past it. A statement at a time
    with the parent's code, the original passes the last assertion and a twin holding another row's list fails
    it (``assert-tell`` solved it with no fix on 12 of 12 seeds). False on main."""
    assert _told(_DIGITS, _DIGITS.replace(_ROWS, _TWIN_ROWS), 4)


@pytest.mark.parametrize("body", [
    # an attribute set on an object the test reads past the stop
    "    box = Box()\n    box.want = expected\n    assert got == expected\n    assert box.ok(got)\n",
    # an item of a container
    "    seen = {}\n    seen['e'] = expected\n    assert got == expected\n    assert len(seen['e']) == len(got)\n",
    # a method of another object given the value (it may keep it)
    "    seen = []\n    seen.append(expected)\n    assert got == expected\n    assert len(seen[0]) == len(got)\n",
    # a helper of the code: it may keep the value in its module's globals, read past the stop by another name
    "    remember(expected)\n    assert got == expected\n    assert recalled_size() == len(got)\n",
    # a walrus inside the stop statement itself
    "    assert got == (want := expected)\n    assert len(got) == len(want)\n",
], ids=["attribute", "item", "receiver", "helper", "walrus"])
def test_every_route_of_a_column_past_the_stop_is_told(body: str) -> None:
    """Other routes than a name the column was assigned to: an attribute, an item, a receiver, a call into code
    no name of the test shows, a name bound inside the stop statement. Each False on main."""
    original = _ROWS + "def test_f(n, expected):\n    got = digits(n)\n" + body
    stop = 2 + next(i for i, line in enumerate(body.splitlines(), 1) if line.startswith("    assert got =="))
    assert _told(original, original.replace(_ROWS, _TWIN_ROWS), stop)


def test_a_fixture_of_the_module_asking_for_the_column_carries_it() -> None:
    """A fixture of the test module that asks for a parametrized name gets the twin's value (pytest hands a
    directly parametrized argument to the fixtures asking for it). False on main."""
    module = "import pytest\n\n\n@pytest.fixture\ndef size(expected):\n    return len(expected)\n\n\n"
    original = (_ROWS + "def test_f(n, expected, size):\n    got = digits(n)\n    assert got == expected\n"
                "    assert len(got) == size\n")
    assert _told(original, original.replace(_ROWS, _TWIN_ROWS), 3, module)
    # a fixture asking for nothing the twin changed carries nothing
    other = module.replace("def size(expected):\n    return len(expected)", "def size():\n    return 2")
    assert not _told(original, original.replace(_ROWS, _TWIN_ROWS), 3, other)


def test_a_conftest_fixture_asking_for_the_column_through_another_fixture_carries_it() -> None:
    """A ``conftest.py`` fixture asking for a fixture that asks for the column: the test's argument of its name
    holds the twin's value (fixtures of a plugin or an installed package are not seen)."""
    conftest = ("import pytest\n\n\n@pytest.fixture\ndef width(expected):\n    return len(expected)\n\n\n"
                "@pytest.fixture\ndef size(width):\n    return width\n")
    original = (_ROWS + "def test_f(n, expected, size):\n    got = digits(n)\n    assert got == expected\n"
                "    assert len(got) == size\n")
    twin = original.replace(_ROWS, _TWIN_ROWS)
    assert _told(original, twin, 3, conftest=conftest)
    assert not _told(original, twin, 3, conftest=conftest.replace("def width(expected)", "def width(n)"))


@pytest.mark.parametrize("original, twin, stop, told", [
    # only the expected column changed: the input column read past the stop carries nothing (True on main)
    (_ROWS + "def test_f(n, expected):\n    assert digits(n) == expected\n    assert len(str(n)) > 1\n",
     _TWIN_ROWS + "def test_f(n, expected):\n    assert digits(n) == expected\n    assert len(str(n)) > 1\n", 2,
     False),
    # the column read at the stop only, the result of the code read past it
    (_ROWS + "def test_f(n, expected):\n    got = digits(n)\n    assert got == expected\n    assert len(got) > 1\n",
     _TWIN_ROWS + "def test_f(n, expected):\n    got = digits(n)\n    assert got == expected\n"
     "    assert len(got) > 1\n", 3, False),
    # a unittest comparison given the changed value keeps none of it: self read past the stop tells nothing
    ("def test_f(self):\n    want = [1, 2]\n    self.assertEqual(digits(12), want)\n    self.assertTrue(True)\n",
     "def test_f(self):\n    want = [3, 4, 5]\n    self.assertEqual(digits(12), want)\n    self.assertTrue(True)\n",
     2, False),
    # approx given the changed column at the stop
    (_ROWS + "def test_f(n, expected):\n    assert digits(n) == pytest.approx(expected)\n    pytest.fail\n",
     _TWIN_ROWS + "def test_f(n, expected):\n    assert digits(n) == pytest.approx(expected)\n    pytest.fail\n", 2,
     False),
    # a builtin given the value, its result read only at the stop
    (_ROWS + "def test_f(n, expected):\n    want = sorted(expected)\n    assert digits(n) == want\n"
     "    assert n > 0\n",
     _TWIN_ROWS + "def test_f(n, expected):\n    want = sorted(expected)\n    assert digits(n) == want\n"
     "    assert n > 0\n", 3, False),
], ids=["input-column", "result-only", "assert-equal", "approx", "builtin"])
def test_what_the_twin_left_as_it_is_carries_nothing(original: str, twin: str, stop: int, told: bool) -> None:
    """The check stays precise: a column whose cells the twin left as they are, a value given only to the
    comparison (``assertEqual``, ``approx``) or to a builtin whose result is read at the stop only, is not told
    (each told twin costs the parent check another draw and test process)."""
    assert _told(original, twin, stop) is told
