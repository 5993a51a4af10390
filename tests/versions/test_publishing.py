"""Publishing: API callers run the published version on every surface while the draft changes; the
editor's builds run the draft; publish, roll back and unpublish are one call each."""

from __future__ import annotations

import json

import pytest

from core.app import state
from tests.run.runkit import answer, edge, flow_data, node

SURFACE_PLUGINS = [
    "accounts", "flows", "versions", "variables", "run", "catalog", "standard", "workflows", "build", "responses",
]  # fmt: skip


@pytest.fixture
def app(make_app):
    return make_app(plugins=SURFACE_PLUGINS)


def text_flow(text: str) -> dict:
    """TextInput(text) -> ChatOutput: the flow answers ``text`` whatever the input."""
    source = node("TextInput", "TextInput-1", input_value=text)
    out = node("ChatOutput", "ChatOutput-1")
    return flow_data([source, out], [edge(source, "text", out, "input_value")])


def _run(client, caller, flow_id):
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "x"}, headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return answer(response.get_json())


def _v2(client, caller, flow_id):
    response = client.post("/api/v2/workflows", json={"flow_id": flow_id, "input_value": "x"}, headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["output"]["text"]


def _webhook(app, client, caller, flow_id):
    started = client.post(f"/api/v1/webhook/{flow_id}", data="{}", headers=caller.key, content_type="application/json")
    assert started.status_code == 202, started.get_json()
    assert state(app).jobs.join(10)
    status = client.get(started.get_json()["status_url"], headers=caller.key).get_json()
    return answer(status["result"])


def _build(client, caller, flow_id):
    response = client.post(
        f"/api/v1/build/{flow_id}/flow?event_delivery=direct", json={"inputs": {"input_value": "x"}},
        headers=caller.bearer,
    )  # fmt: skip
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_data(as_text=True)


def _save(client, caller, flow_id, data):
    response = client.patch(f"/api/v1/flows/{flow_id}", json={"data": data}, headers=caller.bearer)
    assert response.status_code == 200, response.get_json()


def test_published_version_answers_every_api_surface_while_the_draft_changes(app, client, alice):
    created = client.post(
        "/api/v1/flows/", json={"name": "pub", "data": text_flow("published A"), "webhook": True}, headers=alice.bearer
    )
    flow_id = created.get_json()["id"]
    published = client.post(f"/api/v1/flows/{flow_id}/publish", json={}, headers=alice.bearer)
    assert published.status_code == 200, published.get_json()
    assert published.get_json()["published"] is True and published.get_json()["version"]["version_number"] == 1

    _save(client, alice, flow_id, text_flow("draft B"))
    assert _run(client, alice, flow_id) == "published A"
    assert _v2(client, alice, flow_id) == "published A"
    assert _webhook(app, client, alice, flow_id) == "published A"
    assert "published A" in json.dumps(
        client.post("/api/v1/responses", json={"model": flow_id, "input": "x"}, headers=alice.key).get_json()
    )
    build = _build(client, alice, flow_id)
    assert "draft B" in build and "published A" not in build  # the editor's Playground runs the draft
    # anonymous visitors of a public share (the v2 public run, the shared playground's build) too
    assert client.post(f"/api/v1/flows/{flow_id}/shares", json={}, headers=alice.bearer).status_code == 201
    visitor = app.test_client()
    visitor.set_cookie("client_id", "visitor-1")
    public = visitor.post(
        "/api/v2/workflows/public", json={"flow_id": flow_id, "input_value": "x", "mode": "stream"}
    ).get_data(as_text=True)
    assert "published A" in public and "draft B" not in public
    shared = visitor.post(
        f"/api/v1/build_public_tmp/{flow_id}/flow?event_delivery=direct", json={"inputs": {"input_value": "x"}}
    ).get_data(as_text=True)
    assert "published A" in shared and "draft B" not in shared

    # publish the draft: API callers now get B
    assert client.post(f"/api/v1/flows/{flow_id}/publish", json={}, headers=alice.bearer).status_code == 200
    assert _run(client, alice, flow_id) == "draft B"
    # a bad edit is rolled back in one call: publish v1 again
    versions = client.get(f"/api/v1/flows/{flow_id}/versions/", headers=alice.bearer).get_json()["entries"]
    v1 = next(v for v in versions if v["version_number"] == 1)
    rolled = client.post(f"/api/v1/flows/{flow_id}/publish", json={"version_id": v1["id"]}, headers=alice.bearer)
    assert rolled.status_code == 200 and rolled.get_json()["version"]["version_number"] == 1
    assert _run(client, alice, flow_id) == "published A"
    # the published version cannot be deleted while published
    assert client.delete(f"/api/v1/flows/{flow_id}/versions/{v1['id']}", headers=alice.bearer).status_code == 409
    # unpublish: API callers run the draft again
    off = client.delete(f"/api/v1/flows/{flow_id}/publish", headers=alice.bearer)
    assert off.status_code == 200 and off.get_json()["published"] is False
    assert _run(client, alice, flow_id) == "draft B"


def prompt_flow(text: str) -> dict:
    """ChatInput -> Prompt Template (``<text> {q}``) -> ChatOutput: the answer starts with ``text``."""
    chat_in = node("ChatInput", "ChatInput-1")
    prompt = node("Prompt Template", "Prompt-1", template=f"{text} {{q}}", q="")
    out = node("ChatOutput", "ChatOutput-1")
    return flow_data(
        [chat_in, prompt, out], [edge(chat_in, "message", prompt, "q"), edge(prompt, "prompt", out, "input_value")]
    )


def test_mcp_tools_run_the_published_version(make_app):
    from tests.conftest import make_user, superuser
    from tests.mcp.mcpkit import rpc, sse_messages

    app = make_app(plugins=["accounts", "flows", "versions", "variables", "run", "mcp", "standard"])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    project = client.post("/api/v1/projects/", json={"name": "tools"}, headers=alice.bearer).get_json()
    created = client.post(
        "/api/v1/flows/", json={"name": "Answer", "data": prompt_flow("published A"), "folder_id": project["id"]},
        headers=alice.bearer,
    )  # fmt: skip
    flow_id = created.get_json()["id"]
    settings = {"settings": [{"id": flow_id, "mcp_enabled": True, "action_name": "answer", "action_description": "a"}]}
    assert client.patch(f"/api/v1/mcp/project/{project['id']}", json=settings, headers=alice.bearer).status_code == 200
    assert client.post(f"/api/v1/flows/{flow_id}/publish", json={}, headers=alice.bearer).status_code == 200
    _save(client, alice, flow_id, prompt_flow("draft B"))
    path = f"/api/v1/mcp/project/{project['id']}/streamable"
    reply = sse_messages(
        rpc(client, path, "tools/call", {"name": "answer", "arguments": {"input_value": "x"}}, alice.bearer).data
    )
    assert reply[-1]["result"]["content"][0]["text"] == "published A x"


def test_a2a_agents_run_the_published_version(make_app):
    from tests.a2a.a2akit import PLUGINS, agent, project, rpc, user_message
    from tests.conftest import make_user, superuser

    app = make_app(plugins=[*PLUGINS, "versions"], a2a_enabled=True)
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    folder = project(client, alice, "apikey")
    flow_id = agent(client, alice, prompt_flow("published A"), folder_id=folder)
    assert client.post(f"/api/v1/flows/{flow_id}/publish", json={}, headers=alice.bearer).status_code == 200
    _save(client, alice, flow_id, prompt_flow("draft B"))
    body = rpc("message/send", {"message": user_message("x")})
    response = client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    assert "published A x" in json.dumps(response.get_json()["result"])
    assert "draft B" not in json.dumps(response.get_json()["result"])


def test_a_publication_made_by_another_process_is_seen_within_the_refresh(app, client, alice):
    import time
    import uuid

    import sqlalchemy as sa
    from service_versions.models import FlowVersion, Publication

    from core import appstate

    created = client.post(
        "/api/v1/flows/", json={"name": "other", "data": text_flow("published A")}, headers=alice.bearer
    )
    flow_id = created.get_json()["id"]
    _save(client, alice, flow_id, text_flow("draft B"))
    assert _run(client, alice, flow_id) == "draft B"  # the snapshot is read: nothing published
    engine = appstate.engine(app)
    with engine.begin() as conn:  # another process publishes v1: this one was not told
        v1 = conn.execute(
            sa.select(FlowVersion.id).where(FlowVersion.flow_id == uuid.UUID(flow_id), FlowVersion.version_number == 1)
        ).scalar_one()
        conn.execute(
            sa.insert(Publication).values(
                flow_id=uuid.UUID(flow_id), version_id=v1, user_id=uuid.UUID(alice.id), published_at=sa.func.now()
            )
        )
    time.sleep(1.1)  # SERVICE_FLOW_PUBLICATION_REFRESH_SECONDS
    assert _run(client, alice, flow_id) == "published A"


def test_a_draft_saved_after_a_publish_elsewhere_never_reaches_api_callers(make_app):
    """Another process publishes; this one's snapshot is not told and trusts itself for an hour. A run still
    answers the (unchanged) draft until then, but once the draft is saved again (in any process) the next run
    here reads the publications before answering: an edit made after publishing never reaches API callers,
    not even for the refresh interval (the browser walkthrough met it: two web workers, publish, edit, run)."""
    import uuid

    import sqlalchemy as sa
    from service_versions.models import FlowVersion, Publication

    from core import appstate
    from tests.conftest import make_user, superuser

    app = make_app(plugins=SURFACE_PLUGINS, SERVICE_FLOW_PUBLICATION_REFRESH_SECONDS="3600")
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    created = client.post("/api/v1/flows/", json={"name": "f", "data": text_flow("published A")}, headers=alice.bearer)
    flow_id = created.get_json()["id"]
    _save(client, alice, flow_id, text_flow("draft B"))
    assert _run(client, alice, flow_id) == "draft B"  # the snapshot is read: nothing published
    with appstate.engine(app).begin() as conn:  # another process publishes v1: this one is not told
        v1 = conn.execute(
            sa.select(FlowVersion.id).where(FlowVersion.flow_id == uuid.UUID(flow_id), FlowVersion.version_number == 1)
        ).scalar_one()
        conn.execute(
            sa.insert(Publication).values(
                flow_id=uuid.UUID(flow_id), version_id=v1, user_id=uuid.UUID(alice.id), published_at=sa.func.now()
            )
        )
    assert _run(client, alice, flow_id) == "draft B"  # within the interval: the draft, as published then
    _save(client, alice, flow_id, text_flow("draft C"))
    assert _run(client, alice, flow_id) == "published A"
    _save(client, alice, flow_id, text_flow("draft D"))
    assert _run(client, alice, flow_id) == "published A"
