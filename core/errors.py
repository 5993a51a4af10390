"""Error types and the handlers that give every error the spec's JSON shape.

* validation failures (marshmallow, malformed JSON): 422 ``{detail: [{loc, msg, type}]}``
* everything else: ``{detail: "..."}`` with the right status
* unexpected exceptions: logged with their traceback, answered 500 with a
  generic message; no stack trace ever reaches a client.
* a uniqueness rule broken by a concurrent request (``IntegrityError`` no view handled): 409.
* the database unreachable (SQLAlchemy ``OperationalError``/``InterfaceError``/``DisconnectionError``:
  connection refused, server gone, SQLite busy): 503 ``{detail: "The database is unavailable; try
  again shortly"}`` with ``Retry-After``. An outage is logged once per process: a warning at its first
  failure, debug lines while it lasts, one info line when a request uses the database again.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from flask import Flask, g, jsonify, request
from sqlalchemy.exc import DataError, DisconnectionError, IntegrityError, InterfaceError, OperationalError
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


# --- database outages -------------------------------------------------------------------------
DB_UNAVAILABLE = "The database is unavailable; try again shortly"
DB_RETRY_AFTER = "5"
#: SQLite errors that are its bugs or the schema's, not an outage (a 500 with a traceback, as before)
_SQLITE_NOT_OUTAGE = ("no such table", "no such column", "syntax error", "has no column")


class _Outage:
    """When this process's database outage began (None: no outage), so it is logged once, not per request."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.lock = threading.Lock()

    def failed(self, error: Exception) -> None:
        with self.lock:
            first, self.since = self.since is None, self.since or time.monotonic()
        if first:
            cause = str(getattr(error, "orig", None) or error).strip().splitlines()
            log.warning(
                "database unavailable (%s: %s); answering 503 until it is back",
                type(error).__name__,
                cause[0] if cause else "",
            )
        else:
            log.debug("database still unavailable on %s %s", request.method, request.path)

    def succeeded(self) -> None:
        with self.lock:
            since, self.since = self.since, None
        if since is not None:
            log.info("database is back after %.1f s", time.monotonic() - since)


_outage = _Outage()


def reset_outage() -> None:
    """Forget an outage in progress (tests)."""
    _outage.since = None


def is_outage(error: Exception) -> bool:
    """Whether a database error means the database cannot be reached now (rather than a bug)."""
    if isinstance(error, (DisconnectionError, InterfaceError)):
        return True
    if not isinstance(error, OperationalError):
        return False
    if type(error.orig).__module__ == "sqlite3":
        text = str(error.orig).lower()
        return not any(marker in text for marker in _SQLITE_NOT_OUTAGE)
    return True


def init_app(app: Flask, uses_redis: bool = True) -> None:
    """Register the handlers that keep every error in the spec's shapes.

    ``uses_redis``: a Redis is configured (``SERVICE_REDIS_URL``, a Redis rate-limit store), so its
    outages get their 503; without one the Redis client is not imported at all.
    """

    @app.errorhandler(ApiError)
    def _api_error(error: ApiError):
        return _detail_response(error.status, error.detail, error.headers)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException):
        return http_exception_response(error)

    if uses_redis:
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

    @app.errorhandler(IntegrityError)
    def _conflict(error: IntegrityError):
        # A uniqueness or reference rule a concurrent request won first (views that can clash handle
        # their own case; this is the net under the others): the client may retry; nothing was written.
        factory = app.extensions.get("service.db")
        if factory is not None:
            factory().rollback()
        log.info("database refused a write on %s %s: %s", request.method, request.path, error.orig)
        return _detail_response(409, "The request conflicts with data stored at the same time; try again")

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    @app.errorhandler(DisconnectionError)
    def _database_unavailable(error: Exception):
        if not is_outage(error):
            return _unexpected(error)
        g.service_db_outage = True
        factory = app.extensions.get("service.db")
        if factory is not None:
            try:
                factory.remove()  # its connection is gone: rolled back and closed now, not reused
            except Exception:  # closing a dead connection may fail too; nothing to keep
                log.debug("could not close the session after a database error", exc_info=True)
        _outage.failed(error)
        return _detail_response(503, DB_UNAVAILABLE, {"Retry-After": DB_RETRY_AFTER})

    @app.after_request
    def _database_back(response: Any) -> Any:
        # cheap on every request: a flag read; the database counts as back once a request used it
        if _outage.since is not None and not g.get("service_db_outage"):
            factory = app.extensions.get("service.db")
            if factory is not None and factory.registry.has() and response.status_code < 500:
                _outage.succeeded()
        return response

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return _detail_response(500, "Internal Server Error")
