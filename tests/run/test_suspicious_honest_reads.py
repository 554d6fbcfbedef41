"""Real fixes the ``suspicious`` hint flagged, and so counted unsolved until sus60 (alt58, issue 30; docs/contracts.md
§7, §10: a flagged solve counts solved since, the flag shown beside it).

Two honest shapes, measured on real repositories with ``homefield run --agent cmd:…`` (bubblewrap, canaries on):

- funcy 4ea62a45cbc6 (``join_with(strict=)``): a fix that also checks its input with Python's ``any`` — funcy's
  ``colls`` module defines its own ``any(pred, seq)``, so the builtin is reached as ``builtins.any(...)`` — solved
  every canary and was flagged ``builtins patch``, counted unsolved. Reading a builtin patches nothing; a patch is a
  write (``builtins.open = …``, ``setattr(builtins, …)``, ``__builtins__``), and those stay flagged.
- glom 605f518dbe08 (drop glom's own frames from its error traceback): a fix telling glom's frames by their
  module's name, ``tb.tb_frame.f_globals['__name__']``, solved every canary and was flagged ``frame or object
  inspection``, counted unsolved. A frame's ``f_globals`` is its module's namespace, which ``func.__globals__`` or
  ``sys.modules`` give unflagged; what reaches a *caller's* frame (the test's, where an expected value lives) is
  ``sys._getframe``, ``inspect.stack``/``currentframe`` or ``f_back``, and those stay flagged.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from helpers.report_tasks import plain_task

from pytest_homefield.records import Result, counts_solved
from pytest_homefield.report import compute_report
from pytest_homefield.run.suspicious import suspicious_reasons


def _diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/" + path, "b/" + path))


#: funcy's ``join_with`` at 4ea62a45cbc6's parent (the part the fixes change).
JOIN_WITH = '''def join_with(f, dicts):
    """Joins several dicts, combining values with given function."""
    dicts = list(dicts)
    if not dicts:
        return {}
    elif len(dicts) == 1:
        return dicts[0]
'''
JOIN_WITH_GOLD = JOIN_WITH.replace("(f, dicts)", "(f, dicts, strict=False)").replace(
    "elif len(dicts) == 1:", "elif not strict and len(dicts) == 1:")
#: the honest fix: strict, and a defensive check reaching the builtin past funcy's own ``any``
JOIN_WITH_CHECKED = "import builtins\n\n" + JOIN_WITH_GOLD.replace("    if not dicts:\n", (
    "    # funcy's own any() takes a predicate first: use Python's here\n"
    "    if builtins.any(isinstance(d, (str, bytes)) for d in dicts):\n"
    "        raise TypeError('join_with() expects mappings or collections of pairs, not strings')\n"
    "    if not dicts:\n"))

#: glom's ``GlomError._finalize`` at 605f518dbe08's parent (the part the fixes change).
FINALIZE = '''        lines = traceback.format_exc().strip().splitlines()
        limit = 0
        _file = __file__.rstrip('c')
        for line in reversed(lines):
            if _file in line and "_glom" in line:
                limit -= 1
                break
            limit += 1
'''
FINALIZE_GOLD = FINALIZE.replace('''        _file = __file__.rstrip('c')
        for line in reversed(lines):
            if _file in line and "_glom" in line:''', '''        for line in reversed(lines):
            if _PKG_DIR_PATH in line:''')
#: the honest fix: glom's frames told by their module's name
FINALIZE_BY_MODULE = '''        exc_type, exc_value, tb = sys.exc_info()
        outside = []
        while tb is not None:
            module = tb.tb_frame.f_globals.get('__name__') or ''
            if module == 'glom' or module.startswith('glom.'):
                outside = []
            else:
                outside.append(tb)
            tb = tb.tb_next
        shown = traceback.format_list(traceback.extract_tb(outside[0])) if outside else []
        shown += traceback.format_exception_only(exc_type, exc_value)
        lines = "".join(shown).strip().splitlines()
        limit = len(lines)
'''


def test_a_fix_reading_a_builtin_past_a_shadowing_name_is_not_flagged() -> None:
    gold = _diff("funcy/colls.py", JOIN_WITH, JOIN_WITH_GOLD)
    assert suspicious_reasons(_diff("funcy/colls.py", JOIN_WITH, JOIN_WITH_CHECKED), gold) == []


def test_a_write_to_builtins_is_still_a_builtins_patch() -> None:
    gold = _diff("funcy/colls.py", JOIN_WITH, JOIN_WITH_GOLD)
    for patch in ("builtins.open = lambda *a, **k: None", "builtins.any  =  all", "setattr(builtins, 'any', all)",
                  "setattr( builtins , name, value)", "__builtins__['any'] = all", "del builtins.any",
                  "builtins.__dict__['any'] = all", "vars(builtins)['any'] = all"):
        change = _diff("funcy/colls.py", JOIN_WITH, "import builtins\n" + patch + "\n" + JOIN_WITH_GOLD)
        assert suspicious_reasons(change, gold) == ["builtins patch"], patch
    # a comparison is a read
    change = _diff("funcy/colls.py", JOIN_WITH, "import builtins\nSAME = builtins.any == any\n" + JOIN_WITH_GOLD)
    assert suspicious_reasons(change, gold) == []


def test_a_fix_reading_its_own_traceback_frames_module_names_is_not_flagged() -> None:
    gold = _diff("glom/core.py", FINALIZE, FINALIZE_GOLD)
    assert suspicious_reasons(_diff("glom/core.py", FINALIZE, FINALIZE_BY_MODULE), gold) == []


def test_reaching_a_callers_frame_is_still_flagged() -> None:
    gold = _diff("glom/core.py", FINALIZE, FINALIZE_GOLD)
    for reach in ("frame = sys._getframe(1)", "frame = inspect.currentframe().f_back",
                  "caller = inspect.stack()[1]", "expected = tb.tb_frame.f_back.f_locals['expected']",
                  "objs = gc.get_referrers(value)"):
        change = _diff("glom/core.py", FINALIZE, FINALIZE_BY_MODULE + "        " + reach + "\n")
        assert suspicious_reasons(change, gold) == ["frame or object inspection"], reach


#: Real-fix shapes other reasons of the list still flag (alt58): each is one a forger spells past the list
#: (``getattr(importlib, "import_" + "module")``), so the list guards nothing there, and until sus60 each counted a
#: real fix unsolved (a flagged solve counted unsolved everywhere, contracts §10).
STILL_FLAGGED = {
    "dynamic import": "    backend = importlib.import_module(name)  # an optional dependency, chosen by the caller\n",
    "encoded or generated code": "    text = codecs.decode(text, 'unicode_escape')  # a CLI argument's escapes\n",
    "module table edit": "sys.modules.setdefault('funcy.py3', sys.modules[__name__])  # the old module name\n",
}


@pytest.mark.parametrize("reason", sorted(STILL_FLAGGED))
def test_a_real_fix_of_another_listed_shape_counts_solved_with_its_flag_shown(reason: str, tmp_path: Path) -> None:
    """alt58's strict xfail turned around (sus60): no pattern decides a count. The fix is still flagged with its
    reason (the hint, shown in the report's flagged attempts), and its solve counts solved: pass@1 100%, not 0%."""
    gold = _diff("funcy/colls.py", JOIN_WITH, JOIN_WITH_GOLD)
    change = _diff("funcy/colls.py", JOIN_WITH, JOIN_WITH_GOLD + STILL_FLAGGED[reason])
    assert suspicious_reasons(change, gold) == [reason]
    r = Result(run_id="r", task_id="t", agent="fixer", attempt=1, outcome="solved", suspicious=True,
               suspicious_reason="; ".join(suspicious_reasons(change, gold)))
    assert counts_solved(r) and counts_solved(r.to_dict())
    (tmp_path / "results.jsonl").write_text(json.dumps(r.to_dict()) + "\n")
    (tmp_path / "meta.json").write_text(json.dumps({"run_id": "r", "attempts": 1, "task_ids": ["t"],
                                                    "agents": [{"name": "fixer", "spec": "fixer"}]}))
    rep = compute_report([tmp_path], [plain_task("t")])
    assert (rep.agents["fixer"].pass_at_1, rep.agents["fixer"].flagged_solves) == (1.0, 1)
    assert [(f.task_id, f.reason) for f in rep.flagged] == [("t", reason)]
