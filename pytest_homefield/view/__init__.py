"""``homefield view``: a static site of a run, to read what each agent did (issue 34).

:func:`~.site.build_site` writes it into the run folder (``view/``): the run page with the report's
tables and the per-task grid (:mod:`.run_page`), one page per task with every agent's attempts side by
side against the reference fix (:mod:`.task_page`), one page per attempt with its prompt, transcript
(:mod:`.transcript`), diff (:mod:`.highlight`), hidden tests and canaries (:mod:`.attempt_page`,
:mod:`.attempt_files`). Everything shown is redacted and capped (:mod:`.redact`). Nothing is fetched:
one stylesheet and one script (:mod:`.assets`). :func:`~.site.serve_site` serves it on 127.0.0.1.
"""

from __future__ import annotations

from pytest_homefield.view.site import SITE_DIR, SiteStats, build_site, serve_site, site_dir, view_command

__all__ = ["SITE_DIR", "SiteStats", "build_site", "serve_site", "site_dir", "view_command"]
