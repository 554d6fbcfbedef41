"""How to install what the tests miss (issue 35 item 6): the command that installs the repository's
test dependencies into the test command's Python, named from its ``pyproject.toml`` (the extra as it
is spelled there: ``tests``, not ``test``; or a dependency group, which needs pip ≥ 25.1). A missing
module that extra or group does not declare (an older commit needed it: ``six`` for a candidate of
2015) is named for a ``pip install`` of its own, since installing the extra would not bring it."""

from __future__ import annotations

import functools
import importlib.metadata
import re
import shlex
import subprocess
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["install_hint", "distribution_of", "KNOWN_DISTRIBUTIONS", "STUB_ONLY", "stub_only_clause", "module_file", "conftest_import_line", "extra_of",
           "group_of", "declared_names",
           "pip_version", "PIP_GROUP_MIN"]

#: The first pip with ``pip install --group`` (PEP 735 dependency groups): 25.1.
PIP_GROUP_MIN = (25, 1)
#: Names a repository's test dependencies go by, in the order they are preferred.
TEST_NAMES = ("test", "tests", "testing", "dev")


#: Well-known import names whose distribution on PyPI is named otherwise, for a module installed nowhere homefield
#: can see (:func:`distribution_of`). Each from the project's own page or documentation: ``import yaml`` is PyYAML's
#: (pyyaml.org), ``dateutil`` python-dateutil's (dateutil.readthedocs.io), ``PIL`` Pillow's (pillow.readthedocs.io),
#: ``sklearn`` scikit-learn's (scikit-learn.org), ``cv2`` opencv-python's (pypi.org/project/opencv-python), ``bs4``
#: beautifulsoup4's (crummy.com/software/BeautifulSoup). No library of pip, uv or PyPI maps import names to
#: distributions (PyPI has no index by import name; ``pymod2pkg`` maps to distro packages).
KNOWN_DISTRIBUTIONS = {"yaml": "PyYAML", "dateutil": "python-dateutil", "PIL": "Pillow", "sklearn": "scikit-learn",
                       "cv2": "opencv-python", "bs4": "beautifulsoup4"}

#: Modules that exist in type checkers' stubs only, never at run time, so that no ``pip install`` provides them: a
#: commit importing one outside ``if TYPE_CHECKING:`` cannot run its tests in any environment. ``_typeshed``: typeshed's
#: ``stdlib/_typeshed/README.md`` ("this module doesn't exist at runtime"); jazzband/prettytable's 1b8b3eb399b0 (a
#: pre-commit autofix moved its import out of ``TYPE_CHECKING``) got the hint ``pip install _typeshed`` before (usr64).
STUB_ONLY = frozenset({"_typeshed"})


def stub_only_clause(missing: Collection[str]) -> str | None:
    """``"_typeshed exists in type checkers' stubs only (no install provides it: …)"`` for the modules of ``missing``
    (dotted or not) whose top-level name is in :data:`STUB_ONLY`, else ``None``."""
    names = sorted({m.split(".", 1)[0] for m in missing} & STUB_ONLY)
    if not names:
        return None
    return (f"{', '.join(names)} exist{'s' if len(names) == 1 else ''} in type checkers' stubs only: no install "
            "provides it; a commit that imports it outside `if TYPE_CHECKING:` cannot run its tests")


@functools.cache
def _installed() -> Mapping[str, Sequence[str]]:
    """:func:`importlib.metadata.packages_distributions` of the Python running homefield (top-level import name →
    the distributions providing it), once per process; empty when it cannot be read."""
    try:
        return importlib.metadata.packages_distributions()
    except Exception:  # a broken distribution's metadata: no names from it
        return {}


def distribution_of(module: str, installed: Mapping[str, Sequence[str]] | None = None) -> str:
    """The distribution to ``pip install`` for the missing ``module`` (dotted or not; exc35: the hint said
    ``pip install dateutil``): the one distribution providing its top-level name where homefield runs
    (``installed``: top name → distributions; ``None``: :func:`importlib.metadata.packages_distributions` of this
    Python), else :data:`KNOWN_DISTRIBUTIONS`, else the top-level name itself. A top name several distributions
    provide (a namespace such as ``zope``) names none of them."""
    top = module.split(".", 1)[0]
    dists = sorted(set((_installed() if installed is None else installed).get(top, ())))
    if len(dists) == 1:
        return dists[0]
    return KNOWN_DISTRIBUTIONS.get(top, top)


def module_file(root: Path, module: str) -> str:
    """The file of the dotted ``module`` relative to the repository at ``root``: ``src/pkg/_version.py``
    for ``pkg._version`` when the repository keeps ``pkg`` under ``src/`` (and not at its top), else
    ``pkg/_version.py``."""
    rel = module.replace(".", "/") + ".py"
    top = module.split(".")[0]
    return f"src/{rel}" if (root / "src" / top).is_dir() and not (root / top).is_dir() else rel


def _first(names: Mapping[str, Any] | None) -> str | None:
    if not isinstance(names, Mapping):
        return None
    return next((n for n in TEST_NAMES if n in names), None)


def _pyproject(root: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        return data
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def extra_of(root: Path) -> str | None:
    """The optional-dependencies extra of ``root/pyproject.toml`` holding test dependencies
    (:data:`TEST_NAMES`, as spelled there), or ``None``."""
    project = _pyproject(root).get("project")
    return _first(project.get("optional-dependencies") if isinstance(project, dict) else None)


def group_of(root: Path) -> str | None:
    """The PEP 735 dependency group of ``root/pyproject.toml`` holding test dependencies, or ``None``."""
    return _first(_pyproject(root).get("dependency-groups"))


def declared_names(root: Path) -> frozenset[str]:
    """The normalised distribution names the test extra and dependency group of ``root/pyproject.toml``
    require (``["pytest>=8", "six; python_version<'3'"]`` → ``{"pytest", "six"}``); an included group
    (``{include-group = …}``) is left out. Empty when it declares neither."""
    data = _pyproject(root)
    project = data.get("project")
    extras = project.get("optional-dependencies") if isinstance(project, dict) else None
    groups = data.get("dependency-groups")
    specs: list[Any] = []
    for table, name in ((extras, extra_of(root)), (groups, group_of(root))):
        if isinstance(table, Mapping) and name is not None and isinstance(table.get(name), list):
            specs += table[name]
    return frozenset(canonicalize_name(m.group(0).strip()) for s in specs if isinstance(s, str)
                     for m in [re.match(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*", s)] if m)


def pip_version(python: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``python -m pip``, ``None`` when it has none or cannot be asked (20 s)."""
    try:
        out = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"pip (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def install_hint(root: Path, python: str | None, missing: Collection[str] = (),
                 installed: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """``"e.g. /venv/bin/python -m pip install -e '.[tests]'"``: how to install the repository's test
    dependencies into ``python``, from its extra (preferred) or dependency group; a group's command says
    when that pip is older than 25.1 (no ``--group`` option there). ``missing``: the modules the tests
    lacked (``"yaml"``, ``"six.moves"``); the top-level names none of the extra's or group's
    requirements carries (:func:`declared_names`; ``yaml`` is carried by ``pyyaml``) are added with a
    ``python -m pip install`` of their own, each under its distribution's name (:func:`distribution_of`, with
    ``installed``: ``yaml`` → ``PyYAML``); a module of :data:`STUB_ONLY` is never named. ``None`` when ``python`` is unknown, or when
    ``pyproject.toml`` names neither and no module is left to name."""
    if python is None:
        return None
    py = shlex.quote(python)
    hint = None
    extra, group = extra_of(root), group_of(root)
    if extra is not None:
        hint = f"e.g. {py} -m pip install -e {shlex.quote(f'.[{extra}]')} (the extra is {extra!r})"
    elif group is not None:
        hint = f"e.g. {py} -m pip install --group {group}"
        version = pip_version(python)
        if version is not None and version < PIP_GROUP_MIN:
            hint += (f" (--group needs pip ≥ 25.1, that Python has pip {version[0]}.{version[1]}: "
                     f"{py} -m pip install -U pip first)")
    declared = declared_names(root)
    carried = [d.replace("-", "") for d in declared]
    alone = sorted({distribution_of(top, installed) for m in missing for top in [m.split(".", 1)[0]]
                    if top not in STUB_ONLY and not any(canonicalize_name(top).replace("-", "") in d for d in carried)
                    and canonicalize_name(distribution_of(top, installed)) not in declared})
    if not alone:
        return hint
    names = " ".join(shlex.quote(m) for m in alone)
    direct = (f"{py} -m pip install {names} (named by no requirement of today's test dependencies, "
              "perhaps needed by older commits only)")
    return f"{hint}; and {direct}" if hint else f"e.g. {direct}"


def _is_own(root: Path, top: str) -> bool:
    """Whether ``top`` is a top-level module of the working tree ``root`` (a folder or ``.py`` file at
    the root or under ``src/``)."""
    return any((base / top).is_dir() or (base / f"{top}.py").is_file() for base in (root, root / "src"))


def conftest_import_line(root: Path, python: str, conftest: Path, cause: BaseException) -> str | None:
    """The one line a homefield session prints instead of pytest's ``ImportError while loading conftest``
    traceback (exit 4, no hint) when a ``conftest.py`` of the repository ``root`` that pytest loads at
    start-up (every homefield session does, in ``python``, the interpreter running homefield) cannot
    import a module: the conftest, the error and the install command. For one of the repository's own
    modules (its conftest imports the package under test, which is not installed in ``python``, or an
    older release is), the project itself: ``python -m pip install -e '.[test]'`` (the extra as
    spelled, ``.`` without one); for any other, :func:`install_hint`'s command. ``None`` when ``cause``
    is not an ``ImportError`` naming its module (a ``SyntaxError``: pytest's own message says it better)."""
    name = getattr(cause, "name", None) if isinstance(cause, ImportError) else None
    if not name:
        return None
    top = str(name).split(".", 1)[0]
    where = conftest.relative_to(root) if conftest.is_relative_to(root) else conftest
    head = f"homefield: {where} cannot be loaded: {type(cause).__name__}: {cause}"
    if _is_own(root, top):
        extra = extra_of(root)
        target = shlex.quote(f".[{extra}]") if extra else "."
        return (f"{head} ({top!r} is the repository's own package, not installed in {python}, which loads your "
                f"conftest.py): install the project there, e.g. {shlex.quote(python)} -m pip install -e {target}")
    hint = install_hint(root, python, [str(name)])
    return f"{head} (not installed in {python}, which loads your conftest.py)" + (f": {hint}" if hint else "")
