"""Error types and the handlers that give every error the spec's JSON shape.

* validation failures (marshmallow, malformed JSON): 422 ``{detail: [{loc, msg, type}]}``
* everything else: ``{detail: "..."}`` with the right status
* unexpected exceptions: logged with their traceback, answered 500 with a
  generic message; no stack trace ever reaches a client.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, jsonify, request
from sqlalchemy.exc import DataError
from werkzeug.exceptions import BadRequest, HTTPException

log = logging.getLogger(__name__)


class StartupError(RuntimeError):
    """The service refuses to start (bad configuration, missing credentials)."""


class ApiError(Exception):
    """An error answered as ``{detail: ...}`` with ``status``; raise it from any view or service."""

    def __init__(self, status: int, detail: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


class ValidationFailed(ApiError):
    """A 422 with a list of ``{loc, msg, type}`` items."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        super().__init__(422, items)


def validation_error(loc: list[str | int], msg: str, type_: str = "value_error") -> ValidationFailed:
    """One-item 422, e.g. ``validation_error(["body", "name"], "must not be empty")``."""
    return ValidationFailed([{"loc": [str(p) for p in loc], "msg": msg, "type": type_}])


_LOCATIONS = {
    "json": "body",
    "form": "body",
    "files": "body",
    "query": "query",
    "path": "path",
    "headers": "header",
    "cookies": "cookie",
    "querystring": "query",
    "view_args": "path",
}


def flatten_marshmallow(messages: Any, location: str | None = None) -> list[dict[str, Any]]:
    """Turn webargs/marshmallow ``{location: {field: [msg]}}`` into ``[{loc, msg, type}]``."""
    items: list[dict[str, Any]] = []

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, [*path, str(key)])
        elif isinstance(node, list) and all(isinstance(m, str) for m in node):
            for msg in node:
                items.append({"loc": path, "msg": msg, "type": _type_of(msg)})
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, [*path, str(index)])
        else:
            items.append({"loc": path, "msg": str(node), "type": _type_of(str(node))})

    if location is None and isinstance(messages, dict):
        for loc, value in messages.items():
            walk(value, [_LOCATIONS.get(str(loc), str(loc))])
    else:
        where = location or "body"
        walk(messages, [_LOCATIONS.get(where, where)])
    return items


def _type_of(msg: str) -> str:
    low = msg.lower()
    if "missing" in low or "required" in low:
        return "missing"
    if "unknown field" in low:
        return "extra_forbidden"
    if "not a valid" in low or "invalid" in low:
        return "type_error"
    return "value_error"


def _detail_response(status: int, detail: Any, headers: dict[str, str] | None = None):
    response = jsonify({"detail": detail})
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def http_exception_response(error: HTTPException):
    """The ``{detail}`` answer for any HTTPException, including smorest's 422."""
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    if status in (400, 422) and "messages" in data:
        # webargs answers malformed JSON with 400 {"json": ["Invalid JSON body."]}: a 422 here
        items = flatten_marshmallow(data["messages"])
        for item in items:
            if item["msg"] == "Invalid JSON body.":
                item["type"] = "json_invalid"
        return _detail_response(422, items)
    if status == 400 and isinstance(error, BadRequest) and _is_json_decode_error(error):
        item = {"loc": ["body"], "msg": "Invalid JSON: the request body could not be decoded", "type": "json_invalid"}
        return _detail_response(422, [item])
    detail = error.description if status != 404 else "Not Found"
    if status == 405:
        detail = "Method Not Allowed"
    headers = dict(error.get_response().headers) if status in (405,) else {}
    if status == 413:  # a chunked body ran over the route's limit (core.requests.check_body)
        detail = "Request body too large for this endpoint"
        headers["Connection"] = "close"
    headers.pop("Content-Type", None)
    headers.pop("Content-Length", None)
    return _detail_response(status, detail, headers)


def _is_json_decode_error(error: BadRequest) -> bool:
    text = (error.description or "").lower()
    return "json" in text and ("decode" in text or "invalid" in text)


def init_app(app: Flask) -> None:
    """Register the handlers that keep every error in the spec's shapes."""

    @app.errorhandler(ApiError)
    def _api_error(error: ApiError):
        return _detail_response(error.status, error.detail, error.headers)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException):
        return http_exception_response(error)

    import redis

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def _store_unavailable(error: Exception):
        # Redis (job queue, shared limits, build store) unreachable: the client may retry; not a server bug
        log.warning("Redis unavailable on %s %s: %s", request.method, request.path, error)
        return _detail_response(503, "A backing service is unavailable; retry shortly", {"Retry-After": "5"})

    @app.errorhandler(DataError)
    def _unstorable(error: DataError):
        # A value the database cannot store (PostgreSQL refuses NUL characters in text, numbers
        # out of range...): the client's input is at fault, and nothing was written.
        factory = app.extensions.get("service.db")
        if factory is not None:
            factory().rollback()
        log.info("database refused a value on %s %s: %s", request.method, request.path, error.orig)
        item = {
            "loc": ["body"],
            "msg": "A value cannot be stored (for example a NUL character in text)",
            "type": "value_error",
        }
        return _detail_response(422, [item])

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return _detail_response(500, "Internal Server Error")
