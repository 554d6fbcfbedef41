"""The seal planner reads a node's source from lines split once per file (nu52, arrow-py/arrow d8bf13d44413: it
called ``ast.get_source_segment``, which splits the whole file character by character on every call, twice per
statement: 87 s between two test runs on a 3404-line test file, past any ``--time-budget``)."""

from __future__ import annotations

import ast
import time
from pathlib import Path

from pytest_homefield.sandbox import seal_sites
from pytest_homefield.sandbox.seal_sites import sealable_sites

#: Line breaks of every kind a source may hold, a form feed and U+2028 inside literals, characters of 2 to 4
#: bytes in UTF-8, nodes on one line and over several.
SOURCE = ("x = 'é' + \"\u20ac\"  # c\r\n"
          "def f(a,\r\n      b='\x0c'):\r\n"
          "    return {'k': [1,\n        2, '\U0001f600'],\n 'u': '\u2028'}\n"
          "y = (\n  f(1)\n  + f(2))\n"
          "z = 'tail'")


def test_a_segment_is_what_the_standard_library_gives() -> None:
    tree = ast.parse(SOURCE)
    nodes = [n for n in ast.walk(tree) if getattr(n, "end_lineno", None) is not None]
    assert len(nodes) > 25
    for node in nodes:
        assert seal_sites._segment(SOURCE, node) == ast.get_source_segment(SOURCE, node), ast.dump(node)
    assert seal_sites._lines(SOURCE) == seal_sites._LINE.findall(SOURCE)


def test_planning_a_big_test_file_reads_it_once(tmp_path: Path) -> None:
    """600 functions, the F2P one's expected text also in another's assertion (so every statement is looked at as a
    cover): 4.1 s of CPU before, 0.07 s after."""
    (tmp_path / "tests").mkdir()
    body = ["from pkg import weeks\n\n\ndef test_target():\n    assert weeks(3) == '3 weeks'\n",
            "\n\ndef test_other():\n    assert weeks(3, short=False) == '3 weeks'\n"]
    body += [f"\n\ndef test_{k}():\n    assert weeks({k}) == '{k} weeks'\n" for k in range(4, 600)]
    (tmp_path / "tests" / "test_big.py").write_text("".join(body))
    start = time.process_time()
    sites = sealable_sites(tmp_path, ["tests/test_big.py"], ["tests/test_big.py::test_target"],
                           {"tests/test_big.py": None})
    assert time.process_time() - start < 1.5
    assert {s.key for s in sites if not s.cover} == {"tests/test_big.py::test_target@5"}
    assert len([s for s in sites if s.cover]) == 60  # the statements whose literal may show it (as before)
