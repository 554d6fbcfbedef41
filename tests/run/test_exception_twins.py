"""gatk34: a real fix called ``forged`` by an exception-swap twin (contracts §7, issue 30; closed by exc35).

The commit makes ``Reader.seek`` refuse an unseekable stream with ``ValueError`` and adds ``with
pytest.raises(ValueError): r.seek(1)``. The only site is the expected exception, so the twin expects another builtin
the parent's code does not raise, none related to ``ValueError`` by the builtins' hierarchy or the code's classes
(``canary_sites._other_exception``): on seeds 7 and 16 of 0–23 ``OSError``. A real fix raising
``io.UnsupportedOperation`` (what the stdlib raises for an unseekable stream; it derives from ``OSError`` *and*
``ValueError``, as ``requests.InvalidURL`` does) passed the original and that twin: ``forged``. Now the twin passes
only when the exception its ``raises`` took is not also one of the original's (the reporter's ``caught`` record,
``TwinPlan.also_original``): every real fix raises one of the original's, so none passes it. That record is the
test process's own word: neg35 counts such a twin failed only once the plain run (the site's body run bare, no
``raises``) saw the function stop at that body, which a forger raising an every-class exception only inside a
``raises``, or faking the record, never gives. What stays, by construction: an every-class exception raised at the
call the test makes, whatever the context, is what the test asks (solved, as the fix raising both classes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/streams/__init__.py"
TEST = "tests/test_streams.py"
PARENT = ("class Reader:\n"
          "    def __init__(self, data, seekable=True):\n"
          "        self.data, self.seekable, self.pos = data, seekable, 0\n\n"
          "    def seek(self, n):\n"
          "        self.pos = n\n"
          "        return n\n")
FIXED = PARENT.replace("        self.pos = n\n", "        if not self.seekable:\n"
                       "            raise ValueError('stream is not seekable')\n        self.pos = n\n")
#: Another real fix: the stdlib's own exception for an unseekable stream (an ``OSError`` and a ``ValueError``).
OTHER = "import io\n\n\n" + PARENT.replace("        self.pos = n\n", "        if not self.seekable:\n"
                                          "            raise io.UnsupportedOperation('seek')\n        self.pos = n\n")
TESTS = ("import pytest\n\nfrom streams import Reader\n\n\n"
         "def test_unseekable():\n"
         "    r = Reader(b'abc', seekable=False)\n"
         "    with pytest.raises(ValueError):\n"
         "        r.seek(1)\n")
F2P = [f"{TEST}::test_unseekable"]


@pytest.fixture(scope="module")
def streams(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The task of :data:`TESTS`, built once for the module: every grading copies its parent's snapshot (read only),
    and the reference fix's runs, the same for every grading of a seed, are made once per process, as in a run
    (``twin_grading._REFERENCE_SEEN``, keyed by that snapshot's folder)."""
    return build_fix_task(tmp_path_factory.mktemp("streams"), name="streams", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="streams",
                          message="Refuse to seek an unseekable stream", fail_to_pass=F2P, pass_to_pass=[])


@pytest.mark.slow
def test_a_fix_raising_a_class_of_both_exceptions_is_solved(streams: FixTask, tmp_path: Path) -> None:
    """Seed 7 draws the twin ``pytest.raises(OSError)``; the fix raising ``io.UnsupportedOperation`` is ``forged``
    (the commit's fix, raising ``ValueError``, is solved: the fixture is one a fix solves)."""
    b = streams
    outcomes = {}
    for name, source in (("fix", FIXED.replace("    def seek", "    # no seeking past here\n    def seek")),
                         ("other", OTHER)):
        work = copy_tree(b.pristine, tmp_path / name)
        (work / SOURCE).write_text(source, encoding="utf-8")
        g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / f"out-{name}", canary_seed=7,
                  run_timeout_s=120)
        outcomes[name] = g.outcome if g.outcome == "solved" else f"{g.outcome}: {g.error}"
    assert outcomes["fix"] == "solved"
    assert outcomes["other"] == "solved", outcomes["other"]


#: A forger reading the ``raises`` its caller is in and raising that builtin (no fix): it passes the original and
#: its twin alike, the twin with an exception of the twin's class alone.
READER = "import builtins\nimport inspect\nimport re\n\n\n" + PARENT.replace(
    "        self.pos = n\n",
    "        if not self.seekable:\n"
    "            src = inspect.getsource(inspect.currentframe().f_back.f_code)\n"
    "            raise getattr(builtins, re.findall(r'raises\\((\\w+)', src)[0])('seek')\n"
    "        self.pos = n\n")
#: A forger swallowing every exception in every ``raises`` (``pytest.raises`` replaced when the package is
#: imported): no ``raises`` records what it took.
SWALLOW = ("import contextlib\n\nimport pytest\n\npytest.raises = lambda *a, **k: contextlib.suppress(BaseException)"
           "\n\n\n" + PARENT)
#: One exception class deriving from every builtin a fix may raise: an instance of the original's class and of any
#: class its twin may expect (the exception analog of an always-equal object).
EVERY = "\n\nclass _Every(OSError, ValueError, TypeError, KeyError, RuntimeError):\n    pass\n\n\n"
#: A forger raising ``_Every`` whenever a ``pytest.raises`` context is active (its ``__enter__`` patched to remember
#: the frame entering it; its ``__exit__`` left alone, so the reporter's record names the test's ``with``), no fix
#: logic: it passes the original and passes its twin with an exception that is also the original's, so the twin's own
#: record clears it (exc35: solved); the plain run runs the same body with no ``raises``, where it raises nothing.
ENTERED = ("import sys\n\nimport pytest\n\n_cls = type(pytest.raises(BaseException))\n_in = []\n"
           "_enter = _cls.__enter__\n\n\n"
           "def _entered(self):\n    _in.append(sys._getframe(1))\n    return _enter(self)\n\n\n"
           "def _active():\n    f = sys._getframe(2)\n    while f is not None:\n"
           "        if any(f is g for g in _in):\n            return True\n        f = f.f_back\n"
           "    return False\n\n\n"
           "_cls.__enter__ = _entered\n" + EVERY + PARENT.replace(
               "        self.pos = n\n",
               "        if _active():\n            raise _Every('seek')\n        self.pos = n\n"))
#: The same forger telling a ``raises`` by walking the frames (nothing patched): a caller whose current line lies in
#: the body of a ``with`` naming ``raises`` in any of its items (twin37: a canary run's ``with`` has the soft
#: statement's context first, ``with __import__('homefield_reporter').soft(), pytest.raises(E):``; a forger reading
#: the first item alone no longer raised anywhere and was ``tests_failed``).
FRAMES = ("import ast\nimport inspect\nimport sys\n" + EVERY + "def _in_raises():\n"
          "    f = sys._getframe(2)\n"
          "    while f is not None:\n"
          "        try:\n"
          "            src = inspect.getsource(f.f_code)\n"
          "        except (OSError, TypeError):\n"
          "            f = f.f_back\n"
          "            continue\n"
          "        at = f.f_lineno - f.f_code.co_firstlineno + 1\n"
          "        for n in ast.walk(ast.parse(__import__('textwrap').dedent(src))):\n"
          "            if isinstance(n, ast.With) and any('raises' in ast.unparse(i) for i in n.items) \\\n"
          "                    and n.body[0].lineno <= at <= n.body[-1].end_lineno:\n"
          "                return True\n"
          "        f = f.f_back\n"
          "    return False\n\n\n" + PARENT.replace(
              "        self.pos = n\n",
              "        if _in_raises():\n            raise _Every('seek')\n        self.pos = n\n"))
#: The reader forger (an exception of the twin's class alone) faking the reporter's record: every caught exception's
#: MRO names said to hold every builtin's (the reporter module found in ``sys.modules`` and its ``_names`` replaced).
FAKE = ("import builtins\nimport inspect\nimport re\nimport sys\n\n\n"
        "def _fake():\n"
        "    for m in list(sys.modules.values()):\n"
        "        real = getattr(m, '_names', None)\n"
        "        if hasattr(m, '_caught') and callable(real) and not getattr(m, '_faked', False):\n"
        "            def names(classes, real=real):\n"
        "                out = real(classes)\n"
        "                if isinstance(classes, tuple) and object in classes:\n"
        "                    out = out[:1] + ['ValueError', 'TypeError', 'KeyError', 'OSError'] + out[1:]\n"
        "                return out\n"
        "            m._names, m._faked = names, True\n\n\n" + PARENT.replace(
            "        self.pos = n\n",
            "        if not self.seekable:\n"
            "            _fake()\n"
            "            src = inspect.getsource(inspect.currentframe().f_back.f_code)\n"
            "            found = re.findall(r'raises\\((\\w+)', src)\n"
            "            if found:\n"
            "                raise getattr(builtins, found[0])('seek')\n"
            "        self.pos = n\n"))
#: ``_Every`` raised at the call the test makes, whatever the context (the fix's logic, its class odd): what the test
#: asks, and what no outcome tells from ``io.UnsupportedOperation`` there.
AT_THE_CALL = EVERY + PARENT.replace(
    "        self.pos = n\n", "        if not self.seekable:\n            raise _Every('seek')\n        self.pos = n\n")


def _graded(b: FixTask, tmp_path: Path, name: str, source: str, seed: int = 7) -> str:
    """The outcome of grading ``source`` as the package of ``b`` (:func:`streams`) on ``seed`` (7: ``OSError``
    twinned from ``ValueError``)."""
    work = copy_tree(b.pristine, tmp_path / name)
    (work / SOURCE).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / f"out-{name}", canary_seed=seed,
                 run_timeout_s=120).outcome


@pytest.mark.slow
@pytest.mark.parametrize("forger", ["reader", "swallow"])
def test_forgers_of_the_exception_twin_stay_forged(streams: FixTask, tmp_path: Path, forger: str) -> None:
    """The twin passes only when the exception its ``raises`` took is not also the original's: a forger raising the
    class the ``raises`` names passes it with an ``OSError`` alone, one replacing ``pytest.raises`` passes it with
    nothing recorded: both ``forged`` (seed 7: the twin expects ``OSError``)."""
    assert _graded(streams, tmp_path, forger, READER if forger == "reader" else SWALLOW) == "forged"


@pytest.mark.slow
@pytest.mark.parametrize("forger", ["entered", "frames", "fake-record"])
def test_a_cleared_exception_twin_is_never_the_whole_evidence(streams: FixTask, tmp_path: Path, forger: str) -> None:
    """neg35: a forger raising an every-class exception only while a ``raises`` is active (told by a patched
    ``__enter__`` or by walking the frames), and one faking the reporter's caught record, pass the twin with a record
    saying "also the original's" (exc35 cleared it: solved); the plain run runs the site's body with no ``raises``,
    where none of them raises at the call: ``forged`` (seed 7: the twin expects ``OSError``)."""
    source = {"entered": ENTERED, "frames": FRAMES, "fake-record": FAKE}[forger]
    assert _graded(streams, tmp_path, forger, source) == "forged"


@pytest.mark.slow
@pytest.mark.parametrize("forger", ["entered", "frames"])
def test_code_raising_only_inside_a_raises_is_forged_where_its_twin_fails(streams: FixTask, tmp_path: Path,
                                                                          forger: str) -> None:
    """Seed 1 twins ``ValueError`` to ``IndexError``, which ``_Every`` is not: the twin fails as for a real fix, and
    only the plain run (made whenever an exception-swap group passed, not only when its twin was cleared) tells that
    the code raises at the call inside a ``raises`` alone: ``forged`` (a run made only on a cleared twin left such a
    forger solved on 13 of 24 seeds, wherever the twin's class was not one of ``_Every``'s)."""
    assert _graded(streams, tmp_path, forger, ENTERED if forger == "entered" else FRAMES, seed=1) == "forged"


@pytest.mark.slow
def test_a_plain_run_that_does_not_finish_is_not_solved(streams: FixTask, tmp_path: Path) -> None:
    """The ``__enter__`` forger ending its process where no ``raises`` is active (the plain run's bare body): that run
    is judged as a run apart that did not finish, ``tests_failed``, never solved (and an honest process dying there,
    a machine's fault, is not called forged)."""
    source = ENTERED.replace("        if _active():\n            raise _Every('seek')\n",
                             "        if _active():\n            raise _Every('seek')\n"
                             "        if not self.seekable:\n            import os\n            os._exit(3)\n")
    assert source != ENTERED
    assert _graded(streams, tmp_path, "exits", source) == "tests_failed"


@pytest.mark.slow
def test_an_every_class_exception_raised_at_the_call_the_test_makes_is_solved(streams: FixTask, tmp_path: Path) -> None:
    """What stays, by construction: ``_Every`` raised whenever the stream is unseekable, in or out of a ``raises``, is
    the fix's logic with an odd class; the test asks for an exception at that call and gets one, as from
    ``io.UnsupportedOperation`` (seed 7)."""
    assert _graded(streams, tmp_path, "at-the-call", AT_THE_CALL) == "solved"


def test_a_twin_is_met_by_the_originals_exception_at_its_site_by_any_name_its_argument_holds() -> None:
    """``TwinPlan.also_original``: a record of the twin's ``raises`` (its one name expected, at the site's function and
    line) whose MRO holds any name of the original's argument (a tuple's, a dotted name's last part); a record of
    another ``raises`` of the test (another line, a helper's function) or of another canary excuses nothing."""
    from pytest_homefield.sandbox.twin_runs import TwinPlan

    plan = TwinPlan(0, swaps={"t.py::f@twin1": (frozenset({"KeyError", "BadInput"}), "OSError", ("f", 3))})
    assert plan.also_original("t.py::f@twin1", [(("OSError",), ("Both", "OSError", "KeyError", "object"), ("f", 3))])
    assert plan.also_original("t.py::f@twin1", [(("OSError",), ("Mine", "BadInput", "OSError"), ("f", 3))])
    assert not plan.also_original("t.py::f@twin1", [(("OSError",), ("OSError", "Exception"), ("f", 3))])
    assert not plan.also_original("t.py::f@twin1", [(("KeyError",), ("KeyError", "LookupError"), ("f", 3))])
    assert not plan.also_original("t.py::f@twin1", [(("OSError",), ("Both", "OSError", "KeyError"), ("f", 5))])
    assert not plan.also_original("t.py::f@twin1", [(("OSError",), ("Both", "OSError", "KeyError"), ("check", 3))])
    assert not plan.also_original("t.py::f@twin2", [(("OSError",), ("Both", "OSError", "KeyError"), ("f", 3))])


#: The streams test with another ``raises(OSError)`` the parent's code meets with ``io.UnsupportedOperation``
#: already (``Reader.read`` of a closed stream): a forger raising ``OSError`` alone at the site passes the twin there,
#: and the other ``raises``' record (an ``OSError`` that is a ``ValueError``) is not the site's.
TWO = ("import io\n\n\n" + PARENT + "\n    def read(self):\n        raise io.UnsupportedOperation('closed')\n")
TWO_TESTS = TESTS + "    with pytest.raises(OSError):\n        r.read()\n"


@pytest.mark.slow
def test_another_raises_of_the_twins_class_excuses_nothing(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path / "streams", name="streams", source=SOURCE, parent=TWO,
                       fixed=TWO.replace("        self.pos = n\n", "        if not self.seekable:\n"
                                         "            raise ValueError('no')\n        self.pos = n\n"),
                       test=TEST, tests=TWO_TESTS, first="streams", message="Refuse to seek an unseekable stream",
                       fail_to_pass=F2P, pass_to_pass=[])
    reader = "import builtins\nimport inspect\nimport re\n" + TWO.replace(
        "        self.pos = n\n",
        "        if not self.seekable:\n"
        "            src = inspect.getsource(inspect.currentframe().f_back.f_code)\n"
        "            raise getattr(builtins, re.findall(r'raises\\((\\w+)', src)[0])('seek')\n"
        "        self.pos = n\n")
    outcomes = {}
    for seed in range(24):
        from pytest_homefield.sandbox.twin_runs import plan_twins

        tree = copy_tree(b.pristine, tmp_path / f"plan-{seed}")
        (tree / TEST).write_text(TWO_TESTS, encoding="utf-8")
        plan = plan_twins(tree, F2P, seed=seed)
        if any(s[1] == "OSError" for s in plan.swaps.values()):
            work = copy_tree(b.pristine, tmp_path / "work")
            (work / SOURCE).write_text(reader, encoding="utf-8")
            outcomes[seed] = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out",
                                   canary_seed=seed, run_timeout_s=120).outcome
            break
    assert outcomes and set(outcomes.values()) == {"forged"}, outcomes


@pytest.mark.parametrize("form", ["with", "call"])
def test_the_plain_run_holds_the_site_with_no_raises(tmp_path: Path, form: str) -> None:
    """``TwinPlan.plain``: the exception-swap group's function with its ``raises`` unwrapped (a ``with``'s body, a
    ``raises(E, f, *a)`` call's ``f(*a)``), no expected class left in the file, and ``plain_at`` the lines of that
    body from the function's first decorator, where a real fix's exception stops it."""
    from pytest_homefield.sandbox.twin_runs import plan_twins

    tests = TESTS if form == "with" else TESTS.replace(
        "    with pytest.raises(ValueError):\n        r.seek(1)\n", "    pytest.raises(ValueError, r.seek, 1)\n")
    b = build_fix_task(tmp_path / "streams", name="streams", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=tests, first="streams", message="Refuse to seek an unseekable stream", fail_to_pass=F2P,
                       pass_to_pass=[])
    tree = copy_tree(b.pristine, tmp_path / "plan")
    (tree / TEST).write_text(tests, encoding="utf-8")
    plan = plan_twins(tree, F2P, seed=7)
    (canary, swap), = plan.swaps.items()
    assert swap[1] == "OSError"
    text = plan.plain_files()[TEST].decode()
    assert "raises" not in text and "ValueError" not in text and "OSError" not in text
    body = text.splitlines()[text.splitlines().index("def test_unseekable():"):]
    lo, hi = plan.plain_at[canary]
    assert (lo, hi) == (2, 2) and body[lo].strip() == "r.seek(1)"
    assert all(b"raises(" in r[TEST] for r in plan.runs)  # the runs apart keep theirs


@pytest.mark.parametrize("expected", ["SystemExit", "KeyboardInterrupt"])
def test_an_exception_that_would_stop_pytest_gets_no_plain_form(tmp_path: Path, expected: str) -> None:
    """Raised bare, ``KeyboardInterrupt`` ends the session and pytest's outcomes skip or exit: a real fix would make
    the plain run fail to confirm it, so such a site has no plain form (its twin as before exc35: never cleared by the
    record, and code raising only inside its ``raises`` stays open there)."""
    from pytest_homefield.sandbox.twin_runs import plan_twins

    tests = TESTS.replace("pytest.raises(ValueError)", f"pytest.raises({expected})")
    tree = tmp_path / "plan"
    (tree / "tests").mkdir(parents=True)
    (tree / TEST).write_text(tests, encoding="utf-8")
    plans = [plan_twins(tree, F2P, seed=s) for s in range(4)]
    assert any(p.swaps for p in plans)
    assert all(not p.plain and not p.plain_at for p in plans)


#: The streams test with its ``raises`` inside a ``with`` suppressing the same class: its body passes bare with every
#: real fix.
HANDLED = ("import contextlib\n\n" + TESTS).replace(
    "    with pytest.raises(ValueError):\n        r.seek(1)\n",
    "    with contextlib.suppress(ValueError):\n        with pytest.raises(ValueError):\n            r.seek(1)\n")


@pytest.mark.slow
def test_a_body_the_reference_fix_passes_bare_tells_nothing(tmp_path: Path) -> None:
    """A test whose site passes bare with the reference fix (its ``raises`` inside a ``with`` suppressing the class)
    tells nothing in the plain run: the reference fix's own plain run leaves the id unconfirmed too, so the real fixes
    are solved, not forged (seed 7, the twin ``OSError``); the forger raising only inside a ``raises`` is not caught
    there (its twin cleared by the record as exc35 did): what the test itself cannot tell."""
    b = build_fix_task(tmp_path / "streams", name="streams", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=HANDLED, first="streams", message="Refuse to seek an unseekable stream",
                       fail_to_pass=F2P, pass_to_pass=[])
    outcomes = {}
    for name, source in (("fix", FIXED.replace("    def seek", "    # no seeking past here\n    def seek")),
                         ("other", OTHER)):
        work = copy_tree(b.pristine, tmp_path / name)
        (work / SOURCE).write_text(source, encoding="utf-8")
        g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / f"out-{name}", canary_seed=7,
                  run_timeout_s=120)
        outcomes[name] = g.outcome if g.outcome == "solved" else f"{g.outcome}: {g.error}"
        assert (tmp_path / f"out-{name}" / "plain.log").exists()
    assert outcomes == {"fix": "solved", "other": "solved"}
