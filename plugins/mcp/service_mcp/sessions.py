"""MCP session state and the legacy SSE message queue, in the deployment's shared store.

Any web process may answer any request, so nothing lives in one process's memory:

* a session (Streamable HTTP ``Mcp-Session-Id`` or a legacy SSE ``session_id``) is one key,
  ``mcp/s/<id>``, holding its scope, negotiated version and the fingerprint of the tool list the
  client was last told about (``tools``), with an idle TTL;
* the legacy transport's replies travel from the process that received the ``POST`` to the one
  holding the client's ``GET .../sse`` stream through a queue: ``mcp/q/<id>/n`` counts the
  messages and ``mcp/q/<id>/<n>`` holds message ``n`` until the stream writes it.

The store is ``core.shared``: Redis when the deployment runs on Redis (scale-out), else files
under ``<config_dir>/shared/`` with ``flock`` (every worker of one machine: the embedded default).
The stream polls its next key (every ``POLL`` seconds): simple, correct on both backends, and
cheap next to a tool call; a Redis-only blocking pop would save the polling but not the
file backend, so both use the same path.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from core import appstate

POLL = 0.05
#: a message whose number was taken but whose value never came (its writer died) is skipped after this
LOST_AFTER = 10.0


def _shared() -> Any:
    return appstate.shared()


def create(
    kind: str, owner_id: str, project_id: str | None, ttl: int, version: str | None = None, *, tools: str
) -> str:
    """A new session; ``tools`` is the fingerprint of the tool list as the session starts.

    A notification stream compares against it, not against the list when the stream opens: a
    client opens its ``GET`` stream some time after ``initialize`` (the ``mcp`` client does so in a
    background task), and a change in between must still be announced.
    """
    sid = uuid.uuid4().hex
    record = {"kind": kind, "owner": owner_id, "project": project_id, "version": version, "tools": tools}
    _shared().put(f"mcp/s/{sid}", json.dumps(record), ttl=ttl)
    return sid


def get(sid: str, ttl: int) -> dict[str, Any] | None:
    """The session's record (its idle TTL restarts), or None when unknown, ended or expired."""
    if not sid or not sid.isalnum() or len(sid) > 64:
        return None
    raw = _shared().get(f"mcp/s/{sid}")
    if raw is None:
        return None
    _shared().put(f"mcp/s/{sid}", raw, ttl=ttl, only_if_exists=True)
    return json.loads(raw)  # type: ignore[no-any-return]


def told_tools(sid: str, record: dict[str, Any], tools: str, ttl: int) -> None:
    """Remember that the session was told about the tool list ``tools`` (a reconnecting stream stays quiet)."""
    _shared().put(f"mcp/s/{sid}", json.dumps({**record, "tools": tools}), ttl=ttl, only_if_exists=True)


def end(sid: str) -> bool:
    shared = _shared()
    for key in shared.scan(f"mcp/q/{sid}/"):
        shared.delete(key)
    return bool(shared.delete(f"mcp/s/{sid}"))


def push(sid: str, message: dict[str, Any], ttl: int) -> None:
    shared = _shared()
    n = shared.incr(f"mcp/q/{sid}/n", ttl=ttl)
    shared.put(f"mcp/q/{sid}/{n}", json.dumps(message), ttl=ttl)


class Reader:
    """Reads a session's queue in order, from any process."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.next = 1
        self._missing_since: float | None = None

    def drain(self) -> Iterator[dict[str, Any]]:
        shared = _shared()
        while True:
            key = f"mcp/q/{self.sid}/{self.next}"
            raw = shared.get(key)
            if raw is None:
                if not self._lost(shared):
                    return
                continue
            shared.delete(key)
            self.next += 1
            self._missing_since = None
            yield json.loads(raw)

    def _lost(self, shared: Any) -> bool:
        """True (and skip it) when message ``next`` was numbered but never written for ``LOST_AFTER``."""
        count = int(shared.get(f"mcp/q/{self.sid}/n") or 0)
        if 0 < count < self.next - 1:  # the counter expired and started again at 1
            self.next = 1
            return True
        if count < self.next:
            return False
        now = time.monotonic()
        if self._missing_since is None:
            self._missing_since = now
            return False
        if now - self._missing_since < LOST_AFTER:
            return False
        self.next += 1
        self._missing_since = None
        return True
