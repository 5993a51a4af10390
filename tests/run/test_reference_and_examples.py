"""The three reference exports, uploaded through /api/v1/flows/upload/, and every example flow, run over HTTP."""

from __future__ import annotations

import pytest

from tests.run.runkit import answer, create_flow, frames, reference, upload, wait_jobs


def test_chat_echo_fixture(client, alice):
    flow = upload(client, alice, reference("chat-echo.json"), "chat-echo.json")
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi there"}, headers=alice.key)
    assert response.status_code == 200
    body = response.get_json()
    assert answer(body) == "hi there"
    rd = body["outputs"][0]["outputs"][0]
    assert rd["messages"][0]["message"] == "hi there" and rd["outputs"]["message"]["message"] == "hi there"
    streamed = client.post(f"/api/v1/run/{flow['id']}?stream=true", json={"input_value": "hi there"}, headers=alice.key)
    assert answer(frames(streamed.get_data())[-1]["data"]["result"]) == "hi there"


def test_data_operations_uppercase_fixture(client, alice):
    flow = upload(client, alice, reference("data-operations-uppercase.json"), "data-operations-uppercase.json")
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hello there"}, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    assert answer(response.get_json()) == "HELLO THERE"
    streamed = client.post(
        f"/api/v1/run/{flow['id']}?stream=true", json={"input_value": "hello there"}, headers=alice.key
    )
    events = frames(streamed.get_data())
    assert answer(events[-1]["data"]["result"]) == "HELLO THERE"
    assert events[-2]["event"] == "add_message" and events[-2]["data"]["text"] == "HELLO THERE"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("not json at all", '```json\n{\n  "payload": "not json at all"\n}\n```'),
        ('{"name": "Ada", "n": 2}', '```json\n{\n  "name": "Ada",\n  "n": 2\n}\n```'),
    ],
)
def test_webhook_parser_chat_fixture(app, client, alice, body, expected):
    flow = upload(client, alice, reference("webhook-parser-chat.json"), "webhook-parser-chat.json")
    started = client.post(f"/api/v1/webhook/{flow['id']}", data=body, headers=alice.key)
    assert started.status_code == 202
    wait_jobs(app)
    status = client.get(started.get_json()["status_url"], headers=alice.key).get_json()
    assert status["status"] == "finished", status
    assert answer(status["result"]) == expected
    # the same flow through the run endpoint, the payload given as a tweak
    direct = client.post(
        f"/api/v1/run/{flow['id']}", json={"tweaks": {"Webhook-WWWWW": {"data": body}}}, headers=alice.key
    )
    assert direct.status_code == 200 and answer(direct.get_json()) == expected


# --- example flows (basic examples = starter projects) ---------------------------------------------------
def _examples(client, caller):
    response = client.get("/api/v1/flows/basic_examples/", headers=caller.key)
    assert response.status_code == 200
    examples = response.get_json()
    assert examples, "the flows plugin ships example flows"
    return examples


def _has(example, key):
    return any(n.get("data", {}).get("type") == key for n in example["data"]["nodes"])


def test_every_example_flow_runs(app, client, alice):
    examples = _examples(client, alice)
    starters = client.get("/api/v1/starter-projects/", headers=alice.bearer).get_json()
    assert {s["name"] for s in starters} == {e["name"] for e in examples}
    ran = []
    # the examples this app can run offline on any chat text (standard components, no outbound request); the
    # others (LLM, file, MCP, API and JSON starters) run with their plugins and inputs in tests/flows/test_starters.py
    known = {k for group in client.get("/api/v1/all", headers=alice.bearer).get_json().values() for k in group}
    examples = [
        e
        for e in examples
        if all(n["data"]["type"] in known or n["type"] == "noteNode" for n in e["data"]["nodes"])
        and not _has(e, "APIRequest")
        and e["name"] != "Data Transformation"  # expects JSON in the chat
    ]
    assert len(examples) >= 3
    for example in examples:
        flow = create_flow(client, alice, example["data"], name=example["name"])
        if _has(example, "Webhook"):
            started = client.post(f"/api/v1/webhook/{flow['id']}", data='{"text": "hello example"}', headers=alice.key)
            assert started.status_code == 202
            wait_jobs(app)
            status = client.get(started.get_json()["status_url"], headers=alice.key).get_json()
            assert status["status"] == "finished", (example["name"], status)
            assert status["result"]["outputs"][0]["outputs"], example["name"]
            assert "hello example" in answer(status["result"])
        else:
            response = client.post(
                f"/api/v1/run/{flow['id']}", json={"input_value": "hello example"}, headers=alice.key
            )
            assert response.status_code == 200, (example["name"], response.get_json())
            body = response.get_json()
            assert body["outputs"][0]["outputs"], example["name"]
            text = answer(body)
            assert isinstance(text, str) and text, example["name"]
            if _has(example, "ChatInput"):
                assert "hello example" in text, (example["name"], text)
            streamed = client.post(
                f"/api/v1/run/{flow['id']}?stream=true", json={"input_value": "hello example"}, headers=alice.key
            )
            assert answer(frames(streamed.get_data())[-1]["data"]["result"]) == text
        ran.append(example["name"])
    assert len(ran) == len(examples)


def test_known_example_answers(app, client, alice):
    by_name = {e["name"]: e for e in _examples(client, alice)}
    if "Basic Chat Echo" in by_name:
        flow = create_flow(client, alice, by_name["Basic Chat Echo"]["data"], name="echo")
        body = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "ping"}, headers=alice.key).get_json()
        assert answer(body) == "ping"
    if "Text Uppercase" in by_name:
        flow = create_flow(client, alice, by_name["Text Uppercase"]["data"], name="upper")
        body = client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).get_json()
        assert answer(body) == answer(body).upper() and answer(body)
