"""An agent's own word that its provider failed (docs/contracts.md §8, issue 30), shared by the tests of
``--max-retries`` in every mode (run, ablate, probe): the usage line a ``cmd:`` agent prints to declare a
rate limit, and the shell command that prints it."""

from __future__ import annotations

#: The usage line declaring a rate limit (a ``cmd:`` agent's last stdout line, docs/contracts.md §5)
RATE_LIMIT_LINE = '{"outcome": "rate_limited", "error": "429 too many requests"}'

#: A shell command that declares a rate limit: a ``cmd:`` agent of its own, or the tail of one
#: (``… || DECLARE_RATE_LIMIT``) that declares it where it failed
DECLARE_RATE_LIMIT = f"echo '{RATE_LIMIT_LINE}'"
