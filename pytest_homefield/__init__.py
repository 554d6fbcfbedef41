"""pytest-homefield: a repository's own git history as a private benchmark for coding agents.

The packages are the pipeline's stages: tasks are mined from history (:mod:`.mine`), agents
(:mod:`.agents`) attempt them in snapshots (:mod:`.sandbox`), each attempt is run and graded
(:mod:`.run`), and the report compares agents with paired statistics (:mod:`.report`). The pytest
plugin (:mod:`.plugin`) and the ``homefield`` CLI (:mod:`.cli`) are thin shells around them; the
README's "How the code is organised" lists every module.

PYTEST_DONT_REWRITE: the plugin's own asserts need no rewriting, and the ``homefield`` CLI imports
the package before ``pytest.main``, which would otherwise warn (an error under a repository's
``filterwarnings = error``).
"""

__version__ = "0.1.0"
