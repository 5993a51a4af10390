"""An execution links to its run's native trace (the observability plugin keys traces by the run id)."""

from __future__ import annotations

from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, create_flow
from tests.triggers.conftest import TRIGGERS


def test_an_executions_trace_url_is_its_runs_native_trace(make_app, recorder):
    app = make_app(plugins=[*TRIGGERS, "observability", ("recorder", recorder)], triggers_tick_s=0)
    client = app.test_client()
    admin = superuser(client)
    alice, bob = make_user(client, admin, username="alice"), make_user(client, admin, username="bob")
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "t"}, headers=alice.key).status_code == 200
    [execution] = client.get("/api/v1/executions", headers=alice.key).get_json()
    assert execution["trace_url"] == f"/api/v1/monitor/traces/{execution['run_id']}"
    trace = client.get(execution["trace_url"], headers=alice.key)
    assert trace.status_code == 200, trace.get_json()
    assert trace.get_json()["id"] == execution["run_id"]
    assert client.get(execution["trace_url"], headers=bob.key).status_code == 404
