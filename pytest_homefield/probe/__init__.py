"""The memorization probe (``homefield probe``, ``--homefield-probe``; docs/contracts.md §2, §4, §5).

A model that can write a commit's added code from the commit message and the list of changed files
alone has memorised the fix. :mod:`.prompt` builds the text-only question and the gold answer,
:mod:`.similarity` scores an answer on code tokens, :mod:`.verdicts` builds the control and flags
tasks scoring above its 95th percentile, :mod:`.plugin` runs one pytest item per (task, agent,
sample) and :mod:`.plan` counts the calls before anything is spent.
"""
