"""The three reference exports build and run with the reference's answers and event shapes."""

from __future__ import annotations

import json

import pytest

from core.engine import Graph, RunContext, run_flow, simplified_run_response
from tests.build.buildkit import VERTEX_BUILD_KEYS
from tests.flowkit import EventLog, load_reference, standard_registry


def _run(name: str, **kw):
    data = load_reference(name)["data"]
    return run_flow(data, standard_registry(), kw.pop("context", RunContext(flow_id="flow-1")), **kw)


def test_chat_echo_echoes():
    result = _run("chat-echo.json", input_value="hi there")
    assert result.status == "completed"
    assert result.answer() == "hi there"


def test_data_operations_uppercase():
    result = _run("data-operations-uppercase.json", input_value="hello there")
    assert result.ok
    assert result.answer() == "HELLO THERE"
    payload = simplified_run_response(result, input_value="hello there")
    assert payload["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "HELLO THERE"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("not json at all", '```json\n{\n  "payload": "not json at all"\n}\n```'),
        ('{"name": "Ada", "n": 2}', '```json\n{\n  "name": "Ada",\n  "n": 2\n}\n```'),
    ],
)
def test_webhook_parser_chat(body, expected):
    result = _run("webhook-parser-chat.json", tweaks={"Webhook-WWWWW": {"data": body}})
    assert result.ok, result.error
    assert result.answer() == expected


def test_code_field_is_never_used():
    data = load_reference("chat-echo.json")["data"]
    data = json.loads(json.dumps(data))
    for node in data["nodes"]:
        node["data"]["node"]["template"]["code"]["value"] = "raise SystemExit('executed!')"
    result = run_flow(data, standard_registry(), RunContext(), input_value="safe")
    assert result.answer() == "safe"


def test_chat_echo_event_order_and_shapes():
    log = EventLog()
    stored: list[dict] = []
    ctx = RunContext(flow_id="flow-1", emit=log, store_message=lambda m: stored.append(m))
    result = _run("chat-echo.json", input_value="hello", context=ctx)
    assert result.ok
    assert log.names == [
        "vertices_sorted",
        "build_start",
        "add_message",
        "end_vertex",
        "add_message",
        "end_vertex",
        "end",
    ]
    sorted_ev = log.of("vertices_sorted")[0]
    assert sorted_ev == {"ids": ["ChatInput-AAAAA"], "to_run": ["ChatInput-AAAAA", "ChatOutput-BBBBB"]}
    assert log.of("build_start")[0] == {}
    user, ai = log.of("add_message")
    assert user["text"] == "hello" and user["sender"] == "User" and user["sender_name"] == "User"
    assert ai["text"] == "hello" and ai["sender"] == "Machine" and ai["sender_name"] == "AI"
    for msg in (user, ai):
        assert msg["text_key"] == "text" and msg["default_value"] == ""
        assert msg["data"]["text"] == msg["text"]
        for key in (
            "sender",
            "sender_name",
            "files",
            "session_id",
            "context_id",
            "run_id",
            "timestamp",
            "flow_id",
            "error",
            "edit",
            "properties",
            "category",
            "content_blocks",
            "duration",
            "session_metadata",
            "text",
            "id",
        ):
            assert key in msg, key
        assert msg["session_id"] == "flow-1"
        assert msg["timestamp"].endswith(" UTC")
    assert user["id"] != ai["id"]
    assert [m["text"] for m in stored] == ["hello", "hello"]
    first_end, second_end = log.of("end_vertex")
    bd = first_end["build_data"]
    assert set(bd) == VERTEX_BUILD_KEYS
    assert bd["id"] == "ChatInput-AAAAA" and bd["valid"] is True
    assert bd["next_vertices_ids"] == ["ChatOutput-BBBBB"]
    assert set(bd["data"]) >= {
        "results",
        "outputs",
        "logs",
        "message",
        "artifacts",
        "timedelta",
        "duration",
        "used_frozen_result",
        "token_usage",
    }
    assert bd["data"]["outputs"]["message"] == {"message": "hello", "type": "text"}
    meta = second_end["output_meta"]
    assert meta == {
        "component_id": "ChatOutput-BBBBB",
        "display_name": "Chat Output",
        "vertex_type": "ChatOutput",
        "is_output": True,
        "is_terminal": True,
        "output_types": ["Message"],
    }
    assert isinstance(log.of("end")[0]["build_duration"], float)


def test_simplified_response_shape():
    result = _run("chat-echo.json", input_value="yo")
    payload = simplified_run_response(result, input_value="yo")
    assert payload["session_id"] == "flow-1"
    [block] = payload["outputs"]
    assert block["inputs"] == {"input_value": "yo"}
    [rd] = block["outputs"]
    assert rd["results"]["message"]["text"] == "yo"
    assert rd["outputs"]["message"] == {"message": "yo", "type": "text"}
    assert rd["messages"][0]["message"] == "yo" and rd["messages"][0]["component_id"] == "ChatOutput-BBBBB"
    assert rd["artifacts"]["type"] == "text" and rd["artifacts"]["message"] == "yo"
    assert rd["logs"] == {"message": []}
    assert rd["component_display_name"] == "Chat Output" and rd["used_frozen_result"] is False
    assert simplified_run_response(result, output_type="text")["outputs"][0]["outputs"] == []
    assert len(simplified_run_response(result, output_type="debug")["outputs"][0]["outputs"]) == 2
    assert len(simplified_run_response(result, output_type="any")["outputs"][0]["outputs"]) == 1
    only = simplified_run_response(result, output_component="ChatInput-AAAAA")["outputs"][0]["outputs"]
    assert [o["component_id"] for o in only] == ["ChatInput-AAAAA"]


def test_reference_flows_build_without_copying():
    data = load_reference("data-operations-uppercase.json")["data"]
    before = json.dumps(data, sort_keys=True)
    Graph.build(data, standard_registry(), tweaks={"Operations-QQQQQ": {"case_type": "lowercase"}})
    assert json.dumps(data, sort_keys=True) == before
