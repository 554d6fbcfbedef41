"""The site hook of a run's own Python environment under ``--sandbox none`` (docs/contracts.md §7, ops54).

This file is never imported by homefield: :mod:`~pytest_homefield.sandbox.editable_env` writes its text as
``_homefield_editable_site.py`` into the site folder of a test run's own environment, whose one ``.pth`` file
calls :func:`apply` in every interpreter the run starts (the test command's, and each child that runs
``sys.executable``, whatever ``PYTHONPATH`` it is given). It runs in the test command's interpreter: the standard
library only, Python 3.8 on.

:func:`apply` adds the site folders of the environment the test command names, as :mod:`site` would, through
:func:`site.addpackage` for each of their ``.pth`` files, but for the files that name the repository under
benchmark (an editable install's path line, setuptools' finder): their steps, made on the host, name the copy
under test instead.
"""

from __future__ import annotations

import os
import site
import sys

# no import of typing here (annotations are never evaluated): it is a few ms more of every interpreter's start


def apply(plan: list[tuple[str, list[tuple[str, list[tuple[object, ...]] | None]]]]) -> None:
    """Add the site folders of ``plan`` to ``sys.path``, in order: ``[(site folder, [(name, steps), ...]), ...]``,
    each folder's ``.pth`` files in the order :mod:`site` reads them. ``steps`` ``None``: the file is processed by
    :func:`site.addpackage`, as it would be; else the file is not read, its steps are taken instead:
    ``("path", folder)`` (appended as a path line is, when it exists), ``("finder", module, mapping, namespaces)``
    (setuptools' editable finder module, imported from the site folder, its ``MAPPING`` and ``NAMESPACES`` replaced by
    those given before its ``install()``), ``("redirect", [(module, file), ...])`` (hatchling's ``editables``
    redirector, installed and each module mapped to its file, ops56),
    ``("exec", line)`` (an ``import`` line, run as :mod:`site` runs it, with
    ``sitedir`` a local). A step that raises is reported on stderr as :mod:`site` reports a ``.pth`` line, and the
    rest of that file is skipped."""
    known = set()
    for entry in sys.path:
        known.add(site.makepath(entry)[1])
    for sitedir, files in plan:
        sitedir, case = site.makepath(sitedir)
        if case not in known and os.path.isdir(sitedir):
            sys.path.append(sitedir)
            known.add(case)
        for name, steps in files:
            if steps is None:
                site.addpackage(sitedir, name, known)
            else:
                _take(sitedir, name, steps, known)


def _take(sitedir: str, name: str, steps: list[tuple[object, ...]], known: set[str]) -> None:
    """The ``steps`` of the ``.pth`` file ``name`` of ``sitedir`` (:func:`apply`)."""
    for n, step in enumerate(steps):
        try:
            if step[0] == "path":
                path, case = site.makepath(str(step[1]))
                if case not in known and os.path.exists(path):
                    sys.path.append(path)
                    known.add(case)
            elif step[0] == "finder":
                module = __import__(str(step[1]))
                module.MAPPING.clear()
                module.MAPPING.update(step[2])
                module.NAMESPACES.clear()
                module.NAMESPACES.update(step[3])
                module.install()
            elif step[0] == "redirect":  # hatchling's editables redirector (ops56), its modules' files given
                from editables.redirector import RedirectingFinder
                RedirectingFinder.install()
                for module_name, path in step[1]:  # type: ignore[attr-defined]
                    RedirectingFinder.map_module(module_name, path)
            else:
                exec(str(step[1]))  # ``sitedir`` a local here, as in site.addpackage (setuptools' -nspkg.pth reads it)
        except Exception as exc:
            where = os.path.join(sitedir, name)
            print(f"Error processing step {n + 1} of {where} (homefield: the run's own environment):",
                  file=sys.stderr)
            print(f"  {type(exc).__name__}: {exc}", file=sys.stderr)
            return
