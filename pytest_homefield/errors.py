"""The package's exceptions, defined once. Every message is one line that names the flag, key,
file, spec or commit at fault; entry points (``plugin.py``, ``cli.py``) turn them into
``pytest.UsageError`` or a non-zero exit status with that line.

Each class also derives from the built-in exception it replaced (``ValueError`` for bad input,
``RuntimeError`` for failed git or setup commands), so ``except ValueError`` callers keep working.
"""

from __future__ import annotations

__all__ = [
    "HomefieldError",
    "ConfigError",
    "AgentSpecError",
    "RunError",
    "ResultsUnreadable",
    "ScanError",
    "SnapshotError",
    "PatchError",
    "PredictionsError",
    "PredictionsSpecError",
    "ProbeError",
    "StoreError",
    "RecordError",
    "ShardMergeError",
]


class HomefieldError(Exception):
    """Base of every pytest-homefield error; ``str(err)`` is one line."""


class ConfigError(HomefieldError, ValueError):
    """A configuration or usage error; ``str(err)`` is one line naming the key or flag."""


class AgentSpecError(HomefieldError, ValueError):
    """A bad agent spec; the message is one line naming the spec."""


class RunError(HomefieldError, ValueError):
    """A usage error about runs (no tasks, no agent, missing or mismatched run); one line."""


class ScanError(HomefieldError):
    """The repository cannot be scanned (not a git repository, unknown revision, git failed).
    The message is one line."""


class SnapshotError(HomefieldError, RuntimeError):
    """A snapshot could not be made: a git command failed (bad commit, unreadable repository, …),
    the parent tree could not be extracted, or its ``setup_cmd`` failed (an infra error)."""


class PatchError(HomefieldError, RuntimeError):
    """A patch did not apply. The message is one line."""


class PredictionsError(HomefieldError, ValueError):
    """A SWE-bench predictions file (``preds:FILE``) that cannot be read; one line naming the file."""


class PredictionsSpecError(AgentSpecError):
    """A ``preds:FILE`` agent whose file cannot be read or names instances no task matches (without
    ``--preds-partial``); one line. A run exits 2 with it, not pytest's usage-error status."""


class ProbeError(HomefieldError, ValueError):
    """Probe results that cannot serve (none, unfinished, made with another spec); one line naming the agent."""


class StoreError(HomefieldError, OSError):
    """A record could not be written or read (full disk, I/O error); ``str(err)`` is one line
    naming the file."""


class ResultsUnreadable(StoreError):
    """``--resume`` of a run whose ``results.jsonl`` cannot be read (a link, never followed; not a regular file; an
    I/O error): the session refuses to start, one line naming the file, exit 2 as ``homefield report`` of that run
    (link46: it was pytest's usage-error status, 4, though no flag was wrong)."""


class RecordError(HomefieldError, ValueError):
    """A line of a records file (or ``meta.json``) is not a valid record; ``str(err)`` is one line
    naming the file, the line and (where it applies) the field."""


class ShardMergeError(HomefieldError, ValueError):
    """Shard folders that must not be merged into one (different task or candidate sets, shards of
    different splits, a key two shards disagree on); one line naming the folders."""


class MergeError(ShardMergeError):
    """Runs that ``homefield report`` must not report together (the same reasons); one line."""
