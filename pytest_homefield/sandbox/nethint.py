"""The hints when the sandbox is the cause (docs/contracts.md §7 "Services"): test runs that failed inside
a sandbox without a network, or under Landlock without POSIX semaphores, read from their logs.
:func:`tried_addresses` finds the ``host:port`` a log shows its tests could not reach (connection
refused, unreachable, no such name: the wording of redis-py, urllib3/requests, libpq and tracebacks);
:func:`network_hint` makes the one line a drop's detail and the mine summary show: ``tests tried
127.0.0.1:6379: declare it under `services:` or pass `--test-network loopback:6379```;
:func:`semaphore_hint` the line for tests that could not make a ``multiprocessing`` lock under Landlock
(no ``/dev/shm`` there, contracts §7).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from pytest_homefield.spelling import spell

__all__ = ["tried_addresses", "network_hint", "semaphore_hint", "read_only_hint"]

#: Errors of a connection the tests could not make (refused, unreachable, no such name).
_NET_ERRORS = re.compile(r"Connection refused|Errno 111|Errno 101|Network is unreachable|Name or service not known|"
                         r"Temporary failure in name resolution|Errno -[23]\b|nodename nor servname|"
                         r"Cannot assign requested address|ConnectionRefusedError", re.I)
#: A ``multiprocessing`` lock or semaphore refused: ``_multiprocessing.SemLock(`` in a traceback ending in
#: ``PermissionError`` (``sem_open`` in ``/dev/shm``, which Landlock never allows).
_SEMLOCK = re.compile(r"_multiprocessing\.SemLock\((?:.*\n){0,12}?.*PermissionError", re.I)
#: A write refused because the file system is read-only (Python's ``OSError`` text), with the path it names.
_READ_ONLY = re.compile(r"\[Errno 30\] Read-only file system: (?P<path>'[^'\n]{1,200}'|\"[^\"\n]{1,200}\")")
_HOST = r"(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|\[?::1\]?|[A-Za-z][\w.-]*\.[A-Za-z]{2,}|[a-z][\w-]*)"
_ADDRESS_PATTERNS = (
    re.compile(r"host='(?P<host>[^']+)', port=(?P<port>\d{1,5})"),            # urllib3 / requests
    re.compile(r"server at \"(?P<host>[^\"]+)\"(?: \([^)]*\))?, port (?P<port>\d{1,5})"),  # libpq
    re.compile(r"\(['\"](?P<host>[\w.:-]+)['\"],\s*(?P<port>\d{1,5})\)"),  # ("127.0.0.1", 6379) in a traceback
    re.compile(r"(?:connecting to|connect to|to) " + _HOST + r":(?P<port>\d{1,5})"),  # redis-py, many clients
    re.compile(r"(?:redis|rediss|postgres(?:ql)?|mysql|amqp|mongodb|https?)://(?:[^@/\s]*@)?" + _HOST
               + r":(?P<port>\d{1,5})"),
    re.compile(r"\b(?P<host>localhost|127\.0\.0\.1|\[::1\]):(?P<port>\d{1,5})\b"),
)


#: Where a block of a pytest log begins: a section header (``____ test_name ____``, ``==== short test summary
#: info ====``) or one line of the short summary (``FAILED id - message``, ``ERROR id``), each its own block.
_BLOCK_START = re.compile(r"^(?:_{3,} .* _{3,}|={3,} .* ={3,}|(?:FAILED|ERROR) \S.*)$", re.M)


def _blocks(text: str) -> Iterator[str]:
    """``text`` cut where a block of a pytest log begins (:data:`_BLOCK_START`): one failure's report, one
    summary line; a log with no such line (not pytest's) is one block."""
    starts = [0, *(m.start() for m in _BLOCK_START.finditer(text)), len(text)]
    for a, b in pairwise(starts):
        if a < b:
            yield text[a:b]


def tried_addresses(text: str) -> list[str]:
    """The ``host:port`` addresses a test log shows its tests could not reach, in order of first
    mention (block by block); empty when the log has no connection or name-resolution error. Only an
    address of a block (:func:`_blocks`: one failure's report, one line of the short summary) that shows
    such an error counts: a server the tests reached, whose failure was another one (a TLS handshake, an
    assertion), is not named because another test of the same log could not connect."""
    out: dict[str, None] = {}
    for block in _blocks(text):
        if not _NET_ERRORS.search(block):
            continue
        found: list[tuple[int, str]] = []
        for pattern in _ADDRESS_PATTERNS:
            for m in pattern.finditer(block):
                port = int(m.group("port"))
                if 0 < port < 65536:
                    found.append((m.start(), f"{m.group('host')}:{port}"))
        for _, address in sorted(found):
            out.setdefault(address)
    return list(out)


def _log_texts(logs: Sequence[Path]) -> Iterator[str]:
    """The text of each readable log of ``logs`` (undecodable bytes replaced; an unreadable one skipped)."""
    for path in logs:
        try:
            yield path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue


def network_hint(logs: Sequence[Path], *, extra: Sequence[str] = ()) -> str | None:
    """The one-line hint for test runs that failed in a sandbox without a network: which addresses
    their logs (``tests.log`` paths) show the tests tried, and what to declare. ``None`` when the logs
    show no connection error. A run whose tests could not connect but name no address gets the
    general line; an address of another machine (:func:`_outside`) is named apart, with no advice to
    declare it (``tests tried 10.255.255.1:80, not on this machine: …``)."""
    addresses: dict[str, None] = dict.fromkeys(extra)
    failed = False
    for text in _log_texts(logs):
        if _NET_ERRORS.search(text):
            failed = True
            addresses.update(dict.fromkeys(tried_addresses(text)))
    if not failed and not addresses:
        return None
    if not addresses:
        return ("the tests could not connect (test runs have no network in the sandbox): declare the servers "
                f"they need under `services:` or pass `{spell('test-network')} loopback:PORT`")
    outside = [a for a in addresses if _outside(a.rpartition(":")[0])]
    local = [a for a in addresses if a not in outside]
    far = (f"{', '.join(outside)}, not on this machine: tests that need it cannot pass in the sandbox (no "
           f"service or {spell('test-network')} can give it)") if outside else ""
    if not local:
        return f"tests tried {far}"
    ports = sorted({a.rpartition(":")[2] for a in local}, key=int)
    return (f"tests tried {', '.join(local)}: declare it under `services:` or pass "
            f"`{spell('test-network')} loopback:{','.join(ports)}`" + (f"; and {far}" if far else ""))


def _outside(host: str) -> bool:
    """Whether ``host`` (as :func:`tried_addresses` names it) is an IP address of another machine: a
    literal address that is not loopback (``10.255.255.1``, ``203.0.113.5``), which neither a service nor
    ``--test-network`` (ports of 127.0.0.1) can stand in for. A name (``localhost``, ``cache.internal``,
    ``redis``) may be one the tests read from their environment, which a service's ``env`` can point
    to 127.0.0.1, so it is not outside."""
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def semaphore_hint(logs: Sequence[Path]) -> str | None:
    """The one-line hint for Landlock test runs (``tests.log`` paths) whose tests could not make a
    ``multiprocessing`` lock (POSIX semaphores live in ``/dev/shm``, out of Landlock's reach); ``None``
    when no log shows it."""
    for text in _log_texts(logs):
        if _SEMLOCK.search(text):
            return ("the tests make multiprocessing locks (POSIX semaphores in /dev/shm), which Landlock cannot "
                    "give a test run: grade this repository with bubblewrap")
    return None


def read_only_hint(logs: Sequence[Path]) -> str | None:
    """The one-line hint for sandboxed test runs (``tests.log`` paths) whose tests wrote into the tree under test,
    which bubblewrap and Landlock keep read-only (docs/contracts.md §7 "Sandbox"; a grading's runs alike, so such a
    commit's tests cannot pass there either): the first ``[Errno 30] Read-only file system: 'PATH'`` a log shows;
    ``None`` when none does. nu48: pyparsing b9d10de6bda5, whose example parser writes its railroad diagram into
    the working folder when imported, was dropped as ``reference_fails`` with a collection error and no word of
    why."""
    for text in _log_texts(logs):
        found = _READ_ONLY.search(text)
        if found:
            return (f"the tests write into the repository's tree ({found.group(0)}), which every sandboxed test run "
                    "keeps read-only (mining's and grading's): tests that write there cannot pass in the sandbox")
    return None
