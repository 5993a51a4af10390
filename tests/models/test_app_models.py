"""Models, agents and the responses endpoint in the running service: run streams, the provider
policy, approval through jobs (suspend, resume, another user, twice, expiry, another process),
and the official ``openai`` SDK against ``/api/v1/responses``."""

from __future__ import annotations

import datetime as dt
import threading

import openai
import pytest
from werkzeug.serving import make_server

from core import hookimpl, runs
from core.app import state
from core.errors import ApiError
from core.jobs import JobState
from core.runs import checkpoints
from core.runs.jobs import enqueue, resume
from tests.build.buildkit import create_flow, parse, wait_for
from tests.conftest import make_user, superuser
from tests.flowkit import edge, flow, node
from tests.models.conftest import registry
from tests.models.test_agent_engine import APPROVAL, agent_flow

PLUGINS = ["accounts", "flows", "build", "run", "catalog", "variables", "standard", "models", "responses"]


class Blocked:
    @hookimpl
    def model_provider_allowed(self, provider_id):
        return provider_id != "openai-compatible"


@pytest.fixture
def env(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    return app, client, alice, bob


def echo_flow():
    chat_in = node("ChatInput", "ChatInput-1", registry=registry())
    model = node(
        "LanguageModelComponent",
        "LM-1",
        registry=registry(),
        model=[{"name": "test-model", "provider": "OpenAI Compatible"}],
        stream=True,
    )
    out = node("ChatOutput", "ChatOutput-1", registry=registry())
    return flow(
        [chat_in, model, out],
        [edge(chat_in, "message", model, "input_value"), edge(model, "text_output", out, "input_value")],
    )


def test_build_stream_carries_tokens_then_the_message(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    llm.reply("alpha beta gamma")
    response = client.post(
        f"/api/v1/build/{flow_id}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}},
        headers=alice.bearer,
    )
    events = parse(response.get_data(as_text=True))
    tokens = [e["data"]["chunk"] for e in events if e["event"] == "token"]
    assert tokens == ["alpha", " beta", " gamma"]
    messages = [e["data"] for e in events if e["event"] == "add_message"]
    assert messages[-1]["text"] == "alpha beta gamma"
    assert [e["event"] for e in events][-1] == "end"


def test_blocked_provider_is_refused_before_the_run(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    app = make_app(plugins=[*PLUGINS, ("blocked", Blocked())])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow_id = create_flow(client, alice, echo_flow())
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=alice.key)
    assert response.status_code == 403
    assert "openai-compatible" in response.get_json()["detail"]
    assert llm.chat_requests == []


def _wait_end(app, job_id, owner):
    return wait_for(lambda: (i := state(app).jobs.info_for(job_id, owner)) is not None and i.state.terminal and i)


def _approval_flow():
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})], approval=APPROVAL, stream=False)
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    return data


def test_approval_through_jobs_resumed_in_another_app(env, make_app, llm):
    app, client, alice, bob = env
    flow_id = create_flow(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    with app.app_context():
        job_id = enqueue(runs.RunRequest(flow=flow_id, user_id=alice.id, surface="test", inputs=[runs.RunInput("go")]))
    info = _wait_end(app, job_id, alice.id)
    assert info.state is JobState.SUSPENDED, info.error
    paused = [e.data for e in state(app).jobs.read_events(job_id)][-1]
    assert paused["request"]["tool"] == "text_response"
    request_id = paused["request_id"]
    with app.app_context():
        with pytest.raises(ApiError) as foreign:
            resume(request_id, bob.id, {"action_id": "approve"})
        assert foreign.value.status == 404
    llm.reply("sent")
    other = make_app(plugins=PLUGINS)  # another process on the same database (a restart)
    with other.app_context():
        new_job = resume(
            request_id, alice.id, {"action_id": "edit", "values": {"arguments": {"input_value": "edited"}}}
        )
        with pytest.raises(ApiError) as again:
            resume(request_id, alice.id, {"action_id": "approve"})
        assert again.value.status == 409
    done = _wait_end(other, new_job, alice.id)
    assert done.state is JobState.FINISHED, done.error
    assert done.result["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "sent"
    tool_messages = [m for m in llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == "edited"


def test_rejected_and_expired_approvals(env, llm):
    app, client, alice, _bob = env
    flow_id = create_flow(client, alice, _approval_flow())
    ids = []
    for _ in range(2):
        llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
        with app.app_context():
            job = enqueue(runs.RunRequest(flow=flow_id, user_id=alice.id, surface="test", inputs=[runs.RunInput("go")]))
        _wait_end(app, job, alice.id)
        ids.append([e.data for e in state(app).jobs.read_events(job)][-1]["request_id"])
    llm.reply("not sent")
    with app.app_context():
        rejected = resume(ids[0], alice.id, {"action_id": "reject", "values": {"message": "no"}})
    assert _wait_end(app, rejected, alice.id).state is JobState.FINISHED
    assert llm.chat_requests[-1]["messages"][-1]["content"] == "The user refused this tool call. Reason: no"
    with app.app_context():
        assert checkpoints.expire(dt.datetime.now(dt.UTC) + dt.timedelta(days=2)) == 1
        with pytest.raises(ApiError) as gone:
            resume(ids[1], alice.id, {"action_id": "approve"})
        assert gone.value.status == 410


def test_build_stream_ends_suspended_for_approval(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    response = client.post(
        f"/api/v1/build/{flow_id}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "go"}},
        headers=alice.bearer,
    )
    events = parse(response.get_data(as_text=True))
    assert events[-1]["event"] == "suspended"
    assert events[-1]["data"]["request"]["arguments"] == {"input_value": "hello"}


# --- the responses endpoint with the official SDK ----------------------------------------------------
@pytest.fixture
def served(env):
    app, client, alice, bob = env
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, client, alice, bob, f"http://127.0.0.1:{server.server_port}/api/v1"
    server.shutdown()


def test_sdk_plain_stream_and_previous_response(served, llm):
    _app, client, alice, _bob, base = served
    flow_id = create_flow(client, alice, echo_flow(), endpoint_name="echo-llm")
    sdk = openai.OpenAI(base_url=base, api_key=alice.api_key, max_retries=0)
    first = sdk.responses.create(model=flow_id, input="hello")
    assert first.output_text == "echo: hello" and first.status == "completed"
    second = sdk.responses.create(model="echo-llm", input="again", previous_response_id=first.id)
    assert second.id == first.id  # the session continues

    llm.reply("s t r")
    stream = sdk.responses.create(model=flow_id, input="x", stream=True)
    deltas = [e.delta for e in stream if getattr(e, "type", None) == "response.output_text.delta"]
    assert "".join(deltas) == "s t r"

    llm.reply("via helper")
    with sdk.responses.stream(model=flow_id, input="y") as helper:
        final = helper.get_final_response()
    assert final.output_text == "via helper"


def test_reference_stream_frames(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    llm.reply("a b")
    body = client.post("/api/v1/responses", json={"model": flow_id, "input": "x", "stream": True}, headers=alice.key)
    frames = [f for f in body.get_data(as_text=True).split("\n\n") if f.strip()]
    chunks = [f for f in frames if '"object":"response.chunk"' in f]
    assert '"delta":{"content":""}' in chunks[0]
    assert '"finish_reason":"stop"' in chunks[-1] and '"delta":{}' in chunks[-1]
    assert any(f.startswith("event: response.completed") for f in frames)
    assert frames[-1] == "data: [DONE]"


def test_error_shapes_and_keys(served, llm):
    _app, client, alice, bob, base = served
    flow_id = create_flow(client, alice, echo_flow())
    missing = client.post("/api/v1/responses", json={"model": "nope", "input": "x"}, headers=alice.key)
    assert missing.status_code == 200 and missing.get_json()["error"]["code"] == "flow_not_found"
    tools = client.post("/api/v1/responses", json={"model": flow_id, "input": "x", "tools": [{}]}, headers=alice.key)
    assert tools.get_json()["error"]["code"] == "tools_not_supported"
    foreign = client.post("/api/v1/responses", json={"model": flow_id, "input": "x"}, headers=bob.key)
    assert foreign.get_json()["error"]["code"] == "flow_not_found"
    # x-api-key wins over the bearer key
    both = client.post(
        "/api/v1/responses",
        json={"model": flow_id, "input": "x"},
        headers={"x-api-key": bob.api_key, "Authorization": f"Bearer {alice.api_key}"},
    )
    assert both.get_json()["error"]["code"] == "flow_not_found"
    sdk = openai.OpenAI(base_url=base, api_key=alice.api_key, max_retries=0)
    answer = sdk.responses.create(model="nope", input="x")
    assert answer.error.code == "flow_not_found"


def test_a_missing_or_wrong_key_is_refused_before_the_handler(served, llm):
    """Issue 27: no key (or a wrong one) is an HTTP error before the run, 401 for the openai SDK."""
    _app, client, alice, _bob, base = served
    flow_id = create_flow(client, alice, echo_flow())
    for headers in ({}, {"x-api-key": "sk-not-a-key"}, {"Authorization": "Bearer sk-not-a-key"}):
        refused = client.post("/api/v1/responses", json={"model": flow_id, "input": "x"}, headers=headers)
        assert refused.status_code == 401, refused.get_json()
        assert isinstance(refused.get_json()["detail"], str)
        assert refused.headers["WWW-Authenticate"] == "Bearer"
    assert llm.chat_requests == []  # the model was never asked
    assert client.get("/api/v1/responses/some-id").status_code == 401
    sdk = openai.OpenAI(base_url=base, api_key="sk-not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        sdk.responses.create(model=flow_id, input="x")
    with pytest.raises(openai.AuthenticationError):
        sdk.responses.create(model=flow_id, input="x", stream=True)


def test_background_response_is_pollable(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    started = client.post(
        "/api/v1/responses", json={"model": flow_id, "input": "bg", "background": True}, headers=alice.key
    ).get_json()
    assert started["status"] == "queued"

    def finished():
        got = client.get(f"/api/v1/responses/{started['id']}", headers=alice.key).get_json()
        return got if got["status"] == "completed" else None

    done = wait_for(finished)
    assert done["output"][0]["content"][0]["text"] == "echo: bg"


def test_model_picker_lists_live_models(env, llm, monkeypatch):
    _app, client, alice, _bob = env
    got = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible", headers=alice.bearer)
    assert got.status_code == 200, got.get_json()
    assert got.get_json()["models"] == ["test-model", "test-model-large"]
    llm.models.append("fresh")
    cached = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible", headers=alice.bearer)
    assert "fresh" not in cached.get_json()["models"]
    fresh = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible&refresh=true", headers=alice.bearer)
    assert "fresh" in fresh.get_json()["models"]
    unknown = client.get("/api/v1/model_providers/models?provider=Nope", headers=alice.bearer)
    assert unknown.status_code == 422
    assert client.get("/api/v1/model_providers/models").status_code == 403
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", "http://10.0.0.1:9/v1")
    blocked = client.get(
        "/api/v1/model_providers/models?provider=OpenAI%20Compatible&refresh=true", headers=alice.bearer
    )
    assert blocked.status_code == 422 and "non-public" in blocked.get_json()["detail"][0]["msg"]
    monkeypatch.delenv("OPENAI_COMPATIBLE_BASE_URL")
    unset = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible", headers=alice.bearer)
    assert unset.status_code == 422 and "OPENAI_COMPATIBLE_BASE_URL" in unset.get_json()["detail"][0]["msg"]
    no_key = client.get("/api/v1/model_providers/models?provider=OpenAI", headers=alice.bearer)
    assert no_key.status_code == 422 and "OPENAI_API_KEY" in no_key.get_json()["detail"][0]["msg"]
    llm.stop()
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    gone = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible&refresh=true", headers=alice.bearer)
    assert gone.status_code == 502
    # a clean sentence naming the provider, never the failure's own text
    detail = gone.get_json()["detail"]
    assert detail.startswith("OpenAI Compatible could not list its models: it did not answer as expected.")
    assert "Errno" not in detail and "refused" not in detail.lower() and "127.0.0.1" not in detail


def test_list_models_hook_answers_only_for_its_providers(env, llm):
    app, _client, alice, _bob = env
    with app.test_request_context():
        ctx = runs.make_context(user_id=alice.id, flow={"id": None, "name": "", "data": {}}, store_messages=False)
        hook = state(app).host.hook
        assert hook.list_models(context=ctx, provider="Someone Else", refresh=False) is None
        assert hook.list_models(context=ctx, provider="OpenAI Compatible", refresh=True) == [
            "test-model",
            "test-model-large",
        ]


def test_v1_run_stream_carries_tokens(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, echo_flow())
    llm.reply("one two")
    response = client.post(f"/api/v1/run/{flow_id}?stream=true", json={"input_value": "hi"}, headers=alice.key)
    assert response.status_code == 200
    events = [__import__("json").loads(c) for c in response.get_data(as_text=True).split("\n\n") if c.strip()]
    assert [e["data"]["chunk"] for e in events if e["event"] == "token"] == ["one", " two"]
    assert events[-1]["event"] == "end"


def test_model_provider_policy_of_the_policies_plugin(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=[*PLUGINS, "policies"])
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    flow_id = create_flow(client, alice, echo_flow())
    policy = client.get("/api/v1/model-provider-policy", headers=admin.bearer).get_json()
    registered = {p["provider_id"] for p in policy["registered_providers"]}
    assert {"openai", "openai-compatible", "ollama"} <= registered
    put = client.put("/api/v1/model-provider-policy", json={"approved_provider_ids": ["openai"]}, headers=admin.bearer)
    assert put.status_code == 200, put.get_json()
    refused = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=alice.key)
    assert refused.status_code == 403
    assert "Model provider 'openai-compatible'" in refused.get_json()["detail"]
    picker = client.get("/api/v1/model_providers/models?provider=OpenAI%20Compatible", headers=alice.bearer)
    assert picker.status_code == 403
    client.put("/api/v1/model-provider-policy", json={"approved_provider_ids": []}, headers=admin.bearer)
    allowed = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=alice.key)
    assert allowed.status_code == 200, allowed.get_json()
    assert llm.chat_requests


def test_background_response_waiting_for_approval_is_incomplete(env, llm):
    _app, client, alice, _bob = env
    flow_id = create_flow(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    started = client.post(
        "/api/v1/responses", json={"model": flow_id, "input": "bg", "background": True}, headers=alice.key
    ).get_json()

    def paused():
        got = client.get(f"/api/v1/responses/{started['id']}", headers=alice.key).get_json()
        return got if got["status"] == "incomplete" else None

    waiting = wait_for(paused)
    assert waiting["incomplete_details"] == {"reason": "waiting_for_approval"}
    other = client.get(f"/api/v1/responses/{started['id']}", headers=_bob.key).get_json()
    assert other["error"]["code"] == "not_found"
