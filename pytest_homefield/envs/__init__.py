"""Per-task Python environments built with uv (issue 16, docs/contracts.md §6 ``env``).

:mod:`.declaration` reads what a tree declares and computes the content key; :mod:`.builder`
builds, reuses, lists and prunes environments under the user cache; :mod:`.stage` gives mining and
grading the environment of a commit.
"""
