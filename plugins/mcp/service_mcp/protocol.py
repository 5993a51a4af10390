"""MCP's JSON-RPC methods, independent of the transport: ``initialize``, ``ping``, ``tools/list``,
``tools/call``, and the notifications a client sends.

Messages are validated with the official ``mcp`` package's types (``mcp_types``): the JSON-RPC
envelope, the ``initialize`` and ``tools/call`` params, and every result is built through its
result type, so what we send is what the SDK's clients parse. The transports (Flask, in
``resources``) are hand-written: the SDK's server transports are ASGI (Starlette) and keep
sessions in one process's memory, while this service is WSGI with several processes.

Protocol versions: every version the installed ``mcp`` package knows (``mcp_types.version``).
The handshake era (``initialize``; 2024-11-05 to 2025-11-25) and the modern era (2026-07-28): no
handshake, every request carries its version, client info and capabilities in ``params._meta`` (and
the ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers, checked by the SDK's own
``classify_inbound_request``), ``server/discover`` answers the server's versions and capabilities,
and results carry ``resultType``. The SDK's ``mode="auto"`` client probes ``server/discover`` first
and so speaks 2026-07-28 with us; ``mode="legacy"`` initializes with 2025-11-25.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
)
from mcp_types import PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, jsonrpc
from mcp_types import version as sdk_versions
from pydantic import ValidationError

from core import runs
from service_mcp import tools
from service_mcp.tools import Scope

log = logging.getLogger(__name__)

#: handshake-era versions (``initialize``), newest first, as the installed SDK knows them
HANDSHAKE_VERSIONS = tuple(reversed(sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS))
#: modern versions (per-request envelope, ``server/discover``), newest first
MODERN_VERSIONS = tuple(reversed(sdk_versions.MODERN_PROTOCOL_VERSIONS))
SUPPORTED_VERSIONS = (*MODERN_VERSIONS, *HANDSHAKE_VERSIONS)
#: the counter-offer to an ``initialize`` asking for a version we do not speak
LATEST_VERSION = sdk_versions.LATEST_HANDSHAKE_VERSION
SERVER_VERSION = "1.0.0"


@dataclass
class Call:
    """One incoming message and what the transport offers it."""

    scope: Scope
    #: sends a server notification on the request's stream (None when the reply is plain JSON)
    notify: Callable[[dict[str, Any]], None] | None = None
    request_vars: dict[str, str] = field(default_factory=dict)
    #: the request's trace context, taken in its thread: the tool's run (answered in another) continues it
    trace_context: dict[str, str] | None = field(default_factory=runs.trace_context)
    #: the negotiated version, once known (Streamable HTTP sessions, SSE sessions)
    version: str | None = None
    #: a modern-era request (its version in ``params._meta``): results carry ``resultType``
    modern: bool = False


def negotiate(requested: Any) -> str:
    """The client's handshake version when we speak it, else our latest (the client then decides)."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_VERSION


def is_modern(msg: dict[str, Any], version_header: str | None) -> bool:
    """A modern-era message: ``server/discover``, a version in ``params._meta``, or a modern version header."""
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (
        msg.get("method") == "server/discover"
        or (isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta)
        or version_header in MODERN_VERSIONS
    )


def check_modern(msg: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
    """The SDK's envelope ladder for a modern request: ``(HTTP status, JSON-RPC error)`` when refused."""
    verdict = classify_inbound_request(msg, headers=headers, supported_modern_versions=MODERN_VERSIONS)
    if not isinstance(verdict, InboundLadderRejection):
        return None
    status = ERROR_CODE_HTTP_STATUS.get(verdict.code, 400)
    return status, error(msg.get("id"), verdict.code, verdict.message, verdict.data)


def response(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def http_status(reply: dict[str, Any]) -> int:
    """A modern-era reply's HTTP status: the SDK's table for an error (``ERROR_CODE_HTTP_STATUS``), else 200."""
    err = reply.get("error")
    code = err.get("code") if isinstance(err, dict) else None
    return ERROR_CODE_HTTP_STATUS.get(code, 200) if isinstance(code, int) else 200


def dump(model: Any, modern: bool = False) -> dict[str, Any]:
    """A result as JSON; handshake-era results without ``resultType`` (a 2026-07-28 member)."""
    out: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    if not modern:
        out.pop("resultType", None)
    return out


def parse(raw: Any) -> tuple[list[dict[str, Any]], bool, dict[str, Any] | None]:
    """The messages of a POST body: ``(messages, was_batch, parse_error_response)``."""
    batch = isinstance(raw, list)
    items = raw if batch else [raw]
    if batch and not items:
        return [], True, error(None, jsonrpc.INVALID_REQUEST, "Empty batch")
    out = []
    for item in items:
        try:
            jsonrpc.jsonrpc_message_adapter.validate_python(item, by_name=False)
        except ValidationError:
            return (
                [],
                batch,
                error(
                    item.get("id") if isinstance(item, dict) else None,
                    jsonrpc.INVALID_REQUEST,
                    "Invalid JSON-RPC message",
                ),
            )
        out.append(item)
    return out, batch, None


def is_request(msg: dict[str, Any]) -> bool:
    return "method" in msg and "id" in msg


def initialize_result(params: Any, scope: Scope) -> tuple[dict[str, Any], str]:
    parsed = types.InitializeRequestParams.model_validate(params or {})
    version = negotiate(parsed.protocol_version)
    result = types.InitializeResult(
        protocol_version=version,
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=True)),
        server_info=types.Implementation(name=scope.server_name, version=SERVER_VERSION),
    )
    return dump(result), version


def handle(msg: dict[str, Any], call: Call) -> dict[str, Any] | None:
    """The response to one message (None for notifications and responses)."""
    if not is_request(msg):
        return None  # notifications/initialized, notifications/cancelled, client responses: nothing to answer
    msg_id, method, params = msg["id"], msg["method"], msg.get("params")
    modern = call.modern
    try:
        if method == "initialize" and not modern:
            result, call.version = initialize_result(params, call.scope)
            return response(msg_id, result)
        if method == "server/discover" and modern:
            found = types.DiscoverResult(
                supported_versions=list(MODERN_VERSIONS),
                capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=True)),
                _meta={SERVER_INFO_META_KEY: {"name": call.scope.server_name, "version": SERVER_VERSION}},
            )
            return response(msg_id, dump(found, modern))
        if method == "ping":
            return response(msg_id, {"resultType": "complete"} if modern else {})
        if method == "tools/list":
            listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools.listing(call.scope)])
            return response(msg_id, dump(listed, modern))
        if method == "tools/call":
            parsed = types.CallToolRequestParams.model_validate(params or {})
            token = (params or {}).get("_meta", {}).get("progressToken") if isinstance(params, dict) else None
            progress = _progress(token, call.notify) if token is not None else None
            result = tools.call(
                call.scope, parsed.name, parsed.arguments, progress, call.request_vars, call.trace_context
            )
            return response(msg_id, dump(types.CallToolResult.model_validate(result), modern))
        if method in ("resources/list", "prompts/list", "resources/templates/list"):
            key = {"resources/list": "resources", "prompts/list": "prompts"}.get(method, "resourceTemplates")
            empty: dict[str, Any] = {key: []}
            if modern:
                empty.update(resultType="complete", ttlMs=0, cacheScope="private")
            return response(msg_id, empty)
        return error(msg_id, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
    except ValidationError as exc:
        return error(
            msg_id, jsonrpc.INVALID_PARAMS, "Invalid params", exc.errors(include_url=False, include_context=False)
        )
    except Exception as exc:  # a tool's failure is an isError result; this is the last line against a 500
        from core.errors import ApiError

        if isinstance(exc, ApiError):
            return error(msg_id, jsonrpc.INVALID_REQUEST, str(exc.detail))
        log.exception("MCP method %s failed", method)
        return error(msg_id, jsonrpc.INTERNAL_ERROR, "Internal error")


def _progress(
    token: Any, notify: Callable[[dict[str, Any]], None] | None
) -> Callable[[float, float | None, str], None] | None:
    if notify is None:
        return None

    def send(done: float, total: float | None, message: str) -> None:
        params: dict[str, Any] = {"progressToken": token, "progress": done, "message": message}
        if total is not None:
            params["total"] = total
        notify({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    return send


def list_changed() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
