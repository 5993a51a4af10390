"""A NUL character (``\\u0000``) in a run's input or any stored text is refused with 422 before storage.

Issue 26 (low): on PostgreSQL a NUL in a run input answered 500 (the message could not be stored).
Run with ``SERVICE_TEST_DATABASE_URL`` set to see it on PostgreSQL; the answers are the same on SQLite.
"""

from __future__ import annotations

import io

import pytest

from tests.flowkit import edge, node
from tests.flowkit import flow as flow_data
from tests.run.runkit import chat_echo, create_flow

PLUGINS = ["accounts", "flows", "variables", "run", "standard", "monitor", "workflows", "responses", "files"]
NUL = "a\u0000b"


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def _nul_422(response, loc: list[str]) -> None:
    assert response.status_code == 422, (response.status_code, response.get_data()[:300])
    [item] = response.get_json()["detail"]
    assert item["loc"] == loc
    assert "NUL" in item["msg"] and item["type"] == "value_error"


def _messages(client, caller, flow_id: str) -> list:
    listed = client.get(f"/api/v1/monitor/messages?flow_id={flow_id}", headers=caller.bearer)
    assert listed.status_code == 200
    return listed.get_json()


def test_run_inputs_with_nul_are_422_and_nothing_is_stored(client, alice):
    flow_id = create_flow(client, alice, chat_echo())["id"]
    run = f"/api/v1/run/{flow_id}"
    _nul_422(client.post(run, json={"input_value": NUL}, headers=alice.key), ["body", "input_value"])
    _nul_422(client.post(f"{run}?stream=true", json={"input_value": NUL}, headers=alice.key), ["body", "input_value"])
    _nul_422(client.post(run, json={"input_value": "hi", "session_id": NUL}, headers=alice.key), ["body", "session_id"])
    tweaks = {"ChatOutput-BBBBB": {"sender_name": NUL}}
    response = client.post(run, json={"input_value": "hi", "tweaks": tweaks}, headers=alice.key)
    _nul_422(response, ["body", "tweaks", "ChatOutput-BBBBB", "sender_name"])
    workflow = client.post("/api/v2/workflows", json={"flow_id": flow_id, "input_value": NUL}, headers=alice.key)
    _nul_422(workflow, ["body", "input_value"])
    responses = client.post("/api/v1/responses", json={"model": flow_id, "input": NUL}, headers=alice.key)
    _nul_422(responses, ["body", "input"])
    assert _messages(client, alice, flow_id) == []
    # the same run without the NUL works and is stored
    ok = client.post(run, json={"input_value": "ab"}, headers=alice.key)
    assert ok.status_code == 200, ok.get_json()
    assert len(_messages(client, alice, flow_id)) == 2


def test_a_webhook_body_with_a_nul_is_422(client, alice):
    hook = node("Webhook", "Webhook-WWWWW")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    flow_id = create_flow(
        client, alice, flow_data([hook, chat_out], [edge(hook, "output_data", chat_out, "input_value")])
    )["id"]
    url = f"/api/v1/webhook/{flow_id}"
    _nul_422(client.post(url, data=b"x\x00y", headers={**alice.key, "Content-Type": "text/plain"}), ["body"])
    _nul_422(client.post(url, json={"text": NUL}, headers=alice.key), ["body", "text"])


def test_stored_text_with_nul_is_422_everywhere(client, alice):
    created = client.post(
        "/api/v1/flows/", json={"name": NUL, "data": {"nodes": [], "edges": []}}, headers=alice.bearer
    )
    _nul_422(created, ["body", "name"])
    described = client.post(
        "/api/v1/flows/", json={"name": "ok", "description": NUL, "data": {"nodes": []}}, headers=alice.bearer
    )
    _nul_422(described, ["body", "description"])
    nested = client.post(
        "/api/v1/flows/", json={"name": "ok", "data": {"nodes": [{"id": NUL}], "edges": []}}, headers=alice.bearer
    )
    _nul_422(nested, ["body", "data", "nodes", "0", "id"])
    key = client.post("/api/v1/flows/", json={"name": "ok", "data": {"nodes": [], NUL: 1}}, headers=alice.bearer)
    _nul_422(key, ["body", "data", "(key)"])
    variable = client.post(
        "/api/v1/variables/", json={"name": "v", "value": NUL, "type": "Generic"}, headers=alice.bearer
    )
    _nul_422(variable, ["body", "value"])
    names = {f["name"] for f in client.get("/api/v1/flows/", headers=alice.bearer).get_json()}
    assert "ok" not in names and not any("\x00" in n for n in names)


def test_an_escaped_backslash_before_u0000_is_plain_text(client, alice):
    created = client.post(
        "/api/v1/flows/",
        data='{"name": "back\\\\u0000slash", "data": {"nodes": [], "edges": []}}',
        headers={**alice.bearer, "Content-Type": "application/json"},
    )
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["name"] == "back\\u0000slash"


def test_binary_uploads_with_nul_bytes_still_work(client, alice):
    data = b"\x00\x01\x02binary\x00" * 100
    uploaded = client.post("/api/v2/files", data={"file": (io.BytesIO(data), "blob.bin")}, headers=alice.bearer)
    assert uploaded.status_code == 201, uploaded.get_json()
    got = client.get(f"/api/v2/files/{uploaded.get_json()['id']}", headers=alice.bearer)
    assert got.data == data
