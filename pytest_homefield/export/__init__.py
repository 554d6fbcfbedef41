"""Tasks in other harnesses' formats: SWE-bench instances (``homefield export``)."""
