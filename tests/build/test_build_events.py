"""Build events: the reference fixtures' sequences in the three delivery modes on both backends; framing."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from core import hookimpl
from core.engine import Message, Registry, RunContext, run_flow
from core.engine.types import to_text
from core.runs.wire import BUILD_EVENTS
from tests import flowkit
from tests.build.buildkit import (
    CHAT_ECHO,
    FIXTURE_INPUT,
    FIXTURES,
    SLOW_FLOW_EVENTS,
    SlowPass,
    create_flow,
    edge,
    failing_flow,
    names,
    node,
    parse,
    poll_all,
    reference_flow,
    registry,
    slow_flow,
    stream_all,
)
from tests.conftest import superuser


def shape(value: Any) -> Any:
    """Keys and value types, recursively (ids, times and durations differ between runs)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def engine_events(data: dict[str, Any], input_value: str | None) -> list[dict[str, Any]]:
    """What the engine itself emits for this flow: the sequence every delivery mode must reproduce."""
    out: list[dict[str, Any]] = []
    ctx = RunContext(
        flow_id="f",
        session_id="s",
        emit=lambda e: e.name in BUILD_EVENTS and out.append({"event": e.name, "data": e.payload()}),
    )
    run_flow(data, registry(), ctx, input_value=input_value)
    return json.loads(json.dumps(out))


def build(client, caller, flow_id, delivery, input_value):
    body = {"inputs": {"input_value": input_value}} if input_value is not None else {}
    response = client.post(f"/api/v1/build/{flow_id}/flow?event_delivery={delivery}", json=body, headers=caller.bearer)
    assert response.status_code == 200, response.get_data(as_text=True)
    if delivery == "direct":
        assert response.mimetype == "application/x-ndjson"
        return parse(response.get_data(as_text=True))
    assert set(response.get_json()) == {"job_id"}
    job_id = response.get_json()["job_id"]
    if delivery == "polling":
        return poll_all(client, job_id, caller.bearer)
    return stream_all(client, job_id, caller.bearer)


@pytest.mark.parametrize("delivery", ["streaming", "polling", "direct"])
@pytest.mark.parametrize("fixture", FIXTURES)
def test_reference_fixture_sequence_matches(any_app, fixture, delivery):
    client = any_app.test_client()
    admin = superuser(client)
    data = reference_flow(fixture)["data"]
    flow_id = create_flow(client, admin, data, name=fixture)
    events = build(client, admin, flow_id, delivery, FIXTURE_INPUT[fixture])
    expected = engine_events(data, FIXTURE_INPUT[fixture])
    assert names(events) == names(expected)
    assert names(events)[:2] == ["vertices_sorted", "build_start"] and names(events)[-1] == "end"
    for got, want in zip(events, expected, strict=True):
        assert shape(got["data"]) == shape(want["data"]), got["event"]
    if fixture == "chat-echo.json":
        assert names(events) == CHAT_ECHO
        user, ai = [e["data"] for e in events if e["event"] == "add_message"]
        assert user["text"] == ai["text"] == "hello"
        assert user["session_id"] == ai["session_id"] == flow_id and ai["flow_id"] == flow_id
        assert events[0]["data"] == {"ids": ["ChatInput-AAAAA"], "to_run": ["ChatInput-AAAAA", "ChatOutput-BBBBB"]}
    if fixture == "data-operations-uppercase.json":
        assert [e["data"]["text"] for e in events if e["event"] == "add_message"][-1] == "HELLO THERE"
    assert isinstance(events[-1]["data"]["build_duration"], float)


def test_framing_and_content_types(app, client, admin):
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    job_id = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "x"}}, headers=admin.bearer
    ).get_json()["job_id"]
    streamed = client.get(f"/api/v1/build/{job_id}/events", headers=admin.bearer)
    body = streamed.get_data(as_text=True)
    assert streamed.headers["Content-Type"] == "application/x-ndjson"
    chunks = body.split("\n\n")
    assert chunks[-1] == "" and all(chunks[:-1])
    first = chunks[0]
    assert first == json.dumps(json.loads(first))  # json.dumps spacing, as the reference
    assert first.startswith('{"event": "vertices_sorted", "data": ')
    # polling: everything queued at once, joined by a newline ("\n\n\n" between events)
    job_id = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "x"}}, headers=admin.bearer
    ).get_json()["job_id"]
    app.extensions["service"].jobs.join(5)
    polled = client.get(f"/api/v1/build/{job_id}/events?event_delivery=polling", headers=admin.bearer)
    text = polled.get_data(as_text=True)
    assert polled.mimetype == "application/x-ndjson"
    assert text.count("\n\n\n") == 6 and text.endswith("}\n\n")
    assert names(parse(text)) == CHAT_ECHO
    # a poll after the end says so, every time
    for _ in range(2):
        again = client.get(f"/api/v1/build/{job_id}/events?event_delivery=polling", headers=admin.bearer)
        assert again.get_data(as_text=True) == '{"event": "end", "data": {}}\n\n'
    # streaming again replays the whole build (streams do not move the poll cursor)
    assert names(stream_all(client, job_id, admin.bearer)) == CHAT_ECHO


#: opened by the test once it saw a poll come back empty: the Gated Pass cannot emit before
GATE = threading.Event()


class GatedPass(SlowPass):
    """Forwards its input once the test opens :data:`GATE` (it emits nothing while it waits); fails after a
    minute, so a poll that wrongly waits for the next event fails the test instead of hanging it."""

    key = "GatedPass"
    display_name = "Gated Pass"

    def run(self) -> Message:
        end = time.monotonic() + 60
        while not GATE.wait(0.01):
            self.context.check()
            if time.monotonic() > end:
                raise RuntimeError("the test never opened the gate")
        return Message(text=to_text(self.input_value))


class _GatedBundle:
    @hookimpl
    def register_components(self):
        return [GatedPass]


def test_poll_waits_briefly_then_returns_nothing(make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_BUILD_POLL_WAIT_SECONDS", "0.3")
    from service_bundle_standard.bundle import all_components

    from tests.build.buildkit import app_plugins

    GATE.clear()
    app = make_app(plugins=[*app_plugins(), ("gated", _GatedBundle())])
    client = app.test_client()
    admin = superuser(client)
    gated_registry = Registry.from_classes([*all_components(), GatedPass])
    chat_in, chat_out = node("ChatInput", "ChatInput-AAAAA"), node("ChatOutput", "ChatOutput-BBBBB")
    gated = flowkit.node("GatedPass", "GatedPass-GGGGG", registry=gated_registry)
    data = {
        "nodes": [chat_in, gated, chat_out],
        "edges": [edge(chat_in, "message", gated, "input_value"), edge(gated, "message", chat_out, "input_value")],
        "viewport": {"x": 0, "y": 0, "zoom": 1},
    }
    flow_id = create_flow(client, admin, data)
    job_id = client.post(f"/api/v1/build/{flow_id}/flow", json={}, headers=admin.bearer).get_json()["job_id"]

    def poll() -> list[str]:
        response = client.get(f"/api/v1/build/{job_id}/events?event_delivery=polling", headers=admin.bearer)
        assert response.status_code == 200, response.get_data(as_text=True)
        return names(parse(response.get_data(as_text=True)))

    try:
        seen = poll()
        while "end_vertex" not in seen:  # Chat Input done: the Gated Pass waits, nothing can come
            seen += poll()
        started = time.monotonic()
        assert poll() == []  # nothing arrived: the poll answers an empty body...
        assert time.monotonic() - started >= 0.3  # ...once it waited its 0.3 s
    finally:
        GATE.set()
    while seen[-1] not in ("end", "error"):
        seen += poll()
    assert seen == SLOW_FLOW_EVENTS


def test_invalid_graph_is_an_error_event_not_a_422(client, admin):
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    bad = {
        "nodes": [
            {"id": "X-1", "type": "genericNode", "data": {"id": "X-1", "type": "NoSuchThing", "node": {"template": {}}}}
        ],
        "edges": [],
    }
    for delivery in ("polling", "direct"):
        response = client.post(
            f"/api/v1/build/{flow_id}/flow?event_delivery={delivery}", json={"data": bad}, headers=admin.bearer
        )
        assert response.status_code == 200
        if delivery == "polling":
            events = poll_all(client, response.get_json()["job_id"], admin.bearer)
        else:
            events = parse(response.get_data(as_text=True))
        assert names(events) == ["error"]
        error = events[0]["data"]
        assert error["category"] == "error" and error["error"] is True
        assert error["text"].startswith("Invalid flow: ") and "NoSuchThing" in error["text"]
        assert error["errors"][0]["type"] == "unknown_component"
        assert error["errors"][0]["loc"][:2] == ["nodes", "X-1"]
    # a body member of the wrong type is still a 422 before any job
    wrong = client.post(f"/api/v1/build/{flow_id}/flow", json={"data": [1, 2]}, headers=admin.bearer)
    assert wrong.status_code == 422 and wrong.get_json()["detail"][0]["loc"] == ["body", "data"]
    bad_mode = client.post(f"/api/v1/build/{flow_id}/flow?event_delivery=carrier-pigeon", headers=admin.bearer)
    assert bad_mode.status_code == 422


def test_failing_component_ends_with_error_and_no_end(any_app):
    client = any_app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, failing_flow())
    events = build(client, admin, flow_id, "streaming", "hi")
    assert names(events) == ["vertices_sorted", "build_start", "add_message", "end_vertex", "end_vertex", "error"]
    failed = events[4]["data"]["build_data"]
    assert failed["id"] == "Boom-XXXXX" and failed["valid"] is False
    assert failed["data"]["outputs"]["message"]["type"] == "error"
    assert events[-1]["data"]["text"] == "boom: this component always fails"
    assert events[-1]["data"]["category"] == "error"


def test_unsaved_graph_is_built_instead_of_the_stored_one(client, admin):
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    unsaved = reference_flow("data-operations-uppercase.json")["data"]
    events = parse(
        client.post(
            f"/api/v1/build/{flow_id}/flow?event_delivery=direct",
            json={"data": unsaved, "inputs": {"input_value": "abc"}},
            headers=admin.bearer,
        ).get_data(as_text=True)
    )
    assert [e["data"]["text"] for e in events if e["event"] == "add_message"] == ["HELLO THERE"]
    assert [e["data"]["build_data"]["id"] for e in events if e["event"] == "end_vertex"] == [
        "Operations-QQQQQ",
        "ChatOutput-GGGGG",
    ]


@pytest.mark.parametrize("backend", ["inprocess", "rq"])
def test_concurrent_pollers_share_the_stream_without_duplicates(backend, make_app, request):
    from tests.build.buildkit import app_plugins

    app = make_app(plugins=app_plugins()) if backend == "inprocess" else request.getfixturevalue("make_rq_app")()
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, slow_flow(0.3))
    job_id = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "q"}}, headers=admin.bearer
    ).get_json()["job_id"]
    got: list[list[dict[str, Any]]] = [[], [], []]
    done = threading.Event()

    def poller(i: int) -> None:
        c = app.test_client()
        while not done.is_set():
            batch = parse(
                c.get(f"/api/v1/build/{job_id}/events?event_delivery=polling", headers=admin.bearer).get_data(
                    as_text=True
                )
            )
            got[i] += batch
            if any(e["event"] in ("end", "error") for e in batch) or batch == [{"event": "end", "data": {}}]:
                done.set()

    threads = [threading.Thread(target=poller, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    real = [e for batch in got for e in batch if not (e["event"] == "end" and e["data"] == {})]
    ids = [json.dumps(e, sort_keys=True) for e in real]
    assert len(ids) == len(set(ids)), "an event was delivered twice"
    assert sorted(names(real)) == sorted(SLOW_FLOW_EVENTS)
    assert names(real).count("end") == 1  # the real end, once; other pollers then got the after-end answer
