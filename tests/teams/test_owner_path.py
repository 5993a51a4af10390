"""The owner's own requests never reach the permission hooks (the shared path costs nothing for them), while
a member's do, once per request and verb (cached for the request)."""

from __future__ import annotations

from core import hookimpl
from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, create_flow

PLUGINS = ["accounts", "flows", "variables", "run", "catalog", "standard", "teams"]


class Recorder:
    def __init__(self) -> None:
        self.asked: list[str] = []

    @hookimpl
    def permission_allowed(self, actor, action, resource):
        if ":" in action:
            self.asked.append(action)
        return None


def test_owner_requests_ask_no_permission_hook(make_app):
    recorder = Recorder()
    app = make_app(plugins=[*PLUGINS, ("recorder", recorder)], rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    owner, member = make_user(client, root), make_user(client, root)
    flow = create_flow(client, owner, chat_echo(), name="mine")
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=owner.bearer).status_code == 200
    assert (
        client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "x"}, headers=owner.bearer).status_code == 200
    )
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=owner.key).status_code == 200
    assert client.get(f"/api/v1/projects/{flow['folder_id']}", headers=owner.bearer).status_code == 200
    assert recorder.asked == []
    body = {"resource_type": "flow", "resource_id": flow["id"], "scope": "user", "target_id": member.id}
    shared = client.post("/api/v1/authz/shares", json={**body, "permission_level": "read"}, headers=owner.bearer)
    assert shared.status_code == 201
    recorder.asked.clear()
    assert (
        client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "y"}, headers=member.bearer).status_code == 403
    )
    assert recorder.asked == ["flow:write", "flow:read"]  # one question per verb, then the 403
