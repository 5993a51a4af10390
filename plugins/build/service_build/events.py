"""Build events as clients see them: framing, the job-end mapping, streaming and polling.

Framing (reference-api.md section 3): each event is
``json.dumps({"event": name, "data": data}) + "\\n\\n"``; a poll returning
several joins them with ``"\\n"`` (so they are separated by ``"\\n\\n\\n"``).

A build's client-visible stream ends with exactly one ``end`` or ``error``.
The engine emits them itself (``end`` on success, ``error`` on a failed
vertex or the run time limit); the job queue then appends its own end event
(:data:`core.jobs.END_EVENTS`), which is mapped so clients only ever see the
reference's names:

* ``finished`` after the engine's own ``end``/``error``: swallowed (the
  client stream already ended); alone: ``end`` ``{}``.
* ``cancelled``: ``error`` whose text is ``Flow build cancelled``.
* ``error`` ``{"error": message}`` (the job failed: worker lost, time limit,
  exception): ``error`` carrying that message.
* ``suspended`` (the run paused for input, see :mod:`core.runs.checkpoints`):
  passed on as it is, and it ends the client stream too.

Everything after the first ``end``/``error`` is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from core.engine import Message
from core.engine.lazy import lazy_import
from core.jobs import END_EVENTS, Event, JobBackendUnavailable, JobQueue, JobState
from core.runs.wire import frame
from service_build.store import BuildStore

if TYPE_CHECKING:
    import redis
else:  # the Redis client (about 50 ms) only where a Redis is configured and fails
    redis = lazy_import("redis")

TERMINAL = frozenset({"end", "error", "suspended"})
CANCELLED_TEXT = "Flow build cancelled"
END_AFTER_END: tuple[str, Any] = ("end", {})
NDJSON = "application/x-ndjson"
OUTAGE_RETRY_SECONDS = 1.0


def error_payload(
    text: str, *, flow_id: str | None = None, session_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    """An ``error`` event's data: an error message dict whose ``text`` is the reason (as the engine sends)."""
    message = Message(
        text=text,
        sender="Machine",
        sender_name="Flow Builder",
        session_id=session_id,
        flow_id=flow_id,
        error=True,
        category="error",
        properties={"source": {"id": None, "display_name": None, "source": None}, "text_color": "red"},
    )
    payload = message.to_dict()
    payload["error"] = True
    payload.update(extra)
    return payload


def client_event(event: Event, meta: dict[str, Any]) -> tuple[str, Any]:
    """The reference's event for one stored event (job end events mapped, others unchanged)."""
    name, data = event.name, event.data
    if name == END_EVENTS[JobState.FINISHED]:
        return "end", {}
    if name == END_EVENTS[JobState.CANCELLED]:
        return "error", error_payload(
            CANCELLED_TEXT, flow_id=meta.get("run_flow_id"), session_id=meta.get("session_id"), cancelled=True
        )
    if name == "error" and isinstance(data, dict) and set(data) == {"error"}:
        return "error", error_payload(
            str(data["error"] or "Build failed"), flow_id=meta.get("run_flow_id"), session_id=meta.get("session_id")
        )
    return name, data


def translate(events: list[Event], meta: dict[str, Any]) -> tuple[list[tuple[str, Any]], str | None, bool]:
    """Client events up to and including the first terminal one; the id of the last event consumed; ended?"""
    out: list[tuple[str, Any]] = []
    last: str | None = None
    for event in events:
        last = event.id
        name, data = client_event(event, meta)
        out.append((name, data))
        if name in TERMINAL:
            return out, last, True
    return out, last, False


def stream(
    queue: JobQueue,
    job_id: str,
    meta: dict[str, Any],
    *,
    block_seconds: float,
    touch: Callable[[], None] | None = None,
) -> Iterator[tuple[str, Any]]:
    """Every client event of a job from its start, until ``end``/``error`` (or the job disappears).

    While the job backend is unreachable (Redis restarting) the stream stays
    open and resumes from its cursor once it is back; the job carries on meanwhile.
    """
    cursor: str | None = None
    while True:
        try:
            events = _next_events(queue, job_id, cursor, block_seconds, touch)
        except (JobBackendUnavailable, redis.ConnectionError, redis.TimeoutError):
            time.sleep(OUTAGE_RETRY_SECONDS)
            continue
        if events is None:
            return
        if not events:
            continue
        translated, cursor, ended = translate(events, meta)
        yield from translated
        if ended:
            return


def _next_events(
    queue: JobQueue, job_id: str, cursor: str | None, block_seconds: float, touch: Callable[[], None] | None
) -> list[Event] | None:
    """The next batch of a streamed job's events ([] if none yet); None once the job ended or expired."""
    events = queue.read_events(job_id, after=cursor, block_seconds=block_seconds)
    if touch is not None:
        touch()
    if events:
        return events
    info = queue.info(job_id)  # may itself end a job whose worker died (the RQ watchdog)
    if info is None:
        return None  # expired
    if not info.state.terminal:
        return []
    return queue.read_events(job_id, after=cursor) or None  # the end event written meanwhile, if any


def poll(
    queue: JobQueue, store: BuildStore, job_id: str, meta: dict[str, Any], *, wait_seconds: float
) -> list[tuple[str, Any]]:
    """What arrived since the last poll of this job by anyone (cursor kept in ``store``), waiting briefly.

    Two concurrent polls never return the same event: the cursor moves by
    compare-and-set and the loser reads again from the new cursor. After the
    end was delivered, every poll answers ``end`` ``{}`` (as the reference).
    """
    deadline = time.monotonic() + max(0.0, wait_seconds)
    while True:
        cursor, done = store.get_cursor(job_id)
        if done:
            return [END_AFTER_END]
        remaining = deadline - time.monotonic()
        events = queue.read_events(job_id, after=cursor, block_seconds=max(0.0, remaining))
        if not events:
            if remaining <= 0:
                return []
            info = queue.info(job_id)  # may itself end a job whose worker died (the RQ watchdog)
            if info is None:
                return []
            if not info.state.terminal:
                continue
            events = queue.read_events(job_id, after=cursor)
            if not events:  # ended and nothing left after our cursor
                store.advance(job_id, cursor, cursor, True)
                store.unwatch(job_id)
                return [END_AFTER_END]
        translated, last, ended = translate(events, meta)
        if not store.advance(job_id, cursor, last, ended):
            continue  # another poll took these events; read on from its cursor
        if ended:
            store.unwatch(job_id)
        if translated:
            return translated


def ndjson(events: list[tuple[str, Any]]) -> str:
    """A poll's body: the framed events joined by a newline (``\\n\\n\\n`` between two events)."""
    return "\n".join(frame(name, data) for name, data in events)
