"""The one JSON parser refuses NUL characters in strings and keys (PostgreSQL cannot store them in text)."""

from __future__ import annotations

import pytest

from core.errors import ValidationFailed
from core.requests import first_nul, parse_json


@pytest.mark.parametrize(
    ("raw", "loc"),
    [
        ('"a\\u0000b"', ["body"]),
        ('{"name": "x\\u0000"}', ["body", "name"]),
        ('{"a": [1, {"b": "\\u0000"}]}', ["body", "a", "1", "b"]),
        ('{"k\\u0000": 1}', ["body", "(key)"]),
    ],
)
def test_parse_json_refuses_nul_at_its_location(raw, loc):
    with pytest.raises(ValidationFailed) as caught:
        parse_json(raw)
    [item] = caught.value.detail
    assert item["loc"] == loc and item["type"] == "value_error"


def test_an_escaped_backslash_then_u0000_is_text():
    assert parse_json('{"a": "\\\\u0000"}') == {"a": "\\u0000"}
    assert first_nul({"a": ["ok", "no\x00"]}, ["body"]) == ["body", "a", "1"]
    assert first_nul({"a": "ok"}) is None
