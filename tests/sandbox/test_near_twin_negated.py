"""alt54: no near twin of a negated comparison (contracts §7, the value twins, atk29; issue 30).

Where the parent stops on ``assert "Discovery:" not in result.output``, the near twin put a literal as near the
parent's output in its place (``"Uiscovery:"``): ``"Uiscovery:" not in output`` holds for every real fix, so the
twin contradicts nothing and passes beside its original. simonw/llm bd645da55193 (``llm tools`` and a dynamic
toolbox), canaries on, bubblewrap: the source files of the next commit touching them and the reference fix
reformatted (``ruff format``) were both ``forged`` by ``test_tools_list_dynamic_toolbox@twin1``.
"""

from __future__ import annotations

import ast
import random

import pytest

from pytest_homefield.sandbox.twin_runs import _near_site

#: The parent's output there (simonw/llm bd645da55193's parent, ``llm tools``).
PARENT_OUT = ("llm_time() -> dict (plugin: llm.default_plugins.default_tools)\n\n  Returns the current time, as local "
              "time and UTC\n\nllm_version() -> str (plugin: llm.default_plugins.default_tools)\n\n  Return the "
              "installed version of llm\n\nCounter:\n\nDiscovery:\n\n")


def _func(op: str) -> ast.FunctionDef:
    func = ast.parse("def test_tools():\n    result = run()\n"
                     f"    assert 'Discovery:' {op} result.output\n").body[0]
    assert isinstance(func, ast.FunctionDef)
    return func


@pytest.mark.parametrize("op", ["not in", "!=", "is not"])
def test_no_near_twin_of_a_negated_comparison(op: str) -> None:
    """Before: ``'Uiscovery:'``, ``'Riscovery:'``, … (seeds 0–3) for ``not in``."""
    for seed in range(4):
        site = _near_site(_func(op), 3, 3, (op, repr("Discovery:"), repr(PARENT_OUT)), 1, random.Random(seed), None)
        assert site is None, site.twins


def test_a_near_twin_of_in_is_still_drawn() -> None:
    """``in``: another needle as near fails a real fix's output (it holds the original's): a contradiction."""
    site = _near_site(_func("in"), 3, 3, ("in", repr("Discovery:"), repr(PARENT_OUT.replace("Discovery:", "D:"))), 1,
                      random.Random(0), None)
    assert site is not None and site.twins
