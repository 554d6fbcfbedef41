"""Collection helpers shared by the mine and run modes: never collect the repository's own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["redirect_collection", "is_worker", "ensure_homefield_dir"]


def is_worker(config: pytest.Config) -> bool:
    """True inside an xdist worker process."""
    return hasattr(config, "workerinput")


def redirect_collection(config: pytest.Config, target: Path) -> None:
    """Make pytest collect only ``target`` (a ``.jsonl`` file our collector understands).

    When the user passed their own arguments, each must be ``target`` or a node id inside it
    (``.homefield/tasks.jsonl::<task>``); anything else (``tests/``) raises ``pytest.UsageError``.
    """
    target = target.resolve()
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        kept: list[str] = []
        for arg in config.args:
            file_part = arg.split("::", 1)[0]
            path = (config.invocation_params.dir / file_part).resolve()
            if path != target:
                raise pytest.UsageError(
                    f"pytest-homefield: {arg!r} is not a homefield node id; select items with -k or "
                    f"with node ids under {target.name}"
                )
            kept.append(str(target) + (arg[len(file_part):] if "::" in arg else ""))
        config.args[:] = kept
    else:
        config.args[:] = [str(target)]


def ensure_homefield_dir(root: Path) -> Path:
    """Create ``<root>/.homefield`` and list it in ``.git/info/exclude`` (once). Returns the folder."""
    hf = root / ".homefield"
    hf.mkdir(exist_ok=True)
    git_dir = root / ".git"
    if git_dir.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = git_dir.read_text().strip()
        if text.startswith("gitdir:"):
            git_dir = (root / text.split(":", 1)[1].strip()).resolve()
    exclude = git_dir / "info" / "exclude"
    try:
        lines = exclude.read_text().splitlines() if exclude.exists() else []
        if ".homefield/" not in lines and "/.homefield/" not in lines:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            with open(exclude, "a") as fh:
                fh.write(("\n" if lines and lines[-1] else "") + "/.homefield/\n")
    except OSError:
        pass
    return hf
