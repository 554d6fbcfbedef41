"""Which ablation ``homefield ablate --merge DIR`` takes from a DIR holding several: the newest by its
``meta.json`` ``created_at``, named in one line. atk17 (read on main): the last by name was taken, so an
older named ablation (``--run-id zz-old``) beat every timestamped one."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_homefield.ablate.ablate_shards import find_ablation_folder


def _ablation(root: Path, name: str, created_at: str | None) -> Path:
    folder = root / ".homefield" / "ablate" / name
    folder.mkdir(parents=True)
    (folder / "plan.json").write_text("{}")
    if created_at is not None:
        (folder / "meta.json").write_text(json.dumps({"schema_version": 1, "kind": "ablate",
                                                      "created_at": created_at}))
    return folder


def test_the_newest_ablation_by_creation_time_is_taken_and_named(tmp_path: Path) -> None:
    _ablation(tmp_path, "zz-old", "2026-11-01T09:00:00+00:00")
    newest = _ablation(tmp_path, "20261202-090000-cd34", "2026-12-02T09:00:00+00:00")
    _ablation(tmp_path, "20261201-100000-ab12", "2026-12-01T10:00:00+00:00")
    folder, why = find_ablation_folder(tmp_path)
    assert folder == newest
    assert why == (f"homefield ablate --merge: {tmp_path}: took its newest ablation 20261202-090000-cd34 (created "
                   "2026-12-02T09:00:00+00:00; 2 others left)")
    assert find_ablation_folder(newest) == (newest, None)  # an ablation folder given: itself, nothing to say


def test_without_a_creation_time_the_name_decides(tmp_path: Path) -> None:
    _ablation(tmp_path, "a-first", None)
    last = _ablation(tmp_path, "b-second", None)
    (tmp_path / ".homefield" / "ablate" / "a-first" / "meta.json").write_text("{not json")
    folder, why = find_ablation_folder(tmp_path)
    assert folder == last and why is not None and "(no meta.json created_at: the last by name; 1 other left)" in why
    # a folder with a creation time is newer than any without one
    dated = _ablation(tmp_path, "0-dated", "2020-01-01T00:00:00+00:00")
    assert find_ablation_folder(tmp_path)[0] == dated
    alone = tmp_path / "alone"
    only = _ablation(alone, "zz-only", "2026-12-01T10:00:00+00:00")
    assert find_ablation_folder(alone) == (only, None)  # the only one: nothing to choose
