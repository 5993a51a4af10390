"""Partial builds reusing cached upstream results, and the deprecated vertex operations."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.build.buildkit import (
    VERTEX_BUILD_KEYS,
    app_plugins,
    chain,
    create_flow,
    failing_flow,
    names,
    poll_all,
    reference_flow,
    slow_flow,
)
from tests.conftest import superuser

CI, SP, CO = "ChatInput-AAAAA", "SlowPass-SSSSS", "ChatOutput-BBBBB"


def run(client, caller, flow_id, *, value=None, start=None, stop=None, data=None):
    query = "&".join(f"{k}={v}" for k, v in (("start_component_id", start), ("stop_component_id", stop)) if v)
    body = {"inputs": {"input_value": value}} if value is not None else {}
    if data is not None:
        body["data"] = data
    response = client.post(f"/api/v1/build/{flow_id}/flow?{query}", json=body, headers=caller.bearer)
    assert response.status_code == 200, response.get_data(as_text=True)
    events = poll_all(client, response.get_json()["job_id"], caller.bearer)
    assert events[-1]["event"] == "end", events[-1]
    built = [e["data"]["build_data"]["id"] for e in events if e["event"] == "end_vertex"]
    assert events[0]["data"]["to_run"] == built
    answer = [e["data"]["text"] for e in events if e["event"] == "add_message"]
    return built, answer


@pytest.mark.parametrize("backend", ["inprocess", "rq"])
def test_start_component_reuses_valid_upstream_results(backend, make_app, request):
    app = make_app(plugins=app_plugins()) if backend == "inprocess" else request.getfixturevalue("make_rq_app")()
    client = app.test_client()
    admin = superuser(client)
    data = slow_flow(0)
    flow_id = create_flow(client, admin, data)
    built, answer = run(client, admin, flow_id, value="a")
    assert built == [CI, SP, CO] and answer[-1].startswith("a|")
    # same graph, same input: Chat Input's result is reused (on RQ: computed by a worker, reused from Redis)
    built, answer = run(client, admin, flow_id, value="a", start=SP)
    assert built == [SP, CO] and answer == [answer[-1]] and answer[-1].startswith("a|")
    # another input invalidates the input vertex: it runs again
    built, answer = run(client, admin, flow_id, value="b", start=SP)
    assert built == [CI, SP, CO] and answer[-1].startswith("b|")
    # an edited upstream component (unsaved graph) invalidates it and what depends on it, not its own upstream
    edited = json.loads(json.dumps(data))
    edited["nodes"][1]["data"]["node"]["template"]["seconds"]["value"] = 0.01
    built, _ = run(client, admin, flow_id, value="b", start=CO, data=edited)
    assert built == [SP, CO]
    built, _ = run(client, admin, flow_id, value="b", start=CO, data=edited)
    assert built == [CO]
    # stop_component_id: that vertex and its ancestors only (always fresh)
    built, answer = run(client, admin, flow_id, value="c", stop=CI)
    assert built == [CI] and answer == ["c"]
    # start by display name works like the engine
    built, _ = run(client, admin, flow_id, value="c", start="Chat Output", data=edited)
    assert CO in built and CI not in built


def test_cache_is_per_user_and_flow_and_expires(make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_BUILD_CACHE_TTL_SECONDS", "4")  # the reuses below fit in it under load
    app = make_app(plugins=app_plugins())
    client = app.test_client()
    admin = superuser(client)
    first = create_flow(client, admin, slow_flow(0), name="one")
    second = create_flow(client, admin, slow_flow(0), name="two")
    run(client, admin, first, value="a")
    assert run(client, admin, second, value="a", start=SP)[0] == [CI, SP, CO]  # nothing cached for this flow
    assert run(client, admin, first, value="a", start=SP)[0] == [SP, CO]
    time.sleep(4.2)
    assert run(client, admin, first, value="a", start=SP)[0] == [CI, SP, CO]  # expired


def test_failed_vertices_are_not_reused(client, admin):
    data = chain(("Boom", "Boom-XXXXX", {}))
    flow_id = create_flow(client, admin, data)
    job = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "a"}}, headers=admin.bearer
    ).get_json()["job_id"]
    assert names(poll_all(client, job, admin.bearer))[-1] == "error"
    job = client.post(
        f"/api/v1/build/{flow_id}/flow?start_component_id={CO}",
        json={"inputs": {"input_value": "a"}},
        headers=admin.bearer,
    ).get_json()["job_id"]
    events = poll_all(client, job, admin.bearer)
    assert events[0]["data"]["to_run"] == ["Boom-XXXXX", CO]  # Chat Input reused, Boom tried again
    assert events[-1]["event"] == "error"


# --- deprecated vertex operations ---------------------------------------------------------------------
def test_vertices_order(client, admin, bob):
    flow_id = create_flow(client, admin, slow_flow(0))
    response = client.post(f"/api/v1/build/{flow_id}/vertices", headers=admin.bearer)
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"ids", "run_id", "vertices_to_run"}
    assert body["ids"] == [CI] and body["vertices_to_run"] == [CI, SP, CO]
    assert uuid.UUID(body["run_id"])
    partial = client.post(f"/api/v1/build/{flow_id}/vertices?stop_component_id={SP}", headers=admin.bearer)
    assert partial.get_json()["vertices_to_run"] == [CI, SP]
    assert client.post(f"/api/v1/build/{flow_id}/vertices", headers=bob.bearer).get_json() == {
        "detail": f"Flow with id {flow_id} not found"
    }
    invalid = client.post(
        f"/api/v1/build/{flow_id}/vertices", json={"data": {"nodes": [{"id": "Q"}], "edges": []}}, headers=admin.bearer
    )
    assert invalid.status_code == 422 and invalid.get_json()["detail"][0]["loc"][0] == "nodes"


def test_build_vertex_and_stream(client, admin, bob):
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    response = client.post(
        f"/api/v1/build/{flow_id}/vertices/{CO}", json={"inputs": {"input_value": "v1"}}, headers=admin.bearer
    )
    assert response.status_code == 200, response.get_json()
    built = response.get_json()
    assert set(built) == VERTEX_BUILD_KEYS
    assert built["id"] == CO and built["valid"] is True and built["params"] == "v1"
    assert built["data"]["outputs"]["message"] == {"message": "v1", "type": "text"}
    stream = client.get(f"/api/v1/build/{flow_id}/{CO}/stream", headers=admin.bearer)
    assert stream.mimetype == "text/event-stream"
    assert stream.get_data(as_text=True) == (
        f'event: message\ndata: {{"message": "Streaming vertex {CO}"}}\n\n'
        'event: message\ndata: {"chunk": "v1"}\n\n'
        'event: close\ndata: {"message": "Stream closed"}\n\n'
    )
    unknown = client.get(f"/api/v1/build/{flow_id}/Nope-1/stream", headers=admin.bearer).get_data(as_text=True)
    assert unknown == 'event: error\ndata: {"error": "Vertex Nope-1 not found"}\n\n'
    assert client.post(f"/api/v1/build/{flow_id}/vertices/Nope-1", json={}, headers=admin.bearer).status_code == 404
    assert client.post(f"/api/v1/build/{flow_id}/vertices/{CO}", json={}, headers=bob.bearer).status_code == 404
    assert client.get(f"/api/v1/build/{flow_id}/{CO}/stream", headers=bob.bearer).status_code == 404


def test_vertex_build_uses_the_graph_sent_to_vertices(client, admin):
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    unsaved = reference_flow("data-operations-uppercase.json")["data"]
    order = client.post(f"/api/v1/build/{flow_id}/vertices", json={"data": unsaved}, headers=admin.bearer)
    assert order.get_json()["vertices_to_run"] == ["Operations-QQQQQ", "ChatOutput-GGGGG"]
    built = client.post(f"/api/v1/build/{flow_id}/vertices/ChatOutput-GGGGG", json={}, headers=admin.bearer).get_json()
    assert built["valid"] is True and built["params"] == "HELLO THERE"


def test_failed_vertex_build_is_invalid_not_a_server_error(client, admin):
    flow_id = create_flow(client, admin, failing_flow())
    built = client.post(
        f"/api/v1/build/{flow_id}/vertices/Boom-XXXXX", json={"inputs": {"input_value": "x"}}, headers=admin.bearer
    )
    assert built.status_code == 200
    body = built.get_json()
    assert body["id"] == "Boom-XXXXX" and body["valid"] is False
    assert "boom" in json.dumps(body["data"]["outputs"])
    downstream = client.post(f"/api/v1/build/{flow_id}/vertices/{CO}", json={}, headers=admin.bearer).get_json()
    assert downstream["id"] == CO and downstream["valid"] is False and "boom" in downstream["params"]
    stream = client.get(f"/api/v1/build/{flow_id}/{CO}/stream", headers=admin.bearer).get_data(as_text=True)
    assert stream.startswith("event: error\n") and "boom" in stream
