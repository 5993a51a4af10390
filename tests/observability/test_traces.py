"""Native traces: each run's trace stored once, served at ``/api/v1/monitor/traces`` in the reference's shapes."""

from __future__ import annotations

import pytest

from tests.conftest import make_user, superuser
from tests.models.conftest import llm  # noqa: F401 - the fixture
from tests.models.test_observe_model_calls import model_flow
from tests.run.runkit import chat_echo, create_flow, edge, flow_data, node

PLUGINS = ["accounts", "flows", "run", "catalog", "variables", "standard", "models", "observability"]
URL = "/api/v1/monitor/traces"


@pytest.fixture
def env(make_app, llm, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    admin = superuser(client)
    return client, make_user(client, admin, username="alice"), make_user(client, admin, username="bob")


def test_a_model_run_is_a_trace_with_its_components_and_model_call(env, llm):  # noqa: F811
    client, alice, _bob = env
    flow = create_flow(client, alice, model_flow(False), name="Counter")
    llm.reply("one two three", usage={"prompt_tokens": 17, "completion_tokens": 3})
    body = {"input_value": "count", "session_id": "s-1"}
    assert client.post(f"/api/v1/run/{flow['id']}", json=body, headers=alice.key).status_code == 200
    listed = client.get(URL, query_string={"flow_id": flow["id"]}, headers=alice.bearer).get_json()
    assert listed["total"] == 1 and listed["pages"] == 1
    [summary] = listed["traces"]
    assert summary["name"] == "Counter" and summary["status"] == "ok" and summary["flowId"] == flow["id"]
    assert summary["sessionId"] == "s-1" and summary["totalTokens"] == 20 and summary["totalLatencyMs"] >= 0
    assert summary["input"] == {"input_value": "count"} and summary["output"] == {"message": "one two three"}
    assert summary["startTime"].endswith("Z")
    trace = client.get(f"{URL}/{summary['id']}", headers=alice.bearer).get_json()
    assert trace["id"] == summary["id"] and trace["endTime"] >= trace["startTime"]
    assert [s["name"] for s in trace["spans"]] == ["Chat Input", "Language Model", "Chat Output"]
    model = trace["spans"][1]
    assert model["type"] == "chain" and model["status"] == "ok"
    [call] = model["children"]
    assert call["name"] == "chat test-model" and call["type"] == "llm" and call["modelName"] == "test-model"
    assert call["tokenUsage"] == {"promptTokens": 17, "completionTokens": 3, "totalTokens": 20}
    assert set(call) >= {"startTime", "endTime", "latencyMs", "inputs", "outputs", "error", "children"}


def test_traces_are_owner_scoped_filtered_paged_and_deleted(env):
    client, alice, bob = env
    flow = create_flow(client, alice, chat_echo())
    for i in range(3):
        sent = {"input_value": f"m{i}", "session_id": f"s{i % 2}"}
        assert client.post(f"/api/v1/run/{flow['id']}", json=sent, headers=alice.key).status_code == 200
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    out = node("ChatOutput", "ChatOutput-BBBBB")
    broken = create_flow(client, alice, flow_data([memory, out], [edge(memory, "messages_text", out, "input_value")]))
    assert client.post(f"/api/v1/run/{broken['id']}", json={}, headers=alice.key).status_code == 500

    everything = client.get(URL, headers=alice.bearer).get_json()
    assert everything["total"] == 4
    page = client.get(URL, query_string={"size": 2, "page": 2}, headers=alice.bearer).get_json()
    assert page["pages"] == 2 and len(page["traces"]) == 2
    [failed] = client.get(URL, query_string={"status": "error"}, headers=alice.bearer).get_json()["traces"]
    assert failed["flowId"] == broken["id"]
    detail = client.get(f"{URL}/{failed['id']}", headers=alice.bearer).get_json()
    assert detail["spans"][0]["status"] == "error" and "non-negative" in detail["spans"][0]["error"]
    in_s0 = client.get(URL, query_string={"session_id": "s0"}, headers=alice.bearer).get_json()
    assert in_s0["total"] == 2

    # bob sees none of them, and cannot read or delete one
    assert client.get(URL, headers=bob.bearer).get_json() == {"traces": [], "total": 0, "pages": 0}
    assert client.get(f"{URL}/{failed['id']}", headers=bob.bearer).status_code == 404
    assert client.delete(f"{URL}/{failed['id']}", headers=bob.bearer).status_code == 404
    # another user's flow, not shared with bob: 404, as every surface answers a non-member (issue 33)
    assert client.delete(URL, query_string={"flow_id": flow["id"]}, headers=bob.bearer).status_code == 404
    assert client.get(URL, headers=alice.bearer).get_json()["total"] == 4

    assert client.delete(f"{URL}/{failed['id']}", headers=alice.bearer).status_code == 204
    assert client.delete(URL, query_string={"flow_id": flow["id"]}, headers=alice.bearer).status_code == 204
    assert client.get(URL, headers=alice.bearer).get_json()["total"] == 0


def test_bad_query_parameters_are_422(env):
    client, alice, _bob = env
    answer = client.get(URL, query_string={"size": 500, "status": "weird", "flow_id": "x"}, headers=alice.bearer)
    assert answer.status_code == 422
    assert sorted(d["loc"][1] for d in answer.get_json()["detail"]) == ["flow_id", "size", "status"]
    assert client.delete(URL, headers=alice.bearer).status_code == 422
    assert client.get(URL).status_code in (401, 403)


def test_native_tracing_can_be_switched_off(make_app):
    app = make_app(
        plugins=["accounts", "flows", "run", "catalog", "variables", "standard", "observability"], native_tracing=False
    )
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 200
    assert client.get(URL, headers=alice.bearer).get_json()["total"] == 0


def test_a_webhook_job_run_is_traced_with_its_surface(env):
    from tests.run.runkit import reference, upload, wait_jobs

    client, alice, _bob = env
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    assert client.post(f"/api/v1/webhook/{flow['id']}", data='{"name": "Ada"}', headers=alice.key).status_code == 202
    wait_jobs(client.application)
    [summary] = client.get(URL, query_string={"flow_id": flow["id"]}, headers=alice.bearer).get_json()["traces"]
    assert summary["status"] == "ok"
    trace = client.get(f"{URL}/{summary['id']}", headers=alice.bearer).get_json()
    assert "Webhook" in [s["name"] for s in trace["spans"]]
