"""What no component ever reaches on this host: the never-reachable paths and the service's own endpoints.

Used by :class:`core.engine.host_access.Hardening` (the one deny check every local-path helper calls,
and the check every database connector calls); kept apart so the record stays small.

* :func:`never_paths`: ``/proc``, ``/sys``, ``/dev``, ``/etc``, ``/boot``, ``/run``, ``/root``, the
  service user's home, the server's working directory (where ``.env`` lives) and the directory of
  ``SERVICE_ENV_FILE`` (the config directory is added by the record). A directory that is ``/`` is
  never a root of the list (it would refuse everything): the ``.env`` file itself is listed instead.
* :class:`ServiceEndpoint` / :func:`is_service_endpoint`: the service's own database and Redis,
  compared by resolved address and port (every loopback and unspecified address, and the host's own
  addresses, count as "this host").
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from core.engine.egress import IPAddress, _embedded_ipv4, parse_host_ip

__all__ = ["ServiceEndpoint", "endpoint_of_url", "is_service_endpoint", "never_paths", "within"]

SYSTEM_PATHS = ("/proc", "/sys", "/dev", "/etc", "/boot", "/run", "/var/run", "/root")
#: default ports of the network dialects and schemes the service itself may use
DEFAULT_PORTS = {
    "postgresql": 5432,
    "postgres": 5432,
    "mysql": 3306,
    "mariadb": 3306,
    "mssql": 1433,
    "oracle": 1521,
    "redis": 6379,
    "rediss": 6379,
}


def within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolved(path: str | os.PathLike[str]) -> Path | None:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return None


def never_paths(env_file: str | None = None, cwd: str | None = None) -> tuple[Path, ...]:
    """The system trees, home, working directory and ``.env`` directory (resolved, ``/`` left out)."""
    return _never_paths(env_file, cwd or os.getcwd(), os.path.expanduser("~"))


@functools.lru_cache(maxsize=16)
def _never_paths(env_file: str | None, work: str, home: str) -> tuple[Path, ...]:
    """:func:`never_paths` once per (env file, working directory, home): every run context builds one."""
    out: list[Path] = []
    candidates: list[str | os.PathLike[str]] = [*SYSTEM_PATHS, home]
    env = Path(env_file or ".env")
    env_path = env if env.is_absolute() else Path(work) / env
    candidates += [work, env_path.parent, env_path]
    for candidate in candidates:
        resolved = _resolved(candidate)
        if resolved is None or resolved == Path(resolved.anchor):
            continue
        for form in {Path(os.path.abspath(os.path.expanduser(candidate))), resolved}:  # /var/run and /run
            if form not in out:
                out.append(form)
    return tuple(out)


@dataclass(frozen=True)
class ServiceEndpoint:
    """A network service the server itself uses (its database, its Redis): never a component's target."""

    name: str
    host: str
    port: int


def endpoint_of_url(name: str, url: str | None) -> ServiceEndpoint | None:
    """The host and port of a ``dialect[+driver]://...`` or ``redis://`` URL; None for file or memory URLs.

    A network URL without a host (a Unix socket) counts as ``localhost``: the same server answers on TCP.
    """
    if not url or "://" not in url:
        return None
    scheme = url.split(":", 1)[0].lower().split("+", 1)[0]
    if scheme not in DEFAULT_PORTS:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return ServiceEndpoint(name, parts.hostname or "localhost", port)


def _addresses(host: str, port: int) -> set[str]:
    """``host``'s addresses, with every address of this host (loopback, unspecified, own) as ``"self"``."""
    literal = parse_host_ip(host)
    if literal is not None:
        ips: list[IPAddress] = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return set()
        ips = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    out: set[str] = set()
    own = _own_addresses()
    for ip in ips:
        inner = _embedded_ipv4(ip) or ip  # ::ffff:127.0.0.1 is 127.0.0.1
        forms = (ip, inner)
        is_self = any(f.is_loopback or f.is_unspecified or str(f) in own for f in forms)
        out.add("self" if is_self else str(inner))
    return out


_OWN: set[str] | None = None


def _own_addresses() -> set[str]:
    """This host's addresses by its name (``/etc/hosts`` or DNS; looked up once)."""
    global _OWN
    if _OWN is None:
        try:
            _OWN = set(socket.gethostbyname_ex(socket.gethostname())[2])
        except OSError:
            _OWN = set()
    return _OWN


def is_service_endpoint(host: str, port: int, endpoints: tuple[ServiceEndpoint, ...]) -> ServiceEndpoint | None:
    """The endpoint among ``endpoints`` that ``host:port`` reaches (same port, a shared address), or None."""
    targets: set[str] | None = None
    for endpoint in endpoints:
        if endpoint.port != port:
            continue
        if targets is None:
            targets = _addresses(host, port)
        if targets & _addresses(endpoint.host, endpoint.port):
            return endpoint
    return None
