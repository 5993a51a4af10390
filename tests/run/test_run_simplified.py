"""POST /api/v1/run/{flow_id_or_name}: auth, lookup, response shape, output selection, errors, streaming."""

from __future__ import annotations

import json

from tests.run.runkit import answer, chat_echo, create_flow, edge, flow_data, frames, node


def _flow(client, caller, data=None, **extra):
    return create_flow(client, caller, data or chat_echo(), **extra)


# --- lookup and auth ---------------------------------------------------------------------------------
def test_runs_by_id_and_by_endpoint_name(client, alice):
    flow = _flow(client, alice, endpoint_name="echo-ep")
    by_id = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hello"}, headers=alice.key)
    assert by_id.status_code == 200, by_id.get_json()
    assert answer(by_id.get_json()) == "hello"
    by_name = client.post("/api/v1/run/echo-ep", json={"input_value": "again"}, headers=alice.key)
    assert by_name.status_code == 200 and answer(by_name.get_json()) == "again"


def test_api_key_in_query_works_and_bearer_is_ignored(client, alice):
    flow = _flow(client, alice)
    ok = client.post(f"/api/v1/run/{flow['id']}?x-api-key={alice.api_key}", json={"input_value": "q"})
    assert ok.status_code == 200 and answer(ok.get_json()) == "q"
    bearer = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "q"}, headers=alice.bearer)
    assert bearer.status_code == 403
    assert client.post(f"/api/v1/run/{flow['id']}", json={}).status_code == 403
    bad = client.post(f"/api/v1/run/{flow['id']}", json={}, headers={"x-api-key": "sk-nope"})
    assert bad.status_code == 403 and bad.get_json()["detail"] == "Invalid or missing API key"


def test_unknown_and_foreign_flows_are_404(client, alice, bob):
    flow = _flow(client, alice, endpoint_name="alice-only")
    for ref in (flow["id"], "alice-only"):
        response = client.post(f"/api/v1/run/{ref}", json={"input_value": "x"}, headers=bob.key)
        assert response.status_code == 404
        assert response.get_json() == {"detail": f"Flow identifier {ref} not found"}
    missing = client.post("/api/v1/run/00000000-0000-0000-0000-000000000000", json={}, headers=alice.key)
    assert missing.status_code == 404
    assert missing.get_json()["detail"] == "Flow identifier 00000000-0000-0000-0000-000000000000 not found"


# --- response --------------------------------------------------------------------------------------------
def test_response_shape_and_default_session(client, alice):
    flow = _flow(client, alice)
    body = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "yo"}, headers=alice.key).get_json()
    assert body["session_id"] == flow["id"]
    [block] = body["outputs"]
    assert block["inputs"] == {"input_value": "yo"}
    [rd] = block["outputs"]
    assert set(rd) >= {
        "results",
        "artifacts",
        "outputs",
        "logs",
        "messages",
        "timedelta",
        "duration",
        "component_display_name",
        "component_id",
        "used_frozen_result",
        "token_usage",
    }
    message = rd["results"]["message"]
    assert message["text"] == "yo" and message["data"]["text"] == "yo" and message["text_key"] == "text"
    assert message["session_id"] == flow["id"] and message["flow_id"] == flow["id"]
    assert message["timestamp"].endswith(" UTC")
    assert rd["outputs"]["message"] == {"message": "yo", "type": "text"}
    assert rd["messages"][0]["message"] == "yo" and rd["messages"][0]["session_id"] == flow["id"]
    assert rd["component_id"] == "ChatOutput-BBBBB" and rd["component_display_name"] == "Chat Output"


def test_session_id_is_used(client, alice):
    flow = _flow(client, alice)
    body = client.post(
        f"/api/v1/run/{flow['id']}", json={"input_value": "a", "session_id": "s-1"}, headers=alice.key
    ).get_json()
    assert body["session_id"] == "s-1"
    assert body["outputs"][0]["outputs"][0]["results"]["message"]["session_id"] == "s-1"


def test_empty_body_runs_with_defaults(client, alice):
    flow = _flow(client, alice)
    response = client.post(f"/api/v1/run/{flow['id']}", headers=alice.key)
    assert response.status_code == 200
    body = response.get_json()
    assert body["outputs"][0]["inputs"] == {"input_value": ""} and answer(body) == ""


def test_output_selection_rules(client, alice):
    text_in = node("TextInput", "TextInput-TTTTT")
    text_out = node("TextOutput", "TextOutput-UUUUU")
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    data = flow_data(
        [chat_in, chat_out, text_in, text_out],
        [edge(chat_in, "message", chat_out, "input_value"), edge(text_in, "text", text_out, "input_value")],
    )
    flow = _flow(client, alice, data)

    def ids(**body):
        response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "v", **body}, headers=alice.key)
        assert response.status_code == 200, response.get_json()
        return sorted(o["component_id"] for o in response.get_json()["outputs"][0]["outputs"])

    assert ids() == ["ChatOutput-BBBBB"]
    assert ids(output_type="text") == ["TextOutput-UUUUU"]
    assert ids(output_type="any") == ["ChatOutput-BBBBB", "TextOutput-UUUUU"]
    assert ids(output_type="debug") == sorted(
        ["ChatInput-AAAAA", "ChatOutput-BBBBB", "TextInput-TTTTT", "TextOutput-UUUUU"]
    )
    assert ids(output_component="TextInput-TTTTT") == ["TextInput-TTTTT"]
    assert ids(output_component="Chat Output") == ["ChatOutput-BBBBB"]
    # input_type decides which input receives input_value
    body = client.post(
        f"/api/v1/run/{flow['id']}",
        json={"input_value": "T", "input_type": "text", "output_type": "any"},
        headers=alice.key,
    ).get_json()
    texts = {o["component_id"]: o["results"] for o in body["outputs"][0]["outputs"]}
    assert texts["TextOutput-UUUUU"]["text"]["text"] == "T"
    assert texts["ChatOutput-BBBBB"]["message"]["text"] == ""


# --- errors ----------------------------------------------------------------------------------------------
def test_input_value_with_chat_input_tweak_is_400(client, alice):
    flow = _flow(client, alice)
    for key in ("ChatInput-AAAAA", "Chat Input"):
        response = client.post(
            f"/api/v1/run/{flow['id']}",
            json={"input_value": "a", "tweaks": {key: {"input_value": "b"}}},
            headers=alice.key,
        )
        assert response.status_code == 400, key
        assert "cannot pass a tweak with the same name" in response.get_json()["detail"]
    # without a body input_value the tweak is the input
    ok = client.post(
        f"/api/v1/run/{flow['id']}", json={"tweaks": {"ChatInput-AAAAA": {"input_value": "b"}}}, headers=alice.key
    )
    assert ok.status_code == 200 and answer(ok.get_json()) == "b"


def test_malformed_bodies_are_422(client, alice):
    flow = _flow(client, alice)
    url = f"/api/v1/run/{flow['id']}"
    bad_json = client.post(url, data="{nope", content_type="application/json", headers=alice.key)
    assert bad_json.status_code == 422 and bad_json.get_json()["detail"][0]["type"] == "json_invalid"
    not_object = client.post(url, json=[1, 2], headers=alice.key)
    assert not_object.status_code == 422
    wrong_type = client.post(url, json={"input_type": "video"}, headers=alice.key)
    assert wrong_type.status_code == 422 and wrong_type.get_json()["detail"][0]["loc"] == ["body", "input_type"]
    tweaks = client.post(url, json={"tweaks": "x"}, headers=alice.key)
    assert tweaks.status_code == 422 and tweaks.get_json()["detail"][0]["loc"] == ["body", "tweaks"]
    stream = client.post(url + "?stream=maybe", json={}, headers=alice.key)
    assert stream.status_code == 422


def test_graph_errors_are_422_naming_node_and_field(client, alice):
    data = chat_echo()
    data["nodes"].append(node("ChatOutput", "Bogus-1"))
    data["nodes"][-1]["data"]["type"] = "NoSuchComponent"
    data["edges"][0]["data"]["targetHandle"]["fieldName"] = "not_a_field"
    flow = _flow(client, alice, data)
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key)
    assert response.status_code == 422
    detail = response.get_json()["detail"]
    by_type = {item["type"]: item for item in detail}
    assert by_type["unknown_component"]["loc"][:2] == ["nodes", "Bogus-1"]
    assert "NoSuchComponent" in by_type["unknown_component"]["msg"]
    assert by_type["unknown_field"]["loc"] == ["nodes", "ChatOutput-BBBBB", "template", "not_a_field"]


def _failing_flow():
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])


def test_execution_failure_is_500_naming_the_component_without_traceback(client, alice):
    flow = _flow(client, alice, _failing_flow())
    response = client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key)
    assert response.status_code == 500
    detail = response.get_json()["detail"]
    assert detail == (
        "Error running component Message History (Memory-MMMMM): Number of messages must be non-negative."
    )
    text = response.get_data(as_text=True)
    assert "Traceback" not in text and 'File "' not in text


# --- streaming ---------------------------------------------------------------------------------------------
def test_stream_framing_events_and_final_result(client, alice, recorder):
    flow = _flow(client, alice)
    url = f"/api/v1/run/{flow['id']}"
    response = client.post(url + "?stream=true", json={"input_value": "streamed"}, headers=alice.key)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    events = frames(response.get_data())
    assert [e["event"] for e in events] == ["add_message", "add_message", "end"]
    assert all(set(e) == {"event", "data"} for e in events)
    user, ai = events[0]["data"], events[1]["data"]
    assert (user["sender"], user["text"]) == ("User", "streamed")
    assert (ai["sender"], ai["text"]) == ("Machine", "streamed")
    result = events[-1]["data"]["result"]
    assert answer(result) == "streamed" and result["session_id"] == flow["id"]
    # the same result as the non-streamed run (ids and times aside)
    plain = client.post(url, json={"input_value": "streamed"}, headers=alice.key).get_json()
    assert set(plain) == set(result) and answer(plain) == answer(result)
    # each frame is a json.dumps object followed by a blank line
    raw = response.get_data(as_text=True)
    assert raw.startswith('{"event": "add_message", "data": {')
    # the streamed answer is stored like a plain one
    assert recorder.texts(flow["id"]) == ["streamed", "streamed", "streamed", "streamed"]
    # ``stream: true`` in the body streams too (langflow-sdk asks that way); false or absent does not
    body_stream = client.post(url, json={"input_value": "b", "stream": True}, headers=alice.key)
    assert body_stream.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert [e["event"] for e in frames(body_stream.get_data())][-1] == "end"
    assert client.post(url, json={"input_value": "b", "stream": False}, headers=alice.key).is_json
    bad = client.post(url, json={"input_value": "b", "stream": "maybe"}, headers=alice.key)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["body", "stream"]


def test_stream_error_event(client, alice):
    flow = _flow(client, alice, _failing_flow())
    response = client.post(f"/api/v1/run/{flow['id']}?stream=true", json={}, headers=alice.key)
    assert response.status_code == 200
    events = frames(response.get_data())
    assert events[-1] == {
        "event": "error",
        "data": {
            "error": "Error running component Message History (Memory-MMMMM): Number of messages must be non-negative."
        },
    }
    assert "end" not in [e["event"] for e in events]


def test_stream_validation_errors_come_before_the_stream(client, alice):
    data = chat_echo()
    data["nodes"][0]["data"]["type"] = "Nope"
    flow = _flow(client, alice, data)
    response = client.post(f"/api/v1/run/{flow['id']}?stream=true", json={}, headers=alice.key)
    assert response.status_code == 422 and response.content_type == "application/json"
    assert client.post("/api/v1/run/missing-flow?stream=true", json={}, headers=alice.key).status_code == 404


# --- messages ------------------------------------------------------------------------------------------------
def test_chat_messages_are_stored_with_session_and_owner(client, alice, recorder):
    flow = _flow(client, alice)
    client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "m1", "session_id": "chat-1"}, headers=alice.key)
    stored = [m for m in recorder.messages if m["session_id"] == "chat-1"]
    assert [(m["sender"], m["text"]) for m in stored] == [("User", "m1"), ("Machine", "m1")]
    assert {m["_user_id"] for m in stored} == {alice.id}
    assert {m["flow_id"] for m in stored} == {flow["id"]}
    # should_store_message false: nothing stored
    data = chat_echo()
    for n in data["nodes"]:
        n["data"]["node"]["template"]["should_store_message"]["value"] = False
    quiet = _flow(client, alice, data, name="quiet")
    client.post(f"/api/v1/run/{quiet['id']}", json={"input_value": "shh"}, headers=alice.key)
    assert "shh" not in recorder.texts()


def test_message_history_feeds_the_memory_component(client, alice):
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    memory = node("Memory", "Memory-MMMMM")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    data = flow_data([chat_in, memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    flow = _flow(client, alice, data)
    url = f"/api/v1/run/{flow['id']}"
    client.post(url, json={"input_value": "first", "session_id": "mem"}, headers=alice.key)
    second = client.post(url, json={"input_value": "second", "session_id": "mem"}, headers=alice.key)
    text = answer(second.get_json())
    assert "User: first" in text and "User: second" in text
    assert text.index("User: first") < text.index("User: second")
    other = client.post(url, json={"input_value": "alone", "session_id": "other"}, headers=alice.key)
    assert "first" not in answer(other.get_json())


def test_no_store_when_body_is_huge_json_is_still_parsed(client, alice):
    flow = _flow(client, alice)
    value = "x" * 100_000
    response = client.post(
        f"/api/v1/run/{flow['id']}", data=json.dumps({"input_value": value}), headers=alice.key
    )  # no content type: the body is read as JSON anyway
    assert response.status_code == 200 and answer(response.get_json()) == value
