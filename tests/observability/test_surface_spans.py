"""Every surface that runs a flow exports one ``flow.execute`` span with the reference's attributes.

One kit: each case makes the chat echo flow as its surface needs it, runs it once as a client of that
surface would (the ``openai`` client for responses, JSON-RPC for MCP and A2A, an anonymous visitor for the
public build), and names the ``protocol`` the span must carry. The span is read back from the local
OTLP/HTTP receiver; its parent is the request's server span (or, for a queued run, the span of the request
that queued it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.observability.conftest import OBS_PLUGINS, ClosingClient
from tests.run.runkit import chat_echo, create_flow, wait_jobs

PLUGINS = [
    *OBS_PLUGINS, "workflows", "build", "monitor", "responses", "mcp", "a2a",
]  # fmt: skip
OK = 1  # the protobuf status code


@pytest.fixture
def app(make_app, receiver):
    made = make_app(plugins=PLUGINS, a2a_enabled=True)
    made.test_client_class = ClosingClient
    return made


def _project(client: Any, caller: Any, name: str, **extra: Any) -> str:
    created = client.post("/api/v1/projects/", json={"name": name, **extra}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    return str(created.get_json()["id"])


# --- the surfaces: each runs the flow once and answers (flow id, protocol, session id or None) -----------------
def v2_sync(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    flow = create_flow(client, alice, chat_echo())
    body = {"flow_id": flow["id"], "input_value": "hi", "session_id": "v2-session"}
    response = client.post("/api/v2/workflows", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    return flow["id"], "workflows", "v2-session"


def v2_background(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    flow = create_flow(client, alice, chat_echo())
    body = {"flow_id": flow["id"], "input_value": "hi", "mode": "background"}
    response = client.post("/api/v2/workflows", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    wait_jobs(app)
    return flow["id"], "workflows", None


def webhook(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    flow = create_flow(client, alice, chat_echo(), webhook=True)
    response = client.post(f"/api/v1/webhook/{flow['id']}", data="{}", headers=alice.key)
    assert response.status_code == 202, response.get_json()
    wait_jobs(app)
    return flow["id"], "webhook", None


def build(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    flow = create_flow(client, alice, chat_echo())
    path = f"/api/v1/build/{flow['id']}/flow?event_delivery=direct"
    response = client.post(path, json={"inputs": {"input_value": "hi"}}, headers=alice.bearer)
    assert response.status_code == 200, response.get_data(as_text=True)
    return flow["id"], "build", None


def public_build(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/flows/{flow['id']}/shares", json={}, headers=alice.bearer).status_code == 201
    visitor = app.test_client()
    visitor.set_cookie("client_id", "visitor-1")
    path = f"/api/v1/build_public_tmp/{flow['id']}/flow?event_delivery=direct"
    response = visitor.post(path, json={"inputs": {"input_value": "hi"}})
    assert response.status_code == 200, response.get_data(as_text=True)
    from core.runs.public import virtual_flow_id

    return virtual_flow_id("visitor-1", flow["id"]), "build_public", None  # the visitor's own flow id, as messages


def responses(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    import openai

    from tests.a2a.a2akit import live

    flow = create_flow(client, alice, chat_echo())
    with live(app) as base:
        sdk = openai.OpenAI(base_url=f"{base}/api/v1", api_key=alice.api_key, max_retries=0)
        answer = sdk.responses.create(model=flow["id"], input="hi")
    assert answer.output_text == "hi"
    return flow["id"], "responses", None


def mcp(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    from tests.mcp.mcpkit import rpc, sse_messages

    project = _project(client, alice, "tools")
    flow = create_flow(client, alice, chat_echo(), name="Echo", folder_id=project)
    settings = {"settings": [{"id": flow["id"], "mcp_enabled": True, "action_name": "echo", "action_description": "e"}]}
    assert client.patch(f"/api/v1/mcp/project/{project}", json=settings, headers=alice.bearer).status_code == 200
    path = f"/api/v1/mcp/project/{project}/streamable"
    reply = rpc(client, path, "tools/call", {"name": "echo", "arguments": {"input_value": "hi"}}, alice.bearer)
    assert reply.status_code == 200
    assert sse_messages(reply.data)[-1]["result"]["content"][0]["text"] == "hi"
    return flow["id"], "mcp", None


def a2a(app: Any, client: Any, alice: Any) -> tuple[str, str, str | None]:
    from tests.a2a.a2akit import agent, rpc, user_message

    folder = _project(client, alice, "agents", auth_settings={"auth_type": "apikey"})
    flow_id = agent(client, alice, chat_echo(), folder_id=folder)
    body = rpc("message/send", {"message": user_message("hi")})
    response = client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    assert "hi" in json.dumps(response.get_json()["result"])
    return flow_id, "a2a", None


SURFACES: list[Callable[[Any, Any, Any], tuple[str, str, str | None]]] = [
    v2_sync, v2_background, webhook, build, public_build, responses, mcp, a2a,
]  # fmt: skip


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.__name__)
def test_each_surface_exports_one_run_span_with_the_reference_attributes(surface, app, client, alice, receiver):
    from service_observability import otel

    flow_id, protocol, session_id = surface(app, client, alice)
    assert otel.flush()
    [run] = receiver.wait_for("flow.execute", flow_id=flow_id)  # one run span, not one per layer
    attrs = run["attributes"]
    assert attrs["protocol"] == protocol and attrs["status"] == "ok" and run["status"] == OK
    assert len(attrs["run_id"]) == 36 and attrs["flow_name"]
    assert attrs["session_id"] == (session_id or attrs["session_id"]) and attrs["session_id"]
    parent = [s for s in receiver.spans if s["span_id"] == run["parent_id"]]
    assert parent and parent[0]["kind"] == 2 and parent[0]["trace_id"] == run["trace_id"]  # a request's SERVER span
    components = [s for s in receiver.spans if s["parent_id"] == run["span_id"] and "component.id" in s["attributes"]]
    assert {c["attributes"]["component.type"] for c in components} == {"ChatInput", "ChatOutput"}
