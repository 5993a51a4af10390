"""The MCP transports over Flask: Streamable HTTP and the legacy SSE transport.

Hand-written: the ``mcp`` SDK's server transports are ASGI (Starlette) and keep sessions in one
process's memory; this service is WSGI (gunicorn gevent workers) with any number of processes,
and a hand-written Flask endpoint works with the official client (stack notes). The SDK's types
validate what goes in and out (:mod:`service_mcp.protocol`).

Streamable HTTP (``POST``/``GET``/``DELETE``/``HEAD``):
  * ``POST`` one JSON-RPC message (or a batch, 2025-03-26): requests are answered with one JSON
    body (``SERVICE_MCP_JSON_RESPONSE``, or when the client does not accept SSE) or an SSE stream
    carrying progress notifications, then the response; notifications alone get 202.
  * stateless by default (any process answers; no ``Mcp-Session-Id``); with
    ``SERVICE_MCP_SESSIONS`` the ``initialize`` response carries ``Mcp-Session-Id``, later
    requests must send it (400 without, 404 when unknown or ended), ``DELETE`` ends it, and
    ``GET`` opens a stream of server notifications (``notifications/tools/list_changed``).
Legacy SSE: ``GET .../sse`` opens the stream (first event ``endpoint``); ``POST`` the messages
to that endpoint (``?session_id=``): 202, and the replies come on the stream, through the shared
queue of :mod:`service_mcp.sessions` (the POST may reach another process than the stream).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from flask import Response, current_app, request

from core import db
from core.appstate import plugin_settings
from core.engine.lazy import lazy_import
from core.errors import ApiError, ValidationFailed
from core.requests import parse_json
from core.runs import request_variables, sse
from service_mcp import sessions, tools
from service_mcp.config import SECTION, MCPConfig
from service_mcp.tools import Scope

if TYPE_CHECKING:
    from service_mcp import protocol
else:  # the MCP SDK's types (about 0.4 s to import) on the first MCP message, not at start-up
    protocol = lazy_import("service_mcp.protocol")

log = logging.getLogger(__name__)

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
SSE = sse.MEDIA_TYPE
_DONE = object()


def config() -> MCPConfig:
    return plugin_settings(SECTION.name)  # type: ignore[no-any-return]


def frame(message: dict[str, Any], event: str = "message") -> str:
    return f"event: {event}\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"


def jsonrpc_http(status: int, message: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(message), status=status, mimetype="application/json", headers=headers)


def _body() -> Any:
    try:  # the core's one JSON parser (hostile documents refused); a refusal is JSON-RPC's parse error
        return parse_json(request.get_data() or b"")
    except ValidationFailed:
        return _PARSE_ERROR


_PARSE_ERROR = object()


def _in_thread(work: Callable[[], None]) -> None:
    """Run ``work`` in a thread (a greenlet under gevent) with the app context."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    db.release()

    def run() -> None:
        with app.app_context():
            try:
                work()
            except Exception:  # logged: nothing else can answer for it
                log.exception("MCP message handling failed")

    threading.Thread(target=run, name="mcp-message", daemon=True).start()


# --- Streamable HTTP ---------------------------------------------------------------------------------
def streamable(scope: Scope) -> Response:
    cfg = config()
    sid = request.headers.get(SESSION_HEADER)
    if request.method == "HEAD":
        return Response(status=200)
    if request.method == "DELETE":
        if not cfg.sessions:
            return Response("Sessions are not used: this server is stateless", status=405, headers={"Allow": "POST"})
        if not sid or not _session_of(sid, scope):
            return jsonrpc_http(404, protocol.error(None, -32001, "Session not found"))
        sessions.end(sid)
        return Response(status=200)
    if request.method == "GET":
        if not cfg.sessions:
            return Response(
                "Server notifications need a session: this server is stateless", status=405, headers={"Allow": "POST"}
            )
        if not sid:
            return jsonrpc_http(400, protocol.error(None, -32000, f"Bad Request: {SESSION_HEADER} header is required"))
        record = _session_of(sid, scope)
        if not record:
            return jsonrpc_http(404, protocol.error(None, -32001, "Session not found"))
        told = record.get("tools") or tools.fingerprint(scope)  # or: a session made before it was recorded
        return sse.response(_notifications(scope, None, sid, cfg, told))
    return _post(scope, sid, cfg)


def _session_of(sid: str, scope: Scope) -> dict[str, Any] | None:
    record = sessions.get(sid, config().session_ttl_seconds)
    if record is None or record["owner"] != scope.owner_id or record["project"] != scope.project_id:
        return None
    return record


def _post(scope: Scope, sid: str | None, cfg: MCPConfig) -> Response:
    raw = _body()
    if raw is _PARSE_ERROR:
        return jsonrpc_http(400, protocol.error(None, -32700, "Parse error: the body is not JSON"))
    messages, batch, invalid = protocol.parse(raw)
    if invalid is not None:
        return jsonrpc_http(400, invalid)
    if not batch and protocol.is_modern(messages[0], request.headers.get(VERSION_HEADER)):
        return _post_modern(scope, messages[0], {k.lower(): v for k, v in request.headers.items()}, cfg)
    initializing = any(m.get("method") == "initialize" for m in messages)
    version = request.headers.get(VERSION_HEADER)
    if version and not initializing and version not in protocol.SUPPORTED_VERSIONS:
        msg = (
            f"Bad Request: unsupported protocol version {version} (supported: {', '.join(protocol.SUPPORTED_VERSIONS)})"
        )
        return jsonrpc_http(400, protocol.error(None, -32000, msg))
    headers: dict[str, str] = {}
    if cfg.sessions:
        if initializing:
            if len(messages) > 1:
                return jsonrpc_http(400, protocol.error(None, -32600, "initialize must be sent alone"))
        elif not sid:
            return jsonrpc_http(400, protocol.error(None, -32000, f"Bad Request: {SESSION_HEADER} header is required"))
        elif not _session_of(sid, scope):
            return jsonrpc_http(404, protocol.error(None, -32001, "Session not found"))
    call = protocol.Call(scope, request_vars=request_variables(request.headers))
    requests_ = [m for m in messages if protocol.is_request(m)]
    if not requests_:
        for m in messages:
            protocol.handle(m, call)
        return Response(status=202)
    if initializing and cfg.sessions:
        # the session is created with the response, so the version it negotiated is known
        result = protocol.handle(messages[0], call)
        sid = sessions.create(
            "streamable",
            scope.owner_id,
            scope.project_id,
            cfg.session_ttl_seconds,
            call.version,
            tools=tools.fingerprint(scope),
        )
        headers[SESSION_HEADER] = sid
        return _reply([result] if result else [], batch, headers, cfg)
    wants_sse = SSE in (request.headers.get("Accept") or "") and not cfg.json_response
    if not wants_sse:
        replies = [r for m in messages if (r := protocol.handle(m, call)) is not None]
        return _reply(replies, batch, headers, cfg)
    return sse.response(_answer_stream(messages, call), headers=headers)  # the thread releases the connection


def _post_modern(scope: Scope, message: dict[str, Any], headers: dict[str, str], cfg: MCPConfig) -> Response:
    """A modern-era (2026-07-28) message: self-contained, no session, whatever ``SERVICE_MCP_SESSIONS`` says."""
    if not protocol.is_request(message):
        return Response(status=202)  # the modern wire defines no client notifications to act on
    refused = protocol.check_modern(message, headers)
    if refused is not None:
        return jsonrpc_http(*refused)
    call = protocol.Call(
        scope, request_vars=request_variables(request.headers), version=headers.get("mcp-protocol-version"), modern=True
    )
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    wants_progress = isinstance(meta, dict) and meta.get("progressToken") is not None
    if wants_progress and SSE in (request.headers.get("Accept") or "") and not cfg.json_response:
        return sse.response(_answer_stream([message], call))  # progress notifications, then the reply
    # one JSON reply otherwise; an error gets the HTTP status of the SDK's table (method not found: 404)
    reply = protocol.handle(message, call) or {}
    status = protocol.http_status(reply)
    return Response(json.dumps(reply), status=status, mimetype="application/json")


def _reply(replies: list[dict[str, Any]], batch: bool, headers: dict[str, str], cfg: MCPConfig) -> Response:
    if not cfg.json_response and SSE in (request.headers.get("Accept") or ""):
        return sse.response(iter([frame(r) for r in replies]), headers=headers)
    body = replies if batch else (replies[0] if replies else None)
    return Response(json.dumps(body), status=200, mimetype="application/json", headers=headers)


def _answer_stream(messages: list[dict[str, Any]], call: protocol.Call) -> Iterator[str]:
    """Answer in a thread; this stream writes its progress notifications, then each response."""
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    call.notify = items.put

    def work() -> None:
        try:
            for message in messages:
                reply = protocol.handle(message, call)
                if reply is not None:
                    items.put(reply)
        finally:
            items.put(_DONE)

    _in_thread(work)

    def generate() -> Iterator[str]:
        while True:
            item = items.get()
            if item is _DONE:
                return
            yield frame(item)

    return generate()


# --- server-to-client streams (Streamable HTTP GET, legacy SSE) --------------------------------------
def _notifications(
    scope: Scope, reader: sessions.Reader | None, sid: str, cfg: MCPConfig, told: str, first: str = ""
) -> Iterator[str]:
    """Queued messages (legacy SSE), ``tools/list_changed`` when the tools differ from ``told`` (the
    fingerprint of the list the session was last told about), keep-alives.

    Ends when the client goes away (the next write fails) or the session ends.
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    db.release()

    def generate() -> Iterator[str]:
        with app.app_context():
            if first:
                yield first
            mark = told
            checked = beat = time.monotonic()
            try:
                while True:
                    now = time.monotonic()
                    if reader is not None:
                        for message in reader.drain():
                            yield frame(message)
                    if now - checked >= cfg.tools_poll_seconds:
                        checked = now
                        record = sessions.get(sid, cfg.session_ttl_seconds)
                        if record is None:
                            return
                        current = tools.fingerprint(scope)
                        db.release()
                        if current != mark:
                            mark = current
                            sessions.told_tools(sid, record, current, cfg.session_ttl_seconds)
                            yield frame(protocol.list_changed())
                    if now - beat >= cfg.keepalive_seconds:
                        beat = now
                        yield ": keep-alive\n\n"
                    time.sleep(sessions.POLL)
            finally:
                if reader is not None:
                    sessions.end(sid)

    return generate()


def sse_open(scope: Scope, messages_path: str) -> Response:
    cfg = config()
    if not cfg.sse_enabled:
        raise ApiError(404, "Not Found")
    told = tools.fingerprint(scope)
    sid = sessions.create("sse", scope.owner_id, scope.project_id, cfg.session_ttl_seconds, tools=told)
    first = f"event: endpoint\ndata: {messages_path}?session_id={sid}\n\n"
    return sse.response(_notifications(scope, sessions.Reader(sid), sid, cfg, told, first))


def sse_message(scope: Scope) -> Response:
    cfg = config()
    if not cfg.sse_enabled:
        raise ApiError(404, "Not Found")
    sid = request.args.get("session_id") or ""
    if not sid:
        raise ApiError(400, "session_id is required")
    record = sessions.get(sid, cfg.session_ttl_seconds)
    if (
        record is None
        or record["kind"] != "sse"
        or record["owner"] != scope.owner_id
        or record["project"] != scope.project_id
    ):
        raise ApiError(404, "Could not find session")
    raw = _body()
    if raw is _PARSE_ERROR:
        raise ApiError(400, "Could not parse message: the body is not JSON")
    messages, _batch, invalid = protocol.parse(raw)
    if invalid is not None:
        raise ApiError(400, "Could not parse message: not a JSON-RPC message")
    call = protocol.Call(scope, request_vars=request_variables(request.headers), version=record.get("version"))
    call.notify = lambda message: sessions.push(sid, message, cfg.session_ttl_seconds)

    def work() -> None:
        for message in messages:
            reply = protocol.handle(message, call)
            if reply is not None:
                sessions.push(sid, reply, cfg.session_ttl_seconds)

    _in_thread(work)
    return Response("Accepted", status=202)
