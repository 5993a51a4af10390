"""The shared run-surface helpers of the core: the SSE response, the body loader, releasing the connection."""

from __future__ import annotations

import pytest
from marshmallow import Schema, fields

from core import db
from core.errors import ValidationFailed
from core.requests import load, load_body
from core.runs import sse


class _Body(Schema):
    name = fields.String(required=True)


def test_sse_response_headers_and_release(make_app):
    app = make_app(plugins=["accounts"])
    with app.test_request_context("/"):
        first = db.session()
        response = sse.response(iter(["data: 1\n\n", "data: 2\n\n"]), headers={"Mcp-Session-Id": "s"})
        assert db.session() is not first  # the request's session was given back before streaming
        assert response.mimetype == "text/event-stream" and response.is_streamed
        assert response.headers["Cache-Control"] == "no-cache" and response.headers["X-Accel-Buffering"] == "no"
        assert response.headers["Mcp-Session-Id"] == "s"
        assert response.get_data() == b"data: 1\n\ndata: 2\n\n"  # the surface's framing, untouched


def test_load_and_load_body_answer_one_422_shape(make_app):
    app = make_app(plugins=["accounts"])
    with pytest.raises(ValidationFailed) as refused:
        load(_Body(), {})
    assert refused.value.detail == [
        {"loc": ["body", "name"], "msg": "Missing data for required field.", "type": "missing"}
    ]
    with pytest.raises(ValidationFailed) as refused:
        load(_Body(), [1])
    assert refused.value.detail[0]["type"] == "model_attributes_type"
    with pytest.raises(ValidationFailed) as refused:
        load(_Body(), None, "query", lenient=True)
    assert refused.value.detail[0]["loc"] == ["query", "name"]
    with app.test_request_context("/", method="POST", data='{"name": "x"}', content_type="text/plain"):
        assert load_body(_Body()) == {"name": "x"}  # any content type
    with (
        app.test_request_context("/", method="POST", data="null", content_type="application/json"),
        pytest.raises(ValidationFailed),
    ):
        load_body(_Body())  # null is an empty body: the required field is missing
