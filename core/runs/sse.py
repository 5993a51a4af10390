"""Server-sent event responses: the one builder every streaming surface answers with.

Every surface that streams (the v1 run API, the build's vertex stream, v2 workflows and its AG-UI
adapter, A2A ``message/stream``, the OpenAI responses API, the log stream, the MCP transports) hands
its generator of already-framed text to :func:`response`, which:

* sets ``text/event-stream`` (Flask adds ``charset=utf-8``), ``Cache-Control: no-cache`` and
  ``X-Accel-Buffering: no`` (a proxy such as nginx would otherwise buffer the stream);
* gives the request's database connection back first (:func:`core.db.release`): a stream may last
  minutes, and a session that only read something would hold its connection all along (SQLite keeps
  one per process). Anything the generator reads later opens a short session of its own;
* keeps the request context around the generator when the surface asks (``with_context``: Flask's
  ``stream_with_context``), for generators that read ``request`` or ``g`` while they run.

The wire format stays the surface's: each generator writes its own framing (``data: ...\\n\\n``,
``event:`` names, ids and ``Last-Event-ID`` replay, bare JSON lines) and its own keep-alive comments
where its protocol wants them, at the points it knows it is idle. Nothing here blocks: a generator
that waits (``time.sleep``, a blocking read) yields to other greenlets under gevent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flask import Response, stream_with_context

from core import db

__all__ = ["HEADERS", "MEDIA_TYPE", "response"]

MEDIA_TYPE = "text/event-stream"
#: no caching, no proxy buffering: each frame reaches the client when it is written
HEADERS: Mapping[str, str] = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def response(
    body: Iterable[str] | Iterable[bytes] | str,
    *,
    headers: Mapping[str, str] | None = None,
    with_context: bool = False,
    release: bool = True,
    status: int = 200,
) -> Response:
    """A streaming ``text/event-stream`` response of ``body`` (framed text, written as it is produced).

    ``headers``: the surface's own (e.g. MCP's session id), over the defaults. ``release``: give the
    request's database connection back before streaming (default). ``with_context``: keep the request
    context around the generator.
    """
    if release:
        db.release()
    stream: Any = body
    if with_context and not isinstance(body, str):
        stream = stream_with_context(iter(body))
    return Response(stream, status=status, mimetype=MEDIA_TYPE, headers={**HEADERS, **(headers or {})})
