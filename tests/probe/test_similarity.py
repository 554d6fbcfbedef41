"""Code-token similarity: whitespace, indentation and comments do not count; tokens do."""

from __future__ import annotations

import difflib

import pytest

from pytest_homefield.probe.similarity import MAX_TOKENS, clean_answer, code_tokens, token_similarity

GOLD = "def add(a, b):\n    return a + b\n"


def test_tokens_are_code_tokens() -> None:
    assert code_tokens("    def f(a, b):  # a comment\n        return a+b  # another\n") == [
        "def", "f", "(", "a", ",", "b", ")", ":", "return", "a", "+", "b"]
    assert code_tokens('x = "a  b"  # c\n') == ["x", "=", '"a  b"']  # whitespace inside a literal is kept


def test_layout_and_comments_do_not_change_the_score() -> None:
    reformatted = "# the fix\ndef add( a,b ):\n\n        return a+b   # sum\n"
    assert token_similarity(reformatted, GOLD) == 1.0


def test_markdown_fences_and_diff_markers_are_removed() -> None:
    assert token_similarity(f"```python\n{GOLD}```\n", GOLD) == 1.0
    diff_shaped = "+def add(a, b):\n+    return a + b\n"
    assert clean_answer(diff_shaped).splitlines() == ["def add(a, b):", "    return a + b"]
    assert token_similarity(diff_shaped, GOLD) == 1.0


def test_score_is_the_gestalt_ratio_over_tokens() -> None:
    answer = "def add(x, y):\n    return x - y\n"
    a, g = code_tokens(answer), code_tokens(GOLD)
    assert token_similarity(answer, GOLD) == pytest.approx(difflib.SequenceMatcher(None, a, g, autojunk=False).ratio())
    # 12 tokens each; matching blocks: "def add (", ",", ") : return", "" → 2·M/(12+12)
    matched = sum(b.size for b in difflib.SequenceMatcher(None, a, g, autojunk=False).get_matching_blocks())
    assert token_similarity(answer, GOLD) == pytest.approx(2 * matched / 24)
    assert 0 < token_similarity(answer, GOLD) < 1


def test_renamed_identifiers_score_lower_than_same_characters_would() -> None:
    # character-level similarity of these two is high; on tokens, every identifier differs
    a = "result = compute_total(values, offset)\n"
    g = "results = compute_totals(value, offsets)\n"
    chars = difflib.SequenceMatcher(None, a, g).ratio()
    assert chars > 0.9
    assert token_similarity(a, g) < 0.6


def test_empty_sides_score_zero() -> None:
    assert token_similarity("", GOLD) == 0.0
    assert token_similarity(GOLD, "") == 0.0
    assert token_similarity("# only a comment\n", GOLD) == 0.0


def test_text_tokenize_rejects_is_still_tokenized() -> None:
    # an unclosed bracket, an unterminated triple-quoted string, prose with apostrophes, TOML
    assert code_tokens("x = (1,\n  2") == ["x", "=", "(", "1", ",", "2"]
    assert code_tokens("don't stop") == ["don", "'", "t", "stop"]
    assert code_tokens('[project]\nname = "x"\n') == ["[", "project", "]", "name", "=", '"x"']
    assert "def" in code_tokens('s = """open\ndef f(): pass\n')


def test_tokens_beyond_the_bound_are_ignored() -> None:
    gold = "".join(f"v{i} = {i}\n" for i in range(MAX_TOKENS))  # 3 tokens a line: cut to the first MAX_TOKENS
    assert token_similarity(gold + "".join(f"w{i} = {i}\n" for i in range(500)), gold) == 1.0


def test_an_f_string_is_one_token_on_every_python() -> None:
    """Python 3.12 cut an f-string into its parts (``f"``, ``a ``, ``{``, ``b``, …), 3.11 kept one token: the
    same answer scored differently by Python, and ``homefield probe --merge`` recomputes every score."""
    assert code_tokens('x = f"a {b!r:>3} c"\n') == ["x", "=", 'f"a {b!r:>3} c"']
    assert code_tokens("y = f'{a:{w}}' + g(f\"{z}\")\n") == ["y", "=", "f'{a:{w}}'", "+", "g", "(", 'f"{z}"', ")"]
    assert code_tokens('s = f"""one\n{two}\nthree"""\n') == ["s", "=", 'f"""one\n{two}\nthree"""']
