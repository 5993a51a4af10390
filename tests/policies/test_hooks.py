"""The governance hooks, called through the host as other plugins call them."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from core import hookimpl
from core.app import state
from core.contracts import FlowRecord
from tests.conftest import make_user, superuser
from tests.policies.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow


class FlowRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, Any]] = []

    @hookimpl
    def on_flow_changed(self, flow_id: str, user_id: str | None, flow: FlowRecord | None) -> None:
        self.calls.append((flow_id, user_id, None if flow is None else flow.name))


@pytest.fixture
def recorder() -> FlowRecorder:
    return FlowRecorder()


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*PLUGINS, ("flow-recorder", recorder)])


def test_blocked_components_and_templates(app, client):
    admin = superuser(client)
    with app.test_request_context():
        hook = state(app).host.hook
        assert [a for a in hook.blocked_components() if a] == [] and [a for a in hook.blocked_templates() if a] == []
    client.put("/api/v1/catalog-policy/components", json={"blocked": ["Prompt Template"]}, headers=admin.bearer)
    client.put("/api/v1/catalog-policy/templates", json={"blocked": ["basic-chat-echo"]}, headers=admin.bearer)
    with app.test_request_context():
        hook = state(app).host.hook
        # the legacy alias is blocked with its component
        assert [a for a in hook.blocked_components() if a] == [["Prompt", "Prompt Template"]]
        assert [a for a in hook.blocked_templates() if a] == [["basic-chat-echo"]]


def test_on_flow_changed_is_called_for_every_write(app, client, recorder):
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    flow = create_flow(client, alice, chat_echo(), name="a")
    client.patch(f"/api/v1/flows/{flow['id']}", json={"name": "b"}, headers=alice.bearer)
    client.put(f"/api/v1/flows/{flow['id']}", json={"name": "c", "data": chat_echo()}, headers=alice.bearer)
    client.delete(f"/api/v1/flows/{flow['id']}", headers=alice.bearer)
    assert recorder.calls == [
        (flow["id"], alice.id, "a"),
        (flow["id"], alice.id, "b"),
        (flow["id"], alice.id, "c"),
        (flow["id"], alice.id, None),
    ]


def test_stored_flows_pages_every_flow_and_example_by_id(app, client):
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    made = {create_flow(client, who, chat_echo(), name=f"f{i}")["id"] for i, who in enumerate([alice, bob, alice])}
    with app.test_request_context():
        from service_policies import hookspecs

        hooks = state(app).host.hooks
        seen: list[FlowRecord] = []
        after = None
        while True:
            page = hooks.first(hookspecs.stored_flows, after_id=after, limit=2)
            if not page:
                break
            seen.extend(page)
            after = page[-1].id
    ids = [f.id for f in seen]
    examples = len(list((Path(__file__).resolve().parents[2] / "plugins/flows/service_flows/examples").glob("*.json")))
    assert ids == sorted(ids, key=uuid.UUID) and len(ids) == len(set(ids)) == 3 + examples  # three flows, the examples
    assert made <= set(ids)
    assert {f.user_id for f in seen} == {alice.id, bob.id, None}
    assert all(isinstance(f.data, dict) for f in seen)
