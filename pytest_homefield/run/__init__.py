"""Running: one attempt of one agent on one task, its grading, the run folder and the run's pytest
plugin (``docs/contracts.md`` §4, §5, §8)."""
