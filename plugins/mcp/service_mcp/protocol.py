"""MCP's JSON-RPC methods, independent of the transport: ``initialize``, ``ping``, ``tools/list``,
``tools/call``, and the notifications a client sends.

Messages are validated with the official ``mcp`` package's types (``mcp_types``): the JSON-RPC
envelope, the ``initialize`` and ``tools/call`` params, and every result is built through its
result type, so what we send is what the SDK's clients parse. The transports (Flask, in
``resources``) are hand-written: the SDK's server transports are ASGI (Starlette) and keep
sessions in one process's memory, while this service is WSGI with several processes.

Protocol versions: the handshake era (``initialize``), 2024-11-05 to 2025-11-25. The current SDK
(``mcp`` 2.3) first probes ``server/discover`` (protocol 2026-07-28); we answer ``Method not
found``, which its ``mode="auto"`` treats as a handshake-era server, and it initializes with
2025-11-25.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp_types import jsonrpc
from pydantic import ValidationError

from service_mcp import tools
from service_mcp.tools import Scope

log = logging.getLogger(__name__)

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
SERVER_VERSION = "1.0.0"


@dataclass
class Call:
    """One incoming message and what the transport offers it."""

    scope: Scope
    #: sends a server notification on the request's stream (None when the reply is plain JSON)
    notify: Callable[[dict[str, Any]], None] | None = None
    request_vars: dict[str, str] = field(default_factory=dict)
    #: the negotiated version, once known (Streamable HTTP sessions, SSE sessions)
    version: str | None = None


def negotiate(requested: Any) -> str:
    """The client's version when we speak it, else our latest (the client then decides)."""
    return requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION


def response(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def dump(model: Any) -> dict[str, Any]:
    """A result as handshake-era JSON (``resultType`` is a 2026-07-28 member the types default)."""
    out: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
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
    try:
        if method == "initialize":
            result, call.version = initialize_result(params, call.scope)
            return response(msg_id, result)
        if method == "ping":
            return response(msg_id, {})
        if method == "tools/list":
            listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools.listing(call.scope)])
            return response(msg_id, dump(listed))
        if method == "tools/call":
            parsed = types.CallToolRequestParams.model_validate(params or {})
            token = (params or {}).get("_meta", {}).get("progressToken") if isinstance(params, dict) else None
            progress = _progress(token, call.notify) if token is not None else None
            result = tools.call(call.scope, parsed.name, parsed.arguments, progress, call.request_vars)
            return response(msg_id, dump(types.CallToolResult.model_validate(result)))
        if method in ("resources/list", "prompts/list", "resources/templates/list"):
            key = {"resources/list": "resources", "prompts/list": "prompts"}.get(method, "resourceTemplates")
            return response(msg_id, {key: []})
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
