"""core.jsoncodec: compact UTF-8 JSON with orjson, the standard library for what orjson refuses."""

from __future__ import annotations

import json
import math

from core import jsoncodec


def test_compact_utf8_as_the_reference_writes_it():
    value = {"text": "héllo ✓", "n": [1, 2.5, None, True], "nested": {"a": {}}}
    assert jsoncodec.dumps(value) == '{"text":"héllo ✓","n":[1,2.5,null,true],"nested":{"a":{}}}'.encode()
    assert jsoncodec.dumps_text(value) == '{"text":"héllo ✓","n":[1,2.5,null,true],"nested":{"a":{}}}'
    assert json.loads(jsoncodec.dumps(value)) == value


def test_what_the_standard_library_also_wrote_still_encodes():
    assert json.loads(jsoncodec.dumps({1: "one", 2: [3]})) == {"1": "one", "2": [3]}  # non-string keys
    big = 2**70  # beyond orjson's 64-bit integers: the standard library writes it
    assert jsoncodec.dumps({"big": big}) == b'{"big":1180591620717411303424}'
    assert jsoncodec.dumps_text([big]) == "[1180591620717411303424]"
    assert jsoncodec.dumps({"x": math.nan, "y": math.inf}) == b'{"x":null,"y":null}'  # valid JSON, not NaN


def test_a_run_answers_compact_utf8_and_its_messages_keep_their_text(client, alice):
    from tests.flowkit import load_reference

    data = load_reference("chat-echo.json")["data"]
    flow = client.post("/api/v1/flows/", json={"name": "utf8", "data": data}, headers=alice.key).get_json()
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "héllo ✓"}, headers=alice.key)
    assert response.status_code == 200
    assert "héllo ✓".encode() in response.data and b'", "' not in response.data
    messages = client.get(f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=alice.key).get_json()
    assert [m["text"] for m in messages] == ["héllo ✓", "héllo ✓"]
    assert all(isinstance(m["properties"], dict) and m["files"] == [] for m in messages)
