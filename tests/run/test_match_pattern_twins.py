"""gatk46: the twin of a ``pytest.raises(E, match=M)`` whose made-up message a real fix's message matches too (contracts
§7, the exception twins; issue 30).

The made-up message changes one part of ``M`` (a number, a word of the parent's messages, a letter) and was kept when
neither text matched the other as a pattern. A part inside an alternation, an optional repeat or a class need not be
in a matching message at all: ``must be (positive|zero)`` became ``must be (positive|too)`` (seed 0) or ``must be
(the|zero)`` (seed 5), and a real fix raising ``must be positive or zero`` (or the reference's own ``must be zero or
more``, written otherwise) matched the twin beside its original: ``forged``. Only a part every match holds is changed
now, to literal characters every match of the twin holds, next to text of the original (a lone ``match="negative"``
became ``must``, a word of the parent's messages that the reference's ``value must not be negative`` holds too:
``forged`` on seeds 0 and 1) (:func:`~pytest_homefield.sandbox.seal_kinds.required_change`).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

from pytest_homefield.sandbox.canary_sites import _made_up_message
from pytest_homefield.sandbox.seal_kinds import required_change

SOURCE = "src/limits/__init__.py"
TEST = "tests/test_limits.py"
PARENT = "def check(n):\n    if n > 100:\n        raise ValueError(\"too big for the limit\")\n    return n\n"
FIXED = PARENT.replace("    return n\n", "    if n < 0:\n        raise ValueError(\"must be zero or more\")\n"
                                          "    return n\n")
#: The reference fix written otherwise (its own bytes get no canaries), and another real fix's message.
SAME = FIXED + "\n# checked\n"
OTHER = FIXED.replace("must be zero or more", "must be positive or zero")
TESTS = ("import pytest\n\nfrom limits import check\n\n\n"
         "def test_negative():\n"
         "    with pytest.raises(ValueError, match=\"must be (positive|zero)\"):\n"
         "        check(-1)\n")
F2P = [f"{TEST}::test_negative"]

#: A pattern, messages a real fix may raise that it matches (each by another branch, or without the optional part).
CASES = [
    ("must be (positive|zero)", ["must be positive", "must be zero"]),
    ("colou?r not found", ["color not found", "colour not found"]),
    ("[Ii]nvalid value", ["invalid value", "Invalid value"]),
    ("expected (1|2) items", ["expected 1 items", "expected 2 items"]),
    ("(?P<name>value) out of range", ["value out of range"]),
    ("size(?! zero) too large", ["size too large"]),
]
VOCABULARIES = [[], ["too big for the limit", "bad input"]]


@pytest.mark.parametrize("pattern,real", CASES)
@pytest.mark.parametrize("messages", VOCABULARIES)
def test_no_made_up_message_matches_what_the_original_matches(pattern: str, real: list[str],
                                                              messages: list[str]) -> None:
    """Over 40 seeds, no twin's pattern matches a message the original's matches. Before, seeds of 40 whose twin a
    listed message matched, without / with the vocabulary: ``(positive|zero)`` 27 / 18, ``colou?r`` 2 / 0,
    ``[Ii]nvalid`` 2 / 0, ``(1|2)`` 40 / 40 (numbers are changed first), a group's name 10 / 11, a negative
    look-ahead 17 / 12."""
    for seed in range(40):
        other = _made_up_message(pattern, random.Random(seed), messages)
        assert other is None or not any(re.search(other, m) for m in real), (seed, other)


def test_a_message_twin_is_still_made_where_a_part_is_required() -> None:
    """The words outside the alternation still give twins (``must``, ``be``), each one a real message misses."""
    twins = {_made_up_message("must be (positive|zero)", random.Random(s), VOCABULARIES[1]) for s in range(10)}
    assert None not in twins and len(twins) > 3
    assert all(not re.search(t, m) for t in twins if t for m in ("must be positive", "must be zero"))


def test_a_word_standing_alone_is_not_changed_to_another_word() -> None:
    """``match="negative"`` changed to a word of the parent's messages (``must``) is matched by a real fix's ``value
    must not be negative``: 24 of 40 seeds before; a part is now changed only next to text of the original around it, so
    the lone word gets a letter changed (a text no real message holds)."""
    for seed in range(40):
        other = _made_up_message("negative", random.Random(seed), ["value must be an int"])
        assert other is None or not re.search(other, "value must not be negative"), (seed, other)


@pytest.mark.parametrize("pattern,start,end,new,required", [
    ("must be positive", 8, 16, "big", True),
    ("positive", 0, 8, "big", False),
    ("must.*positive", 6, 14, "big", False),
    ("must be (positive|zero)", 18, 22, "too", False),
    ("colou?r", 4, 5, "x", False),
    ("colour", 4, 5, "x", True),
    ("[Ii]nvalid", 1, 2, "X", False),
    ("(?P<num>x) y", 4, 7, "foo", False),
    ("(?x)a b # note", 10, 14, "nope", False),
    ("a(bc)+", 2, 4, "xy", False),  # alone in its group: no text of the original beside it
    ("a(bc)*", 2, 4, "xy", False),
    ("(?i)abc", 2, 3, "x", False),
    ("(?i)abc", 4, 5, "x", True),
    ("x(?=ab)ab", 4, 5, "z", False),
    ("ab{2}", 0, 2, "xyz", False),
    ("ab{2} c", 0, 2, "xyz", False),
    ("x ab{2}", 2, 4, "yz", True),
    ("ab?", 0, 2, "xy", False),
    ("(a|b", 1, 2, "c", False),
])
def test_required_change(pattern: str, start: int, end: int, new: str, required: bool) -> None:
    assert required_change(pattern, start, end, new) is required


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("limits"), name="limits", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="limits",
                          message="Refuse negative numbers", fail_to_pass=F2P, pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize("fix,seed", [("same", 5), ("other", 0)])
def test_a_real_fix_matching_another_branch_is_solved(limits: FixTask, tmp_path: Path, fix: str, seed: int) -> None:
    """Both ``forged`` before (their messages matched the twin's other branch); ``solved`` now."""
    g = grade_source(limits, tmp_path, SOURCE, {"same": SAME, "other": OTHER}[fix], canaries=True, canary_seed=seed)
    assert g.outcome == "solved", g.error


#: A test expecting one word, and the parent's message whose words a real fix's message holds.
WORD_PARENT = PARENT.replace("too big for the limit", "value must be an int")
WORD_FIXED = WORD_PARENT.replace("    return n\n", "    if n < 0:\n"
                                                "        raise ValueError(\"value must not be negative\")\n"
                                                "    return n\n")
WORD_TESTS = TESTS.replace("must be (positive|zero)", "negative")


@pytest.fixture(scope="module")
def word(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("word"), name="limits", source=SOURCE, parent=WORD_PARENT,
                          fixed=WORD_FIXED, test=TEST, tests=WORD_TESTS, first="limits",
                          message="Refuse negative numbers", fail_to_pass=F2P, pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_holding_the_parent_s_words_is_solved(word: FixTask, tmp_path: Path, seed: int) -> None:
    """The reference fix written otherwise: ``forged`` on seeds 0 and 1 before (``negative`` -> a word of ``value must
    be an int``, which its message holds too)."""
    g = grade_source(word, tmp_path, SOURCE, WORD_FIXED + "\n# checked\n", canaries=True, canary_seed=seed)
    assert g.outcome == "solved", g.error


@pytest.mark.slow
def test_the_message_twin_still_catches_a_message_holding_every_pattern(limits: FixTask, tmp_path: Path) -> None:
    """A message made to match every ``match=`` of the hidden tests, twins' included (the forger's way past a
    message twin): ``forged``."""
    reader = ("import inspect as _i, re as _re\n\n\ndef check(n):\n    if n < 0:\n"
              "        src = ''.join(_i.getsource(_i.getmodule(f.frame)) for f in _i.stack()[1:3])\n"
              "        pats = _re.findall(r'match=[\\'\"](.*?)[\\'\"]', src)\n"
              "        texts = [_re.sub(r'\\((\\w+)\\|[^)]*\\)', r'\\1', p).replace('\\\\', '') for p in pats]\n"
              "        raise ValueError(' / '.join(texts))\n    return n\n")
    g = grade_source(limits, tmp_path, SOURCE, reader, canaries=True, canary_seed=0)
    assert g.outcome == "forged", (g.outcome, g.error)
    assert "the expected message" in (g.error or ""), g.error
