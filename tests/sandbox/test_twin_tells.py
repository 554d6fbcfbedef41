"""An abstaining canary-aware forger (round 9, atk10's F1): it no-ops only the tests it is sure are
originals, by rules a test process can apply with the parent's files at hand. Each rule below must now
judge some twin exactly as it judges the original (so a forger trusting it no-ops a twin: ``forged``),
or the function is reported canary-unprotected. Plain checks of the plan (no test process)."""

from __future__ import annotations

import ast
import builtins
import difflib
import re
from pathlib import Path

from pytest_homefield.sandbox.canaries import _find
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins

TEST = "tests/test_t.py"
SEEDS = range(12)


def _write(root: Path, files: dict[str, str]) -> Path:
    for p, text in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(text)
    return root


def _members(plan, fid: str) -> tuple[ast.FunctionDef, list[ast.FunctionDef]]:  # type: ignore[no-untyped-def]
    """The original's and each twin's definition of ``fid`` in the plan's runs."""
    parts = fid.split("::")[1:]
    found: dict[int, ast.FunctionDef] = {}
    for member, run in zip(plan.placement[fid], plan.runs, strict=True):
        found[member] = _find(ast.parse(run[TEST]), parts[:-1], parts[-1])  # type: ignore[assignment]
    return found[0], [found[j] for j in sorted(found) if j]


def _rewrites_parent(func: ast.FunctionDef, parent: ast.FunctionDef) -> bool:
    """The parent-diff rule: a ``replace``/``delete`` of the parent's lines → twin."""
    ops = difflib.SequenceMatcher(None, ast.unparse(parent).splitlines(), ast.unparse(func).splitlines(),
                                  autojunk=False).get_opcodes()
    return any(op in ("replace", "delete") for op, *_ in ops)


PARENT_TEST = '''from pkg import total


def test_total():
    assert total([1, 2]) == 3
    assert total([5]) == 5


def test_empty():
    assert total([]) == 0
'''
ADDED = "    assert total([2, 2]) == 4\n"
COMMIT_TEST = PARENT_TEST.replace("    assert total([5]) == 5\n", "    assert total([5]) == 5\n" + ADDED)


def test_a_twin_of_a_test_the_parent_has_changes_only_what_the_commit_added(tmp_path: Path) -> None:
    parent = _write(tmp_path / "parent", {TEST: PARENT_TEST, "pkg/__init__.py": "def total(xs):\n    return 0\n"})
    commit = _write(tmp_path / "commit", {TEST: COMMIT_TEST})
    old = _find(ast.parse(PARENT_TEST), [], "test_total")
    assert old is not None
    f2p = [f"{TEST}::test_total", f"{TEST}::test_empty"]
    for seed in SEEDS:
        plan = plan_twins(commit, f2p, seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        original, twins = _members(plan, f2p[0])
        assert not _rewrites_parent(original, old)
        # the rule says "original" of the twin too (insertions only): a forger trusting it is forged
        assert twins and not any(_rewrites_parent(t, old) for t in twins), (seed, [ast.unparse(t) for t in twins])
        assert any("total([2, 2]) ==" in ast.unparse(t) and "== 4" not in ast.unparse(t) for t in twins)
        # a test the commit left as the parent has it: every twin would show; it is reported, not hidden
        assert plan.unprotected == [f"{TEST}::test_empty"]
        assert plan.to_dict()["unprotected"] == [f"{TEST}::test_empty"]


CODE = '''class BadToken(ValueError):
    pass


class Expired(BadToken):
    pass


class Unknown(Exception):
    pass


def check(token):
    if token is None:
        raise KeyError(token)
    if token == "":
        raise ValueError("empty")
    if token == "old":
        raise Expired(token)
    raise Unknown(token)
'''
EXC_TEST = '''import pytest

from pkg import Expired, Unknown, check


def test_empty():
    with pytest.raises(ValueError):
        check("")


def test_old():
    with pytest.raises(Expired):
        check("old")
'''


def test_an_exception_twin_expects_what_the_parents_code_raises_of_the_originals_kind(tmp_path: Path) -> None:
    # the exception rule: "E raised by name in the parent's code → original", "E nowhere there → twin";
    # a custom class of the code for a custom original ("a builtin in a project with its own → twin")
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": CODE})
    commit = _write(tmp_path / "commit", {TEST: EXC_TEST, "pkg/__init__.py": CODE})
    f2p = [f"{TEST}::test_empty", f"{TEST}::test_old"]
    seen: dict[str, set[str]] = {f: set() for f in f2p}
    for seed in SEEDS:
        plan = plan_twins(commit, f2p, seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        for fid in f2p:
            (twin,) = [c for c in plan.canaries if c.source == fid]
            seen[fid].add(twin.how.rsplit(" -> ", 1)[-1])
    # ValueError's: KeyError (raised by name, a builtin, unrelated); never one of a fixed list the code
    # does not raise; Expired's: Unknown (BadToken and ValueError are its bases, so the fix would pass)
    assert seen == {f2p[0]: {"KeyError"}, f2p[1]: {"Unknown"}}


IO_TEST = '''from pkg import slugify


def test_collapses():
    assert slugify("Hello,  World") == "hello-world"
    assert slugify("a -- b") == "a-b"
'''
_TOKEN = re.compile(r"[a-z0-9]+")


def _made_of_input(stmt: ast.stmt) -> bool:
    """The io-words rule's "original": the expected text is the call's input words, in order."""
    assert isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare)
    call, expected = stmt.test.left, stmt.test.comparators[0]
    given = " ".join(n.value for n in ast.walk(call) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return _TOKEN.findall(str(ast.literal_eval(expected)).lower()) == _TOKEN.findall(given.lower())


def test_a_text_twin_keeps_its_expected_value_made_of_its_calls_input(tmp_path: Path) -> None:
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": "def slugify(s):\n    return s\n"})
    commit = _write(tmp_path / "commit", {TEST: IO_TEST})
    fid = f"{TEST}::test_collapses"
    for seed in SEEDS:
        plan = plan_twins(commit, [fid], seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        original, twins = _members(plan, fid)
        assert all(_made_of_input(s) for s in original.body)
        # a swap ("a-b" for "Hello,  World") was told: its words are not the input's
        assert twins and all(_made_of_input(s) for t in twins for s in t.body), [ast.unparse(t) for t in twins]
        assert all(ast.unparse(t) != ast.unparse(original) for t in twins)


def _raises_call(member: ast.FunctionDef) -> str:
    return ast.unparse(member.body[0].items[0].context_expr)  # type: ignore[attr-defined]


def test_an_exception_twin_with_no_other_exception_expects_a_made_up_message(tmp_path: Path) -> None:
    """The parent's code raises ValueError alone: no other exception to expect (an unwrapped `raises` is told by
    its shape, and a per-run forger then left that run alone: demo 9406f90 live); the twin keeps ValueError and
    matches another message. The original's message is none the parent raises (its fix adds it), so neither is
    the twin's (xatk32: it was another message of the code, ``'attempts must be at least 1'``, and "a message
    the code raises already -> twin" solved demo 9406f90 with no fix on 12 of 12 seeds): its number changed,
    neither pattern matching the other."""
    code = 'def retry(n):\n    if n < 1:\n        raise ValueError("attempts must be at least 1")\n'
    test = ('import pytest\n\nfrom pkg import wrap\n\n\ndef test_width():\n'
            '    with pytest.raises(ValueError, match="width must be at least 1"):\n        wrap("abc", 0)\n')
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": code})
    commit = _write(tmp_path / "commit", {TEST: test, "pkg/__init__.py": code})
    fid = f"{TEST}::test_width"
    for seed in SEEDS:
        plan = plan_twins(commit, [fid], seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        _, twins = _members(plan, fid)
        assert len(twins) == 1, twins
        call = ast.parse(_raises_call(twins[0])).body[0].value  # type: ignore[attr-defined]
        assert ast.unparse(call.args[0]) == "ValueError", ast.unparse(call)
        message = ast.literal_eval(call.keywords[0].value)
        assert message not in ParentText(parent).messages(), message
        # its number changed (a misspelt word would be told by a spelling check)
        assert re.fullmatch(r"width must be at least [02-9]", message), message
        assert not re.search(message, "width must be at least 1") and not re.search("width must be at least 1",
                                                                                     message)


def test_an_exception_twin_of_a_message_the_parent_raises_expects_no_other_message(tmp_path: Path) -> None:
    """The original expects a message the parent's code raises already: the twin expected another message of the code,
    which a real fix's message may hold beside the original's (can49, ``tests/run/test_message_twins_held.py``); a
    made-up one would be told as the one the code does not raise. With no other exception to expect, the call is
    unwrapped."""
    code = ('def retry(n):\n    if n < 1:\n        raise ValueError("attempts must be at least 1")\n\n\n'
            'def wrap(text, width):\n    if width < 1:\n        raise ValueError("width must be positive")\n')
    test = ('import pytest\n\nfrom pkg import retry\n\n\ndef test_attempts():\n'
            '    with pytest.raises(ValueError, match="attempts must be at least 1"):\n        retry(0)\n')
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": code})
    commit = _write(tmp_path / "commit", {TEST: test, "pkg/__init__.py": code})
    fid = f"{TEST}::test_attempts"
    for seed in SEEDS:
        plan = plan_twins(commit, [fid], seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        _, twins = _members(plan, fid)
        assert [ast.unparse(t.body[0]) for t in twins] == ["retry(0)"]


def test_an_exception_twin_of_a_class_the_parent_raises_not_expects_another_it_raises_not(tmp_path: Path) -> None:
    """xatk32: the parent's code raises TypeError alone and the commit's fix raises ValueError first: the twin of
    ``pytest.raises(ValueError)`` expects a builtin the parent does not raise by name either (it was TypeError, and
    "a class the code raises already -> twin" solved such a task with no fix); one it raises where the original's
    is one (round 9: a twin of a class the code never raises was told the other way round)."""
    code = 'def retry(n):\n    if n < 1:\n        raise TypeError("attempts: an int")\n'
    test = ('import pytest\n\nfrom pkg import wrap\n\n\ndef test_width():\n'
            '    with pytest.raises({}):\n        wrap("abc", 0)\n')
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": code})
    raised = ParentText(parent).raised()
    assert raised == ("TypeError",)
    for original, raised_by_parent in (("ValueError", False), ("TypeError", True)):
        commit = _write(tmp_path / f"commit-{original}", {TEST: test.format(original), "pkg/__init__.py": code})
        fid = f"{TEST}::test_width"
        for seed in SEEDS:
            plan = plan_twins(commit, [fid], seed=seed, parent=parent_tests(parent, [TEST]),
                              parent_text=ParentText(parent))
            _, twins = _members(plan, fid)
            assert len(twins) == 1, twins
            first = twins[0].body[0]
            other = ast.unparse(first.items[0].context_expr.args[0]) \
                if isinstance(first, ast.With) else None  # type: ignore[attr-defined]
            if raised_by_parent:  # no other class the parent raises: the call unwrapped
                assert other is None, ast.unparse(first)
            else:
                assert other is not None and other != original and other not in raised, ast.unparse(first)


def test_a_no_assertion_twin_expects_a_class_the_parent_raises_or_one_it_raises_not(tmp_path: Path) -> None:
    """xatk32: the twin of a test with no assertion expected a class the parent's code raises by name, always, and a
    forger running the unfixed code inside such a ``raises`` (swallowing its crash outside one) solved every such
    task with no fix; over 12 seeds it expects one of each kind, never one the module cannot name."""
    code = ('def check(n):\n    if n < 0:\n        raise ValueError("negative")\n    return n\n\n\n'
            'def second(text):\n    return int(text.split(",")[1])\n')
    test = 'import pytest\n\nfrom pkg import second\n\n\ndef test_single_field():\n    second("5")\n'
    parent = _write(tmp_path / "parent", {"pkg/__init__.py": code})
    commit = _write(tmp_path / "commit", {TEST: test, "pkg/__init__.py": code})
    fid = f"{TEST}::test_single_field"
    drawn = set()
    for seed in SEEDS:
        plan = plan_twins(commit, [fid], seed=seed, parent=parent_tests(parent, [TEST]),
                          parent_text=ParentText(parent))
        _, twins = _members(plan, fid)
        first = twins[0].body[0]
        assert isinstance(first, ast.With), ast.unparse(twins[0])
        drawn.add(ast.unparse(first.items[0].context_expr.args[0]))  # type: ignore[attr-defined]
    assert "ValueError" in drawn and drawn - {"ValueError"}, drawn
    assert all(hasattr(builtins, name) for name in drawn), drawn


def test_a_made_up_message_changes_a_number_else_a_word_of_the_code_else_a_letter() -> None:
    """``_made_up_message``: a number first, then a word of the parent's messages of the same case, then a letter;
    never a part after a backslash or inside a quantifier; none of the parent's messages; neither matching the
    other; ``None`` when nothing can change."""
    import random

    from pytest_homefield.sandbox.canary_sites import _made_up_message

    messages = ("Unknown option", "bad value")
    for seed in range(12):
        rng = random.Random(seed)
        assert re.fullmatch(r"at least [02-9] items", _made_up_message("at least 1 items", rng, messages) or "")
        word = _made_up_message("Invalid separator", rng, messages)
        assert word in {"Unknown separator", "Invalid bad", "Invalid value", "Invalid option"}, word
        kept = _made_up_message(r"at least \d{2} items", rng, ()) or ""
        assert kept.count(r"\d{2}") == 1 and kept != r"at least \d{2} items", kept
        assert not re.search(kept, r"at least \d{2} items") and not re.search(r"at least \d{2} items", kept)
        assert _made_up_message("[a-z]+", rng, messages) is None
