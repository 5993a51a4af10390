"""Executions: every run recorded, listed and filtered per owner, read, retried; retry policy and error flow."""

from __future__ import annotations

import json
import time

from service_triggers.ticker import tick

from core.appstate import state
from tests.run.runkit import chat_echo, create_flow, edge, flow_data, node


def settle(app, timeout: float = 60.0) -> None:
    """Wait until no job runs, also those a job started (a retry, an error flow) after the wait began."""
    deadline = time.monotonic() + timeout
    while not state(app).jobs.join(max(0.1, deadline - time.monotonic())):
        assert time.monotonic() < deadline, "background jobs still running"


def failing() -> dict:
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])


def executions(client, caller, **query):
    response = client.get("/api/v1/executions", query_string=query, headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_a_run_of_the_api_is_an_execution_only_its_owner_sees(client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hello"}, headers=alice.key)
    assert response.status_code == 200
    [found] = executions(client, alice, flow_id=flow["id"])
    assert found["trigger"] == "run" and found["status"] == "ok" and found["flow_name"] == flow["name"]
    assert found["input"] == "hello" and found["output"] == "hello" and found["error"] is None
    assert found["duration_s"] >= 0 and found["retryable"] is True and found["run_id"] == found["id"]
    assert executions(client, bob) == []
    assert client.get(f"/api/v1/executions/{found['id']}", headers=bob.key).status_code == 404
    assert client.get(f"/api/v1/executions/{found['id']}", headers=alice.key).get_json() == found


def test_filters_by_status_trigger_and_time(app, client, alice):
    good = create_flow(client, alice, chat_echo(), name="good")
    bad = create_flow(client, alice, failing(), name="bad")
    before = time.time()
    assert client.post(f"/api/v1/run/{good['id']}", json={"input_value": "a"}, headers=alice.key).status_code == 200
    assert client.post(f"/api/v1/run/{bad['id']}", json={}, headers=alice.key).status_code == 500
    assert client.post(f"/api/v1/webhook/{good['id']}", data="x", headers=alice.key).status_code == 202
    settle(app)
    [failed] = executions(client, alice, status="error")
    assert failed["flow_id"] == bad["id"]
    assert failed["error"] == (
        "Error running component Message History (Memory-MMMMM): Number of messages must be non-negative."
    )
    [hooked] = executions(client, alice, trigger="webhook")
    assert hooked["status"] == "ok" and hooked["job_id"] and hooked["input"] == "x"
    assert len(executions(client, alice, since=before)) == 3
    assert executions(client, alice, until=before) == []
    assert client.get("/api/v1/executions?status=nope", headers=alice.key).status_code == 422


def test_retry_runs_the_same_inputs_as_a_new_linked_execution(app, client, alice, bob):
    flow = create_flow(client, alice, failing())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "again"}, headers=alice.key).status_code == 500
    [failed] = executions(client, alice)
    assert client.post(f"/api/v1/executions/{failed['id']}/retry", headers=bob.key).status_code == 404
    fixed = client.patch(f"/api/v1/flows/{flow['id']}", json={"data": chat_echo()}, headers=alice.key)
    assert fixed.status_code == 200
    response = client.post(f"/api/v1/executions/{failed['id']}/retry", headers=alice.key)
    assert response.status_code == 202
    retried = response.get_json()
    assert retried["retry_of"] == failed["id"] and retried["attempt"] == 2 and retried["trigger"] == "retry"
    settle(app)
    done = client.get(f"/api/v1/executions/{retried['id']}", headers=alice.key).get_json()
    assert done["status"] == "ok" and done["output"] == "again" and done["input"] == "again"
    assert len(executions(client, alice)) == 2


def test_retry_policy_retries_a_failed_scheduled_run_then_the_error_flow_gets_the_failure(app, client, alice):
    flow = create_flow(client, alice, failing(), name="nightly")
    sink = create_flow(client, alice, chat_echo(), name="errors")
    policy = {"attempts": 2, "backoff_s": 7200, "error_flow_id": sink["id"]}
    assert client.put(f"/api/v1/executions/policies/{flow['id']}", json=policy, headers=alice.key).status_code == 200
    schedule = client.post(
        "/api/v1/schedules", json={"flow_id": flow["id"], "interval_s": 3600, "input_value": "tick"}, headers=alice.key
    ).get_json()
    tick(app, now=time.time() + 3600)  # the schedule is due
    settle(app)
    [first] = executions(client, alice, flow_id=flow["id"], status="error")
    assert first["trigger"] == "schedule" and first["source_id"] == schedule["id"] and first["attempt"] == 1
    [pending] = executions(client, alice, status="scheduled")
    assert pending["retry_of"] == first["id"] and pending["attempt"] == 2
    paused = client.patch(f"/api/v1/schedules/{schedule['id']}", json={"enabled": False}, headers=alice.key)
    assert paused.status_code == 200 and paused.get_json()["next_fire_times"] == []
    tick(app, now=time.time() + 3700)  # not yet: the backoff is two hours
    settle(app)
    assert len(executions(client, alice)) == 2
    tick(app, now=time.time() + 7300)  # the retry is due: it runs, fails again, and the policy is spent
    settle(app)
    failures = executions(client, alice, flow_id=flow["id"], status="error")
    assert sorted(e["attempt"] for e in failures) == [1, 2]
    [notified] = executions(client, alice, flow_id=sink["id"])
    assert notified["trigger"] == "error_flow" and notified["status"] == "ok"
    details = json.loads(notified["output"])
    assert details["attempt"] == 2 and details["flow_name"] == "nightly" and "non-negative" in details["error"]
    tick(app, now=time.time() + 20000)
    settle(app)
    assert len(executions(client, alice)) == 3  # nothing runs twice; the paused schedule fires no more


def test_a_policy_names_only_the_callers_flows(client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    other = create_flow(client, bob, chat_echo())
    body = {"attempts": 3, "error_flow_id": other["id"]}
    assert client.put(f"/api/v1/executions/policies/{flow['id']}", json=body, headers=alice.key).status_code == 404
    assert client.get(f"/api/v1/executions/policies/{flow['id']}", headers=bob.key).status_code == 404
    assert (
        client.put(f"/api/v1/executions/policies/{flow['id']}", json={"attempts": 0}, headers=alice.key).status_code
        == 422
    )


def test_request_variables_are_kept_sealed_and_a_retry_gets_them_back(app, client, alice):
    import sqlalchemy as sa
    from service_triggers.models import Execution
    from service_triggers.recorder import SEALED, unseal_vars

    from core import appstate

    flow = create_flow(client, alice, chat_echo())
    headers = {**alice.key, "X-SERVICE-GLOBAL-VAR-OPENAI_API_KEY": "sk-very-secret-value"}
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "v"}, headers=headers).status_code == 200
    [found] = executions(client, alice)
    assert "sk-very-secret-value" not in json.dumps(found)
    response = client.post(f"/api/v1/executions/{found['id']}/retry", headers=alice.key)
    assert response.status_code == 202
    settle(app)
    with appstate.engine(app).connect() as conn:
        stored = [r.request for r in conn.execute(sa.select(Execution.__table__.c.request))]
    assert len(stored) == 2 and "sk-very-secret-value" not in json.dumps(stored)  # never in clear at rest
    for request in stored:
        assert set(request["request_vars"]) == {SEALED}
        assert set(unseal_vars(app, request)["request_vars"].values()) == {"sk-very-secret-value"}


def test_offset_pages_are_the_list_in_order(app, client, alice):
    """A far page is a deferred join (core.db.page): its pages, one after the other, are the whole list, newest
    first, none twice or missing."""
    flow = create_flow(client, alice, chat_echo())
    for i in range(7):
        response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": f"m{i}"}, headers=alice.key)
        assert response.status_code == 200
    settle(app)
    whole = [e["id"] for e in executions(client, alice, limit=500)]
    assert len(whole) == 7
    paged = [e["id"] for offset in range(0, 8, 3) for e in executions(client, alice, limit=3, offset=offset)]
    assert paged == whole
    started = [e["started_at"] for e in executions(client, alice, limit=500)]
    assert started == sorted(started, reverse=True)
