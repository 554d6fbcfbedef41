"""The network allowlist of an agent's sandbox (``--sandbox-network allowlist``, the default;
docs/contracts.md §9): a filtering HTTP(S) proxy on the host, reached from inside through the relay.

The sandbox has no network of its own (bubblewrap's ``--unshare-net``). This proxy listens on a Unix
socket on the host; the inside half of :mod:`.relay` listens on ``127.0.0.1:PORT`` inside and joins
each connection to that socket, and the agent's environment names it in ``HTTPS_PROXY``,
``HTTP_PROXY``, ``https_proxy`` and ``http_proxy`` (``NO_PROXY`` removed). It understands the two
forms of proxy request (RFC 9110 §9.3.6 and RFC 9112 §3.2.2):

* ``CONNECT host:port`` (HTTPS, and ``http://`` through a tunnel): the tunnel is opened when the pair is allowed,
  and carries on only what names that very host (satk56: a front routing by SNI or ``Host`` serves many sites at
  one listed address; :func:`_tunnel_opening`): TLS whose every ClientHello, up to the server's hello, whole in a
  record of its own (natk66), has one server name (SNI), the tunnel's host (none for an IP literal; natk65: a
  second one after a HelloRetryRequest is in the clear too; :class:`_TlsFlights`), or one HTTP/1 request in origin
  form whose ``Host``, if any, is the tunnel's, sent on as an absolute-URI request is; anything else (a server-first
  protocol such as SSH too) is cut unsent. What it cannot stop (tls46): a request inside the TLS whose own
  ``Host`` is another site the listed server serves (domain fronting): reading it takes decrypting the tunnel;
* an absolute-URI request, ``GET http://host:port/path HTTP/1.1`` (a ``http://`` base URL such as a
  local model server): sent on in origin form with ``Connection: close`` and the target's own ``Host``, one
  request per connection: its body, ended by its one ``Content-Length`` or its chunks, goes on, nothing after it
  (a head whose body's end is unclear is refused with ``400``).

The check is on the host *by name as requested*, before any lookup (:class:`Allowlist`): an address
is allowed only when that very name or literal is listed, so ``127.0.0.1``, ``[::1]``, ``localhost``
and the numeric spellings of loopback are refused unless listed with their port. An allowed name
that resolves to a loopback address (when the name itself is not a loopback literal or
``localhost``) is refused too. Everything refused gets ``403`` and a line in ``proxy.log`` (one line
per request, allowed or refused, :class:`ProxyLog`, capped in size).

The same design as Anthropic's sandbox-runtime (``srt``: bubblewrap with ``--unshare-net`` plus a
domain-allowlist HTTP proxy bridged in through a Unix socket with socat), written here with the
standard library and threads: the proxy libraries considered (``proxy.py``, ``mitmproxy``,
``pproxy``) are far larger than the ~300 lines needed, and none filters by the name as requested
without extra plugins.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_homefield.sandbox.relay import _join, _shut, close_listener
from pytest_homefield.spelling import spell
from pytest_homefield.store import open_own_file

__all__ = ["HostRule", "Allowlist", "ProxyLog", "FilteringProxy", "parse_host_rule", "proxy_env",
           "DEFAULT_PORTS", "LOG_CAP_BYTES", "LOOPBACK_NAMES", "MAX_CONNECTIONS"]

#: Ports a rule without one allows: HTTPS, then HTTP.
DEFAULT_PORTS = (443, 80)
#: ``proxy.log`` stops growing at this size (bytes); one last line says so.
LOG_CAP_BYTES = 1 << 20
#: Bytes of a request head (request line and headers) read before giving up with 400.
MAX_HEAD_BYTES = 65536
#: The largest body length or chunk size sent on (2^31 - 1 bytes): what a reader holding it in a signed 32-bit integer
#: reads as the proxy does (natk65: 2^32 + 5 is 5 to a reader truncating it, and the bytes past those 5 a second
#: request to it, any ``Host``).
MAX_LENGTH = (1 << 31) - 1
#: Connections one proxy serves at once (each holds a thread or two); more get ``503`` and a log line.
MAX_CONNECTIONS = 256
#: Names that mean this machine, besides the loopback literals.
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")

_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
_USAGE = "use HOST, HOST:PORT, *.DOMAIN[:PORT], [IPV6]:PORT or a URL such as https://host:8443"


def _normal_host(host: str) -> str:
    """``host`` lower-cased, without brackets or a trailing dot; an IP literal in its canonical form."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (normalised) is a loopback literal or a loopback name."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _points_home(address: str) -> bool:
    """Whether a resolved ``address`` reaches this machine: loopback, or unspecified (``0.0.0.0``,
    ``::``, which Linux connects to loopback), an IPv4-mapped IPv6 address included."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _port(text: str, entry: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise ValueError(f"{entry!r}: port {text!r} is not 1-65535 ({_USAGE})")
    return port


@dataclass(frozen=True)
class HostRule:
    """One allowed destination: ``host`` (a name, lower-case; or an IP literal; with ``wildcard``
    the domain whose every subdomain matches, never the domain itself) on ``ports``."""

    host: str
    ports: tuple[int, ...] = DEFAULT_PORTS
    wildcard: bool = False

    def matches(self, host: str, port: int) -> bool:
        """Whether the request for ``host`` (as requested; normalised here) and ``port`` is allowed."""
        if port not in self.ports:
            return False
        host = _normal_host(host)
        return host.endswith("." + self.host) if self.wildcard else host == self.host

    @property
    def loopback(self) -> bool:
        """Whether the rule names this machine (a loopback literal or ``localhost``)."""
        return not self.wildcard and _is_loopback(self.host)

    def __str__(self) -> str:
        host = f"*.{self.host}" if self.wildcard else f"[{self.host}]" if ":" in self.host else self.host
        return ",".join(f"{host}:{p}" for p in self.ports)


def parse_host_rule(entry: str) -> HostRule:
    """A :class:`HostRule` from ``HOST``, ``HOST:PORT``, ``*.DOMAIN[:PORT]``, ``[IPV6][:PORT]``, a bare
    IPv6 literal, or a URL (``http://`` → port 80, ``https://`` → 443 unless it names one; its path is
    ignored). Without a port: :data:`DEFAULT_PORTS`. Raises ``ValueError`` with a one-line message."""
    text = entry.strip()
    if "://" in text:
        try:
            url = urllib.parse.urlsplit(text)
            port = url.port
        except ValueError:
            raise ValueError(f"{entry!r}: not a URL ({_USAGE})") from None
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{entry!r}: only http:// and https:// URLs name a host ({_USAGE})")
        return _rule(url.hostname, (port or (443 if url.scheme == "https" else 80),), entry)
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r}: {_USAGE}")
        return _rule(host, (_port(rest[1:], entry),) if rest else DEFAULT_PORTS, entry)
    if text.count(":") > 1:  # a bare IPv6 literal
        return _rule(text, DEFAULT_PORTS, entry)
    host, sep, port_text = text.partition(":")
    return _rule(host, (_port(port_text, entry),) if sep else DEFAULT_PORTS, entry)


def _rule(host: str, ports: tuple[int, ...], entry: str) -> HostRule:
    wildcard = host.startswith("*.")
    name = _normal_host(host[2:] if wildcard else host)
    try:
        ipaddress.ip_address(name)
        literal = True
    except ValueError:
        literal = False
    if not name or (literal and wildcard) or (not literal and not _NAME.fullmatch(name)):
        raise ValueError(f"{entry!r}: {_USAGE}")
    return HostRule(name, ports, wildcard)


@dataclass(frozen=True)
class Allowlist:
    """The destinations one agent may reach: ``rules`` (:class:`HostRule`, in the order given)."""

    rules: tuple[HostRule, ...] = ()

    @classmethod
    def of(cls, entries: Iterable[str]) -> Allowlist:
        """From host entries (:func:`parse_host_rule`; duplicates dropped). Raises ``ValueError``."""
        rules: list[HostRule] = []
        for entry in entries:
            rule = parse_host_rule(entry)
            if rule not in rules:
                rules.append(rule)
        return cls(tuple(rules))

    def allows(self, host: str, port: int) -> bool:
        """Whether ``host`` (as requested) on ``port`` is listed."""
        return any(rule.matches(host, port) for rule in self.rules)

    def loopback_ports(self) -> tuple[int, ...]:
        """The ports of the rules naming this machine's ``127.0.0.1``, ``::1`` or ``localhost`` with a
        port of their own (a local model server): also relayed in directly, for clients that do not
        send loopback requests through a proxy."""
        ports = [p for r in self.rules if r.loopback and r.ports != DEFAULT_PORTS for p in r.ports]
        return tuple(dict.fromkeys(ports))

    def loopback_peers(self) -> tuple[tuple[str, int], ...]:
        """The exact ``(address, port)`` pairs of :meth:`loopback_ports`: a literal rule's own address
        (``::1``, ``127.0.0.1``), a name's both ``127.0.0.1`` and ``::1`` (``localhost`` may resolve to
        either): what a backend that confines TCP by address (Landlock) lets the agent reach directly."""
        pairs: list[tuple[str, int]] = []
        for r in self.rules:
            if r.loopback and r.ports != DEFAULT_PORTS:
                hosts = (r.host,) if r.host not in LOOPBACK_NAMES else ("127.0.0.1", "::1")
                pairs += [(h, p) for h in hosts for p in r.ports]
        return tuple(dict.fromkeys(pairs))

    def entries(self) -> list[str]:
        """One ``host:port`` string per rule (a rule with two ports gives ``host:443,host:80``)."""
        return [str(r) for r in self.rules]


class ProxyLog:
    """``proxy.log``: one line per request, ``<UTC time> <allowed|refused|failed> <METHOD> <host:port>
    [<path>] [(<why>)]``; the query string is never written (it may hold a key). The file stops at
    ``cap`` bytes with one last line saying so. ``path`` ``None``: lines are only counted. Thread-safe;
    write errors (a full disk; ``path`` made a link or no regular file by another program: never written through,
    link46) stop the logging, never the proxy."""

    def __init__(self, path: Path | None, cap: int = LOG_CAP_BYTES) -> None:
        self.path = path
        self.cap = cap
        self.counts = {"allowed": 0, "refused": 0, "failed": 0}
        self._size = 0
        self._lock = threading.Lock()
        self._full = path is None

    def write(self, verdict: str, method: str, target: str, why: str = "") -> None:
        """Record one request."""
        stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = " ".join(w for w in (stamp, verdict, method[:16], target[:300], f"({why})" if why else "") if w)
        line = "".join(c if c.isprintable() else "?" for c in line) + "\n"
        with self._lock:
            self.counts[verdict] = self.counts.get(verdict, 0) + 1
            if self._full or self.path is None:
                return
            data = line.encode("utf-8", "replace")
            if self._size + len(data) > self.cap:
                data = f"{stamp} log full at {self.cap} bytes: later requests are not written\n".encode()
                self._full = True
            try:
                with open_own_file(self.path, "ab") as f:  # never through a link put in its place (link46)
                    f.write(data)
            except OSError:
                self._full = True
            self._size += len(data)


def _split_target(target: str) -> tuple[str, int] | None:
    """``(host, port)`` of a CONNECT target ``host:port`` / ``[v6]:port``, else ``None``."""
    if target.startswith("["):
        host, sep, rest = target[1:].partition("]")
        if not sep or not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        host, sep, port_text = target.rpartition(":")
        if not sep or ":" in host:
            return None
    try:
        port = int(port_text)
    except ValueError:
        return None
    return (host, port) if host and 0 < port < 65536 else None


class _Deadline:
    """Reads ``conn`` with ``seconds`` for every read together, not each (natk65: a timeout per read let a client
    sending a byte every 29 s hold a connection, its thread and one of :data:`MAX_CONNECTIONS` for days)."""

    def __init__(self, conn: socket.socket, seconds: float) -> None:
        self.conn, self.end = conn, time.monotonic() + seconds

    def recv(self, n: int) -> bytes:
        """Up to ``n`` bytes (``b""``: the peer closed). Raises ``TimeoutError`` once the time is up, ``OSError``."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the head timeout passed")
        self.conn.settimeout(left)
        return self.conn.recv(n)


def _read_head(conn: _Deadline, limit: int = MAX_HEAD_BYTES, data: bytes = b"") -> tuple[bytes, bytes]:
    """``(head, rest)``: the bytes up to the blank line that ends an HTTP head (``data``: those read already), and
    those read after it. Raises ``ValueError`` when the peer closes first or the head exceeds ``limit`` bytes,
    ``OSError`` (``TimeoutError``: ``conn``'s time is up)."""
    while b"\r\n\r\n" not in data:
        if len(data) > limit:
            raise ValueError("request head too long")
        chunk = conn.recv(8192)
        if not chunk:
            raise ValueError("connection closed before a request")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "host"}
#: A header line as RFC 9112 §5 has it: a token, the colon right after it (no space before it, no folded line).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_FIELD = re.compile(_TOKEN + r":[^\r\n]*")
#: The request line sent on: a token, the URL (urlsplit drops CR, LF and tab), an HTTP version.
_METHOD, _VERSION = re.compile(_TOKEN), re.compile(r"HTTP/[0-9]\.[0-9]")


def _body_framing(headers: list[str]) -> int | None:
    """How the body of a request with these header lines ends: its length in bytes (0: no body), or ``None``:
    chunked (``Transfer-Encoding`` whose last coding is ``chunked``). Raises ``ValueError`` for a head whose
    body's end two readers could see differently (satk56: a second request hidden in it): a line that is no
    ``name:value`` (space before the colon, a folded line), both framings, more than one length, a length that is
    no decimal number, a transfer coding not ending in ``chunked``, a length past :data:`MAX_LENGTH`."""
    lengths: list[str] = []
    codings: list[str] = []
    for line in headers:
        if not _FIELD.fullmatch(line):  # a lone CR or LF in it too: a line end to a lenient reader
            raise ValueError("a header line that is no name:value")
        name, value = line.split(":", 1)
        if name.lower() == "content-length":
            lengths.append(value.strip())
        elif name.lower() == "transfer-encoding":
            codings += [c.strip().lower() for c in value.split(",")]
    if codings:
        if lengths or codings[-1] != "chunked":
            raise ValueError("a body framed by no one rule")
        return None
    if len(lengths) > 1 or (lengths and not (lengths[0].isascii() and lengths[0].isdigit())):
        raise ValueError("a body of no one length")
    if lengths and int(lengths[0]) > MAX_LENGTH:
        raise ValueError("a body longer than 2 GiB (a length past 32 bits is read short by some servers)")
    return int(lengths[0]) if lengths else 0


def _origin_head(method: str, url: urllib.parse.SplitResult, version: str, headers: list[str]) -> bytes:
    """The request head sent on: origin form, hop-by-hop and proxy headers dropped, ``Host`` the request
    target's (RFC 9112 §3.2.2: the client's own is replaced; satk56: a server routing by it served an unlisted
    site), ``Connection: close``."""
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    kept = [h for h in headers if h.split(":", 1)[0].strip().lower() not in _HOP]
    host = url.netloc.rpartition("@")[2]
    return "\r\n".join([f"{method} {path} {version}", f"Host: {host}", *kept, "Connection: close", "", ""]
                        ).encode("latin-1")


#: A chunk's size line (hex digits, at most :data:`MAX_LENGTH`, some leading zeros; an extension after ``;``) and a
#: trailer line (a field, or the empty last one).
_CHUNK_SIZE = re.compile(rb"0{0,8}[0-7]?[0-9A-Fa-f]{1,7}[ \t]*(;[^\r\n]*)?")
_TRAILER = re.compile(rb"(" + _TOKEN.encode() + rb":[^\r\n]*)?")


class _Body:
    """Sends on the body of one request from ``conn`` to ``upstream`` (``rest``: what was read past its head),
    ended as :func:`_body_framing` says: the bytes after it (a second request) never go on."""

    def __init__(self, conn: socket.socket, upstream: socket.socket, rest: bytes) -> None:
        self.conn, self.upstream, self.buf = conn, upstream, rest

    def _more(self) -> None:
        chunk = self.conn.recv(65536)
        if not chunk:
            raise ValueError("the client closed within the body")
        self.buf += chunk

    def _pass(self, n: int) -> None:
        """Send on the next ``n`` bytes."""
        while n:
            if not self.buf:
                self._more()
            part, self.buf = self.buf[:n], self.buf[n:]
            self.upstream.sendall(part)
            n -= len(part)

    def _line(self, shape: re.Pattern[bytes]) -> bytes:
        """Send on the next line (up to its CRLF) when it has ``shape`` (checked before any of it goes on: a lone
        CR or LF in it is a line end to a lenient reader); the line, without its CRLF. Raises ``ValueError`` for
        any other line, or past 8 KiB."""
        while b"\r\n" not in self.buf[:8192]:
            if len(self.buf) > 8192:
                raise ValueError("a chunk line too long")
            self._more()
        line, _, rest = self.buf.partition(b"\r\n")
        if not shape.fullmatch(line):
            raise ValueError("a chunk line of no chunk's shape")
        self.buf = rest
        self.upstream.sendall(line + b"\r\n")
        return line

    def send(self, length: int | None) -> None:
        """Send on a body of ``length`` bytes, or (``None``) a chunked one up to its last chunk's trailers, each
        line and each chunk's CRLF checked before it goes on (RFC 9112 §7.1). Raises ``ValueError`` (a line of no
        chunk's shape, the client gone within the body), ``OSError``."""
        if length is not None:
            self._pass(length)
            return
        while size := int(self._line(_CHUNK_SIZE).split(b";")[0].strip(b" \t"), 16):
            self._pass(size)
            while len(self.buf) < 2:
                self._more()
            if self.buf[:2] != b"\r\n":
                raise ValueError("a chunk not ended by CRLF")
            self._pass(2)
        while self._line(_TRAILER):  # the trailers, up to the empty line
            pass


def _one_request(conn: socket.socket, upstream: socket.socket, body: _Body, length: int | None) -> None:
    """Relay the upstream's answer to ``conn`` (from now: a ``100 Continue`` too) while the request's ``body`` of
    ``length`` (:meth:`_Body.send`) goes on, then read and drop whatever else the client sends, until the client
    ends (then the upstream's sending side is shut) and the answer ends; then close both (:func:`~.relay._join`)."""
    def forward(conn: socket.socket, upstream: socket.socket) -> None:
        try:
            body.send(length)
            while conn.recv(65536):
                pass
        except (OSError, ValueError):
            pass
        finally:
            _shut(socket.SHUT_WR, upstream)
    _join(conn, upstream, forward)


def _answer(conn: socket.socket, status: str, text: str) -> None:
    body = (text + "\n").encode()
    head = (f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()
    try:
        conn.sendall(head + body)
    except OSError:
        pass


def _drain_close(conn: socket.socket) -> None:
    """Close ``conn`` after its answer, reading what the client already sent without waiting (a close
    with unread data would reset the connection before the client reads the answer)."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.setblocking(False)
        conn.recv(MAX_HEAD_BYTES)
    except OSError:
        pass
    conn.close()


#: Bytes of a server's HelloRetryRequest (its handshake message, over as many TLS records as it takes) read before
#: the proxy reads the server no more (:class:`_TlsFlights`; a client's hello is whole in one record); RFC 8446
#: §4.1.2 bounds a hello at 2^24 bytes, real ones (post-quantum key shares included) are some 2 KiB.
MAX_HELLO_BYTES = 65536
#: TLS numbers (RFC 8446 §5.1, §4, §4.2; RFC 6066 §3; draft-ietf-tls-esni): a handshake record, a ClientHello, the
#: server_name extension and its host_name type, encrypted_client_hello (the real server name sealed inside).
_HANDSHAKE, _CLIENT_HELLO, _SERVER_NAME, _HOST_NAME, _ECH = 22, 1, 0, 0, 0xFE0D
#: More TLS numbers (RFC 8446 §5.1, §4): the other record kinds, a ServerHello.
_CHANGE_CIPHER_SPEC, _ALERT, _APPLICATION_DATA, _SERVER_HELLO = 20, 21, 23, 2
#: The record kinds a client may send before the server's hello (:class:`_TlsFlights`).
_CLIENT_RECORDS = (_HANDSHAKE, _CHANGE_CIPHER_SPEC, _ALERT, _APPLICATION_DATA)
#: The longest record body (RFC 5246 §6.2.3: 2^14 bytes and 2048 of a cipher's growth; TLS 1.3's is 256).
_MAX_RECORD = 16384 + 2048
#: The random of a HelloRetryRequest (RFC 8446 §4.1.3: SHA-256 of "HelloRetryRequest").
_RETRY_RANDOM = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")


class _Cursor:
    """Reads a TLS structure: big-endian integers and length-prefixed vectors. Raises ``ValueError`` past its end."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError("a ClientHello cut short")
        self.at += n
        return self.data[self.at - n:self.at]

    def number(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def vector(self, n: int) -> _Cursor:
        """The next vector with an ``n``-byte length."""
        return _Cursor(self.take(self.number(n)))

    def done(self) -> bool:
        return self.at == len(self.data)


def _more(conn: _Deadline, data: bytes, n: int) -> bytes:
    """``data`` and what ``conn`` sends next, until there are ``n`` bytes. Raises ``ValueError`` (the client closed),
    ``OSError`` (``TimeoutError``: ``conn``'s time is up)."""
    while len(data) < n:
        chunk = conn.recv(65536)
        if not chunk:
            raise ValueError("the client closed the tunnel within its first message")
        data += chunk
    return data


class _TlsFlights:
    """Both directions of a TLS tunnel to ``host`` until the server has chosen its one ClientHello (natk65: TLS 1.3
    answers a first ClientHello with a HelloRetryRequest, RFC 8446 §4.1.4, and the client's second one goes in the
    clear too, any server name). Every byte the client sends passes :meth:`client` before it goes on, and every byte
    the server sends passes :meth:`server`, unchanged, till the server's first ServerHello that is no
    HelloRetryRequest: from then on it takes no ClientHello (a TLS 1.2 renegotiation's is encrypted, TLS 1.3 has
    none), and :meth:`client` passes all. Until then the client's records (RFC 8446 §5.1; any number per read, split
    across reads) must each be a handshake record holding one ClientHello whole, whose server name
    :func:`_tls_refusal` allows (natk66: a hello over several records, the server's reassembly of it naming the host,
    went on, and a router reading on from the first record, as HAProxy's ``req.ssl_sni`` does, read the next
    record's header as part of it and found another name); a ChangeCipherSpec of one byte 1 (D.4: sent before a
    second ClientHello too); an alert (two bytes, §6); or application data (0-RTT early data, §4.2.10: sealed under
    the first ClientHello's key, and it may come *before* a second ClientHello, so neither it nor a ChangeCipherSpec
    ends the clear part); two ClientHellos at most (RFC 8446 §4.1.4). Bytes held: a record at most. A server that
    sends no ServerHello (no TLS, an alert) leaves the client held to this for the tunnel's life. :meth:`client` and
    :meth:`server` run on a thread each; they share only ``_open``, set once by the latter."""

    def __init__(self, host: str) -> None:
        self.host = host
        #: ClientHellos judged and let through
        self.hellos = 0
        self._read = b""  # the client's bytes not yet a whole record
        self._server = b""  # the server's bytes not yet a whole record
        self._server_shake = b""  # its handshake records' bodies not yet read as whole messages (_server_hello)
        self._open = False  # the server sent its ServerHello: no ClientHello counts any more
        self._watching = True  # still reading the server's records

    def client(self, data: bytes) -> bytes:
        """What of the client's ``data`` (and of the bytes before it held back, a record's first part) goes on now.
        Raises ``ValueError`` for a record of no kind listed in the class docstring, a handshake record that is not
        one ClientHello whole, a malformed or refused one, a third. Work linear in the bytes read (natk66: slicing
        off each record of a read took 3.0 s a MiB of 5-byte records in reads of 64 KiB, 0.7 s in reads of 1 KiB)."""
        if self._open:
            if self._read:
                data, self._read = self._read + data, b""
            return data
        read, at, out = self._read + data, 0, bytearray()
        while len(read) - at >= 5:
            kind, length = read[at], int.from_bytes(read[at + 3:at + 5], "big")
            if (kind not in _CLIENT_RECORDS or read[at + 1] != 3 or length > _MAX_RECORD
                    or (length == 0 and kind != _APPLICATION_DATA)):
                raise ValueError("a TLS record of no kind a client sends before the server's hello")
            if len(read) - at < 5 + length:
                break
            record, at = read[at:at + 5 + length], at + 5 + length
            if kind == _HANDSHAKE:
                self._judge(record[5:])
            elif kind == _CHANGE_CIPHER_SPEC and record[5:] != b"\x01":
                raise ValueError("a ChangeCipherSpec that is not the one byte 1")
            elif kind == _ALERT and length != 2:
                raise ValueError("an alert that is not two bytes")
            out += record
        self._read = read[at:]
        return bytes(out)

    def _judge(self, message: bytes) -> None:
        """Judge the body of a handshake record, ``message`` (:meth:`client`)."""
        if message[0] != _CLIENT_HELLO:
            raise ValueError("a TLS handshake message before the server's hello that is no ClientHello")
        if len(message) < 4 or int.from_bytes(message[1:4], "big") != len(message) - 4:
            raise ValueError("a ClientHello that is not one whole in its record")
        if self.hellos == 2:  # RFC 8446 §4.1.4: a client answers one HelloRetryRequest at most
            raise ValueError("a third ClientHello before the server's hello")
        refusal = _tls_refusal(message[4:], self.host)
        if refusal:
            raise ValueError(refusal if self.hellos == 0 else f"a ClientHello after the first: {refusal}")
        self.hellos += 1

    def server(self, data: bytes) -> bytes:
        """``data``, unchanged, read on the way to its first ServerHello (RFC 8446 §4.1.3; a HelloRetryRequest is
        one whose random is :data:`_RETRY_RANDOM`): past a ServerHello that is no retry, :meth:`client` lets all
        through; past anything but handshake records, ChangeCipherSpecs and alerts, it never does."""
        if not self._watching:
            return data
        self._server += data
        while self._watching and len(self._server) >= 5:
            kind, length = self._server[0], int.from_bytes(self._server[3:5], "big")
            if kind not in (_HANDSHAKE, _CHANGE_CIPHER_SPEC, _ALERT) or length > _MAX_RECORD:
                self._watching = False
            elif len(self._server) >= 5 + length:
                if kind == _HANDSHAKE:
                    self._server_shake += self._server[5:5 + length]
                self._server = self._server[5 + length:]
                self._server_hello()
            else:
                break
        if not self._watching:
            self._server = self._server_shake = b""
        return data

    def _server_hello(self) -> None:
        """Read the server's handshake messages in ``_server_shake`` (:meth:`server`): past each whole
        HelloRetryRequest to a ServerHello that is none (then ``_open``), or to anything else (then no more)."""
        while self._watching and len(self._server_shake) >= 38:
            need = 4 + int.from_bytes(self._server_shake[1:4], "big")
            if self._server_shake[0] != _SERVER_HELLO or need > MAX_HELLO_BYTES:
                self._watching = False
            elif self._server_shake[6:38] != _RETRY_RANDOM:
                self._open, self._watching = True, False
            elif len(self._server_shake) < need:
                return
            else:
                self._server_shake = self._server_shake[need:]


def _server_names(body: bytes) -> list[str]:
    """The host name of a ClientHello ``body``'s server_name extension (RFC 8446 §4.1.2, RFC 6066 §3), one or ``[]``
    without it. Raises ``ValueError`` for a malformed one, an extension twice (two readers may take either), a
    server_name extension of anything but one host_name entry (natk66: a name of another type first, one after, or
    bytes after the list went on, and readers differ on them: OpenSSL refuses each, a reader of the first entry only
    finds no name in the first and serves its default site), a name that is not ASCII, encrypted_client_hello
    (its outer name is not the one the server serves), and fields outside RFC 8446 §4.1.2's bounds (natk66: a
    legacy_version below TLS 1.0's, a session id past 32 bytes, no cipher suite or compression method went on, and
    HAProxy's ``req.ssl_sni`` finds no name in such a hello: its default site)."""
    hello = _Cursor(body)
    if not 0x0301 <= hello.number(2) <= 0x0303:
        raise ValueError("a ClientHello's legacy_version that is no TLS 1.0 to 1.2")
    hello.take(32)  # random
    if (len(hello.vector(1).data) > 32  # legacy_session_id<0..32>
            or len(suites := hello.vector(2).data) < 2 or len(suites) % 2  # cipher_suites<2..2^16-2>
            or not hello.vector(1).data):  # legacy_compression_methods<1..2^8-1>
        raise ValueError("a ClientHello's session id, cipher suites or compression methods out of their bounds")
    if hello.done():  # a hello without extensions (before TLS 1.2)
        return []
    extensions = hello.vector(2)
    if not hello.done():
        raise ValueError("bytes after a ClientHello's extensions")
    seen: set[int] = set()
    names: list[str] = []
    while not extensions.done():
        kind, data = extensions.number(2), extensions.vector(2)
        if kind in seen:
            raise ValueError("a ClientHello extension twice")
        seen.add(kind)
        if kind == _ECH:
            raise ValueError("an encrypted ClientHello: the server name it reaches is sealed")
        if kind == _SERVER_NAME:  # natk66: only the form OpenSSL takes, one host_name and nothing after it
            entries = data.vector(2)
            name_type, name = entries.number(1), entries.vector(2).data
            if name_type != _HOST_NAME or not (entries.done() and data.done()):
                raise ValueError("a server_name extension that is not one host name")
            if not name.isascii():
                raise ValueError("a server name that is not ASCII")
            names.append(name.decode("ascii"))
    return names


def _tls_refusal(body: bytes, host: str) -> str:
    """Why a tunnel to ``host`` (as requested) refuses the ClientHello ``body``, or ``""``: allowed when its one
    server name is ``host`` (normalised), spelled as a host name (letters, digits, ``-``, ``_``, dots; any case, one
    trailing dot: natk65, a name trimmed to the host only here, ``' host'`` or ``'host..'``, is no site to the server,
    which serves its default one), or when it names none and ``host`` is an IP literal (RFC 6066 §3: no literal is
    ever a server name)."""
    try:
        names = _server_names(body)
    except ValueError as exc:
        return str(exc)
    host = _normal_host(host)
    if not names:
        try:
            ipaddress.ip_address(host)
            return ""
        except ValueError:
            return "a ClientHello naming no server, to a named host"
    name = names[0].lower().removesuffix(".")
    if not _NAME.fullmatch(name) or _normal_host(name) != host:  # natk65: no name the proxy alone trims to it
        return f"TLS server name {names[0][:100]!r} is not the tunnel's host"
    return ""


def _host_refusal(headers: list[str], host: str, port: int) -> str:
    """Why an HTTP request through a tunnel to ``host:port`` is refused for its ``Host`` header lines, or ``""``: at
    most one, naming ``host`` (normalised both) with ``port`` or no port."""
    values = [h.split(":", 1)[1].strip() for h in headers if h.split(":", 1)[0].lower() == "host"]
    if len(values) > 1:
        return "more than one Host"
    if not values:
        return ""
    named, named_port = _split_target(values[0]) or (values[0], None)
    if _normal_host(named) != _normal_host(host) or named_port not in (None, port):
        return f"Host {values[0][:100]!r} is not the tunnel's host"
    return ""


def _first_hello(conn: _Deadline, data: bytes, host: str) -> _Opening:
    """Read from ``conn`` (``data``: read already, opening with a handshake record) till a first ClientHello is whole
    and judged (:class:`_TlsFlights`): an opening that sends on what the client sent up to it (its records whole),
    or one refused. Raises ``ValueError`` (the client closed), ``OSError`` (``TimeoutError``: ``conn``'s time)."""
    tls, read, sent = _TlsFlights(host), data, b""
    while True:
        try:
            sent += tls.client(data)
        except ValueError as exc:
            return _Opening(read, str(exc))
        if tls.hellos:
            return _Opening(sent, tls=tls)
        data = _more(conn, b"", 1)
        read += data


@dataclass
class _Opening:
    """What a client sent first through a tunnel (:func:`_tunnel_opening`): ``data``, every byte read; ``refusal``,
    why it goes on no further, or ``""``; for an HTTP request, its ``request`` (method, origin-form target, version,
    header lines) and ``rest`` (what was read past its head); for TLS, ``tls``, what judges the rest, and ``data``
    what of it goes on now (its first ClientHello, whole)."""

    data: bytes
    refusal: str = ""
    request: tuple[str, str, str, list[str]] | None = None
    rest: bytes = b""
    length: int | None = 0
    tls: _TlsFlights | None = None


def _tunnel_opening(conn: _Deadline, data: bytes, host: str, port: int) -> _Opening:
    """Read what the client sends first through a tunnel to ``host:port`` (``data``: what it sent already) and judge
    it (satk56: a listed address may front many sites, told apart by the TLS server name or the ``Host``): a TLS
    ClientHello (:func:`_first_hello`), else an HTTP/1.0 or 1.1 request in origin form, its
    body's end clear (:func:`_body_framing`), and its ``Host`` the tunnel's (:func:`_host_refusal`); anything else is
    refused: an HTTP/2 preface, a server-first protocol's silence (or a trickle) till ``conn``'s time is up, bytes of
    no protocol (nothing says what a front makes of them). Raises ``OSError`` only for a client gone."""
    try:
        data = _more(conn, data, 1)
        if data[0] == _HANDSHAKE:
            return _first_hello(conn, data, host)
        head, rest = _read_head(conn, data=data)
    except TimeoutError:
        return _Opening(data, "the client sent no request (a server-first protocol is not tunnelled)")
    except ValueError as exc:
        return _Opening(data, str(exc))
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if not (len(words) == 3 and _METHOD.fullmatch(words[0]) and words[1].startswith("/")
            and words[2] in ("HTTP/1.0", "HTTP/1.1")):
        return _Opening(data, "neither a TLS ClientHello nor an HTTP/1 request in origin form")
    try:
        length = _body_framing(lines[1:])
    except ValueError as exc:
        return _Opening(data, str(exc))
    return _Opening(data, _host_refusal(lines[1:], host, port), (words[0], words[1], words[2], lines[1:]), rest,
                    length)


class FilteringProxy:
    """The host half (module docstring): ``allowlist`` decides, ``log`` (a :class:`ProxyLog`, or a path
    for one) records. :meth:`start` listens on a Unix socket, :meth:`start_tcp` on a TCP port of
    ``127.0.0.1`` (both raise ``OSError``); :meth:`close` stops
    accepting, cuts every open connection and removes the socket. ``connect_timeout_s`` and
    ``head_timeout_s``: seconds to reach an upstream, and for a client to send its request head, and then (a tunnel's)
    its first message, each in all (natk65), not each read;
    ``max_connections``: client connections served at once (:data:`MAX_CONNECTIONS`)."""

    def __init__(self, allowlist: Allowlist, log: ProxyLog | Path | None = None, *,
                 connect_timeout_s: float = 30.0, head_timeout_s: float = 30.0,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.allowlist = allowlist
        self.log = log if isinstance(log, ProxyLog) else ProxyLog(log)
        self.connect_timeout_s = connect_timeout_s
        self.head_timeout_s = head_timeout_s
        self.socket_path: Path | None = None
        #: the TCP port of :meth:`start_tcp`, once started
        self.port: int | None = None
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(max_connections)

    def start(self, socket_path: Path) -> FilteringProxy:
        """Listen on ``socket_path`` (replaced if present) and serve in a thread; returns ``self``."""
        socket_path.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(socket_path))
        self.socket_path = socket_path
        return self._listen(listener)

    def start_tcp(self) -> int:
        """Listen on a free TCP port of the host's ``127.0.0.1`` (the Landlock backend: its agents reach
        it by port, there is no relay) and serve in a thread; returns the port. Raises ``OSError``."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        self._listen(listener)
        self.port = int(listener.getsockname()[1])
        return self.port

    def _listen(self, listener: socket.socket) -> FilteringProxy:
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                self.log.write("refused", "-", "-", "too many connections")
                _answer(conn, "503 Service Unavailable", "homefield proxy: too many connections")
                _drain_close(conn)
                continue
            self._track(conn)
            threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            self.handle(conn)
        finally:
            self._slots.release()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _forget(self, *socks: socket.socket) -> None:
        with self._lock:
            for s in socks:
                self._open.discard(s)

    def handle(self, conn: socket.socket) -> None:
        """Serve one client connection (its first request; see the module docstring). Never raises."""
        try:
            self._handle(conn)
        except Exception as exc:  # a bug here must not kill the thread silently nor leak the socket
            self.log.write("failed", "-", "-", f"proxy error: {type(exc).__name__}")
        finally:
            self._forget(conn)
            _drain_close(conn)  # a refused request's body unread must not reset the connection before its answer

    def _handle(self, conn: socket.socket) -> None:
        try:
            head, rest = _read_head(_Deadline(conn, self.head_timeout_s))
        except (OSError, ValueError) as exc:
            self.log.write("refused", "-", "-", str(exc) if isinstance(exc, ValueError) else "no request")
            return
        conn.settimeout(self.head_timeout_s)  # for the answers sent to it (the reads above left it at what was left)
        lines = head.decode("latin-1").split("\r\n")
        words = lines[0].split(" ")
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            self.log.write("refused", "-", "-", "not an HTTP request")
            _answer(conn, "400 Bad Request", "homefield proxy: not an HTTP request")
            return
        method, target, version = words
        url: urllib.parse.SplitResult | None = None
        if method.upper() == "CONNECT":
            pair = _split_target(target)
        else:
            try:
                url = urllib.parse.urlsplit(target)
                pair = (url.hostname, url.port or 80) if url.scheme == "http" and url.hostname else None
            except ValueError:
                pair = None
        if pair is None:
            self.log.write("refused", method, target.split("?")[0], "not a proxy request")
            _answer(conn, "400 Bad Request", "homefield proxy: send CONNECT host:port or an absolute http:// URL")
            return
        host, port = pair
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        path = f" {url.path or '/'}" if url is not None else ""
        if not self.allowlist.allows(host, port):
            self.log.write("refused", method, shown + path, "not on the allowlist")
            _answer(conn, "403 Forbidden", f"homefield proxy: {shown} is not on this agent's network allowlist "
                                           f"({spell('allow-host')} HOST:PORT adds one)")
            return
        length: int | None = 0
        if url is not None:
            try:
                if not (_METHOD.fullmatch(method) and _VERSION.fullmatch(version)):
                    raise ValueError("a request line that is no METHOD URL HTTP/x.y")
                length = _body_framing(lines[1:])
            except ValueError as exc:
                self.log.write("refused", method, shown + path, str(exc))
                _answer(conn, "400 Bad Request", f"homefield proxy: {exc}")
                return
        try:
            upstream = self._connect(host, port)
        except OSError as exc:
            why = str(exc) if isinstance(exc, PermissionError) else f"{type(exc).__name__}: {exc}"
            self.log.write("refused" if isinstance(exc, PermissionError) else "failed", method, shown + path, why)
            _answer(conn, "403 Forbidden" if isinstance(exc, PermissionError) else "502 Bad Gateway",
                    f"homefield proxy: {shown}: {why}")
            return
        self._track(upstream)
        tls: _TlsFlights | None = None
        try:
            if url is None:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                opening = _tunnel_opening(_Deadline(conn, self.head_timeout_s), rest, host, port)
                if opening.refusal:
                    self.log.write("refused", method, shown, opening.refusal)
                    if opening.data[:1] != bytes([_HANDSHAKE]):  # a client speaking plain text reads why
                        _answer(conn, "403 Forbidden", f"homefield proxy: {shown}: {opening.refusal}")
                    raise ConnectionAbortedError  # an OSError: the upstream is closed below, unsent to
                if opening.tls is not None:  # TLS to the listed name: its ClientHellos judged till the server's hello
                    tls = opening.tls
                    upstream.sendall(opening.data)
                else:  # an http:// request through the tunnel: sent on as an absolute-URI one is
                    inner, target, version, headers = opening.request
                    url = urllib.parse.urlsplit(f"http://{shown}{target}")
                    path, rest, length = f" {url.path or '/'}", opening.rest, opening.length
                    upstream.sendall(_origin_head(inner, url, version, headers))
            else:
                upstream.sendall(_origin_head(method, url, version, lines[1:]))
            self.log.write("allowed", method, shown + path)
            conn.settimeout(None)
            upstream.settimeout(None)
        except OSError:
            self._forget(upstream)
            upstream.close()
            return
        if tls is not None:
            _join(conn, upstream, lambda c, u: self._tls(c, u, tls, method, shown), tls.server)
        elif url is None:
            _join(conn, upstream)
        else:  # its body only; a second request behind it never goes on (satk56)
            _one_request(conn, upstream, _Body(conn, upstream, rest), length)
        self._forget(upstream)

    def _tls(self, conn: socket.socket, upstream: socket.socket, tls: _TlsFlights, method: str, shown: str) -> None:
        """Carry the client's bytes to ``upstream`` through ``tls`` (:meth:`_TlsFlights.client`) till either ends;
        a record it refuses cuts both ends, that record unsent, and is logged."""
        try:
            while chunk := conn.recv(65536):
                upstream.sendall(tls.client(chunk))
        except ValueError as exc:  # logged before either end sees the cut
            self.log.write("refused", method, shown, str(exc))
            _shut(socket.SHUT_RDWR, conn, upstream)
        except OSError:
            pass
        finally:
            _shut(socket.SHUT_WR, upstream)

    def _connect(self, host: str, port: int) -> socket.socket:
        """A connection to ``host:port``. Raises ``PermissionError`` when a name that is not itself a
        loopback name or literal resolves to a loopback address (a listed domain pointed at this
        machine), ``OSError`` when it cannot be made."""
        name = _normal_host(host)
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        if not _is_loopback(name) and any(_points_home(str(i[4][0])) for i in infos):
            raise PermissionError(f"{name} resolves to a loopback address")
        error: OSError = OSError(f"no address for {name}")
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            sock.settimeout(self.connect_timeout_s)
            try:
                sock.connect(address)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
        raise error

    def close(self) -> None:
        """Stop accepting, cut every open connection and remove the socket (idempotent)."""
        self._closed.set()
        if self._listener is not None:
            close_listener(self._listener)
            self._listener = None
        with self._lock:
            open_now = list(self._open)
            self._open.clear()
        _shut(socket.SHUT_RDWR, *open_now)
        if self.socket_path is not None:
            self.socket_path.unlink(missing_ok=True)


def proxy_env(env: dict[str, str], port: int) -> dict[str, str]:
    """``env`` with the proxy at ``http://127.0.0.1:port`` in ``HTTPS_PROXY``, ``HTTP_PROXY``,
    ``https_proxy``, ``http_proxy`` (and ``NODE_USE_ENV_PROXY=1``, for Node's own ``fetch``), and
    without ``NO_PROXY``/``no_proxy`` (a new dict)."""
    url = f"http://127.0.0.1:{port}"
    out = {k: v for k, v in env.items() if k.lower() not in ("no_proxy", "all_proxy")}
    out.update(HTTPS_PROXY=url, HTTP_PROXY=url, https_proxy=url, http_proxy=url, NODE_USE_ENV_PROXY="1")
    return out
