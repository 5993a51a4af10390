"""JSON schemas documenting the responses endpoint's bodies (the OpenAI Responses API shapes)."""

from __future__ import annotations

from typing import Any

REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["model", "input"],
                "properties": {
                    "model": {"type": "string", "description": "flow id or endpoint name"},
                    "input": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
                    "stream": {"type": "boolean"},
                    "background": {"type": "boolean"},
                    "previous_response_id": {"type": "string", "nullable": True},
                    "include": {"type": "array", "items": {"type": "string"}},
                    "tools": {"type": "array", "items": {"type": "object"}, "description": "refused"},
                },
            }
        }
    },
}
RESPONSE: dict[str, Any] = {
    "type": "object",
    "description": "an OpenAI-style response object, or `{error: {message, type, code}}`",
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string"},
        "created_at": {"type": "number"},
        "status": {"type": "string"},
        "model": {"type": "string"},
        "output": {"type": "array", "items": {"type": "object"}},
        "previous_response_id": {"type": "string", "nullable": True},
        "error": {"type": "object", "nullable": True},
    },
}
