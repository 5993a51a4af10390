"""The OpenAPI document's error responses, added in one place for every plugin's operations.

flask-smorest documents only the responses a view declares (and a ``default``). The service's
errors follow fixed rules, so :class:`StandardResponses` (an apispec plugin) adds them to every
operation as it is registered:

* ``401`` and ``403`` when the operation declares a non-anonymous security requirement
  (``core.auth.authenticated`` does), or lists them itself;
* ``404`` when the path has a parameter (an unknown id, or another user's object);
* ``422`` when the operation takes a body or parameters (validation), with the
  ``{detail: [{loc, msg, type}]}`` schema; every other error body is ``{detail: "..."}``.
"""

from __future__ import annotations

import http
from typing import Any

from apispec import BasePlugin
from marshmallow import Schema, fields


class ValidationItemSchema(Schema):
    loc = fields.List(fields.Raw(), required=True, metadata={"description": 'where: ["body", "name"]'})
    msg = fields.String(required=True)
    type = fields.String(required=True)


class ValidationErrorSchema(Schema):
    """The 422 body."""

    detail = fields.List(fields.Nested(ValidationItemSchema), required=True)


def response_name(status: int) -> str:
    """The component name flask-smorest registers for ``status`` (``NOT_FOUND``)."""
    return http.HTTPStatus(status).name


class StandardResponses(BasePlugin):
    """apispec plugin: the service's standard error responses on every operation (see module doc)."""

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        for method, operation in (operations or {}).items():
            if not isinstance(operation, dict) or method == "parameters":
                continue
            responses = operation.setdefault("responses", {})
            wanted = []
            if any(requirement for requirement in operation.get("security", [])):
                wanted += [401, 403]
            if path and "{" in path:
                wanted.append(404)
            if "requestBody" in operation or operation.get("parameters") or (path and "{" in path):
                wanted.append(422)
            for status in wanted:
                responses.setdefault(str(status), response_name(status))


# --- request bodies a view reads by hand, for ``@blp.doc(requestBody=...)`` -----------------------
def no_body(reason: str) -> dict[str, Any]:
    """An operation that reads no body (a body sent anyway is ignored)."""
    return {
        "required": False,
        "description": f"No body is read: {reason}",
        "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}},
    }


#: a JSON array of ids (bulk delete and download)
ID_LIST_BODY: dict[str, Any] = {
    "required": True,
    "description": "A JSON array of ids.",
    "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string", "format": "uuid"}}}},
}


def file_body(description: str) -> dict[str, Any]:
    """A multipart upload with one ``file`` part."""
    return {
        "required": True,
        "description": description,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }


def binary_response(description: str, *media_types: str) -> dict[str, Any]:
    """A success response that is a file (``application/zip``, ...)."""
    return {
        "description": description,
        "content": {m: {"schema": {"type": "string", "format": "binary"}} for m in media_types},
    }


def json_response(description: str, schema: Any) -> dict[str, Any]:
    """A JSON success response documented by ``schema`` (a marshmallow schema, or a JSON schema dict).

    For ``@blp.doc(responses={"200": json_response(...)})``: it documents the body a view returns as it is,
    without serialising the view's answer through the schema (``@blp.response(code, Schema)`` would drop
    members the schema does not declare, e.g. a stored config's own keys).
    """
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def error_response(description: str) -> dict[str, Any]:
    """A documented error (``{detail: "..."}``) for ``@blp.doc(responses={"500": error_response(...)})``."""
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
