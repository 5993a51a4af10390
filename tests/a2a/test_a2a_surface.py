"""The A2A surface through the Flask test client: gate, cards, owner-key rules, JSON-RPC frames and errors."""

from __future__ import annotations

import uuid

from tests.a2a.a2akit import PLUGINS, agent, project, rpc, sse, user_message
from tests.build.buildkit import chain, failing_flow, slow_flow
from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, edge, flow_data, node


def _rpc(client, flow_id, body, headers=None):
    return client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=headers or {})


def _card(client, flow_id):
    return client.get(f"/api/v1/a2a/{flow_id}/.well-known/agent-card.json")


def test_flag_off_is_404_before_auth(make_app):
    app = make_app(plugins=PLUGINS)  # SERVICE_A2A_ENABLED defaults to false
    client = app.test_client()
    admin = superuser(client)
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    assert client.get("/api/v1/a2a/agents").status_code == 404  # no credentials: still 404, not 403
    assert client.get("/api/v1/a2a/agents", headers=admin.bearer).status_code == 404
    assert _card(client, flow_id).status_code == 404
    response = _rpc(client, flow_id, rpc("message/send", {"message": user_message("hi")}))
    assert response.status_code == 404 and response.get_json() == {"detail": "Not Found"}


def test_card_404_for_missing_not_agent_not_enabled(client, admin):
    folder = project(client, admin, "none")
    workflow = agent(client, admin, chat_echo(), folder_id=folder, name="wf", flow_type="workflow")
    disabled = agent(client, admin, chat_echo(), folder_id=folder, name="off", enabled=False)
    for flow_id in (workflow, disabled, str(uuid.uuid4()), "not-a-uuid"):
        assert _card(client, flow_id).status_code == 404, flow_id
        assert _rpc(client, flow_id, rpc("tasks/get", {"id": "x"})).status_code == 404


def test_card_shape_overrides_and_key_scheme(client, admin):
    open_folder = project(client, admin, "none")
    keyed_folder = project(client, admin, "apikey")
    plain = agent(client, admin, chat_echo(), folder_id=open_folder, name="Echo", description="Says it back")
    card = _card(client, plain).get_json()
    assert card["name"] == "Echo" and card["description"] == "Says it back"
    assert card["protocolVersion"] == "0.3.0" and card["preferredTransport"] == "JSONRPC"
    assert card["url"] == f"http://localhost/api/v1/a2a/{plain}/jsonrpc"
    assert card["capabilities"]["streaming"] is True
    [skill] = card["skills"]
    assert skill["id"] == plain and skill["tags"] == ["service"]
    assert skill["inputSchema"]["properties"]["input_value"] == {"type": "string"}
    assert "securitySchemes" not in card and "security" not in card

    overridden = agent(
        client,
        admin,
        chat_echo(),
        folder_id=keyed_folder,
        name="Keyed",
        a2a_card_overrides={"name": "Parrot", "version": "2.1", "tags": ["echo"], "examples": ["hello"]},
    )
    card = _card(client, overridden).get_json()  # readable by direct link, no key
    assert card["name"] == "Parrot" and card["version"] == "2.1"
    assert card["skills"][0]["tags"] == ["echo"] and card["skills"][0]["examples"] == ["hello"]
    assert card["securitySchemes"]["apiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
        "description": "An API key of the agent's owner",
    }
    assert card["security"] == [{"apiKey": []}]

    bad = agent(client, admin, chat_echo(), folder_id=keyed_folder, name="Bad", a2a_card_overrides={"tags": "x"})
    response = _card(client, bad)
    assert response.status_code == 422 and "tags" in response.get_json()["detail"]


def test_agents_lists_only_the_callers_published_agents(client, admin):
    alice = make_user(client, admin, username="alice")
    mine = project(client, alice, "apikey")
    published = agent(client, alice, chat_echo(), folder_id=mine, name="pub")
    agent(client, alice, chat_echo(), folder_id=mine, name="off", enabled=False)
    agent(client, alice, chat_echo(), folder_id=mine, name="wf", flow_type="workflow")
    theirs = project(client, admin, "apikey")
    agent(client, admin, chat_echo(), folder_id=theirs, name="admins")
    assert client.get("/api/v1/a2a/agents").status_code in (200, 403)  # auto-login answers for the superuser
    listed = client.get("/api/v1/a2a/agents", headers=alice.bearer).get_json()
    assert listed == [
        {
            "id": published,
            "name": "pub",
            "description": None,
            "cardUrl": f"http://localhost/api/v1/a2a/{published}/.well-known/agent-card.json",
        }
    ]


def test_owner_key_rules(client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    for auth_type in ("apikey", "oauth", None):  # a project without auth settings needs the key too
        folder = project(client, alice, auth_type, name=f"p-{auth_type}")
        flow_id = agent(client, alice, chat_echo(), folder_id=folder, name=f"a-{auth_type}")
        body = rpc("message/send", {"message": user_message("hello")})
        missing = _rpc(client, flow_id, body)
        assert missing.status_code == 401 and missing.get_json() == {"detail": "API key required"}
        for key in ("sk-not-a-key", bob.api_key):  # a valid key of someone else is not the owner's
            wrong = _rpc(client, flow_id, body, {"x-api-key": key})
            assert wrong.status_code == 401 and wrong.get_json() == {"detail": "Invalid API key"}
        ok = _rpc(client, flow_id, body, alice.key)
        assert ok.status_code == 200, ok.get_json()
        assert ok.get_json()["result"]["status"]["state"] == "completed"
    other = project(client, alice, "basic", name="p-basic")
    flow_id = agent(client, alice, chat_echo(), folder_id=other, name="a-basic")
    assert _rpc(client, flow_id, rpc("tasks/get", {"id": "x"}), alice.key).status_code == 403


def test_message_send_answers_a_completed_task(client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    response = _rpc(client, flow_id, rpc("message/send", {"message": user_message("hello agent")}, rid="r1"))
    assert response.status_code == 200
    body = response.get_json()
    assert body["jsonrpc"] == "2.0" and body["id"] == "r1"
    task = body["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    [artifact] = task["artifacts"]
    assert artifact["name"] == "result" and artifact["parts"] == [{"kind": "text", "text": "hello agent"}]
    assert task["history"][0]["parts"][0]["text"] == "hello agent"
    got = _rpc(client, flow_id, rpc("tasks/get", {"id": task["id"]})).get_json()["result"]
    assert got["status"]["state"] == "completed" and got["artifacts"] == task["artifacts"]
    assert got["contextId"] == task["contextId"]


def test_message_stream_frames(client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    response = _rpc(client, flow_id, rpc("message/stream", {"message": user_message("streamed")}, rid=7))
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    frames = [f["result"] for f in sse(response.data)]
    assert all(f["kind"] in ("task", "status-update", "artifact-update") for f in frames)
    assert [f["kind"] for f in frames] == ["task", "status-update", "artifact-update", "status-update"]
    assert frames[0]["status"]["state"] == "submitted"
    assert frames[1]["status"]["state"] == "working" and frames[1]["final"] is False
    assert frames[2]["artifact"]["parts"] == [{"kind": "text", "text": "streamed"}]
    assert frames[3]["status"]["state"] == "completed" and frames[3]["final"] is True
    # resubscribe replays the finished task's events
    again = _rpc(client, flow_id, rpc("tasks/resubscribe", {"id": frames[0]["id"]}))
    replay = [f["result"] for f in sse(again.data)]
    assert [f["kind"] for f in replay] == [f["kind"] for f in frames]
    assert replay[2]["artifact"]["parts"] == frames[2]["artifact"]["parts"]


def test_jsonrpc_errors_are_http_200(client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    unknown = _rpc(client, flow_id, rpc("tasks/explode", {}, rid=3))
    assert unknown.status_code == 200
    assert unknown.get_json()["error"]["code"] == -32601 and unknown.get_json()["id"] == 3
    bad = _rpc(client, flow_id, rpc("message/send", {"message": {"role": "robot"}}, rid=4)).get_json()
    assert bad["error"]["code"] == -32602 and bad["id"] == 4
    empty = _rpc(client, flow_id, rpc("message/send", {"message": {**user_message("x"), "parts": []}})).get_json()
    assert empty["error"]["code"] == -32602
    missing = _rpc(client, flow_id, rpc("tasks/get", {"id": str(uuid.uuid4())})).get_json()
    assert missing["error"] == {"code": -32001, "message": "Task not found"}
    not_json = client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", data=b"{", content_type="application/json")
    assert not_json.status_code == 200 and not_json.get_json()["error"]["code"] == -32700
    push = _rpc(client, flow_id, rpc("tasks/pushNotificationConfig/set", {})).get_json()
    assert push["error"]["code"] == -32003


def test_a_task_of_another_agent_is_not_found(client, admin):
    folder = project(client, admin, "none")
    one = agent(client, admin, chat_echo(), folder_id=folder, name="one")
    two = agent(client, admin, chat_echo(), folder_id=folder, name="two")
    task = _rpc(client, one, rpc("message/send", {"message": user_message("x")})).get_json()["result"]
    assert _rpc(client, two, rpc("tasks/get", {"id": task["id"]})).get_json()["error"]["code"] == -32001


def test_flow_failure_is_a_failed_task_with_a_sanitized_message(client, admin):
    public = project(client, admin, "none")
    keyed = project(client, admin, "apikey")
    anon = agent(client, admin, failing_flow(), folder_id=public, name="boom-public")
    own = agent(client, admin, failing_flow(), folder_id=keyed, name="boom-keyed")
    task = _rpc(client, anon, rpc("message/send", {"message": user_message("x")})).get_json()["result"]
    assert task["status"]["state"] == "failed"
    assert task["status"]["message"]["parts"] == [{"kind": "text", "text": "Flow execution failed"}]
    assert "artifacts" not in task
    task = _rpc(client, own, rpc("message/send", {"message": user_message("x")}), admin.key).get_json()["result"]
    text = task["status"]["message"]["parts"][0]["text"]
    assert text.startswith("Flow execution failed: Error running component Boom") and "always fails" in text


def test_cancel_a_running_task_and_a_finished_one(client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, slow_flow(10), folder_id=folder)
    params = {"message": user_message("slow"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params)).get_json()["result"]
    assert task["status"]["state"] in ("submitted", "working")
    cancelled = _rpc(client, flow_id, rpc("tasks/cancel", {"id": task["id"]})).get_json()
    assert cancelled["result"]["status"]["state"] == "canceled", cancelled
    assert _rpc(client, flow_id, rpc("tasks/get", {"id": task["id"]})).get_json()["result"]["status"]["state"] == (
        "canceled"
    )
    again = _rpc(client, flow_id, rpc("tasks/cancel", {"id": task["id"]})).get_json()
    assert again["error"]["code"] == -32002


def test_multi_turn_context_keeps_history(client, admin):
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    memory = node("Memory", "Memory-MMMMM")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    data = flow_data([chat_in, memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, data, folder_id=folder)

    def say(text, context_id=None):
        body = rpc("message/send", {"message": user_message(text, context_id)})
        return _rpc(client, flow_id, body, admin.key).get_json()["result"]

    first = say("my name is Ada")
    second = say("what is my name?", first["contextId"])
    assert second["contextId"] == first["contextId"]
    answer = second["artifacts"][0]["parts"][0]["text"]
    assert "my name is Ada" in answer and "what is my name?" in answer
    fresh = say("new conversation")
    assert fresh["contextId"] != first["contextId"]
    assert "Ada" not in fresh["artifacts"][0]["parts"][0]["text"]


def test_tasks_survive_a_new_app_on_the_same_database(make_app, tmp_path):
    first = make_app(plugins=PLUGINS, a2a_enabled=True)
    client = first.test_client()
    admin = superuser(client)
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    task = _rpc(client, flow_id, rpc("message/send", {"message": user_message("kept")})).get_json()["result"]
    second = make_app(plugins=PLUGINS, a2a_enabled=True)  # another process: nothing shared but the database
    got = _rpc(second.test_client(), flow_id, rpc("tasks/get", {"id": task["id"]})).get_json()["result"]
    assert got["status"]["state"] == "completed"
    assert got["artifacts"][0]["parts"][0]["text"] == "kept"


def test_a2a_1_0_method_names(client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, chat(), folder_id=folder)
    message = {"messageId": "m-10", "role": "ROLE_USER", "parts": [{"text": "one dot oh"}]}
    sent = _rpc(client, flow_id, rpc("SendMessage", {"message": message})).get_json()
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "one dot oh"
    got = _rpc(client, flow_id, rpc("GetTask", {"id": task["id"]})).get_json()["result"]
    assert got["id"] == task["id"] and got["status"]["state"] == "TASK_STATE_COMPLETED"
    streamed = _rpc(client, flow_id, rpc("SendStreamingMessage", {"message": message}))
    frames = [f["result"] for f in sse(streamed.data)]
    assert list(frames[0]) == ["task"] and "statusUpdate" in frames[1] and "artifactUpdate" in frames[2]
    assert frames[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    replay = [f["result"] for f in sse(_rpc(client, flow_id, rpc("SubscribeToTask", {"id": task["id"]})).data)]
    assert replay[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    cancel = _rpc(client, flow_id, rpc("CancelTask", {"id": task["id"]})).get_json()
    assert cancel["error"]["code"] == -32002
    bad = _rpc(client, flow_id, rpc("GetTask", {"id": 5, "nope": True})).get_json()
    assert bad["error"]["code"] == -32602


def chat():
    return chain()


def test_the_flows_plugin_answers_the_a2a_hooks(app, client, admin):
    from core.app import state

    folder = project(client, admin, "oauth")
    published = agent(client, admin, chat_echo(), folder_id=folder, name="pub")
    agent(client, admin, chat_echo(), folder_id=folder, name="off", enabled=False)
    with app.app_context():
        from service_a2a import hookspecs

        hooks = state(app).host.hooks
        flow = hooks.first(hookspecs.find_agent_flow, flow_id=published, user_id=None)
        assert flow is not None and flow.id == published and flow.data and flow.auth_type == "oauth"
        assert "auth_type" not in flow.as_dict()  # no private member leaks into the flow's JSON
        mine = hooks.first(hookspecs.find_agent_flow, flow_id=published, user_id=admin.id)
        assert mine is not None and mine.id == published
        assert (
            hooks.first(hookspecs.find_agent_flow, flow_id=published, user_id=str(uuid.uuid4())) is None
        )  # not theirs
        assert hooks.first(hookspecs.find_agent_flow, flow_id=str(uuid.uuid4()), user_id=None) is None
        assert hooks.first(hookspecs.find_agent_flow, flow_id="nope", user_id=None) is None
        found = hooks.first(hookspecs.published_agents, user_id=admin.id)
        assert found is not None and [f.id for f in found] == [published] and found[0].data is None
        assert hooks.first(hookspecs.published_agents, user_id=str(uuid.uuid4())) == []


def test_card_preview_builds_the_card_with_unsaved_overrides(client, admin):
    alice = make_user(client, admin, username="alice")
    folder = project(client, alice, "apikey")
    flow_id = agent(client, alice, chat_echo(), folder_id=folder, name="Draft", flow_type="workflow", enabled=False)
    path = f"/api/v1/a2a/{flow_id}/card-preview"
    overrides = {"name": "Parrot", "tags": ["echo"]}
    answer = client.post(path, json={"a2a_card_overrides": overrides}, headers=alice.bearer)
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["published"] is False  # not an agent yet: previewed all the same
    assert body["cardUrl"] == f"http://localhost/api/v1/a2a/{flow_id}/.well-known/agent-card.json"
    assert body["card"]["name"] == "Parrot" and body["card"]["skills"][0]["tags"] == ["echo"]
    assert body["card"]["security"] == [{"apiKey": []}]
    # the same card the card endpoint serves once saved and published
    patch = {"flow_type": "agent", "a2a_enabled": True, "a2a_card_overrides": overrides}
    assert client.patch(f"/api/v1/flows/{flow_id}", json=patch, headers=alice.bearer).status_code == 200
    assert _card(client, flow_id).get_json() == body["card"]
    bad = client.post(path, json={"a2a_card_overrides": {"tags": "x", "colour": 1}}, headers=alice.bearer)
    assert bad.status_code == 422
    assert bad.get_json()["detail"] == [
        {
            "loc": ["a2a_card_overrides", "colour"],
            "msg": "unknown member (allowed: name, description, version, tags, examples)",
            "type": "extra_forbidden",
        },
        {"loc": ["a2a_card_overrides", "tags"], "msg": "must be a list of strings", "type": "type_error"},
    ]
    # someone else's flow, a missing one, no credentials
    assert client.post(path, json={}, headers=admin.bearer).status_code == 404
    assert client.post(f"/api/v1/a2a/{uuid.uuid4()}/card-preview", json={}, headers=alice.bearer).status_code == 404
    assert client.post(path, json={}).status_code in (401, 403)
