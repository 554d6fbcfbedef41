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
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize

__all__ = ["MAX_TOKENS", "TOKEN_RE", "clean_answer", "code_tokens", "token_similarity"]

#: Tokens kept per side before matching.
MAX_TOKENS = 2000

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
    out: list[str] = []
    done = 0  # offset up to which tokenize has consumed the text
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.ERRORTOKEN and not tok.string.strip():
                continue
            if tok.type not in _DROP:
                out.append(tok.string)
            row, col = tok.end
            done = line_starts[min(row - 1, len(line_starts) - 1)] + col
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
