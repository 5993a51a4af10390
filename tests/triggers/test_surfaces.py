"""Runs of other surfaces are executions too: v2 workflows (sync) and the editor's builds."""

from __future__ import annotations

import pytest

from tests.run.runkit import chat_echo, create_flow
from tests.triggers.test_executions import executions, settle
from tests.workflows.wfkit import plugins


@pytest.fixture
def app(make_app):
    return make_app(plugins=plugins("triggers", "build"), triggers_tick_s=0)


def test_a_v2_workflow_run_and_an_editor_build_are_listed(app, client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    response = client.post("/api/v2/workflows", json={"flow_id": flow["id"], "input_value": "v2"}, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    built = client.post(
        f"/api/v1/build/{flow['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "ed"}},
        headers=alice.key,
    )
    assert built.status_code == 200, built.get_data()[:300]
    settle(app)
    found = {e["trigger"]: e for e in executions(client, alice, flow_id=flow["id"])}
    assert found["workflows"]["status"] == "ok" and found["workflows"]["output"] == "v2"
    assert found["build"]["status"] == "ok" and found["build"]["input"] == "ed"
    assert executions(client, bob) == []
