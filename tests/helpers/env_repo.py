"""A tiny real repository whose history changes its dependencies, for the ``--env uv`` tests.

Commits (oldest first): ``Initial project with add`` (no dependencies; pytest in the ``test``
dependency group), ``Double numbers with the hfdep package`` (adds ``hfdep>=1.0`` to
``[project] dependencies``, code importing it and a test), ``Triple numbers with the hfmissing
package`` (adds ``hfmissing>=1``, which no wheel provides: the environment cannot be built).
The project builds with an in-tree PEP 517 backend (:data:`helpers.wheels.BACKEND_SOURCE`); set
``HF_BACKEND_SLEEP`` (seconds) and ``HF_BACKEND_STARTED`` (a path it creates) to hold a build.

:func:`offline_env` gives the environment variables that make uv offline with a local
``--find-links`` folder (pytest, its requirements and ``hfdep`` as wheels) and a private cache.
"""

from __future__ import annotations

from pathlib import Path

from helpers.gitrepo import GitRepo
from helpers.wheels import BACKEND_SOURCE, find_links, write_wheel

__all__ = ["build_env_repo", "build_find_links", "offline_env", "pyproject", "SLOW_BACKEND"]

SLOW_BACKEND = BACKEND_SOURCE + '''

_real_build_wheel = build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import time
    started = os.environ.get("HF_BACKEND_STARTED")
    if started:
        open(started, "w").close()
    time.sleep(float(os.environ.get("HF_BACKEND_SLEEP") or 0))
    return _real_build_wheel(wheel_directory, config_settings, metadata_directory)
'''


def pyproject(deps: list[str]) -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    return (f'[project]\nname = "hfproj"\nversion = "0.1"\nrequires-python = "==3.11.*"\n'
            f'dependencies = [{listed}]\n\n[dependency-groups]\ntest = ["pytest"]\n\n'
            '[build-system]\nrequires = []\nbuild-backend = "hfbackend"\nbackend-path = ["_build"]\n')


def build_find_links(dest: Path) -> Path:
    """``dest`` filled with wheels of pytest (and its requirements) and ``hfdep 1.0``."""
    find_links(dest)
    write_wheel(dest, "hfdep", "1.0", {"hfdep/__init__.py": b"def double(x):\n    return 2 * x\n"})
    return dest


def offline_env(find_links_dir: Path, cache: Path) -> dict[str, str]:
    """Variables for an offline uv with ``find_links_dir`` and caches (ours and uv's) under ``cache``."""
    return {"UV_OFFLINE": "1", "UV_NO_INDEX": "1", "UV_FIND_LINKS": str(find_links_dir),
            "XDG_CACHE_HOME": str(cache), "UV_CACHE_DIR": str(cache / "uv")}


def build_env_repo(dest: Path) -> GitRepo:
    repo = GitRepo.init(dest)
    repo.write("_build/hfbackend.py", SLOW_BACKEND)
    repo.write("pyproject.toml", pyproject([]))
    repo.write("hfproj/__init__.py", "def add(a, b):\n    return a + b\n")
    repo.write("tests/test_add.py", "from hfproj import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    repo.commit("Initial project with add")
    repo.write("pyproject.toml", pyproject(["hfdep>=1.0"]))
    repo.write("hfproj/double.py", "from hfdep import double as _double\n\n\ndef double(x):\n    return _double(x)\n")
    repo.write("tests/test_double.py", "from hfproj.double import double\n\n\ndef test_double():\n"
                                       "    assert double(21) == 42\n")
    repo.commit("Double numbers with the hfdep package")
    repo.write("pyproject.toml", pyproject(["hfdep>=1.0", "hfmissing>=1"]))
    repo.write("hfproj/triple.py", "import hfmissing\n\n\ndef triple(x):\n    return 3 * x\n")
    repo.write("tests/test_triple.py", "from hfproj.triple import triple\n\n\ndef test_triple():\n"
                                       "    assert triple(2) == 6\n")
    repo.commit("Triple numbers with the hfmissing package")
    return repo
