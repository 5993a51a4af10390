"""An execution row costs its run no commit of its own: it rides the run's messages' group commit (issue 32)."""

from __future__ import annotations

import pytest

from core import groupcommit
from core.appstate import state
from tests.run.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow


@pytest.fixture
def app(make_app):
    return make_app(plugins=[*PLUGINS, "monitor", "triggers"], triggers_tick_s=0)


def test_a_run_commits_its_messages_and_its_execution_once(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    writer = groupcommit.writer(state(app).engine)
    before = writer.groups
    for text in ("one", "two", "three"):
        response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": text}, headers=alice.key)
        assert response.status_code == 200
    assert writer.groups - before == 3  # one commit per run: its messages and its execution together
    listed = client.get("/api/v1/executions", query_string={"flow_id": flow["id"]}, headers=alice.key).get_json()
    assert [(e["status"], e["output"]) for e in listed] == [("ok", "three"), ("ok", "two"), ("ok", "one")]
    messages = client.get("/api/v1/monitor/messages", query_string={"flow_id": flow["id"]}, headers=alice.key)
    assert [m["text"] for m in messages.get_json()] == ["one", "one", "two", "two", "three", "three"]


def test_a_failed_run_is_still_recorded_as_error(app, client, alice):
    from tests.run.runkit import edge, flow_data, node

    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    flow = create_flow(
        client, alice, flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    )
    assert client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).status_code == 500
    [found] = client.get("/api/v1/executions", query_string={"flow_id": flow["id"]}, headers=alice.key).get_json()
    assert found["status"] == "error" and "Number of messages must be non-negative" in found["error"]
