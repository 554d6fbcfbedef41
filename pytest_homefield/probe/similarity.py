"""How close a probe answer is to the gold added lines, on code tokens rather than characters.

Both texts are cut into code tokens with Python's :mod:`tokenize` (identifiers, keywords, literals,
operators; whitespace, indentation, line breaks and ``#`` comments are dropped). Lines are
left-stripped first, so an answer indented differently from the gold scores the same. Where
:mod:`tokenize` gives up (text that is not Python, an unclosed bracket or string), the rest of the
text is cut by :data:`TOKEN_RE`, a regular expression for the same token classes. Markdown fences
and a leading ``+`` on every line (a diff-shaped answer) are removed from the answer first.

Score (``token_similarity``): the Ratcliff–Obershelp "gestalt pattern matching" ratio of the two
token sequences, ``2·M / (|A| + |G|)`` where ``M`` is the number of tokens in the matching blocks
found by :class:`difflib.SequenceMatcher` (J. W. Ratcliff and D. E. Metzener, *Pattern Matching:
The Gestalt Approach*, Dr. Dobb's Journal, July 1988; Python docs ``SequenceMatcher.ratio``).
``autojunk`` is off: with it, frequent tokens such as ``(`` or ``self`` in sequences of 200 or more
tokens would be ignored (the weakness of a character-level probe noted in homefield v0.2 §9.6).
Sequences are cut to :data:`MAX_TOKENS` tokens each to bound the quadratic worst case. The score is
in [0, 1]; 0.0 when either side has no token.

An f-string is one token whatever the Python: 3.12 and later cut it into ``FSTRING_START``, its parts
and ``FSTRING_END``, which are joined back into the literal's text, the one ``STRING`` token of 3.10 and
3.11 (a score recomputed on another Python, as ``homefield probe --merge`` does, is then the same).

A probe call's score (:func:`call_score`) is that of the answer as its record keeps it, the first
:data:`ANSWER_CHARS` characters, so anyone holding the record and the gold can recompute it.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize

__all__ = ["ANSWER_CHARS", "MAX_TOKENS", "TOKEN_RE", "call_score", "clean_answer", "code_tokens", "token_similarity"]

#: Tokens kept per side before matching.
MAX_TOKENS = 2000
#: Characters of a probe answer kept in its record, and scored: room for :data:`MAX_TOKENS` tokens of
#: code (this package's own source averages about 8 characters per code token, docstrings included).
ANSWER_CHARS = 16000

#: Fallback tokenizer: strings, numbers, identifiers, multi-character operators, any other symbol;
#: ``#`` comments are matched and dropped.
TOKEN_RE = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
      | (?P<number>\d[\w.]*)
      | (?P<name>[^\W\d]\w*)
      | (?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%&|^=<>!@]=|\.\.\.|\S)""",
    re.VERBOSE,
)

_DROP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENCODING, tokenize.ENDMARKER}
_FENCE = re.compile(r"^\s*(```|~~~)")
#: the token types opening and closing an f-string (t-string) on Python 3.12 and later (absent before)
_OPEN = {getattr(tokenize, n) for n in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, n)}
_CLOSE = {getattr(tokenize, n) for n in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, n)}


def clean_answer(text: str) -> str:
    """``text`` without Markdown fence lines; when every non-blank line starts with ``+`` (or is a
    diff header), only the ``+`` lines, without the ``+``."""
    lines = [ln for ln in text.splitlines() if not _FENCE.match(ln)]
    body = [ln for ln in lines if ln.strip()]
    header = ("+++", "---", "@@", "diff --git", "index ")
    if body and all(ln.startswith("+") or ln.startswith(header) for ln in body):
        lines = [ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
    return "\n".join(lines)


def _regex_tokens(text: str) -> list[str]:
    return [m.group(0) for m in TOKEN_RE.finditer(text) if m.lastgroup != "comment"]


def code_tokens(text: str) -> list[str]:
    """The code tokens of ``text`` (see the module docstring), in order."""
    src = "\n".join(line.lstrip() for line in text.splitlines()) + "\n"
    line_starts = [0]
    for line in src.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return line_starts[min(pos[0] - 1, len(line_starts) - 1)] + pos[1]

    out: list[str] = []
    done = 0  # offset up to which tokenize has consumed the text (outside any f-string)
    depth, opened = 0, 0  # f-string nesting (3.12+) and where the outermost one began
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type in _OPEN:
                depth, opened = depth + 1, opened if depth else offset(tok.start)
                continue
            if depth:
                if tok.type in _CLOSE:
                    depth -= 1
                    if not depth:  # the whole literal, as 3.11's one STRING token
                        out.append(src[opened:offset(tok.end)])
                        done = offset(tok.end)
                continue
            if tok.type == tokenize.ERRORTOKEN and not tok.string.strip():
                continue
            if tok.type not in _DROP:
                out.append(tok.string)
            done = offset(tok.end)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out.extend(_regex_tokens(src[done:]))
    return out


def token_similarity(answer: str, gold: str) -> float:
    """Similarity in [0, 1] of ``answer`` to ``gold`` on code tokens (formula in the module
    docstring). The answer is passed through :func:`clean_answer` first."""
    a = code_tokens(clean_answer(answer))[:MAX_TOKENS]
    g = code_tokens(gold)[:MAX_TOKENS]
    if not a or not g:
        return 0.0
    return difflib.SequenceMatcher(None, a, g, autojunk=False).ratio()


def call_score(answer: str, outcome: str | None, gold: str) -> float:
    """The score of a probe call (docs/contracts.md §4) whose record keeps ``answer`` and ``outcome``,
    against the ``gold`` added lines: :func:`token_similarity` of the answer's first :data:`ANSWER_CHARS`
    characters, rounded to 6 places; a call with an ``outcome`` (a failure on its last try) scores as the
    empty answer it gave, 0.0."""
    return round(token_similarity("" if outcome else answer[:ANSWER_CHARS], gold), 6)
