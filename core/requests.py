"""Request-body helpers the marshmallow/flask-smorest layer does not cover."""

from __future__ import annotations

from typing import Any

from flask import request
from marshmallow import ValidationError, fields

from core.errors import ValidationFailed, flatten_marshmallow, validation_error


def json_list(item: fields.Field, *, max_items: int | None = None) -> list[Any]:
    """The request body as a JSON array of ``item`` values (e.g. ``fields.UUID()``); 422 otherwise.

    flask-smorest cannot declare a top-level array of scalars as arguments, so
    endpoints taking "a list of ids" parse it here and fail in the same shape.
    """
    body = request.get_json(silent=True)
    if body is None and request.get_data():
        raise validation_error(["body"], "Invalid JSON body.", "json_invalid")
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
