"""Redis for the RQ job backend: the process-wide clients and what an outage does.

* :func:`redis_client`: one pooled client per URL and process (it survives app rebuilds;
  redis-py resets pools after a fork);
* web side, :func:`unavailable_on_outage`: "Redis unreachable" becomes
  :class:`~core.jobs.JobBackendUnavailable` (a 503 with ``Retry-After``);
* worker side, :func:`retry_outage`: a job's writes (events, its end) are retried for
  :data:`OUTAGE_GRACE_SECONDS`;
* :func:`blocking_xread`: an ``XREAD BLOCK`` cut into slices below the socket timeout.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis

from core.jobs import JobBackendUnavailable

log = logging.getLogger(__name__)

#: how long a worker keeps retrying a write (event, end state) while Redis is unreachable
OUTAGE_GRACE_SECONDS = 60.0
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)
F = TypeVar("F", bound=Callable[..., Any])


def unavailable_on_outage(func: F) -> F:
    """Turn "Redis unreachable" into :class:`JobBackendUnavailable` (a 503 with ``Retry-After``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UNREACHABLE as exc:
            log.warning("job queue: Redis unreachable: %s", exc)
            raise JobBackendUnavailable() from None

    return wrapper  # type: ignore[return-value]


def block_slice(client: redis.Redis) -> float:
    """The longest blocking read (seconds) that ends before the client's socket timeout.

    redis-py 8 gives every connection a 5 s socket timeout, so an ``XREAD BLOCK``
    of 5 s or more fails with a timeout while the job is merely quiet: long
    waits are cut into slices shorter than that timeout.
    """
    timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
    if not timeout:
        return 3600.0
    return max(0.05, float(timeout) - min(1.0, float(timeout) / 2))


def blocking_xread(client: Any, key: str, after: str, *, count: int, block_seconds: float) -> list[Any]:
    """``XREAD BLOCK`` for up to ``block_seconds``, in slices below the socket timeout; [] when quiet."""
    deadline = time.monotonic() + block_seconds
    step = block_slice(client)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return []
        try:
            reply = client.xread({key: after}, count=count, block=max(1, int(min(remaining, step) * 1000)))
        except redis.TimeoutError:  # a reply slower than the socket timeout: still "nothing yet"
            reply = None
        if reply:
            return list(reply[0][1])


def retry_outage(what: str, func: Callable[[], Any], grace: float = OUTAGE_GRACE_SECONDS) -> Any:
    """Call ``func``, retrying for up to ``grace`` seconds while Redis is unreachable (worker side)."""
    deadline = time.monotonic() + grace
    delay = 0.1
    while True:
        try:
            return func()
        except UNREACHABLE as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("%s: Redis unreachable (%s); retrying in %.1f s", what, exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


# --- process-wide clients (they survive app rebuilds; redis-py resets pools after fork) ---
_clients: dict[tuple[str, bool], redis.Redis] = {}
_clients_lock = threading.Lock()


#: per process and URL; above gunicorn's worker_connections (1,000) plus background users
MAX_REDIS_CONNECTIONS = 1100


def redis_client(url: str, *, decode: bool = True) -> redis.Redis:
    """The process-wide client for ``url`` (``decode=False`` for RQ, which stores bytes)."""
    with _clients_lock:
        client = _clients.get((url, decode))
        if client is None:
            # Every open event stream holds a connection during XREAD BLOCK: size the pool for a
            # gevent worker's 1,000 connections and make extra callers wait instead of failing
            # (the default pool raised MaxConnectionsError at 500 streams in flight).
            pool = redis.BlockingConnectionPool.from_url(
                url,
                max_connections=MAX_REDIS_CONNECTIONS,
                timeout=30,
                decode_responses=decode,
                health_check_interval=30,
            )
            client = redis.Redis(connection_pool=pool)
            _clients[(url, decode)] = client
        return client


__all__ = [
    "MAX_REDIS_CONNECTIONS",
    "OUTAGE_GRACE_SECONDS",
    "block_slice",
    "blocking_xread",
    "redis_client",
    "retry_outage",
    "unavailable_on_outage",
]
