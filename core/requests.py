"""Request bodies: the one JSON parser, per-route body limits, and helpers smorest does not cover.

Every JSON document the service reads from a client goes through
:func:`parse_json`: request bodies (Flask's ``get_json`` uses it through the
app's JSON provider, and :func:`check_body` parses JSON bodies with it before
any view runs), and flow files or ZIP entries uploaded to the flows plugin.
It refuses, with a 422 naming the problem, what :func:`json.loads` lets
through or turns into a 500: nesting deeper than ``SERVICE_JSON_MAX_DEPTH``,
integers longer than ``SERVICE_JSON_MAX_INT_DIGITS``, ``NaN``/``Infinity`` and
overflowing floats, lone UTF-16 surrogates, bytes that are not UTF-8, and NUL
characters (``\\u0000``) in any string or key: PostgreSQL cannot store them in
text, so they are refused, at their location, before anything is stored
(``type: value_error``).

Body limits: a view declares its class with :func:`body_limit` (``json`` by
default, ``flow`` for whole flows, ``upload`` for file uploads). The
``before_request`` hook :func:`check_body` refuses a larger ``Content-Length``
with 413 before a byte is read (and before authentication, which happens in
the views), and caps chunked bodies through Werkzeug's bounded input stream.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, Request, request
from flask.json.provider import DefaultJSONProvider
from marshmallow import Schema, ValidationError, fields

from core import appctx, appstate
from core.errors import ApiError, ValidationFailed, flatten_marshmallow, validation_error

MB = 1024 * 1024
DEFAULT_MAX_DEPTH = 100
DEFAULT_MAX_INT_DIGITS = 64
BODY_CLASSES = ("json", "flow", "upload", "raw")
F = TypeVar("F", bound=Callable[..., Any])

# --- the JSON parser ----------------------------------------------------------------------------------
_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"')  # only ever run on text json.loads accepted (strings all closed)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Refused(ValueError):
    def __init__(self, msg: str, type_: str) -> None:
        super().__init__(msg)
        self.type = type_


def _limits() -> tuple[int, int]:
    app = appctx.app_or_none()
    service = appstate.state_or_none(app) if app is not None else None
    if service is None:  # no app (tools, tests of the parser itself)
        return DEFAULT_MAX_DEPTH, DEFAULT_MAX_INT_DIGITS
    settings = service.settings
    return settings.json_max_depth, settings.json_max_int_digits


def _depth(text: str) -> int:
    """Deepest nesting of valid JSON ``text``; string contents removed first, then C-level iteration."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _first_string(value: Any, path: list[str], bad: Callable[[str], bool]) -> list[str] | None:
    """The path of the first string (key or value) of a JSON ``value`` for which ``bad`` holds, else None."""
    stack: list[tuple[Any, list[str]]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if bad(node):
                return where
        elif isinstance(node, dict):
            for key, item in node.items():
                if bad(key):
                    return [*where, "(key)"]
                stack.append((item, [*where, key]))
        elif isinstance(node, list):
            stack.extend((item, [*where, str(i)]) for i, item in enumerate(node))
    return None


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_nul(text: str) -> bool:
    return "\x00" in text


def _first_lone_surrogate(value: Any, path: list[str]) -> list[str] | None:
    """The path of the first string (key or value) that is not encodable UTF-8, else None."""
    return _first_string(value, path, _not_utf8)


#: the message of the 422 for a NUL character (PostgreSQL cannot store one in text)
NUL_MSG = "Text must not contain NUL (\\u0000) characters"


def first_nul(value: Any, path: list[str | int] | None = None) -> list[str] | None:
    """The path (below ``path``) of the first string, key or value, of ``value`` holding a NUL, else None."""
    return _first_string(value, [str(p) for p in path or []], _has_nul)


def refuse_nul(value: Any, loc: list[str | int]) -> None:
    """422 at the first string of ``value`` (a JSON value; ``loc`` is where it is) holding a NUL character."""
    bad = first_nul(value, loc)
    if bad is not None:
        raise validation_error(list(bad), NUL_MSG, "value_error")


def parse_json(
    raw: bytes | str,
    *,
    loc: list[str | int] | None = None,
    max_depth: int | None = None,
    max_int_digits: int | None = None,
) -> Any:
    """Parse a client's JSON document; 422 ``json_*`` (at ``loc``, default ``["body"]``) when it is hostile."""
    where: list[str | int] = loc or ["body"]
    depth_limit, digits_limit = _limits()
    depth_limit = max_depth or depth_limit
    digits_limit = max_int_digits or digits_limit
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise validation_error(
                where, f"Invalid JSON: not UTF-8 ({exc.reason} at byte {exc.start})", "json_invalid"
            ) from None
    else:
        text = raw
    if text.startswith("\ufeff"):  # what json.loads refuses in a str (a BOM in bytes was removed above)
        raise validation_error(
            where, "Invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (line 1 column 1)", "json_invalid"
        )
    try:
        value = _decoder(digits_limit).decode(text)
    except _Refused as exc:
        raise validation_error(where, str(exc), exc.type) from None
    except RecursionError:
        raise _too_deep(where, depth_limit) from None
    except ValueError as exc:  # JSONDecodeError
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        pos = f" (line {exc.lineno} column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise validation_error(where, f"Invalid JSON: {msg}{pos}", "json_invalid") from None
    # the nesting can only exceed the limit when there are at least that many brackets (cheap pre-check)
    if text.count("[") + text.count("{") > depth_limit and _depth(text) > depth_limit:
        raise _too_deep(where, depth_limit)
    if "\\u0000" in text:  # only escaped: json.loads refuses a raw NUL (a control character) in a string
        refuse_nul(value, where)
    if _SURROGATE_ESCAPE.search(text):
        bad = _first_lone_surrogate(value, [])
        if bad is not None:
            at = ".".join(bad) or "(document)"
            raise validation_error(
                where, f"Invalid JSON: a lone UTF-16 surrogate escape in a string at {at}", "json_invalid_unicode"
            )
    return value


def _parse_float(literal: str) -> float:
    number = float(literal)
    if number in (float("inf"), float("-inf")):
        raise _Refused(f"Invalid JSON: the number {literal[:40]} is out of range", "json_number_out_of_range")
    return number


def _parse_constant(name: str) -> Any:
    raise _Refused(f"Invalid JSON: {name} is not a JSON value", "json_invalid")


_decoders: dict[int, json.JSONDecoder] = {}


def _decoder(digits_limit: int) -> json.JSONDecoder:
    """The decoder for an integer-digits limit, built once: ``json.loads`` with hooks builds a decoder and
    its scanner on every call, which cost as much as decoding a run's request (as the stdlib's own shared
    decoder, one instance serves every thread)."""
    found = _decoders.get(digits_limit)
    if found is None:

        def parse_int(digits: str) -> int:
            if len(digits.lstrip("-")) > digits_limit:
                raise _Refused(f"Invalid JSON: integers are limited to {digits_limit} digits", "json_int_too_long")
            return int(digits)

        found = _decoders[digits_limit] = json.JSONDecoder(
            parse_int=parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    return found


def _too_deep(where: list[str | int], limit: int) -> ValidationFailed:
    return validation_error(where, f"Invalid JSON: nested deeper than {limit} levels", "json_too_deep")


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON with :func:`parse_json` for loading, so ``request.get_json()`` is the hardened path."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return parse_json(s)


# --- body limits --------------------------------------------------------------------------------------
def body_limit(kind: str) -> Callable[[F], F]:
    """Declare a view's body class: ``json`` (default), ``flow``, ``upload`` (see the module doc), or ``raw``:
    the ``json`` limit, but the body is not parsed before the view (protocols such as JSON-RPC answer a
    malformed body in their own shape; they still parse with :func:`parse_json`)."""
    if kind not in BODY_CLASSES:
        raise ValueError(f"body class must be one of {BODY_CLASSES}")

    def decorator(func: F) -> F:
        func._service_body_limit = kind  # type: ignore[attr-defined]
        return func

    return decorator


def limit_bytes(app: Flask, kind: str) -> int:
    settings = appstate.settings(app)
    if kind == "json" or kind == "raw":
        size = settings.max_json_body_size
    elif kind == "flow":
        size = settings.max_flow_body_size
    else:
        size = settings.max_file_size_upload
    # uploads: 1 MB of headroom for the multipart framing; the plugin enforces the exact file size itself
    return int(size * MB) + (MB if kind == "upload" else 0)


def _is_json(mimetype: str) -> bool:
    return mimetype == "application/json" or (mimetype.startswith("application/") and mimetype.endswith("+json"))


def check_body() -> None:
    """``before_request``: 413 for bodies over the route's limit (before reading, before auth); parse JSON."""
    app = appctx.current()
    req: Request = request._get_current_object()  # type: ignore[attr-defined]  # one proxy lookup, not ten
    view = app.view_functions.get(req.endpoint or "")
    kind = getattr(view, "_service_body_limit", "json")
    limit = limit_bytes(app, kind)
    req.max_content_length = limit  # Werkzeug caps chunked bodies at this through a bounded stream
    length = req.content_length
    if length is not None and length > limit:
        raise body_too_large(limit)
    if kind == "upload":
        return  # multipart: Werkzeug's form parser streams files to disk and stops at the limit
    encoding = req.headers.get("Transfer-Encoding")
    chunked = length is None and bool(encoding)
    # chunked: the bounded stream hands out at most ``limit`` bytes; one more byte means too large
    if chunked and len(req.get_data(cache=True)) >= limit and req.stream.read(1):
        raise body_too_large(limit)
    if kind != "raw" and (length or encoding) and _is_json(req.mimetype):
        req.get_json()  # parsed once, by parse_json; cached for the view (422 when hostile)


def body_too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        f"Request body too large: this endpoint accepts at most {limit // MB} MB",
        {"Connection": "close"},  # do not read (drain) the rest of a body we refuse
    )


# --- loading bodies ----------------------------------------------------------------------------------
#: the 422 item of a body that is not a JSON object where one is expected
NOT_AN_OBJECT = {"loc": ["body"], "msg": "Input should be an object", "type": "model_attributes_type"}


def request_json(empty: Any = None) -> Any:
    """The request's JSON body whatever its content type (``empty`` when the body is blank).

    Parsed at most once, by :func:`parse_json` through Flask's ``get_json`` (a hostile or malformed
    document is a 422 ``json_*``); :func:`check_body` has usually parsed it already.
    """
    raw = request.get_data(cache=True)
    if not raw.strip():
        return empty
    return request.get_json(force=True)


def load(schema: Schema, values: Any, location: str = "body", *, lenient: bool = False) -> dict[str, Any]:
    """``values`` loaded with ``schema``; every failure a 422 ``{detail: [{loc, msg, type}]}``.

    The one body (and query) loader of the views that do not go through ``@blp.arguments``: the
    marshmallow messages are flattened at ``location`` (``body``, ``query``) as the app's 422
    handler does for smorest's. ``values`` that are not an object are refused (``Input should be an
    object``) unless ``lenient``, which loads them as ``{}`` (the reference's lenient endpoints).
    """
    if not isinstance(values, dict):
        if not lenient:
            raise ValidationFailed([dict(NOT_AN_OBJECT, loc=[location])])
        values = {}
    try:
        loaded: dict[str, Any] = schema.load(values)
    except ValidationError as exc:
        raise ValidationFailed(flatten_marshmallow(exc.messages, location)) from None
    return loaded


def load_body(schema: Schema) -> dict[str, Any]:
    """The request's JSON body (any content type; blank or ``null`` is ``{}``) loaded with ``schema``."""
    body = request_json(empty={})
    return load(schema, {} if body is None else body)


# --- helpers ------------------------------------------------------------------------------------------
def json_list(item: fields.Field, *, max_items: int | None = None) -> list[Any]:
    """The request body as a JSON array of ``item`` values (e.g. ``fields.UUID()``); 422 otherwise.

    flask-smorest cannot declare a top-level array of scalars as arguments, so
    endpoints taking "a list of ids" parse it here and fail in the same shape.
    """
    raw = request.get_data(cache=True)
    body = parse_json(raw) if raw.strip() else None
    if not isinstance(body, list):
        raise validation_error(["body"], "Input should be a valid list", "list_type")
    if max_items is not None and len(body) > max_items:
        raise validation_error(["body"], f"At most {max_items} items are allowed", "too_long")
    try:
        return list(fields.List(item).deserialize(body))
    except ValidationError as exc:
        raise ValidationFailed(flatten_marshmallow(exc.messages, "json")) from None


#: Upper bounds for paging parameters: far beyond any real table, far below 64-bit overflow in SQL.
MAX_PAGE = 1_000_000
MAX_OFFSET = 1_000_000_000
