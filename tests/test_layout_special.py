"""hatk41, ``--sandbox none`` (graded code runs as the user and can change ``.homefield/``): a run's ``meta.json``
(and an ablation's ``plan.json``), read by every resume, report and worker start through
:func:`~pytest_homefield.layout.read_json_file`, was read with a plain ``open``: a fifo there blocked the host for
good, a symlink led it to any file of the user, a huge file was read whole into memory. Now it is opened without
following a link as its last component (a linked ``.homefield`` folder still reads), never blocking, regular files
only, at most :data:`~pytest_homefield.layout.JSON_FILE_MAX_BYTES`."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_homefield import layout
from pytest_homefield.errors import RunError
from pytest_homefield.layout import meta_path, read_meta

META = {"schema_version": 1, "run_id": "r", "created_at": "2026-12-06T00:00:00+00:00"}


def _run_dir(tmp_path: Path) -> Path:
    d = tmp_path / ".homefield" / "runs" / "r"
    d.mkdir(parents=True)
    return d


def test_a_fifo_meta_is_refused_at_once(tmp_path: Path) -> None:
    """Before: ``read_meta`` blocked in ``open`` until something wrote the fifo."""
    d = _run_dir(tmp_path)
    os.mkfifo(meta_path(d))
    got: list[BaseException | dict[str, object]] = []

    def read() -> None:
        try:
            got.append(read_meta(d))
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            got.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the old code's open, so the thread ends
        fd = os.open(meta_path(d), os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(10)
        pytest.fail("read_meta blocked on a fifo")
    assert len(got) == 1 and isinstance(got[0], RunError) and "not a regular file" in str(got[0]), got


def test_a_symlinked_meta_is_never_followed_but_a_linked_homefield_is(tmp_path: Path) -> None:
    """Before: the link was followed (its target read as the run's ``meta.json``)."""
    elsewhere = tmp_path / "user-file.json"
    elsewhere.write_text(json.dumps(META))
    d = _run_dir(tmp_path)
    meta_path(d).symlink_to(elsewhere)
    with pytest.raises(RunError, match="a symlink, never followed"):
        read_meta(d)
    real = tmp_path / "real-homefield"
    (real / "runs" / "r").mkdir(parents=True)
    (real / "runs" / "r" / "meta.json").write_text(json.dumps(META))
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".homefield").symlink_to(real)
    assert read_meta(tmp_path / "repo" / ".homefield" / "runs" / "r")["run_id"] == "r"


def test_a_huge_meta_is_read_to_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: read whole (here 2 MiB, a bound of 1 MiB) and then refused as invalid JSON."""
    monkeypatch.setattr(layout, "JSON_FILE_MAX_BYTES", 1 << 20, raising=False)
    d = _run_dir(tmp_path)
    with open(meta_path(d), "wb") as f:
        f.truncate(2 << 20)
    with pytest.raises(RunError, match="larger than 1048576 bytes"):
        read_meta(d)
    meta_path(d).write_text(json.dumps(META))
    assert read_meta(d)["run_id"] == "r"


def _returns(call: Callable[[], object], fifo: Path) -> object:
    """``call()``'s value, made in a thread: fails the test when it is still blocked after 10 s (then the fifo is
    opened for writing, so the thread ends)."""
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(call()), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        t.join(10)
        pytest.fail(f"blocked on the fifo {fifo.name}")
    return got[0]


def test_the_reports_own_files_never_block_on_a_fifo(tmp_path: Path) -> None:
    """What ``homefield report`` reads of a run folder besides its records: the ``meta.json`` of each run it lists
    (``report/which.py``), its kept ``similarity.json`` and ``mde.json`` (``report/similarity.py``,
    ``report/power.py``). Before: each blocked in ``open`` on a fifo; now a fifo reads as a file that is not
    there (the run not listed, the caches empty)."""
    from pytest_homefield.report.power import KeptGaps
    from pytest_homefield.report.similarity import SimilarityCache
    from pytest_homefield.report.which import run_summary

    d = _run_dir(tmp_path)
    for name in ("meta.json", "similarity.json", "mde.json"):
        os.mkfifo(d / name)
    assert _returns(lambda: run_summary(d), d / "meta.json") is None
    cache = _returns(lambda: SimilarityCache(d / "similarity.json"), d / "similarity.json")
    assert isinstance(cache, SimilarityCache) and cache._entries == {}
    gaps = _returns(lambda: KeptGaps(d / "mde.json"), d / "mde.json")
    assert isinstance(gaps, KeptGaps) and gaps.gaps == {}
