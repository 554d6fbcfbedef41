"""fix44 (twin43): ``split_args`` read an ``args`` option (``addopts``, ``python_functions``) with :func:`shlex.split`,
quadratic on one long word: an ``addopts`` of one 1 MB word, in a configuration file graded code or an agent wrote
(``setup_for``, ``carried.config_above``), cost 21 s of CPU on the host. :func:`split_words` splits as
:func:`shlex.split` does (checked on every string of up to 5 characters of the characters its rules name) in linear
time."""

from __future__ import annotations

import itertools
import random
import shlex
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox.pytest_config import setup_for, split_args, split_words

#: Every character shlex's POSIX rules treat apart, and a plain one.
ALPHABET = ["a", " ", "\t", "\n", "'", '"', "\\", "\x0b"]


def _shlex(value: str) -> list[str] | str:
    try:
        return shlex.split(value)
    except ValueError:
        return "ValueError"


def _ours(value: str) -> list[str] | str:
    try:
        return split_words(value)
    except ValueError:
        return "ValueError"


@pytest.mark.slow
def test_every_short_string_is_split_as_shlex_splits_it() -> None:
    """Every string of up to 5 characters of :data:`ALPHABET` (37,449; 16 s of CPU for those up to 6, 299,593:
    the same)."""
    for length in range(6):
        for chars in itertools.product(ALPHABET, repeat=length):
            value = "".join(chars)
            assert _ours(value) == _shlex(value), repr(value)


def test_words_are_split_as_shlex_splits_them() -> None:
    """Every string of up to 3 characters of :data:`ALPHABET`, and 1,500 longer random ones."""
    for length in range(4):
        for chars in itertools.product(ALPHABET, repeat=length):
            value = "".join(chars)
            assert _ours(value) == _shlex(value), repr(value)
    rng = random.Random(44)
    for _ in range(1500):
        value = "".join(rng.choice([*ALPHABET, "b", "-x=1", " --k 'a b'", '"c\\"d"']) for _ in range(rng.randrange(40)))
        assert _ours(value) == _shlex(value), repr(value)


@pytest.mark.parametrize("value", ["-q -p no:cacheprovider", "--tb=short -k 'a and not b'", '-o "x=1 2" -ra',
                                   "it's", "-k \"a\\\"b\"", "", "  \n "])
def test_split_args_reads_real_values_as_before(value: str) -> None:
    want = tuple(shlex.split(value)) if _shlex(value) != "ValueError" else tuple(value.split())
    assert split_args(value) == want
    assert split_args([value, 3]) == (value,) and split_args(None) == ()


def test_one_long_word_is_split_in_linear_time(tmp_path: Path) -> None:
    """A 1 MB ``addopts`` word (in double quotes, the configuration file just under ``CONFIG_BYTES``) read through
    ``setup_for``, and one given to ``split_args``: well under a second of CPU. Before: 21 s each (shlex adds a
    word's characters one at a time)."""
    word = "x" * ((1 << 20) - 64)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = -q \"{word}\\\"y\"\n")
    start = time.process_time()
    assert split_args(f"{word} -q") == (word, "-q")
    setup = setup_for(tmp_path, "python -m pytest", [])
    spent = time.process_time() - start
    assert spent < 1.0, f"{spent:.1f} s of CPU"
    assert setup.config == "pytest.ini" and setup.addopts == ("-q", word + '"y')
