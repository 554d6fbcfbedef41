"""Token cost of a rule: what it adds to every turn's context (issue 14).

:func:`count_tokens` uses a real tokenizer when one is installed and loads offline: ``tiktoken``'s
``cl100k_base`` (an OpenAI BPE; Anthropic's and Google's tokenizers are not public, so this is an
estimate of the same order for them). Otherwise, or when tiktoken cannot load its vocabulary (it
downloads it on first use), ``max(1, round(characters / 4))``, marked approximate.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

__all__ = ["TokenCount", "count_tokens", "tokenizer_name"]


@dataclass(frozen=True)
class TokenCount:
    """``tokens`` (int) and whether it is the characters / 4 approximation (``approximate``)."""

    tokens: int
    approximate: bool

    def __str__(self) -> str:
        return f"~{self.tokens}" if self.approximate else str(self.tokens)


@functools.lru_cache(maxsize=1)
def _encoder() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # not installed, or its vocabulary cannot be fetched offline
        return None


def tokenizer_name() -> str:
    """``"tiktoken cl100k_base"`` or ``"characters / 4 (approximate)"``."""
    return "tiktoken cl100k_base" if _encoder() is not None else "characters / 4 (approximate)"


def count_tokens(text: str) -> TokenCount:
    """Tokens in ``text``: exact for tiktoken's cl100k_base when available, else ``max(1, round(len / 4))``."""
    enc = _encoder()
    if enc is not None:
        return TokenCount(len(enc.encode(text, disallowed_special=())), False)
    return TokenCount(max(1, round(len(text) / 4)), True)
