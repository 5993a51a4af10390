"""POST /api/v1/run/advanced/{flow} (the complete request) and /api/v1/run/session/{flow} (user auth)."""

from __future__ import annotations

from tests.run.runkit import answer, chat_echo, create_flow, edge, flow_data, frames, node


def _two_outputs():
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    text_in = node("TextInput", "TextInput-TTTTT")
    text_out = node("TextOutput", "TextOutput-UUUUU")
    return flow_data(
        [chat_in, chat_out, text_in, text_out],
        [edge(chat_in, "message", chat_out, "input_value"), edge(text_in, "text", text_out, "input_value")],
    )


def test_advanced_runs_each_input_and_returns_every_output(client, alice):
    flow = create_flow(client, alice, _two_outputs())
    body = {
        "inputs": [
            {"input_value": "one", "type": "chat"},
            {"input_value": "two", "type": "text"},
            {"input_value": "three", "components": ["TextInput-TTTTT"]},
        ]
    }
    response = client.post(f"/api/v1/run/advanced/{flow['id']}", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    out = response.get_json()
    assert set(out) == {"outputs", "session_id"}
    assert [block["inputs"] for block in out["outputs"]] == [{"input_value": v} for v in ("one", "two", "three")]

    def texts(block):
        return {
            o["component_id"]: (o["results"].get("message") or o["results"].get("text"))["text"]
            for o in block["outputs"]
        }

    assert texts(out["outputs"][0]) == {"ChatOutput-BBBBB": "one", "TextOutput-UUUUU": ""}
    assert texts(out["outputs"][1]) == {"ChatOutput-BBBBB": "", "TextOutput-UUUUU": "two"}
    assert texts(out["outputs"][2]) == {"ChatOutput-BBBBB": "", "TextOutput-UUUUU": "three"}


def test_advanced_output_selection_tweaks_and_defaults(client, alice):
    flow = create_flow(client, alice, _two_outputs())
    url = f"/api/v1/run/advanced/{flow['id']}"
    chosen = client.post(
        url, json={"inputs": [{"input_value": "x"}], "outputs": ["Text Output"]}, headers=alice.key
    ).get_json()
    assert [o["component_id"] for o in chosen["outputs"][0]["outputs"]] == ["TextOutput-UUUUU"]
    by_id = client.post(
        url, json={"inputs": [{"input_value": "x"}], "outputs": ["ChatInput-AAAAA"]}, headers=alice.key
    ).get_json()
    assert [o["component_id"] for o in by_id["outputs"][0]["outputs"]] == ["ChatInput-AAAAA"]
    tweaked = client.post(
        url,
        json={"inputs": [{"input_value": "x"}], "tweaks": {"ChatOutput-BBBBB": {"sender_name": "Adv"}}},
        headers=alice.key,
    ).get_json()
    chat = next(o for o in tweaked["outputs"][0]["outputs"] if o["component_id"] == "ChatOutput-BBBBB")
    assert chat["messages"][0]["sender_name"] == "Adv"
    # no body: one run with an empty chat input
    default = client.post(url, headers=alice.key)
    assert default.status_code == 200 and len(default.get_json()["outputs"]) == 1
    assert default.get_json()["outputs"][0]["inputs"] == {"input_value": ""}


def test_advanced_sessions(client, alice, recorder):
    flow = create_flow(client, alice, chat_echo())
    url = f"/api/v1/run/advanced/{flow['id']}"
    first = client.post(url, json={"inputs": [{"input_value": "hi"}]}, headers=alice.key).get_json()
    issued = first["session_id"]
    assert issued and issued != flow["id"]
    assert recorder.texts(issued) == ["hi", "hi"]
    again = client.post(url, json={"inputs": [{"input_value": "more"}], "session_id": issued}, headers=alice.key)
    assert again.status_code == 200 and again.get_json()["session_id"] == issued
    assert recorder.texts(issued) == ["hi", "hi", "more", "more"]
    unknown = client.post(url, json={"session_id": "never-seen"}, headers=alice.key)
    assert unknown.status_code == 404 and unknown.get_json() == {"detail": "Session never-seen not found"}
    # a session id issued for another flow is unknown here
    other = create_flow(client, alice, chat_echo(), name="other")
    cross = client.post(f"/api/v1/run/advanced/{other['id']}", json={"session_id": issued}, headers=alice.key)
    assert cross.status_code == 404
    # the flow's default session and a session with stored history are known
    assert client.post(url, json={"session_id": flow["id"]}, headers=alice.key).status_code == 200
    client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "s", "session_id": "simple-s"}, headers=alice.key)
    assert client.post(url, json={"session_id": "simple-s"}, headers=alice.key).status_code == 200


def test_advanced_per_input_session_and_stream(client, alice, recorder):
    flow = create_flow(client, alice, chat_echo())
    url = f"/api/v1/run/advanced/{flow['id']}"
    client.post(url, json={"inputs": [{"input_value": "a", "session": "per-input"}]}, headers=alice.key)
    assert recorder.texts("per-input") == ["a", "a"]
    streamed = client.post(url, json={"inputs": [{"input_value": "s"}], "stream": True}, headers=alice.key)
    assert streamed.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    events = frames(streamed.get_data())
    assert [e["event"] for e in events] == ["add_message", "add_message", "end"]
    assert answer(events[-1]["data"]["result"]) == "s"


def test_advanced_auth_and_errors(client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    url = f"/api/v1/run/advanced/{flow['id']}"
    assert client.post(url, json={}, headers=alice.bearer).status_code == 403
    assert client.post(url, json={}, headers=bob.key).status_code == 404
    assert client.post(url, json={"inputs": "x"}, headers=alice.key).status_code == 422
    conflict = client.post(
        url,
        json={"inputs": [{"input_value": "a"}], "tweaks": {"ChatInput-AAAAA": {"input_value": "b"}}},
        headers=alice.key,
    )
    assert conflict.status_code == 400


def test_session_variant_uses_user_credentials(client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    url = f"/api/v1/run/session/{flow['id']}"
    bearer = client.post(url, json={"input_value": "via token"}, headers=alice.bearer)
    assert bearer.status_code == 200 and answer(bearer.get_json()) == "via token"
    key = client.post(url, json={"input_value": "via key"}, headers=alice.key)
    assert key.status_code == 200 and answer(key.get_json()) == "via key"
    client.set_cookie("access_token_svc", alice.token)
    cookie = client.post(url, json={"input_value": "via cookie"})
    assert cookie.status_code == 200 and answer(cookie.get_json()) == "via cookie"
    client.delete_cookie("access_token_svc")
    assert client.post(url, json={}).status_code == 403
    assert client.post(url, json={}, headers=bob.bearer).status_code == 404
    streamed = client.post(url + "?stream=true", json={"input_value": "s"}, headers=alice.bearer)
    assert [e["event"] for e in frames(streamed.get_data())][-1] == "end"


def test_session_route_is_not_in_the_openapi_document(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert "/api/v1/run/{flow_id_or_name}" in paths and "/api/v1/run/advanced/{flow_id_or_name}" in paths
    assert "/api/v1/run/session/{flow_id_or_name}" not in paths
