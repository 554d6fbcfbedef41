"""satk35: a value that holds many guesses at once (contracts §7 "Sealed sites", "Other kinds").

An ``in`` site holds when ``L in value``, a ``match`` site when ``re.search(L, message)`` finds a match: one value
carries as many guesses of ``L`` as it has windows. A de Bruijn text of the digits of order 3 (1002 characters, under
the 8000-character cap of a value and the 2000 of a message) holds every text of three digits, so a forger that
returns it (``status``) or raises with it (``check``) passes ``assert "404" in status(...)`` and ``pytest.raises(E,
match="409")`` whatever the digits, without reading them and without the fix: the same value in every run, so no
run tells the sealed one from another. The fixture is a real repository (tests/helpers/fix_task.py) whose fix makes
``status`` name the HTTP code 404 and ``check`` refuse a clash with the code 409; neither text is elsewhere in its
tests, so both sites are sealed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.bwrap import bwrap_works
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/codes/__init__.py"
TEST = "tests/test_codes.py"
PARENT = "def status(name):\n    return name\n\n\ndef check(name):\n    return name\n"
FIXED = ("def status(name):\n    return f\"{name}: 404 not found\"\n\n\n"
         "def check(name):\n    if name == \"clash\":\n        raise ValueError(\"conflict (409)\")\n    return name\n")
OTHER_FIX = ("def status(name):\n    return \"gone (\" + str(400 + 4) + \")\"\n\n\n"
             "def check(name):\n    if name.startswith(\"cl\"):\n        raise ValueError(\"HTTP \" + str(409))\n"
             "    return name\n")
TESTS = '''import pytest

from codes import check, status


def test_status_names_the_code():
    assert "404" in status("gone")


def test_check_refuses_a_clash():
    with pytest.raises(ValueError, match="409"):
        check("clash")
'''
F2P = [f"{TEST}::test_status_names_the_code", f"{TEST}::test_check_refuses_a_clash"]


def de_bruijn(alphabet: str, n: int) -> str:
    """The de Bruijn sequence of ``alphabet`` of order ``n``, its first ``n - 1`` characters repeated at its end:
    every text of ``n`` characters of ``alphabet`` occurs in it exactly once (``len(alphabet) ** n + n - 1``
    characters)."""
    k = len(alphabet)
    a = [0] * k * n
    seq: list[int] = []

    def db(t: int, p: int) -> None:
        if t > n:
            if n % p == 0:
                seq.extend(a[1:p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    text = "".join(alphabet[i] for i in seq)
    return text + text[:n - 1]


#: Every text of three digits, in 1002 characters.
EVERY_THREE_DIGITS = de_bruijn("0123456789", 3)
#: The forgers: no fix; ``status`` returns, and ``check`` raises with, every text of three digits (``both``); or
#: ``status`` really fixed and ``check`` the guesser (``match``: solved on seeds 0–5 of 6 with canaries on before
#: satk35, no twin hit; ``both`` was ``forged`` there by a twin of the ``in`` site, ``solved`` with canaries off).
GUESSERS = {"both": PARENT + f'''

_HF_ALL = {EVERY_THREE_DIGITS!r}


def status(name):
    return _HF_ALL


def check(name):
    raise ValueError(_HF_ALL)
''', "match": FIXED.split("\n\n\ndef check")[0] + f'''


def check(name):
    raise ValueError({EVERY_THREE_DIGITS!r})
'''}


@pytest.fixture(scope="module")
def codes(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("codes"), name="codes", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="Add status() and check()",
                          message="Name the HTTP code of a missing page and of a clash", fail_to_pass=F2P,
                          pass_to_pass=[])


def _grade(b: FixTask, tmp: Path, code: str, **kw: object) -> Grade:
    work = copy_tree(b.pristine, tmp / "work")
    (work / SOURCE).write_text(code, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / "out", run_timeout_s=120,
                 **kw)  # type: ignore[arg-type]


def test_every_three_digits() -> None:
    assert len(EVERY_THREE_DIGITS) == 1002
    assert all(f"{i:03d}" in EVERY_THREE_DIGITS for i in range(1000))


@pytest.mark.slow
@pytest.mark.parametrize("canaries", [False, True])
def test_another_real_fix_is_solved(codes: FixTask, tmp_path: Path, canaries: bool) -> None:
    """Another real fix (its texts not the commit's): ``solved``, its sealed run judging both sites."""
    g = _grade(codes, tmp_path, OTHER_FIX, canaries=canaries, canary_seed=0)
    assert g.outcome == "solved", g


@pytest.mark.slow
@pytest.mark.parametrize("canaries", [False, True])
@pytest.mark.parametrize("forger", sorted(GUESSERS))
def test_every_guess_at_once_is_not_solved(codes: FixTask, tmp_path: Path, canaries: bool, forger: str) -> None:
    """A forger holding every text of three digits (module docstring, :data:`GUESSERS`), with no fix of the
    function(s) it forges: never ``solved`` (satk35: a value that holds a neighbour of ``L`` as well is nothing to
    judge, ``seal_kinds.text_neighbours``, ``regex_neighbours``)."""
    g = _grade(codes, tmp_path, GUESSERS[forger], canaries=canaries, canary_seed=1)
    assert g.outcome in ("tests_failed", "forged"), g
    if not canaries:
        assert g.outcome == "tests_failed" and "no value to compare (opaque)" in str(g.error), g


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_every_guess_at_once_in_a_sandbox(codes: FixTask, tmp_path: Path) -> None:
    """Under bubblewrap, canaries on: the ``match`` guesser (``solved`` on seeds 0–2 of 3 there before satk35)
    ``tests_failed``; another real fix ``solved``."""
    g = _grade(codes, tmp_path / "guess", GUESSERS["match"], canaries=True, canary_seed=0, sandbox="bwrap")
    assert (g.outcome, g.test_sandbox) == ("tests_failed", "bwrap"), g
    g = _grade(codes, tmp_path / "fix", OTHER_FIX, canaries=True, canary_seed=0, sandbox="bwrap")
    assert (g.outcome, g.test_sandbox) == ("solved", "bwrap"), g
