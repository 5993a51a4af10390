"""One admission rule for MCP and A2A (core.runs.admission): the same project, called over both surfaces,
runs its flow as the same principal and refuses the same callers.

A flow that is both an MCP tool and a published agent reads its Chat Output's sender name from the owner's
global variable ``BOT_NAME``: a run acting as the owner finds it; a run acting as the flow's anonymous
principal does not (nobody's variables). A message recorder sees whose message store each run used.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.runs import admission
from tests.a2a.a2akit import rpc as a2a_rpc
from tests.a2a.a2akit import user_message
from tests.conftest import make_user, superuser
from tests.mcp.mcpkit import rpc as mcp_rpc
from tests.mcp.mcpkit import sse_messages
from tests.run.conftest import MessageRecorder
from tests.run.runkit import chat_echo

PLUGINS = ["accounts", "flows", "variables", "run", "monitor", "mcp", "a2a", "standard"]


def _variable_flow() -> dict[str, Any]:
    data = chat_echo()
    field = data["nodes"][1]["data"]["node"]["template"]["sender_name"]
    field.update(load_from_db=True, value="BOT_NAME")
    return data


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*PLUGINS, ("recorder", recorder)], a2a_enabled=True)


@pytest.fixture
def users(client):
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    created = client.post(
        "/api/v1/variables/",
        json={"name": "BOT_NAME", "value": "Alice's Bot", "type": "Generic", "default_fields": []},
        headers=alice.bearer,
    )
    assert created.status_code == 201, created.get_json()
    return alice, bob


def _exposed(client, owner, auth_type: str | None, data: dict[str, Any] | None = None) -> tuple[str, str]:
    """A project of ``auth_type`` holding one flow exposed on both surfaces: (project id, flow id)."""
    body: dict[str, Any] = {"name": f"both-{auth_type}"}
    if auth_type is not None:
        body["auth_settings"] = {"auth_type": auth_type}
    project = client.post("/api/v1/projects/", json=body, headers=owner.bearer).get_json()
    flow = client.post(
        "/api/v1/flows/",
        json={
            "name": f"Bot {auth_type}",
            "data": data or _variable_flow(),
            "folder_id": project["id"],
            "flow_type": "agent",
            "a2a_enabled": True,
            "mcp_enabled": True,
        },
        headers=owner.bearer,
    ).get_json()
    return str(project["id"]), str(flow["id"])


def _mcp(client, project_id: str, text: str, headers: dict[str, str]):
    """``tools/call`` of the project's one tool: (HTTP status, tool result or None)."""
    path = f"/api/v1/mcp/project/{project_id}/streamable"
    listed = mcp_rpc(client, path, "tools/list", {}, headers)
    if listed.status_code != 200:
        return listed.status_code, None
    [tool] = sse_messages(listed.data)[0]["result"]["tools"]
    called = mcp_rpc(client, path, "tools/call", {"name": tool["name"], "arguments": {"input_value": text}}, headers)
    return called.status_code, sse_messages(called.data)[-1]["result"]


def _a2a(client, flow_id: str, text: str, headers: dict[str, str]):
    """``message/send``: (HTTP status, task or None)."""
    response = client.post(
        f"/api/v1/a2a/{flow_id}/jsonrpc", json=a2a_rpc("message/send", {"message": user_message(text)}), headers=headers
    )
    return response.status_code, (response.get_json() or {}).get("result")


def _stored_by(recorder: MessageRecorder, text: str) -> set[str]:
    """Whose message store the runs that received ``text`` wrote to."""
    return {m["_user_id"] for m in recorder.messages if m.get("text") == text}


def _sender(recorder: MessageRecorder, text: str) -> set[str]:
    return {m.get("sender_name") for m in recorder.messages if m.get("text") == text and m.get("sender") == "Machine"}


def test_auth_type_none_runs_as_the_same_anonymous_principal_on_both_surfaces(client, users, recorder):
    alice, _ = users
    project_id, flow_id = _exposed(client, alice, "none")
    anonymous = admission.anonymous_principal(flow_id)
    assert anonymous != alice.id

    status, result = _mcp(client, project_id, "over mcp", {})
    assert status == 200 and result["isError"] is True  # the owner's variable is not there for a stranger
    assert "BOT_NAME" in result["content"][0]["text"]
    status, task = _a2a(client, flow_id, "over a2a", {})
    assert status == 200 and task["status"]["state"] == "failed"
    assert _stored_by(recorder, "over mcp") == _stored_by(recorder, "over a2a") == {anonymous}

    # the owner's own credentials: the owner, with the owner's variables, on both surfaces
    status, result = _mcp(client, project_id, "mcp as owner", alice.key)
    assert status == 200 and result["isError"] is False, result
    status, task = _a2a(client, flow_id, "a2a as owner", alice.key)
    assert status == 200 and task["status"]["state"] == "completed", task
    assert _stored_by(recorder, "mcp as owner") == _stored_by(recorder, "a2a as owner") == {alice.id}
    assert _sender(recorder, "mcp as owner") == _sender(recorder, "a2a as owner") == {"Alice's Bot"}


def test_auth_type_none_offers_no_tweaks_to_strangers(client, users):
    from tests.mcp.mcpkit import two_inputs_flow

    alice, bob = users
    project_id, _ = _exposed(client, alice, "none", two_inputs_flow(sender_name_shown=True))
    path = f"/api/v1/mcp/project/{project_id}/streamable"
    offered = {}
    for who, headers in (("nobody", {}), ("bob", bob.key), ("alice", alice.key)):
        [tool] = sse_messages(mcp_rpc(client, path, "tools/list", {}, headers).data)[0]["result"]["tools"]
        offered[who] = set(tool["inputSchema"]["properties"])
    assert offered["nobody"] == offered["bob"] == {"input_value", "session_id"}
    assert "sender_name" in offered["alice"]  # the owner's own clients: the policy's arguments


@pytest.mark.parametrize("auth_type", ["apikey", None])
def test_keyed_projects_refuse_the_same_callers_on_both_surfaces(client, users, recorder, auth_type):
    alice, bob = users
    project_id, flow_id = _exposed(client, alice, auth_type)
    # nobody: credentials required
    assert _mcp(client, project_id, "x", {})[0] == 401
    assert client.post(
        f"/api/v1/a2a/{flow_id}/jsonrpc", json=a2a_rpc("message/send", {"message": user_message("x")})
    ).get_json() == {"detail": "API key required"}
    # a key that is no key, and another user's key: refused (each surface in its own shape)
    assert _mcp(client, project_id, "x", {"x-api-key": "sk-nope"})[0] == 403
    assert _a2a(client, flow_id, "x", {"x-api-key": "sk-nope"})[0] == 401
    assert _mcp(client, project_id, "x", bob.key)[0] == 404
    assert _a2a(client, flow_id, "x", bob.key)[0] == 401
    assert not recorder.messages  # nothing ran
    # the owner's key: the owner, on both
    status, result = _mcp(client, project_id, "keyed mcp", alice.key)
    assert status == 200 and result["isError"] is False
    status, task = _a2a(client, flow_id, "keyed a2a", alice.key)
    assert status == 200 and task["status"]["state"] == "completed"
    assert _stored_by(recorder, "keyed mcp") == _stored_by(recorder, "keyed a2a") == {alice.id}


def test_unsupported_auth_types_fail_closed_on_both_surfaces(client, users):
    alice, _ = users
    project_id, flow_id = _exposed(client, alice, "basic")
    assert _mcp(client, project_id, "x", alice.key)[0] == 403
    assert _a2a(client, flow_id, "x", alice.key)[0] == 403


# --- the rule itself ------------------------------------------------------------------------------------
class _Actor:
    def __init__(self, owner_id: str) -> None:
        self.owner_id = owner_id


@pytest.mark.parametrize(
    ("settings", "actor", "presented", "expected"),
    [
        ({"auth_type": "none"}, None, False, "anonymous"),
        ({"auth_type": "none"}, None, True, "anonymous"),  # a bad key on an open project: still a stranger
        ({"auth_type": "none"}, "bob", True, "anonymous"),
        ({"auth_type": "none"}, "alice", True, "owner"),
        ({"auth_type": "apikey"}, "alice", True, "owner"),
        (None, "alice", True, "owner"),
        ({}, None, False, admission.CREDENTIALS_REQUIRED),
        ({"auth_type": "apikey"}, None, True, admission.INVALID_CREDENTIALS),
        ({"auth_type": "apikey"}, "bob", True, admission.NOT_OWNER),
        ({"auth_type": "oauth"}, None, False, admission.CREDENTIALS_REQUIRED),
        ({"auth_type": "oauth"}, "alice", True, "owner"),
        ({"auth_type": "basic"}, "alice", True, admission.UNSUPPORTED),
    ],
)
def test_admit(settings, actor, presented, expected):
    caller = _Actor(actor) if actor else None
    try:
        admitted = admission.admit(settings, "alice", caller, presented=presented)  # type: ignore[arg-type]
    except admission.Refused as refused:
        assert refused.reason == expected
        return
    assert ("anonymous" if admitted.anonymous else "owner") == expected
    assert admitted.principal("f1") == (admission.anonymous_principal("f1") if admitted.anonymous else "alice")


def test_an_oauth_token_the_authorization_server_vouched_for_runs_as_the_owner():
    admitted = admission.admit({"auth_type": "oauth"}, "alice", None, presented=True, vouched=True)
    assert not admitted.anonymous and admitted.principal("f1") == "alice"
    with pytest.raises(admission.Refused):  # vouching means nothing for an API-key project
        admission.admit({"auth_type": "apikey"}, "alice", None, presented=True, vouched=True)
