"""pytest-homefield: a repository's own git history as a private benchmark for coding agents.

Vocabulary, which is also the module structure: tasks are mined from history (:mod:`.scan`,
:mod:`.verify`), agents attempt them in snapshots (:mod:`.agents`, :mod:`.snapshot`), grading decides
each attempt (:mod:`.grading`), statistics compare agents (:mod:`.stats`) and the report prints it
(:mod:`.report`). The pytest plugin (:mod:`.plugin`) and the ``homefield`` CLI (:mod:`.cli`) are thin
shells around those plain modules.
"""

__version__ = "0.1.0"
