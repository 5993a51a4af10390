"""JSON schemas documenting the A2A bodies in the OpenAPI document (validation itself uses the a2a-sdk models)."""

from __future__ import annotations

from typing import Any

AGENTS: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "description": {"type": "string", "nullable": True},
            "cardUrl": {"type": "string"},
        },
    },
}
CARD: dict[str, Any] = {
    "type": "object",
    "description": "an A2A v0.3 agent card",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "url": {"type": "string"},
        "version": {"type": "string"},
        "protocolVersion": {"type": "string"},
        "preferredTransport": {"type": "string"},
        "capabilities": {"type": "object"},
        "skills": {"type": "array", "items": {"type": "object"}},
    },
}
CARD_PREVIEW: dict[str, Any] = {
    "type": "object",
    "properties": {
        "card": CARD,
        "cardUrl": {"type": "string"},
        "published": {"type": "boolean", "description": "flow_type agent and a2a_enabled, as stored"},
    },
}
RPC_REQUEST: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["jsonrpc", "method"],
                "properties": {
                    "jsonrpc": {"type": "string", "enum": ["2.0"]},
                    "id": {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
                    "method": {"type": "string"},
                    "params": {"type": "object"},
                },
            }
        }
    },
}
RPC_RESPONSE: dict[str, Any] = {
    "type": "object",
    "description": "a JSON-RPC response (errors are HTTP 200 too); message/stream answers text/event-stream",
    "properties": {
        "jsonrpc": {"type": "string"},
        "id": {},
        "result": {},
        "error": {
            "type": "object",
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
        },
    },
}
