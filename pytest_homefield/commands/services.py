"""``homefield services --check``: start each service of ``.homefield.yml`` once, wait until it is ready,
run its reset, stop it, and print one line per service (docs/contracts.md §2). Starts no pytest session.
Exit status 0 when every service passed, 1 when one did not, 2 for a bad ``.homefield.yml``."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_homefield.errors import ConfigError
from pytest_homefield.layout import HomefieldDir, services_dir
from pytest_homefield.sandbox.services import check_services
from pytest_homefield.settings import resolve_settings

__all__ = ["run_services"]


def run_services(root: Path, *, check: bool) -> int:
    """List the services of ``root``'s ``.homefield.yml``; with ``check`` start each once (logs in
    ``.homefield/services/``). Returns the exit status."""
    try:
        settings = resolve_settings(root, {}, mode="run")
    except ConfigError as exc:
        print(f"homefield services: {exc}", file=sys.stderr)
        return 2
    if not settings.services:
        print("homefield services: none declared (add `services:` to .homefield.yml; README: Tests that need "
              "services)")
        return 0
    if not check:
        for spec in settings.services:
            print(f"  {spec.name}  scope {spec.scope}  ready {spec.ready}  {spec.command}")
        return 0
    home = HomefieldDir(root)
    home.ensure()
    log_dir = services_dir(home.path)
    log_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for spec, error, seconds in check_services(settings.services, log_dir, settings.sandbox):
        if error is None:
            reset = "reset ok" if spec.reset else "no reset"
            print(f"  {spec.name}: ok (ready in {seconds:.1f} s, {reset})")
        else:
            failed += 1
            print(f"  {spec.name}: FAILED: {error}")
    total = len(settings.services)
    print(f"homefield services: {total - failed} of {total} started, got ready and stopped"
          + (f"; logs in {log_dir.relative_to(root)}" if failed else ""))
    return 1 if failed else 0
