"""A bad edit is rolled back in one click while API callers never noticed (issue 31, 'Done when').

One kit, parametrized over every API surface: run, webhook, v2 workflows, responses, MCP tools, A2A, the
public v2 run and the shared playground. The flow is published; its owner saves two bad edits to the draft
(the editor's own build runs them); every API caller keeps getting the published answer; one call (History's
Restore: ``POST .../versions/{v1}/activate``) puts the good graph back in the draft, and callers still get
the same answer. Then the other way round: the bad draft is published by mistake, and one call (publish v1
again) rolls API callers back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from core.app import state
from tests.a2a.a2akit import PLUGINS as A2A_PLUGINS
from tests.a2a.a2akit import rpc as a2a_rpc
from tests.a2a.a2akit import user_message
from tests.conftest import make_user, superuser
from tests.mcp.mcpkit import rpc as mcp_rpc
from tests.mcp.mcpkit import sse_messages
from tests.run.runkit import answer
from tests.versions.test_publishing import SURFACE_PLUGINS, prompt_flow

PLUGINS = list(dict.fromkeys([*SURFACE_PLUGINS, *A2A_PLUGINS, "mcp", "versions"]))


class World:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.client = app.test_client()
        self.alice = make_user(self.client, superuser(self.client), username="alice")
        body = {"name": "agents", "auth_settings": {"auth_type": "apikey"}}
        self.project = self.client.post("/api/v1/projects/", json=body, headers=self.alice.bearer).get_json()["id"]
        created = self.client.post(
            "/api/v1/flows/",
            json={"name": "Answer", "data": prompt_flow("good"), "folder_id": self.project, "webhook": True,
                  "flow_type": "agent", "a2a_enabled": True},
            headers=self.alice.bearer,
        )  # fmt: skip
        assert created.status_code == 201, created.get_json()
        self.flow_id = created.get_json()["id"]
        tool = {"id": self.flow_id, "mcp_enabled": True, "action_name": "answer", "action_description": "a"}
        mcp = self.client.patch(
            f"/api/v1/mcp/project/{self.project}", json={"settings": [tool]}, headers=self.alice.bearer
        )
        assert mcp.status_code == 200, mcp.get_json()
        assert (
            self.client.post(f"/api/v1/flows/{self.flow_id}/shares", json={}, headers=self.alice.bearer).status_code
            == 201
        )

    def save(self, text: str) -> None:
        saved = self.client.patch(
            f"/api/v1/flows/{self.flow_id}", json={"data": prompt_flow(text)}, headers=self.alice.bearer
        )
        assert saved.status_code == 200, saved.get_json()

    def build(self) -> str:
        response = self.client.post(
            f"/api/v1/build/{self.flow_id}/flow?event_delivery=direct", json={"inputs": {"input_value": "x"}},
            headers=self.alice.bearer,
        )  # fmt: skip
        assert response.status_code == 200
        return response.get_data(as_text=True)

    def version(self, number: int) -> str:
        listed = self.client.get(f"/api/v1/flows/{self.flow_id}/versions/", headers=self.alice.bearer).get_json()
        return next(v["id"] for v in listed["entries"] if v["version_number"] == number)


def _run(w: World) -> str:
    response = w.client.post(f"/api/v1/run/{w.flow_id}", json={"input_value": "x"}, headers=w.alice.key)
    assert response.status_code == 200, response.get_json()
    return str(answer(response.get_json()))


def _webhook(w: World) -> str:
    started = w.client.post(
        f"/api/v1/webhook/{w.flow_id}",
        data='{"input_value": "x"}',
        headers=w.alice.key,
        content_type="application/json",
    )
    assert started.status_code == 202, started.get_json()
    assert state(w.app).jobs.join(10)
    return json.dumps(w.client.get(started.get_json()["status_url"], headers=w.alice.key).get_json()["result"])


def _v2(w: World) -> str:
    body = {"flow_id": w.flow_id, "input_value": "x"}
    response = w.client.post("/api/v2/workflows", json=body, headers=w.alice.key)
    assert response.status_code == 200, response.get_json()
    return str(response.get_json()["output"]["text"])


def _responses(w: World) -> str:
    response = w.client.post("/api/v1/responses", json={"model": w.flow_id, "input": "x"}, headers=w.alice.key)
    assert response.status_code == 200, response.get_json()
    return json.dumps(response.get_json())


def _mcp(w: World) -> str:
    path = f"/api/v1/mcp/project/{w.project}/streamable"
    call = {"name": "answer", "arguments": {"input_value": "x"}}
    reply = sse_messages(mcp_rpc(w.client, path, "tools/call", call, w.alice.bearer).data)
    return str(reply[-1]["result"]["content"][0]["text"])


def _a2a(w: World) -> str:
    body = a2a_rpc("message/send", {"message": user_message("x")})
    response = w.client.post(f"/api/v1/a2a/{w.flow_id}/jsonrpc", json=body, headers=w.alice.key)
    assert response.status_code == 200, response.get_json()
    return json.dumps(response.get_json()["result"])


def _public_v2(w: World) -> str:
    visitor = w.app.test_client()
    visitor.set_cookie("client_id", "visitor-1")
    body = {"flow_id": w.flow_id, "input_value": "x", "mode": "stream"}
    return str(visitor.post("/api/v2/workflows/public", json=body).get_data(as_text=True))


def _shared_playground(w: World) -> str:
    visitor = w.app.test_client()
    visitor.set_cookie("client_id", "visitor-2")
    path = f"/api/v1/build_public_tmp/{w.flow_id}/flow?event_delivery=direct"
    return str(visitor.post(path, json={"inputs": {"input_value": "x"}}).get_data(as_text=True))


SURFACES: dict[str, Callable[[World], str]] = {
    "run": _run,
    "webhook": _webhook,
    "v2": _v2,
    "responses": _responses,
    "mcp": _mcp,
    "a2a": _a2a,
    "public v2": _public_v2,
    "shared playground": _shared_playground,
}


@pytest.mark.parametrize("surface", list(SURFACES))
def test_a_bad_edit_is_rolled_back_in_one_call_and_callers_never_notice(make_app, surface):
    world = World(make_app(plugins=PLUGINS, a2a_enabled=True))
    call = SURFACES[surface]
    published = world.client.post(f"/api/v1/flows/{world.flow_id}/publish", json={}, headers=world.alice.bearer)
    assert published.status_code == 200, published.get_json()
    assert "good" in call(world)

    # two bad edits to the draft (their text says "wrong": "bad" is also hex and turns up in ids)
    # the editor runs them, API callers never see them
    world.save("wrong one")
    world.save("wrong two")
    assert "wrong two" in world.build()
    seen = call(world)
    assert "good" in seen and "wrong" not in seen

    # one call restores the good graph into the draft (History's Restore); callers saw nothing change
    restored = world.client.post(
        f"/api/v1/flows/{world.flow_id}/versions/{world.version(1)}/activate", headers=world.alice.bearer
    )
    assert restored.status_code == 200, restored.get_json()
    build = world.build()
    assert "good" in build and "wrong two" not in build
    assert "good" in call(world)

    # the other way: a bad draft published by mistake reaches callers; one call publishes v1 again
    world.save("wrong three")
    assert (
        world.client.post(f"/api/v1/flows/{world.flow_id}/publish", json={}, headers=world.alice.bearer).status_code
        == 200
    )
    assert "wrong three" in call(world)
    body = {"version_id": world.version(1)}
    rolled = world.client.post(f"/api/v1/flows/{world.flow_id}/publish", json=body, headers=world.alice.bearer)
    assert rolled.status_code == 200 and rolled.get_json()["version"]["version_number"] == 1
    seen = call(world)
    assert "good" in seen and "wrong" not in seen
