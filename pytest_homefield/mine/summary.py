"""The summary lines of a mining session that explain its drops (docs/contracts.md §7): the setup hint,
services that did not start, tests that could not connect, modules the environment lacks, the
environments built, the drop counts. Pure functions of verification records."""

from __future__ import annotations

import datetime as _dt
import functools
import re
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from pytest_homefield.mine.bounds import unfoldered
from pytest_homefield.mine.compiled import BUILD_IN_PLACE, BUILT_BEFORE
from pytest_homefield.mine.redgreen import DESELECTED, HELD_BACK
from pytest_homefield.mine.setup_help import STUB_ONLY, stub_only_clause
from pytest_homefield.records import Task
from pytest_homefield.sandbox.services import failure_lines
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["setup_hint", "older_python", "later_since", "older_filter", "collection_errors_line",
           "version_stub_setup_cmd", "service_lines", "setup_failed_line", "network_line", "missing_modules_line",
           "skipped_line", "failing_with_reference_line", "env_summary", "drop_summary", "dropped_line", "vague_line",
           "compiled_changes_line", "deselected_line"]

#: A module a test run could not import (group 1, dotted: word characters and dots only, narrower than
#: ``redgreen._NO_MODULE``, so no ``'a-b'`` or ``'pkg/x'`` is looked up as a compiled source file).
_MISSING = re.compile(r"No module named '([\w.]+)'")
#: A skip reason that names a package the tests' environment lacks (group 1 or 2): pytest's ``importorskip`` (``could
#: not import 'trio': No module named 'trio'``) or a test's own ``skipIf`` text (tenacity: ``trio not installed``).
_SKIPPED_FOR_LACK = re.compile(r"(?:could not import|No module named) '([\w.]+)'"
                               r"|^([A-Za-z_][\w.-]*) (?:is )?not (?:installed|available|importable)\b", re.IGNORECASE)
#: An import of a module a build generates (setuptools-scm's ``_version.py``, versioneer's ``_version``,
#: hatch-vcs's ``version.py``); group 1 is its dotted name.
_GENERATED = re.compile(r"No module named '([\w.]+\._?version)'")


#: A warning class raised where a collection error names its exception (``pytest.PytestRemovedIn10Warning:
#: Passing a non-Collection iterable …``, ``DeprecationWarning: …``): only a warning turned into an error by
#: the tests' ``filterwarnings`` stops a collection; group 1 is the class as the error names it.
_WARNING = re.compile(r"(?:^|[\s>])((?:\w+\.)*\w*Warning): ")


def pytest_version() -> str:
    """``"pytest 9.2.0"``: the pytest of this environment (the one the mine's test runs use, unless a
    header line said they use another Python)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"pytest {version('pytest')}"
    except PackageNotFoundError:  # pragma: no cover - homefield runs inside pytest
        return "pytest"


def version_stub_setup_cmd(path: str) -> str:
    """The ``.homefield.yml`` line whose ``setup_cmd`` writes a stub of a generated version module at
    ``path`` (relative to the snapshot): ``__version__``/``version`` ``"0.0.0"`` and ``__version_tuple__``/
    ``version_tuple`` ``(0, 0, 0)``, the names setuptools-scm's and hatch-vcs's files define (a package may
    import the tuple too: tox-dev/platformdirs does). The version has a release's ``X.Y.Z`` shape, as the
    build's own would: a test of the version's shape (prettytable's ``test_version``: a digit first and
    last, two dots at least) failed at every commit with ``"0"``, so it was left out of every task holding
    it, and a commit whose only red test it was read "reference fails" (nu27). It writes only where the
    module's folder is: a commit of another layout (prettytable before its ``src/``) runs its tests as they are,
    where the stub's ``> src/prettytable/_version.py`` failed its setup ("Directory nonexistent"; usr64: 2 of 53
    candidates dropped as ``setup_failed``)."""
    folder = path.rpartition("/")[0] or "."
    return (f'setup_cmd: "if [ -d {folder} ]; then printf \'__version__ = version = \\"0.0.0\\"\\\\n'
            '__version_tuple__ = version_tuple = (0, 0, 0)'
            f'\\\\n\' > {path}; fi"')


def compiled_advice(why: str, compiled: Callable[[str], str | None] | None,
                    recipe: Callable[[str, str], str] | None = None) -> str | None:
    """What to do when a collection error ``why`` is a missing module that ``compiled`` (dotted name -> its
    compiled source in the repository, :func:`~pytest_homefield.mine.compiled.own_compiled_module`, or ``None``)
    finds to be the repository's own compiled module (ops61: every candidate of a repository with a C extension
    was dropped, and the hint named a package to install): build it in place with ``setup_cmd``, the line
    ``recipe`` (module, source -> ``.homefield.yml`` line: :func:`~pytest_homefield.mine.compiled.build_recipe`, which
    reads the build backend) gives, setuptools' :data:`BUILD_IN_PLACE` without one; ``None`` otherwise."""
    missing = _MISSING.search(why)
    source = compiled(missing.group(1)) if missing and compiled is not None else None
    if missing is None or source is None:
        return None
    return (f"{missing.group(1)} is the repository's own compiled module ({source}), which a build makes and a "
            f"snapshot (the commit's tree) lacks: build it in place in every copy with setup_cmd in .homefield.yml, "
            f"e.g. {recipe(missing.group(1), source) if recipe else BUILD_IN_PLACE + ' (setuptools'}; README: "
            "Python environments), then mine again. setup_cmd runs "
            "before a commit's change is applied, as grading's does, so a commit that changes compiled sources "
            "stays no task")


def setup_hint(verified: Sequence[dict[str, Any]], *, locate: Callable[[str], str] | None = None,
               compiled: Callable[[str], str | None] | None = None,
               recipe: Callable[[str, str], str] | None = None,
               dates: Mapping[str, str] | None = None) -> str | None:
    """A hint when most verified candidates could not even be collected at the commit (a missing
    generated file or an uninstalled package, not a failing test): the snapshot probably needs a
    ``setup_cmd``; when the error is a missing version module a build generates and ``locate`` gives
    its file (dotted name -> path in the snapshot), the ``setup_cmd`` line that writes a stub of it
    (:func:`version_stub_setup_cmd`); when the error is a warning the tests' ``filterwarnings`` raise
    (python-dateutil since 2019 under pytest 9: ``PytestRemovedIn10Warning``, and pytest-cov's ``no_cover``
    mark unregistered without it), the pytest or plugin of those commits, never ``setup_cmd``: no file is
    missing (nu40); when it is the repository's own compiled module (``compiled``: :func:`compiled_advice`), the
    ``setup_cmd`` that builds it in place. Errors of several kinds are each named with their count and advice
    (:func:`_blockers`, ux65). ``dates``: candidate id → its ``committed_at``, for the date an older Python's advice
    names (:func:`older_python`). ``None`` otherwise."""
    broken = [r for r in verified if _environment_broken(r)]
    if not verified or len(broken) * 2 < len(verified):
        return None
    why = Counter(_why_broken(str(r.get("detail", ""))) for r in broken)
    head = (f"Hint: {len(broken)} of {plural(len(verified), 'candidate')} could not collect their tests even at "
            "the commit")
    advise = functools.partial(_advice, locate=locate, compiled=compiled, recipe=recipe, generic=_SETUP_CMD,
                               newest=_newest(broken, dates))
    if len(why) > 1:
        return f"{head}: {_blockers(why, advise)}"
    (only,) = why
    return f"{head} ({only}). {advise(only)}."


#: The advice for a collection error no known cause explains, when most candidates have one.
_SETUP_CMD = ("Snapshots hold the commit's tree only: generate or install what the tests import with setup_cmd in "
              ".homefield.yml (README: Python environments), then mine again")
#: The advice for a collection error no known cause explains, when some candidates have one.
_OLDER_COMMITS = ("older commits may need a pytest plugin, a package or a generated file this environment lacks; "
                  "install it here (or make it with setup_cmd in .homefield.yml) and mine again (a changed "
                  "environment is verified again)")
#: How many distinct collection errors a summary line names (ux65).
BLOCKERS_NAMED = 3


def _advice(why: str, *, locate: Callable[[str], str] | None, compiled: Callable[[str], str | None] | None,
            recipe: Callable[[str, str], str] | None, generic: str, newest: Mapping[str, str] | None = None) -> str:
    """What to do about the collection error ``why`` (no final period): for a version module a build generates
    whose file ``locate`` gives, the ``setup_cmd`` stub (:func:`version_stub_setup_cmd`); what no file explains
    (:func:`_no_file_missing`); a warning the tests' ``filterwarnings`` raise, the pytest or plugin of those
    commits; else ``generic``. ``newest``: error → the date of the newest commit failing so (:func:`_newest`)."""
    generated = _GENERATED.search(why)
    if generated and locate is not None:
        module = generated.group(1)
        return (f"{module} is a file the build generates (hatch-vcs, setuptools-scm) and snapshots hold "
                f"the commit's tree only: write a stub of it in .homefield.yml, "
                f"{version_stub_setup_cmd(locate(module))}, then mine again")
    older = _no_file_missing(why, compiled, recipe, (newest or {}).get(why))
    if older:  # the standard library of this Python, or this pytest, lacks what the code names: no file is missing
        return older
    warning = _WARNING.search(why)
    if warning:  # a warning the tests' own settings raise (filterwarnings = error): no file is missing
        return (f"{warning.group(1)} is a warning the tests' filterwarnings turn into an error: these "
                f"commits were written for another pytest than this one ({pytest_version()}) or with a plugin "
                "it lacks; install the pytest or plugin of their day (pip install 'pytest<N', the test extra "
                "of those commits) here, then mine again (a changed environment is verified again)")
    return generic


def _blockers(why: Counter[str], advise: Callable[[str], str]) -> str:
    """``'20 of them for "A": advice. 11 for "B": advice.'``: the :data:`BLOCKERS_NAMED` collection errors of ``why``
    (error → candidates) most candidates share (among equals, by text), each with its count and ``advise``'s advice,
    then how many candidates failed for the others. usr64 on jazzband/prettytable: the summary named the first error
    only (a missing ``prettytable._version``) and the user met the second (``pytest.lazy_fixture``) one mine later."""
    ranked = sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))
    named = " ".join(f"{n}{' of them' if i == 0 else ''} for \"{text}\": {advise(text)}."
                     for i, (text, n) in enumerate(ranked[:BLOCKERS_NAMED]))
    rest = ranked[BLOCKERS_NAMED:]
    if rest:
        named += (f" {plural(sum(n for _, n in rest), 'other candidate')} for {plural(len(rest), 'other error')} "
                  "(see the verification records).")
    return named


#: ``cannot import name 'X' from 'M' (PATH)`` where PATH is a file of a Python's standard library (under
#: ``lib/pythonX.Y/``, not in its ``site-packages``/``dist-packages``): group 1 the name, 2 the module, 3 the version.
_STDLIB_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)' \([^()\n]*/lib/python(\d+\.\d+)/"
                            r"(?![^()\n]*-packages/)[^()\n]*\)")


#: ``AttributeError: module 'M' has no attribute 'N'``: group 1 the module, 2 the name (:func:`older_python` reads it
#: only for a module of the standard library).
_MODULE_ATTR = re.compile(r"AttributeError: module '([\w.]+)' has no attribute '(\w+)'")


def later_since(newest: str | None) -> str:
    """``--since 2018-11-07 (the newest commit failing so is of 2018-11-06)``: the option and the day after ``newest``
    (ISO 8601 date or time: the newest commit that failed so), or, when it is not known, ``a later --since`` (keep66,
    usr46: the hint named no date, and the user had to search the records for one)."""
    if not newest:
        return f"a later {option('since')}"
    day = _dt.date.fromisoformat(newest[:10]) + _dt.timedelta(days=1)
    return f"{option('since')} {day.isoformat()} (the newest commit failing so is of {newest[:10]})"


def older_python(why: str, newest: str | None = None) -> str | None:
    """What to do when a collection error is an import of a name the standard library of the Python the tests
    ran with no longer has (``cannot import name 'Sequence' from 'collections' (…/lib/python3.11/collections/…)``),
    or an attribute of a standard library module it no longer has (``AttributeError: module 'collections' has no
    attribute 'MutableMapping'``, a module of :data:`sys.stdlib_module_names`): the commits were written for an older
    Python, which no ``setup_cmd`` and no package gives (nu52, grantjenks/python-sortedcontainers before 2018: 13 of
    20 candidates; usr46, tkem/cachetools before 2018-11: 34 of 68 candidates by the attribute; both times the
    hint sent the user to ``setup_cmd`` as for a file the build generates). ``newest``: the date of the newest commit
    failing so, which the advice's ``--since`` starts after (:func:`later_since`). ``None`` for any other error."""
    found = _STDLIB_IMPORT.search(why)
    attr = _MODULE_ATTR.search(why)
    if found is not None:
        name, module, python = found.groups()
        ran = f"Python {python}, which the tests ran with,"
    elif attr is not None and attr.group(1).split(".", 1)[0] in sys.stdlib_module_names:
        module, name = attr.groups()
        ran = "the Python the tests ran with"
    else:
        return None
    return (f"{module} of {ran} has no {name}: these commits were written for an "
            "older Python; mine them again in a virtualenv of the Python of their day (python3.X -m venv, activated: "
            f"a changed environment is verified again), or from {later_since(newest)}")


#: pytest's error for a ``filterwarnings`` entry whose warning class it cannot import, as
#: :func:`~pytest_homefield.sandbox.testrun.last_error_line` says it: group 1 the entry, 2 the module, 3 the class.
_FILTER_CLASS = re.compile(r"while parsing the following warning configuration: (\S+) \(AttributeError: module "
                           r"'([\w.]+)' has no attribute '(\w+)'\)")


def older_filter(why: str) -> str | None:
    """What to do when pytest stops at a ``filterwarnings`` entry naming a warning class the installed module
    lacks (nub58, dgilland/pydash 2023-24: ``ignore::pytest.PytestRemovedIn8Warning:pytest_pylint.*``, a class
    pytest 9 has not): no package or ``setup_cmd`` brings it back and homefield needs pytest 8.4 or later, but
    ``-o filterwarnings=`` in ``test_cmd`` runs those commits' tests without their filters (measured: one of
    the 5 candidates dropped so became a task). ``None`` for any other error."""
    found = _FILTER_CLASS.search(why)
    if found is None:
        return None
    entry, module, name = found.groups()
    return (f"their filterwarnings entry {entry} names {module}.{name}, which the {module} installed here lacks; "
            "test_cmd: \"python -m pytest -o filterwarnings=\" in .homefield.yml runs their tests without their "
            "warning filters (a test that needs one fails alike at parent and commit and is left out), then mine "
            "again (a changed environment is verified again)")


#: ``AttributeError: module 'pytest' has no attribute 'X'``: group 1 the name.
_PYTEST_ATTR = re.compile(r"module 'pytest' has no attribute '(\w+)'")


def older_pytest_attr(why: str) -> str | None:
    """What to do when the tests name ``pytest.X``, which the pytest installed here lacks (usr64, jazzband/prettytable
    before 2024-02: ``pytest.lazy_fixture``, added by the plugin pytest-lazy-fixture, which pytest 8 broke; 31 of 53
    candidates dropped and the hint sent the user to ``setup_cmd``, which cannot bring it back): homefield needs pytest
    8.4 or later, so those commits' tests do not run here; ``git log -S`` names the commit that stopped using it, and
    ``--since`` a later date mines the commits that can. ``None`` for any other error."""
    found = _PYTEST_ATTR.search(why)
    if found is None:
        return None
    name = found.group(1)
    return (f"pytest.{name} is no attribute of the pytest installed here ({pytest_version()}): those commits were "
            f"written for the pytest of their day or a plugin that added it, and homefield needs pytest 8.4 or later, "
            f"so no setup_cmd runs their tests; git log -1 -S 'pytest.{name}' names the commit that stopped using it: "
            f"mine with {option('since')} a later date")


def _no_file_missing(why: str, compiled: Callable[[str], str | None] | None,
                     recipe: Callable[[str, str], str] | None, newest: str | None = None) -> str | None:
    """The advice for a collection error ``why`` that no installed package or generated file explains, the
    first of: a filter of another pytest (:func:`older_filter`), the standard library of another Python
    (:func:`older_python`), an attribute of another pytest (:func:`older_pytest_attr`), the repository's own compiled
    module (:func:`compiled_advice`); ``None`` otherwise. ``newest``: see :func:`older_python`."""
    return (older_filter(why) or older_python(why, newest) or older_pytest_attr(why)
            or compiled_advice(why, compiled, recipe))


#: The start of a ``reference_fails`` detail whose tests could not be collected at either commit.
_BOTH_BROKEN = "collection errors at the parent and at the commit"


def _environment_broken(record: dict[str, Any]) -> bool:
    """A ``reference_fails`` record whose tests could not be collected at either commit, the environment's
    doing as far as homefield knows: not one whose commit runs left a file of the reference fix out as grading
    does (:data:`~pytest_homefield.mine.redgreen.HELD_BACK`: the commit's own test configuration; nu38, click's
    unregistered ``stress`` mark had the hint send the user to ``setup_cmd``)."""
    detail = str(record.get("detail", ""))
    return (record.get("reason") == "reference_fails" and detail.startswith(_BOTH_BROKEN) and HELD_BACK not in detail
            and BUILT_BEFORE not in detail)


#: What :func:`~pytest_homefield.mine.redgreen.classify_runs` appends to a detail whose runs could not import
#: modules (``"…; the environment lacks module(s): more_itertools"``).
_LACKS = "; the environment lacks module(s): "


def _newest(broken: Iterable[Mapping[str, Any]], dates: Mapping[str, str] | None) -> dict[str, str]:
    """Each collection error of the ``broken`` records (:func:`_why_broken`) → the ``committed_at`` (``dates``: id →
    date) of the newest of their candidates; none for the records ``dates`` has no date of."""
    out: dict[str, str] = {}
    for r in broken:
        date = (dates or {}).get(str(r.get("id")))
        why = _why_broken(str(r.get("detail", "")))
        if date and date > out.get(why, ""):
            out[why] = date
    return out


def _why_broken(detail: str) -> str:
    """The error a ``collection errors at the parent and at the commit: PATHS (MESSAGE)`` detail quotes,
    read before the ``; the environment lacks module(s): …`` it may end with (nu35, jaraco/inflect: with
    that ending every such detail read "see the verification records", so a summary named no error and
    counted one missing ``more_itertools`` and one missing ``typeguard`` as the same one)."""
    detail = detail.split(_LACKS, 1)[0]
    _, sep, why = detail.partition(" (")  # "…: PATHS (MESSAGE)": the message keeps its own parentheses
    return why[:-1] if sep and detail.endswith(")") else "see the verification records"


def collection_errors_line(verified: Sequence[dict[str, Any]], *,
                           locate: Callable[[str], str] | None = None,
                           compiled: Callable[[str], str | None] | None = None,
                           recipe: Callable[[str, str], str] | None = None,
                           dates: Mapping[str, str] | None = None) -> str | None:
    """``'Collection errors: 11 candidates could not collect their tests at the parent nor at the commit,
    11 of them for "…: ERROR: Unknown config option: asyncio_mode": …'`` when two or more such
    ``reference_fails`` records share their error but they are not most of the verified candidates (then
    :func:`setup_hint` says it). Older commits often configure a pytest plugin, or import a package, that
    today's environment lacks: hynek/stamina's 11 commits before 2024 set ``asyncio_mode`` for
    pytest-asyncio, which its test group no longer holds (nu25), and the summary said only "reference
    fails 11". Names the :data:`BLOCKERS_NAMED` most common errors, each with its count and advice
    (:func:`_blockers`). ``locate``, ``dates``: see :func:`setup_hint`; ``compiled``, ``recipe``: see
    :func:`compiled_advice`. ``None`` otherwise."""
    if setup_hint(verified) is not None:
        return None
    broken = [r for r in verified if _environment_broken(r)]
    why = Counter(_why_broken(str(r.get("detail", ""))) for r in broken)
    if not why or max(why.values()) < 2:
        return None
    advise = functools.partial(_advice, locate=locate, compiled=compiled, recipe=recipe, generic=_OLDER_COMMITS,
                               newest=_newest(broken, dates))
    return (f"Collection errors: {plural(sum(why.values()), 'candidate')} could not collect their tests at the parent "
            f"nor at the commit, {_blockers(why, advise)}")


def service_lines(verified: Sequence[dict[str, Any]]) -> list[str]:
    """One line per service that did not start (``setup_failed`` records whose detail names it, the
    message said once however many candidates it dropped)."""
    return failure_lines((r.get("detail") for r in verified if r.get("reason") == "setup_failed"),
                         "candidate", "dropped")


def setup_failed_line(verified: Sequence[dict[str, Any]], *,
                      locate: Callable[[str], str] | None = None) -> str | None:
    """``'Setup failed (3 candidates): the test command produced no outcomes: parent run 1: no outcome was
    written (exit status 1): ModuleNotFoundError: No module named 'pluggy._version'; …'``: the most common
    ``setup_failed`` detail (the error line the test run left, so the user sees why without opening the
    records), with a hint when it is a module a build generates: given ``locate`` (dotted name -> path in
    the snapshot), the ``.homefield.yml`` line that writes a stub of it (:func:`version_stub_setup_cmd`), as
    :func:`setup_hint` gives it for collection errors. A package whose ``conftest.py`` imports it (urllib3,
    hatch-vcs) fails before any outcome, ``setup_failed`` and not ``reference_fails``, so no ``Hint:`` line
    came, and the fail-fast line sent the user to a line below that was not there (nu43). Services that
    did not start are said by :func:`service_lines` instead. ``None`` without such a record."""
    texts = [str(r.get("detail") or "") for r in verified if r.get("reason") == "setup_failed"
             and "service '" not in str(r.get("detail") or "")]
    details = Counter(unfoldered(t) for t in texts)
    if not details:
        return None
    key, n = details.most_common(1)[0]
    detail = next(t for t in texts if unfoldered(t) == key)  # quoted as the first record of the group says it
    others = sum(details.values()) - n
    more = f"; {plural(others, 'other candidate')} failed otherwise (see the verification records)" if others else ""
    generated = _GENERATED.search(detail)
    hint = ""
    if generated and locate is not None:
        hint = (f"; {generated.group(1)} is a file the build generates (hatch-vcs, setuptools-scm) and snapshots "
                "hold the commit's tree only: write a stub of it in .homefield.yml, "
                f"{version_stub_setup_cmd(locate(generated.group(1)))}, then mine again")
    elif generated:
        hint = ("; a module the build generates is missing: snapshots hold the commit's tree only, so generate it "
                "with setup_cmd in .homefield.yml")
    return f"Setup failed ({plural(n, 'candidate')}): {detail or 'no detail'}{hint}{more}"


def network_line(verified: Sequence[dict[str, Any]]) -> str | None:
    """``'Network: the test logs of 3 dropped candidates show a connection error (test runs have no network in
    the sandbox; it may not be what dropped them): tests tried 127.0.0.1:6379: declare it under `services:` …'``
    from the records' ``network_hint`` (the most common hint quoted), else ``None``. It says what the logs show,
    never that the connection dropped the candidate: any test of a run may have failed to connect, not only
    those that decided the drop (nu41, psf/requests: its deciding red tests were TLS tests against their own
    local server, and the line said the candidates were "dropped because the tests could not connect"); the
    ones dropped as ``passes_without_change`` are counted apart, since no test failed at their parent (a test the
    network had skipped may still be why: the ``Skipped tests:`` line and each detail name skips)."""
    with_hint = [r for r in verified if r.get("network_hint")]
    if not with_hint:
        return None
    hints = Counter(str(r["network_hint"]) for r in with_hint)
    n = len(with_hint)
    green = sum(1 for r in with_hint if r.get("reason") == "passes_without_change")
    undecided = (f"; {green} of them passed without the change: no test failed at the parent" if green
                 else "")
    return (f"Network: the test logs of {plural(n, 'dropped candidate')} show a connection error (test runs have no "
            f"network in the sandbox; it may not be what dropped them{undecided}): {hints.most_common(1)[0][0]}")


def skipped_line(verified: Sequence[dict[str, Any]], python: str | None = None) -> str | None:
    """``'Skipped tests: 9 candidates that passed without the change skipped tests at the parent, 7 of them
    for "Generate .mo with …" (…): …'`` when at least two ``passes_without_change`` records have
    ``skip_reasons``: tests this environment skips cannot go red, so a step the environment lacks (a
    generated file, a package) can drop candidates that are tasks, and no record says so on its own
    (python-humanize/humanize: 9 i18n candidates skipped their new tests until ``setup_cmd`` compiled
    the ``.mo`` files). Names the reason most candidates share (among equals, the one that skipped most tests)
    and how many others there are, and that
    ``setup_cmd`` runs before a commit's change (nu31: with the ``.mo`` step the 3 commits changing a ``.po``
    were dropped as reference fails, unexplained); ``None`` with fewer than two such records (a drop's own
    detail names its skips). A shared reason that names a package the environment lacks (:data:`_SKIPPED_FOR_LACK`)
    is said first: install it where the tests run (``python``, the test command's interpreter, when known), then
    mine again (ux67, usr66 on jd/tenacity: trio's tests skipped for "trio not installed" and the line said to put
    "a package" into ``setup_cmd``; installing trio and mining again made them tasks)."""
    with_skips = [r for r in verified if r.get("reason") == "passes_without_change"
                  and isinstance(r.get("skip_reasons"), dict) and r["skip_reasons"]]
    if len(with_skips) < 2:
        return None
    by_reason = Counter(str(why) for r in with_skips for why in r["skip_reasons"])
    tests: Counter[str] = Counter()  # a reason with no counted tests counts 0 (a Counter's missing key)
    for r in with_skips:
        tests.update({str(why): n for why, n in r["skip_reasons"].items() if isinstance(n, int)})
    # a tie among candidates goes to the reason that skipped more tests (nu58, structlog: "Needs Rich." 10 tests,
    # not "Must be running on Windows." 2, which no step lifts and came first by its text)
    (top, n), *rest = sorted(by_reason.items(), key=lambda kv: (-kv[1], -tests[kv[0]], kv[0]))
    others = f"; {plural(len(rest), 'other skip reason')}" if rest else ""
    lacked = list(dict.fromkeys(m.group(1) or m.group(2) for why in [top, *(r for r, _ in rest)]
                                if (m := _SKIPPED_FOR_LACK.search(why.strip()))))
    where = f"the tests ran with {python}" if python else "the environment homefield runs the tests with"
    one = len(lacked) == 1
    install = (f"The skip reasons name {'a package' if one else 'packages'} the tests' environment lacks "
               f"({', '.join(lacked[:3])}{', …' if len(lacked) > 3 else ''}): install {'it' if one else 'them'} "
               f"there ({where}), then mine again. " if lacked else "")
    step = "a generated file" if lacked else "a generated file, a package"
    return (f"Skipped tests: {len(with_skips)} candidates that passed without the change skipped tests at the "
            f"parent, {n} of them for \"{top}\"{others}: tests this environment skips cannot go red. {install}If a "
            f"step would let them run ({step}), add it to setup_cmd in .homefield.yml and mine "
            "again (a changed setup_cmd is verified again). setup_cmd runs at the parent, before a commit's change, "
            "as grading builds the reference fix: a commit that changes what it reads (a .po file it compiles) "
            "stays red at the commit and is dropped as reference fails.")


def failing_with_reference_line(verified: Sequence[dict[str, Any]]) -> str | None:
    """``'Failing with the reference fix: tests/test_x.py::test_version at 11 commits: …'`` when one test id
    failed in a commit run (its ``excluded`` reason ``fails_with_reference``) of two or more verified
    candidates: a test that fails with several commits' own code is broken in this environment, not by any
    one commit, and is left out of every task it fails in (never PASS_TO_PASS), silently, since each
    record says so only in its ``excluded`` field (nu27 on prettytable: ``test_version`` with a
    ``setup_cmd`` stub of version ``"0"``, at 10 of 13 commits; the one commit whose only red test it was
    read "reference fails"). Names the three such ids failing at the most commits; ``None`` when there is none."""
    counts = Counter(str(i) for r in verified if isinstance(r.get("excluded"), dict)
                     for i, why in r["excluded"].items() if why == "fails_with_reference")
    common = sorted(((i, n) for i, n in counts.items() if n >= 2), key=lambda kv: (-kv[1], kv[0]))
    if not common:
        return None
    named = ", ".join(f"{i} at {n} commits" for i, n in common[:3])
    more = f" and {plural(len(common) - 3, 'other test')}" if len(common) > 3 else ""
    return (f"Failing with the reference fix: {named}{more}: a test that fails with several commits' own code is "
            "broken in this environment (a stub of a generated file, a package, a service) and is left out of "
            "every task it fails in; if a step would make it pass, add it to setup_cmd in .homefield.yml and "
            "mine again.")


def missing_modules_line(verified: Sequence[dict[str, Any]], python: str | None, *, own: Collection[str] = (),
                         install: Callable[[Collection[str]], str | None] | None = None) -> str | None:
    """``'Missing modules: freezegun (2 candidates), yaml (1): the tests ran with /usr/bin/python3 …'``
    when a verified candidate's parent runs could not import a module (its record's
    ``missing_modules``), else ``None``. ``python``: the interpreter of the test command
    (:func:`python_of`), named because a shim (pyenv, an activated venv without homefield in it) can
    put another ``python`` first on PATH than the one the user installed the test dependencies into.
    Records reused from an earlier session count too: their environment is this one's (same key).
    ``own``: the repository's top-level names (:func:`~pytest_homefield.mine.redgreen.own_top_levels`):
    its own modules are never named (records verified before they were left out may hold them).
    ``install``: given the modules named, how to install them
    (:func:`~pytest_homefield.mine.setup_help.install_hint`), added. A module no install provides
    (:data:`~pytest_homefield.mine.setup_help.STUB_ONLY`: ``_typeshed``) is said to be one, and is the line's end when
    it is the only one missing."""
    counts: dict[str, int] = {}
    for r in verified:
        for m in r.get("missing_modules") or ():
            if str(m).split(".", 1)[0] not in own:
                counts[m] = counts.get(m, 0) + 1
    if not counts:
        return None
    names = sorted(counts, key=lambda m: (-counts[m], m))
    listed = ", ".join(f"{m} ({counts[m]} candidate{'s' if counts[m] != 1 else ''})" if i == 0 else f"{m} ({counts[m]})"
                       for i, m in enumerate(names))
    stubs = stub_only_clause(names)
    head = f"Missing modules: {listed}: " + (f"{stubs}; " if stubs else "")
    if all(m.split(".", 1)[0] in STUB_ONLY for m in names):
        return head.removesuffix("; ") + "."
    where = f"the tests ran with {python}" if python else "the test command's environment lacks them"
    hint = install(names) if install is not None else None
    how = f" ({hint})" if hint else ""
    return (f"{head}{where}; install {'the others' if stubs else 'them'} there{how} (or with setup_cmd) and mine again "
            "(a changed environment is verified again).")


def env_summary(records: Iterable[dict[str, Any]]) -> str:
    """``'environments: 2 distinct, 2 built (41.3 s), 5 reused, 1 failed to build'`` from verification
    records' ``env`` objects (a key counted once as built); ``''`` when no record has one. Records
    reused from an earlier session (``reused_from``) ran nothing here and are left out."""
    envs = [r["env"] for r in records if r.get("env") and not r.get("reused_from")]
    if not envs:
        return ""
    built = [e for e in envs if e.get("built")]
    failed = [e for e in envs if e.get("key") is None]
    reused = len(envs) - len(built) - len(failed)
    keys = {e["key"] for e in envs if e.get("key")}
    secs = sum(float(e.get("build_s") or 0) for e in built)
    out = f"environments: {len(keys)} distinct, {len(built)} built ({secs:.1f} s), {reused} reused"
    return out + (f", {len(failed)} failed to build" if failed else "")


def drop_summary(reasons: Iterable[str | None]) -> str:
    """``'passes without the change 3, reference fails 2, …'`` (most frequent first); ``''`` if none."""
    counts = Counter(r for r in reasons if r)
    return ", ".join(f"{r.replace('_', ' ')} {n}" for r, n in counts.most_common())


def dropped_line(verified: Sequence[str | None], scan: Sequence[str | None]) -> str | None:
    """The mine summary's ``Dropped:`` text, the candidates the verification dropped apart from the commits the
    scan set aside before any test ran: ``'3 of 11 candidates verified (reference fails 1, flaky 1, passes without
    change 1); 5 commits at the scan, before any test (no test change 2, docs only 1, …)'``. ``verified``: each
    verified candidate's ``reason`` (``None``: kept), ``scan``: the scan's reasons. ``None`` when nothing was
    dropped. The bundled demo's ``Mined 8 tasks from 11 candidates`` was followed by 8 drops in one list (5 of
    them commits that never were candidates, ux33)."""
    parts = []
    dropped = [r for r in verified if r]
    if dropped:
        parts.append(f"{len(dropped)} of {plural(len(verified), 'candidate')} verified ({drop_summary(dropped)})")
    early = [r for r in scan if r]
    if early:
        parts.append(f"{plural(len(early), 'commit')} at the scan, before any test ({drop_summary(early)})")
    return "; ".join(parts) or None


def vague_line(tasks: Sequence[Task], threshold: float) -> str | None:
    """``'Vague: 5 of the 13 tasks (spec_score < 0.5; …)'``: how many of ``tasks`` (``tasks.jsonl`` after the
    mine's merge) were recorded not well specified (``well_specified`` false: a squash-merge title, a
    message that says too little of what to change), at the end of a mine; ``None`` when none is (nu28 on
    andialbrecht/sqlparse: 5 of 13 were vague, which only ``homefield tasks`` said)."""
    n = sum(1 for t in tasks if not t.well_specified)
    if not n:
        return None
    return (f"Vague: {n} of the {plural(len(tasks), 'task')} (spec_score < {threshold:g}; the report shows the "
            "well-specified ones apart; homefield tasks lists each task's score; spec_threshold in .homefield.yml "
            "moves the line)")


def compiled_changes_line(verified: Sequence[dict[str, Any]]) -> str | None:
    """``'Compiled changes: 1 candidate (reference fails) changes compiled sources, which setup_cmd builds before
    a change is applied and grading never builds: no setting makes it a task (README: Python environments)'`` when
    any ``reference_fails`` record's detail says its change to compiled sources never reached the tests
    (:data:`~pytest_homefield.mine.compiled.BUILT_BEFORE`); ``None`` otherwise. bld62: the summary said only
    "reference fails 1", the why in the detail ``-v`` prints."""
    n = sum(1 for r in verified if r.get("reason") == "reference_fails" and BUILT_BEFORE in str(r.get("detail", "")))
    if not n:
        return None
    return (f"Compiled changes: {plural(n, 'candidate')} (reference fails) "
            f"{'changes' if n == 1 else 'change'} compiled sources, which setup_cmd builds before a change is "
            "applied and grading never builds: no setting makes such a commit a task (README: Python environments)")


def deselected_line(verified: Sequence[dict[str, Any]]) -> str | None:
    """``'Deselected: 1 task leaves out 1 test of its commit's test files that the repository's configuration deselects
    (-m/-k/--deselect); 1 candidate made no task for it: such tests never run when mined (homefield tasks names a
    task's)'`` when a record excludes ids as ``deselected`` or a dropped one's detail says the configuration
    deselected its tests (:data:`~pytest_homefield.mine.redgreen.DESELECTED`); ``None`` otherwise (bld62)."""
    left = [sum(1 for why in r["excluded"].values() if why == "deselected") for r in verified
            if r.get("reason") is None and isinstance(r.get("excluded"), dict)]
    left = [n for n in left if n]
    dropped = sum(1 for r in verified if r.get("reason") is not None and DESELECTED in str(r.get("detail", "")))
    if not left and not dropped:
        return None
    parts = []
    if left:
        whose = "its commit's" if len(left) == 1 else "their commits'"
        parts.append(f"{plural(len(left), 'task')} {'leaves' if len(left) == 1 else 'leave'} out "
                     f"{plural(sum(left), 'test')} of {whose} test files that the repository's configuration "
                     "deselects (-m/-k/--deselect)")
    if dropped:
        parts.append(f"{plural(dropped, 'candidate')} made no task for it"
                     if left else f"{plural(dropped, 'candidate')} made no task: the repository's configuration "
                                  "deselects its commit's tests (-m/-k/--deselect)")
    return (f"Deselected: {'; '.join(parts)}: such tests never run when mined"
            + (" (homefield tasks names a task's)" if left else ""))
