"""The program of each built-in attack fits in one word of a command (``MAX_ARG_STRLEN``).

An attack's program travels as ``python -c PROGRAM``: past 128 KiB, ``execve`` fails with ``E2BIG`` and the attack
never runs (``infra``, no verdict on it). shadow-modules carries a copy of the reporter, which grows each round: 75 KB
uncompressed at 48 KB of reporter; the test suite's own helper (``script_agent``) passed the limit with two copies.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

from helpers.attack_repo import build, task_for

from pytest_homefield.agents.attacks import ATTACKS, FORGE, MAX_WORD, attack_program


def test_every_attacks_program_fits_in_one_word_of_a_command(tmp_path: Path) -> None:
    """Each attack's program on the attack fixture's task is at most a quarter of :data:`MAX_WORD` (room for the
    reporter to grow), and reads back as the arguments it was given."""
    task = task_for(build(tmp_path / "repo"))
    sizes: dict[str, int] = {}
    for attack in ATTACKS:
        args = attack.build(task)
        if args is None:
            continue
        args = {**args, "forge": FORGE, "marker": "m" * 40, "sources": list(task.source_files), "daemon_log": "/d"}
        program = attack_program(args)
        sizes[attack.name] = len(program.encode())
        payload = program.split("\n", 1)[0].removeprefix("ARGS = ")
        assert json.loads(zlib.decompress(base64.b64decode(payload.strip("'")))) == args, attack.name
    assert "shadow-modules" in sizes and max(sizes.values()) < MAX_WORD // 4, sorted(sizes.items(), key=lambda x: x[1])
