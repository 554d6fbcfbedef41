"""The mine summary's ``Network:`` line says what the test logs show, never that a connection dropped the
candidates (nu41, psf/requests): a drop whose deciding red tests failed otherwise (a TLS handshake with the
test's own server) and a ``passes_without_change`` drop, whose logs show a connection error too, were counted
as "dropped because the tests could not connect"."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.mine.summary import network_line
from pytest_homefield.sandbox.nethint import network_hint

#: A requests-like log: the deciding red test failed on a TLS handshake with its own server, another test
#: (red at both commits, deciding nothing) could not connect to 127.0.0.1:6379.
TLS_LOG = """\
=================================== FAILURES ===================================
______________________________ test_https_server ______________________________
E   requests.exceptions.SSLError: HTTPSConnectionPool(host='127.0.0.1', port=43121): Max retries exceeded \
(Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED]')))
______________________________ test_redis_cache _______________________________
E   redis.exceptions.ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.
=========================== short test summary info ============================
FAILED tests/test_tls.py::test_https_server - requests.exceptions.SSLError
FAILED tests/test_cache.py::test_redis_cache - redis.exceptions.ConnectionError
"""

#: A log of a run where every test passed but one that could not connect was skipped with the error quoted.
GREEN_LOG = """\
tests/test_cache.py s.                                                   [100%]
SKIPPED [1] tests/test_cache.py:3: redis down: Error 111 connecting to 127.0.0.1:6379. Connection refused.
"""


def _record(tmp_path: Path, name: str, log: str, reason: str) -> dict[str, object]:
    path = tmp_path / f"{name}.log"
    path.write_text(log)
    return {"id": name, "reason": reason, "network_hint": network_hint([path])}


@pytest.mark.usefixtures("cli_spelling")
def test_the_line_says_what_the_logs_show_not_why_the_candidates_were_dropped(tmp_path: Path) -> None:
    records = [_record(tmp_path, "tls", TLS_LOG, "reference_fails"),
               _record(tmp_path, "green", GREEN_LOG, "passes_without_change"),
               {"id": "kept", "reason": None, "network_hint": None}]
    hint = "tests tried 127.0.0.1:6379: declare it under `services:` or pass `--test-network loopback:6379`"
    assert [r["network_hint"] for r in records[:2]] == [hint, hint]
    line = network_line(records)
    assert line == ("Network: the test logs of 2 dropped candidates show a connection error (test runs have no "
                    "network in the sandbox; it may not be what dropped them; 1 of them passed without the change: "
                    f"no test failed at the parent): {hint}")
    assert "because" not in line and "could not connect" not in line


def test_one_drop_and_no_hint() -> None:
    assert network_line([{"reason": "reference_fails", "network_hint": None}]) is None
    line = network_line([{"reason": "reference_fails", "network_hint": "tests tried x:1"}])
    assert line == ("Network: the test logs of 1 dropped candidate show a connection error (test runs have no "
                    "network in the sandbox; it may not be what dropped them): tests tried x:1")
