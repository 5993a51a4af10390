"""POST /api/v2/workflows in every mode and protocol, the 1.10 body, validation and 404 bodies."""

from __future__ import annotations

import uuid

from ag_ui.core import (
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

from tests.conftest import make_user
from tests.workflows.wfkit import agui_events, chain, failing_flow, flow_with, service_frames, types

URL = "/api/v2/workflows"


def test_sync_returns_the_reference_response(client, alice):
    flow_id = flow_with(client, alice)
    r = client.post(URL, json={"flow_id": flow_id, "input_value": "hello"}, headers=alice.key)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["status"] == "completed" and body["object"] == "response"
    assert body["output"] == {"reason": "single", "text": "hello", "source": "ChatOutput-BBBBB"}
    out = body["outputs"]["ChatOutput-BBBBB"]
    assert out["type"] == "message" and out["content"] == "hello" and out["status"] == "completed"
    assert out["metadata"] == {"component_type": "ChatOutput"}
    assert body["session_id"] == flow_id and body["errors"] == [] and body["has_errors"] is False
    assert body["human_request"] is None and uuid.UUID(body["job_id"])
    # the bearer token works too (U: bearer, cookie or API key)
    assert client.post(URL, json={"flow_id": flow_id, "input_value": "x"}, headers=alice.bearer).status_code == 200


def test_sync_tweaks_session_and_output_ids(client, alice):
    flow_id = flow_with(client, alice)
    r = client.post(
        URL,
        json={
            "flow_id": flow_id,
            "input_value": "hi",
            "session_id": "s1",
            "tweaks": {"ChatOutput-BBBBB": {"sender_name": "Bot"}},
            "output_ids": ["ChatInput-AAAAA"],
        },
        headers=alice.key,
    )
    body = r.get_json()
    assert r.status_code == 200, body
    assert body["session_id"] == "s1"
    assert list(body["outputs"]) == ["ChatInput-AAAAA"]


def test_sync_failure_is_reported_in_the_body(client, alice):
    flow_id = flow_with(client, alice, failing_flow())
    body = client.post(URL, json={"flow_id": flow_id, "input_value": "x"}, headers=alice.key).get_json()
    assert body["status"] == "failed" and body["has_errors"] is True
    assert body["output"]["reason"] == "failed"
    assert "boom" in body["errors"][0]["message"] and body["errors"][0]["component_id"] == "Boom-XXXXX"


def test_validation_and_not_found(client, alice, admin):
    flow_id = flow_with(client, alice)
    r = client.post(URL, json={"flow_id": flow_id, "surprise": 1}, headers=alice.key)
    assert r.status_code == 422
    assert r.get_json()["detail"][0]["loc"] == ["body", "surprise"]
    assert r.get_json()["detail"][0]["type"] == "extra_forbidden"
    r = client.post(URL, json={"flow_id": "not-a-uuid"}, headers=alice.key)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "flow_id"]
    r = client.post(URL, json={"flow_id": flow_id, "mode": "telepathy"}, headers=alice.key)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "mode"]
    r = client.post(URL, json={"flow_id": flow_id, "mode": "stream", "stream_protocol": "smoke"}, headers=alice.key)
    assert r.status_code == 422
    detail = r.get_json()["detail"]
    assert detail["code"] == "UNKNOWN_STREAM_PROTOCOL" and detail["available"] == ["service", "agui"]
    missing = str(uuid.uuid4())
    r = client.post(URL, json={"flow_id": missing}, headers=alice.key)
    assert r.status_code == 404
    assert r.get_json() == {
        "detail": {
            "error": "Flow not found",
            "code": "FLOW_NOT_FOUND",
            "message": f"Flow {missing} not found",
            "flow_id": missing,
        }
    }
    bob = make_user(client, admin, username="bob2")
    r = client.post(URL, json={"flow_id": flow_id}, headers=bob.key)
    assert r.status_code == 404 and r.get_json()["detail"]["code"] == "FLOW_NOT_FOUND"
    assert client.post(URL, json={"flow_id": flow_id}).status_code == 403  # no credentials


def test_stream_in_the_reference_framing(client, alice):
    flow_id = flow_with(client, alice)
    r = client.post(URL, json={"flow_id": flow_id, "input_value": "hey", "mode": "stream"}, headers=alice.key)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    assert r.headers["Cache-Control"] == "no-cache" and r.headers["X-Accel-Buffering"] == "no"
    frames = service_frames(r.get_data())
    names = [f["event"] for f in frames]
    assert [f["id"] for f in frames] == [str(i) for i in range(len(frames))]
    assert names[:2] == ["vertices_sorted", "build_start"]
    assert "add_message" in names and "end_vertex" in names
    assert names[-2:] == ["output", "end"]
    output = frames[-2]["data"]
    assert output["component_id"] == "ChatOutput-BBBBB" and output["content"] == "hey"


def test_stream_agui_frames_parse_with_the_official_models(client, alice):
    flow_id = flow_with(client, alice)
    r = client.post(
        URL,
        json={"flow_id": flow_id, "input_value": "hey", "mode": "stream", "stream_protocol": "agui"},
        headers=alice.key,
    )
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    events = agui_events(r.get_data())
    kinds = types(events)
    assert isinstance(events[0], RunStartedEvent) and events[0].thread_id == flow_id
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].run_id == events[0].run_id
    assert kinds.count("STEP_STARTED") == 2 and kinds.count("STEP_FINISHED") == 2
    steps = [e.step_name for e in events if isinstance(e, StepStartedEvent)]
    assert steps == ["ChatInput-AAAAA", "ChatOutput-BBBBB"]
    assert [e.step_name for e in events if isinstance(e, StepFinishedEvent)] == steps
    assert any(isinstance(e, StateDeltaEvent) for e in events)
    # exactly one assistant message (the user's own is not echoed)
    starts = [e for e in events if isinstance(e, TextMessageStartEvent)]
    assert len(starts) == 1 and starts[0].role == "assistant"
    content = [e.delta for e in events if isinstance(e, TextMessageContentEvent)]
    assert content == ["hey"]
    ends = [e for e in events if isinstance(e, TextMessageEndEvent)]
    assert [e.message_id for e in ends] == [starts[0].message_id]
    assert kinds.index("TEXT_MESSAGE_START") < kinds.index("TEXT_MESSAGE_CONTENT") < kinds.index("TEXT_MESSAGE_END")
    raw = r.get_data(as_text=True)
    assert '"threadId"' in raw and "thread_id" not in raw and "null" not in raw  # camelCase, nulls omitted


def test_stream_agui_run_error(client, alice):
    flow_id = flow_with(client, alice, failing_flow())
    r = client.post(
        URL,
        json={"flow_id": flow_id, "mode": "stream", "stream_protocol": "agui", "input_value": "x"},
        headers=alice.key,
    )
    events = agui_events(r.get_data())
    assert isinstance(events[-1], RunErrorEvent) and "boom" in events[-1].message
    assert not any(isinstance(e, RunFinishedEvent) for e in events)


def test_legacy_110_body_is_translated(client, alice):
    flow_id = flow_with(client, alice, chain())
    r = client.post(
        URL,
        json={"flow_id": flow_id, "background": False, "inputs": {"ChatInput-AAAAA.input_value": "old client"}},
        headers=alice.key,
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["output"]["text"] == "old client"
    r = client.post(URL, json={"flow_id": flow_id, "inputs": {"nodot": 1}}, headers=alice.key)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "inputs", "nodot"]
    r = client.post(
        URL,
        json={"flow_id": flow_id, "background": True, "inputs": {"ChatInput-AAAAA.input_value": "bg"}},
        headers=alice.key,
    )
    assert r.status_code == 200 and r.get_json()["object"] == "job"
