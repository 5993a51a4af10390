"""Messages written by real runs: their order, and public-playground conversations of signed-in visitors."""

from __future__ import annotations

import uuid

import pytest

from tests.build.buildkit import create_flow, parse, reference_flow
from tests.conftest import make_user

PLUGINS = ["accounts", "flows", "run", "build", "monitor", "standard"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def test_a_runs_user_and_ai_messages_list_in_order(app, client, admin):
    """1,000 runs, each in its own session: every session lists the question, then the answer."""
    alice = make_user(client, admin, username="alice")
    flow_id = create_flow(client, alice, reference_flow("chat-echo.json")["data"])
    for i in range(1000):
        body = {"input_value": f"q{i}", "session_id": f"s{i}"}
        assert client.post(f"/api/v1/run/{flow_id}", json=body, headers=alice.key).status_code == 200
    listed = client.get(f"/api/v1/monitor/messages?flow_id={flow_id}&limit=5000", headers=alice.bearer).get_json()
    assert len(listed) == 2000
    by_session: dict[str, list[str]] = {}
    for message in listed:
        by_session.setdefault(message["session_id"], []).append(message["sender"])
    assert set(map(tuple, by_session.values())) == {("User", "Machine")}
    # the timestamps keep microseconds
    assert any(m["timestamp"][20:26].strip("0") for m in listed[:20])


def test_a_signed_in_visitors_public_playground_conversation_is_in_their_shared_messages(app, client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    flow_id = create_flow(client, alice, reference_flow("chat-echo.json")["data"], access_type="PUBLIC")
    browser = app.test_client()
    browser.set_cookie("client_id", str(uuid.uuid4()))
    started = browser.post(
        f"/api/v1/build_public_tmp/{flow_id}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hello from bob", "session": "chat"}},
        headers=bob.bearer,
    )
    assert parse(started.get_data(as_text=True))[-1]["event"] == "end"
    # an anonymous visitor's conversation is not bob's
    anonymous = app.test_client()
    anonymous.set_cookie("client_id", str(uuid.uuid4()))
    anonymous.post(
        f"/api/v1/build_public_tmp/{flow_id}/flow?event_delivery=direct", json={"inputs": {"input_value": "anon"}}
    )
    shared = f"/api/v1/monitor/messages/shared?source_flow_id={flow_id}"
    listed = client.get(shared, headers=bob.bearer).get_json()
    assert [(m["sender"], m["text"]) for m in listed] == [("User", "hello from bob"), ("Machine", "hello from bob")]
    sessions = client.get(f"/api/v1/monitor/messages/shared/sessions?source_flow_id={flow_id}", headers=bob.bearer)
    assert len(sessions.get_json()) == 1 and sessions.get_json()[0].endswith(":chat")
    # nobody else sees it: not the flow's owner, not in bob's own flow messages
    assert client.get(shared, headers=alice.bearer).get_json() == []
    assert client.get(f"/api/v1/monitor/messages?flow_id={flow_id}", headers=alice.bearer).get_json() == []
