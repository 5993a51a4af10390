"""Outbound HTTP for components, with SSRF protection.

* Only ``http``/``https``. The host is resolved **once**; every resolved address
  must be public (``ipaddress.is_global``: no loopback, private, link-local,
  multicast, reserved, unspecified, shared/CGNAT, documentation ranges). IPv6
  forms embedding IPv4 (mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``,
  6to4 ``2002::/16``) are checked on the embedded address too.
* Numeric host spellings (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``)
  are normalised the way ``inet_aton`` reads them before the check.
* The connection goes to the checked address (no second DNS lookup, so no
  rebinding window); TLS still verifies the certificate for the host name.
* Redirects are followed by hand (when asked) and every hop is checked again.
* Timeouts apply to connect and each read; the body is capped at ``max_bytes``.
* ``allowed_hosts``: exact host names, wildcards (``*.corp.example``), IPs and
  CIDR ranges; a match skips the address check (deployment opt-in).
* Connector components (databases, vector stores, queues: anything that
  connects to a user-named host) call :func:`check_connector_host` (or make
  HTTP calls with ``policy.for_connector()``): the same address rules when
  ``SERVICE_CONNECTOR_SSRF_VALIDATION_ENABLED`` is true, except that literal
  loopback hosts (``localhost``, ``127.x``, ``::1``) pass when
  ``SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK`` is true (default false since issue 26:
  the service's own database often listens there; the hardening record refuses
  the service's own database and Redis whatever this says).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import ipaddress
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

__all__ = [
    "EgressBlocked",
    "EgressError",
    "EgressPolicy",
    "EgressResponse",
    "add_header_source",
    "check_connector_host",
    "check_url",
    "request",
    "stream",
]

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_6TO4 = ipaddress.ip_network("2002::/16")


#: callables giving headers every outbound request carries (a trace's ``traceparent``): an observability
#: plugin registers one (:func:`add_header_source`); empty, nothing is added and nothing is called
_header_sources: list[Callable[[], dict[str, str]]] = []


def add_header_source(source: Callable[[], dict[str, str]]) -> None:
    """Add ``source`` (once) to what every outbound request asks for headers it carries.

    Called per request, in the calling thread; what it gives never overrides a header the caller set.
    Process-wide, as the trace context it serves (an OpenTelemetry tracer provider is).
    """
    if source not in _header_sources:
        _header_sources.append(source)


def _with_sources(headers: dict[str, str]) -> dict[str, str]:
    for source in _header_sources:
        try:
            extra = source()
        except Exception:  # a broken source never fails the request
            log.debug("an egress header source failed", exc_info=True)
            continue
        for key, value in extra.items():
            if not any(k.lower() == key.lower() for k in headers):
                headers[key] = value
    return headers


class EgressError(Exception):
    """An outbound request failed (network error, too large, too many redirects)."""


class EgressBlocked(EgressError):
    """The destination is not allowed (private address, bad scheme...)."""


@dataclass(frozen=True)
class EgressPolicy:
    """Settings for outbound requests (built by the caller from ``SERVICE_SSRF_*`` settings)."""

    enabled: bool = True
    allowed_hosts: tuple[str, ...] = ()
    timeout: float = 30.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    user_agent: str = "Service/1.0"
    extra_blocked: tuple[str, ...] = field(default=())
    #: SERVICE_CONNECTOR_SSRF_VALIDATION_ENABLED / _ALLOW_LOOPBACK (connector components)
    connector_validation: bool = True
    connector_allow_loopback: bool = False
    #: literal loopback hosts pass the address check (set on connector policies only)
    allow_loopback: bool = False

    def for_connector(self) -> EgressPolicy:
        """The policy for a connector component's own connections (see the module docstring)."""
        return dataclasses.replace(
            self, enabled=self.connector_validation, allow_loopback=self.connector_allow_loopback
        )

    @classmethod
    def from_settings(
        cls, enabled: bool = True, allowed_hosts: str | list[str] | tuple[str, ...] | None = None, **kw: Any
    ) -> EgressPolicy:
        if isinstance(allowed_hosts, str):
            hosts = tuple(h.strip() for h in allowed_hosts.split(",") if h.strip())
        else:
            hosts = tuple(allowed_hosts or ())
        return cls(enabled=enabled, allowed_hosts=hosts, **kw)


@dataclass
class EgressResponse:
    status_code: int
    headers: dict[str, str]
    content: bytes
    url: str
    redirects: list[str]

    @property
    def text(self) -> str:
        charset = "utf-8"
        ctype = self.headers.get("content-type", "")
        if "charset=" in ctype:
            charset = ctype.split("charset=")[-1].split(";")[0].strip() or "utf-8"
        try:
            return self.content.decode(charset, "replace")
        except LookupError:
            return self.content.decode("utf-8", "replace")


# -- address checks ------------------------------------------------------------


def _parse_ipv4_number(part: str) -> int:
    if part.lower().startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part, 10)


def parse_host_ip(host: str) -> IPAddress | None:
    """Read ``host`` as an IP address, accepting every ``inet_aton`` spelling; None for names."""
    h = host.strip().strip("[]").rstrip(".")
    if "%" in h:  # IPv6 zone id
        h = h.split("%", 1)[0]
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    parts = h.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    try:
        nums = [_parse_ipv4_number(p) for p in parts]
    except ValueError:
        return None
    *head, last = nums
    if any(n < 0 or n > 255 for n in head):
        return None
    if last < 0 or last >= 256 ** (5 - len(nums)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * (256 ** (5 - len(nums))) + last
    return ipaddress.IPv4Address(value)


def _embedded_ipv4(ip: IPAddress) -> IPAddress | None:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip in _6TO4:
            return ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
        # IPv4-compatible (deprecated) ::a.b.c.d
        if int(ip) >> 32 == 0:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public_address(ip: IPAddress) -> bool:
    if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return False
    inner = _embedded_ipv4(ip)
    return inner is None or is_public_address(inner)


def _host_allowed(host: str, ips: list[IPAddress], policy: EgressPolicy) -> bool:
    host_l = host.lower().rstrip(".")
    for entry in policy.allowed_hosts:
        e = entry.strip().lower()
        if not e:
            continue
        if "/" in e:
            try:
                net = ipaddress.ip_network(e, strict=False)
            except ValueError:
                continue
            if ips and all(ip in net for ip in ips):
                return True
            continue
        literal = parse_host_ip(e) if not any(c in e for c in "*?[") else None
        if literal is not None:
            if ips and all(ip == literal for ip in ips):
                return True
            continue
        if fnmatch.fnmatchcase(host_l, e):
            return True
    return False


def _resolve(host: str, port: int) -> list[IPAddress]:
    literal = parse_host_ip(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise EgressError(f"Cannot resolve host '{host}'") from exc
    out: list[IPAddress] = []
    for info in infos:
        addr = str(info[4][0]).split("%", 1)[0]
        ip = ipaddress.ip_address(addr)
        if ip not in out:
            out.append(ip)
    if not out:
        raise EgressError(f"Cannot resolve host '{host}'")
    return out


def check_url(url: str, policy: EgressPolicy) -> tuple[str, str, int, IPAddress]:
    """Validate ``url``; return ``(scheme, host, port, address to connect to)`` or raise :class:`EgressBlocked`."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise EgressBlocked(f"URL scheme '{scheme or '(none)'}' is not allowed")
    host = parts.hostname or ""
    if not host:
        raise EgressBlocked("URL has no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise EgressBlocked("Invalid port") from exc
    ips = _resolve(host, port)
    if policy.enabled and policy.allow_loopback and _literal_loopback(host):
        return scheme, host, port, ips[0]
    if policy.enabled and not _host_allowed(host, ips, policy):
        for ip in ips:
            if not is_public_address(ip):
                raise EgressBlocked(f"Requests to '{host}' are blocked: it resolves to a non-public address")
    return scheme, host, port, ips[0]


def _literal_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP literal (not a name that happens to resolve to loopback)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    ip = parse_host_ip(host)
    return ip is not None and ip.is_loopback


def check_connector_host(host: str, port: int, policy: EgressPolicy) -> IPAddress:
    """Validate a connector's ``host:port`` (database, vector store...); return the address to use.

    Raises :class:`EgressBlocked` for a non-public destination when connector
    validation is on (literal loopback allowed by ``connector_allow_loopback``).
    Connect to the returned address, not the name, so DNS cannot rebind.
    """
    connector = policy.for_connector()
    host = (host or "").strip()
    if not host:
        raise EgressBlocked("Connector has no host")
    ips = _resolve(host, port)
    if not connector.enabled or (connector.allow_loopback and _literal_loopback(host)):
        return ips[0]
    if not _host_allowed(host, ips, connector):
        for ip in ips:
            if not is_public_address(ip):
                hint = "SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK, " if ip.is_loopback else ""
                raise EgressBlocked(
                    f"Connections to '{host}' are blocked: it resolves to a non-public address "
                    f"(an admin may allow it: {hint}SERVICE_SSRF_ALLOWED_HOSTS; "
                    "SERVICE_CONNECTOR_SSRF_VALIDATION_ENABLED)"
                )
    return ips[0]


# -- connections pinned to the checked address -------------------------------------

_CONN_CLASSES: tuple[type, type] | None = None


def _connection_classes() -> tuple[type, type]:
    """HTTP(S) connections that connect to the already checked address (``http.client`` imported lazily)."""
    global _CONN_CLASSES
    if _CONN_CLASSES is not None:
        return _CONN_CLASSES
    import http.client
    import ssl

    class PinnedHTTPConnection(http.client.HTTPConnection):
        def __init__(self, host: str, ip: str, port: int, timeout: float):
            super().__init__(host, port, timeout=timeout)
            self._ip = ip

        def connect(self) -> None:
            self.sock = socket.create_connection((self._ip, self.port), self.timeout)

    class PinnedHTTPSConnection(http.client.HTTPSConnection):
        def __init__(self, host: str, ip: str, port: int, timeout: float):
            super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
            self._ip = ip

        def connect(self) -> None:
            sock = socket.create_connection((self._ip, self.port), self.timeout)
            self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]

    _CONN_CLASSES = (PinnedHTTPConnection, PinnedHTTPSConnection)
    return _CONN_CLASSES


def _time_limit(timeout: float | None, policy: EgressPolicy, deadline: float | None) -> float:
    """Seconds one connection may take: the caller's timeout within the policy's, within the deadline."""
    limit = min(timeout or policy.timeout, policy.timeout)
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EgressError("Request time limit exceeded")
        limit = min(limit, remaining)
    return limit


def request(
    method: str,
    url: str,
    *,
    policy: EgressPolicy | None = None,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | None = None,
    body: bytes | str | None = None,
    timeout: float | None = None,
    follow_redirects: bool = False,
    deadline: float | None = None,
) -> EgressResponse:
    """Make one checked HTTP request (following checked redirects when asked)."""
    import http.client

    policy = policy or EgressPolicy()
    http_cls, https_cls = _connection_classes()
    method = method.upper()
    if params:
        sep = "&" if urlsplit(url).query else "?"
        url = url + sep + urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
    send_headers = {"User-Agent": policy.user_agent}
    send_headers.update({str(k): str(v) for k, v in (headers or {}).items()})
    if _header_sources:
        _with_sources(send_headers)
    data = body.encode("utf-8") if isinstance(body, str) else body
    redirects: list[str] = []
    current = url
    for _hop in range(policy.max_redirects + 1):
        limit = _time_limit(timeout, policy, deadline)
        scheme, host, port, ip = check_url(current, policy)
        conn_cls = https_cls if scheme == "https" else http_cls
        conn = conn_cls(host, str(ip), port, limit)
        parts = urlsplit(current)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        hdrs = dict(send_headers)
        default_port = 443 if scheme == "https" else 80
        host_header = f"[{host}]" if ":" in host else host
        hdrs.setdefault("Host", host_header if port == default_port else f"{host_header}:{port}")
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            resp_headers = {k.lower(): v for k, v in resp.getheaders()}
            location = resp_headers.get("location")
            if follow_redirects and resp.status in (301, 302, 303, 307, 308) and location:
                resp.read(65536)
                redirects.append(current)
                current = urljoin(current, location)
                if resp.status == 303 or (resp.status in (301, 302) and method == "POST"):
                    method, data = "GET", None
                continue
            content = resp.read(policy.max_bytes + 1)
            if len(content) > policy.max_bytes:
                raise EgressError(f"Response is larger than {policy.max_bytes} bytes")
            return EgressResponse(resp.status, resp_headers, content, current, redirects)
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, socket.timeout):
                raise EgressError(f"Request to '{host}' timed out") from exc
            raise EgressError(f"Request to '{host}' failed: {exc.__class__.__name__}") from exc
        finally:
            conn.close()
    raise EgressError(f"Too many redirects (more than {policy.max_redirects})")


class EgressStream:
    """An open streamed response of :func:`stream`: ``status_code``, ``headers``, :meth:`lines`, :meth:`read`."""

    def __init__(self, conn: Any, resp: Any, url: str, max_bytes: int):
        self._conn = conn
        self._resp = resp
        self.url = url
        self.status_code: int = resp.status
        self.headers: dict[str, str] = {k.lower(): v for k, v in resp.getheaders()}
        self._max = max_bytes
        self._read = 0

    def read(self) -> bytes:
        """The whole (remaining) body, capped at the policy's ``max_bytes``."""
        content = self._resp.read(self._max + 1)
        if len(content) > self._max:
            raise EgressError(f"Response is larger than {self._max} bytes")
        return bytes(content)

    def lines(self) -> Any:
        """The body line by line (bytes, without the line ending), as it arrives."""
        import http.client

        try:
            while True:
                line = self._resp.readline(65536)
                if not line:
                    return
                self._read += len(line)
                if self._read > self._max:
                    raise EgressError(f"Response is larger than {self._max} bytes")
                yield line.rstrip(b"\r\n")
        except (OSError, http.client.HTTPException) as exc:
            raise EgressError(f"Stream from '{self.url}' failed: {exc.__class__.__name__}") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> EgressStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def stream(
    method: str,
    url: str,
    *,
    policy: EgressPolicy | None = None,
    headers: dict[str, str] | None = None,
    body: bytes | str | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
) -> EgressStream:
    """Make one checked request and return the response unread (server-sent events, big bodies).

    The same address rules and pinned connection as :func:`request`; no redirects
    are followed; ``timeout`` bounds the connect and every read. Use it as a
    context manager (the connection closes on exit).
    """
    import http.client

    policy = policy or EgressPolicy()
    http_cls, https_cls = _connection_classes()
    limit = _time_limit(timeout, policy, deadline)
    scheme, host, port, ip = check_url(url, policy)
    conn = (https_cls if scheme == "https" else http_cls)(host, str(ip), port, limit)
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    hdrs = {"User-Agent": policy.user_agent, **{str(k): str(v) for k, v in (headers or {}).items()}}
    if _header_sources:
        _with_sources(hdrs)
    default_port = 443 if scheme == "https" else 80
    host_header = f"[{host}]" if ":" in host else host
    hdrs.setdefault("Host", host_header if port == default_port else f"{host_header}:{port}")
    data = body.encode("utf-8") if isinstance(body, str) else body
    try:
        conn.request(method.upper(), path, body=data, headers=hdrs)
        return EgressStream(conn, conn.getresponse(), url, policy.max_bytes)
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        if isinstance(exc, socket.timeout):
            raise EgressError(f"Request to '{host}' timed out") from exc
        raise EgressError(f"Request to '{host}' failed: {exc.__class__.__name__}") from exc


# -- an async HTTP client pinned to the checked address ------------------------------
class _PinnedBackend:
    """An ``httpcore2`` network backend that connects the checked host to its checked address only.

    ``connect_tcp`` is the one place the HTTP client turns a host name into a socket: the name the
    egress helper checked goes to the address it checked (no resolver involved); any other name (a
    redirect to another origin: never legitimate for the callers) is refused.
    """

    def __init__(self, host: str, address: str) -> None:
        from httpcore2 import AnyIOBackend

        self.host = host.lower().rstrip(".")
        self.address = address
        self._backend = AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, **kw: Any) -> Any:
        import httpcore2

        if host.lower().rstrip(".") != self.host:
            raise httpcore2.ConnectError(f"Connection to '{host}' refused: not the checked host")
        return await self._backend.connect_tcp(self.address, port, **kw)

    async def connect_unix_socket(self, path: str, **kw: Any) -> Any:
        raise OSError("Unix sockets are not used by the pinned client")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def pinned_http_client(
    host: str, address: str, verify_ssl: bool = True, *, default_timeout: Any = None
) -> Callable[..., Any]:
    """A factory of ``httpx2.AsyncClient`` (the MCP SDK's ``McpHttpClientFactory`` shape:
    ``factory(headers=None, timeout=None, auth=None)``) whose connections go to ``address``, the
    address :func:`check_url` checked for ``host``: no second DNS lookup, so no rebinding window; the
    Host header and TLS (SNI, certificate) still use the host name. ``httpx2`` is the caller's
    dependency (the MCP plugin and bundle declare it); it is imported only here.
    """
    import httpcore2
    import httpx2
    from httpx2._config import create_ssl_context

    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        transport = httpx2.AsyncHTTPTransport(verify=verify_ssl)
        transport._pool = httpcore2.AsyncConnectionPool(  # the pool httpx2 builds, with our backend
            ssl_context=create_ssl_context(verify=verify_ssl),
            network_backend=_PinnedBackend(host, address),  # type: ignore[arg-type]  # duck-typed backend
        )
        kwargs: dict[str, Any] = {
            "transport": transport,
            "timeout": timeout or default_timeout or httpx2.Timeout(30.0),
            "trust_env": False,  # no proxy from the environment: the connection is ours to pin
        }
        if headers is not None:
            kwargs["headers"] = headers
        if auth is not None:
            kwargs["auth"] = auth
        return httpx2.AsyncClient(**kwargs)

    return factory
