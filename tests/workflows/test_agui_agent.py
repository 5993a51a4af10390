"""AG-UI streams of agent runs: tool-call events linked to their message, ``human_input_required``
then resume, and ``STATE_DELTA`` patches that add up to the final state. The model is the local
OpenAI-wire test server; every frame is parsed back with the ag-ui-protocol models."""

from __future__ import annotations

import json

import jsonpatch
import pytest
from ag_ui.core import (
    CustomEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from service_bundle_models.provider import clear_cache
from service_workflows.agui import HUMAN_INPUT_REQUIRED, Translator

from core.engine.events import MessageAdded, RunFinished, StateChanged, TokenChunk, ToolCall, VertexStarted
from tests.build.buildkit import wait_for
from tests.conftest import make_user
from tests.models.test_agent_engine import APPROVAL, agent_flow
from tests.openai_server import OpenAIServer
from tests.workflows.wfkit import agui_events, chain, failing_flow, flow_with, plugins, types

URL = "/api/v2/workflows"


@pytest.fixture
def llm():
    clear_cache()
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def app(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    return make_app(plugins=plugins("models"))


def _stream(client, caller, flow_id, text="go"):
    r = client.post(
        URL,
        json={"flow_id": flow_id, "input_value": text, "mode": "stream", "stream_protocol": "agui"},
        headers=caller.key,
    )
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return agui_events(r.get_data())


def _approval_flow():
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})], approval=APPROVAL, stream=False)
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    return data


def _assert_no_interleaving(events):
    """A text message is never open while a tool call starts (AG-UI's sequencing rule)."""
    open_text: set[str] = set()
    for e in events:
        if isinstance(e, TextMessageStartEvent):
            open_text.add(e.message_id)
        elif isinstance(e, TextMessageEndEvent):
            open_text.discard(e.message_id)
        elif isinstance(e, ToolCallStartEvent):
            assert not open_text, f"tool call {e.tool_call_id} starts inside text message {open_text}"


def _patch(event):
    """A STATE_DELTA's operations (validated by ag-ui-protocol's JSON Patch models) as RFC 6902 JSON."""
    return [op.model_dump(mode="json", by_alias=True) for op in event.delta]


def _final_state(events):
    """Apply every STATE_DELTA (RFC 6902, with jsonpatch) in order to the first STATE_SNAPSHOT."""
    snapshots = [e for e in events if isinstance(e, StateSnapshotEvent)]
    state = snapshots[0].snapshot
    for e in events:
        if isinstance(e, StateDeltaEvent):
            state = jsonpatch.apply_patch(state, _patch(e))
    return state, snapshots[-1].snapshot


# --- tool calls -------------------------------------------------------------------------------------
def test_tool_call_events_are_linked_to_the_agent_message(client, alice, llm):
    flow_id = flow_with(client, alice, agent_flow())
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("It is 42.")
    events = _stream(client, alice, flow_id, "what is 6*7?")
    kinds = types(events)
    assert isinstance(events[0], RunStartedEvent) and isinstance(events[-1], RunFinishedEvent)
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    call_id = start.tool_call_id
    # the id is the model's own tool call id: the one the agent fed back with the result
    fed_back = [m for m in llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in fed_back] == [call_id]
    assert start.tool_call_name == "evaluate_expression"
    args = "".join(e.delta for e in events if isinstance(e, ToolCallArgsEvent) and e.tool_call_id == call_id)
    assert json.loads(args) == {"expression": "6*7"}
    assert [e.tool_call_id for e in events if isinstance(e, ToolCallEndEvent)] == [call_id]
    result = next(e for e in events if isinstance(e, ToolCallResultEvent))
    assert result.tool_call_id == call_id and result.content == "42" and result.role == "tool"
    order = [kinds.index(k) for k in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT")]
    assert order == sorted(order)
    # one answer, streamed by the agent (Chat Output's stored copy is not sent again); the call's
    # parent is the agent message's tool step
    answer = [e for e in events if isinstance(e, TextMessageStartEvent)]
    assert len(answer) == 1 and kinds.index("TOOL_CALL_RESULT") < kinds.index("TEXT_MESSAGE_START")
    assert start.parent_message_id == f"{answer[0].message_id}:tools:1"
    assert [e.delta for e in events if isinstance(e, TextMessageContentEvent)] == ["It", " is", " 42."]
    assert [e.message_id for e in events if isinstance(e, TextMessageEndEvent)] == [answer[0].message_id]
    output_done = next(i for i, e in enumerate(events) if kinds[i] == "STEP_FINISHED" and e.step_name == "ChatOutput-1")
    assert kinds.index("TEXT_MESSAGE_END") < output_done  # ended when Chat Output stored it, not at the run's end
    _assert_no_interleaving(events)
    stored = client.get(f"/api/v1/monitor/messages?flow_id={flow_id}", headers=alice.key).get_json()
    assert [m["text"] for m in stored if m["sender"] == "Machine"] == ["It is 42."]


def test_parallel_tool_calls_share_one_parent(client, alice, llm):
    flow_id = flow_with(client, alice, agent_flow())
    llm.reply(
        tool_calls=[("evaluate_expression", {"expression": "1+1"}), ("evaluate_expression", {"expression": "2*5"})]
    )
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "3-1"})])
    llm.reply("done")
    events = _stream(client, alice, flow_id)
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert len(starts) == 3 and len({s.tool_call_id for s in starts}) == 3
    assert starts[0].parent_message_id == starts[1].parent_message_id  # asked together
    assert starts[2].parent_message_id != starts[0].parent_message_id  # the next model turn
    results = {e.tool_call_id: e.content for e in events if isinstance(e, ToolCallResultEvent)}
    assert [results[s.tool_call_id] for s in starts] == ["2", "10", "2"]
    _assert_no_interleaving(events)


def test_text_streamed_before_a_tool_call_is_its_parent():
    """The model writes text, then asks for a tool, then answers: three messages, never interleaved."""
    t = Translator("thread", "run")
    mid = "msg-1"
    run = [
        TokenChunk("Let me ", mid),
        TokenChunk("check.", mid),
        ToolCall("call-1", "start", "lookup", '{"q": "x"}', message_id=mid),
        ToolCall("call-1", "args", "lookup", '{"q": "x"}', message_id=mid),
        ToolCall("call-1", "end", "lookup", '{"q": "x"}', message_id=mid),
        ToolCall("call-1", "result", "lookup", '{"q": "x"}', {"found": 1}, message_id=mid),
        TokenChunk("Found it.", mid),
        MessageAdded({"id": mid, "text": "Let me check.Found it.", "sender": "Machine"}),
        RunFinished(),
    ]
    events = [e for item in run for e in t.translate(item)]
    _assert_no_interleaving(events)
    starts = [e.message_id for e in events if isinstance(e, TextMessageStartEvent)]
    assert starts == [mid, f"{mid}:2"]
    assert next(e for e in events if isinstance(e, ToolCallStartEvent)).parent_message_id == mid
    assert [e.message_id for e in events if isinstance(e, TextMessageEndEvent)] == [mid, f"{mid}:2"]
    assert json.loads(next(e for e in events if isinstance(e, ToolCallResultEvent)).content) == {"found": 1}
    assert isinstance(events[-1], RunFinishedEvent)


# --- human in the loop ------------------------------------------------------------------------------
def test_human_input_required_then_resume_streams_the_rest(client, alice, admin, llm):
    flow_id = flow_with(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    events = _stream(client, alice, flow_id, "send it")
    run_id = events[0].run_id
    custom = [e for e in events if isinstance(e, CustomEvent)]
    assert len(custom) == 1 and custom[0].name == HUMAN_INPUT_REQUIRED == "service.human_input_required"
    value = custom[0].value
    assert value["job_id"] == run_id and value["tool"] == "text_response"
    assert value["arguments"] == {"input_value": "hello"} and value["type"] == "tool_approval"
    assert value["resume_url"] == f"{URL}/{run_id}/resume" and "approve" in value["actions"]
    assert value["vertex_id"] == "Agent-1" and value["request"]["request_id"] == value["request_id"]
    assert not any(isinstance(e, ToolCallStartEvent) for e in events)  # nothing ran yet
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].run_id == run_id
    assert events[-1].result == {"status": "suspended", "request_id": value["request_id"], "job_id": run_id}
    assert types(events).index("CUSTOM") < types(events).index("RUN_FINISHED")
    state, last = _final_state(events)
    assert state == last and state["nodes"]["ChatInput-1"]["status"] == "completed"
    assert state["nodes"]["Agent-1"]["status"] == "running"  # it paused, it did not finish
    pending = client.get(f"{URL}/pending?flow_id={flow_id}", headers=alice.key).get_json()["pending"]
    assert [(p["request_id"], p["job_id"]) for p in pending] == [(value["request_id"], run_id)]

    decision = {"request_id": value["request_id"], "decision": {"action_id": "approve"}}
    bob = make_user(client, admin, username="bob-agui")
    assert client.post(f"{URL}/{run_id}/resume", json=decision, headers=bob.key).status_code == 404
    assert client.post(f"{URL}/not-the-run/resume", json=decision, headers=alice.key).status_code == 404
    llm.reply("sent")
    r = client.post(f"{URL}/{run_id}/resume", json=decision, headers=alice.key)
    assert r.status_code == 200, r.get_json()
    resumed = r.get_json()["job_id"]
    assert client.post(f"{URL}/{run_id}/resume", json=decision, headers=alice.key).status_code == 409
    wait_for(lambda: client.get(f"{URL}?job_id={resumed}", headers=alice.key).get_json()["status"] == "completed")
    after = agui_events(client.get(f"{URL}/{resumed}/events?stream_protocol=agui", headers=alice.key).get_data())
    kinds = types(after)
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert after[0].thread_id == events[0].thread_id == flow_id  # the same conversation goes on
    start = next(e for e in after if isinstance(e, ToolCallStartEvent))
    assert start.tool_call_id == value["tool_call_id"] and start.tool_call_name == "text_response"
    result = next(e for e in after if isinstance(e, ToolCallResultEvent))
    assert result.tool_call_id == start.tool_call_id and result.content == "hello"
    text = [e.delta for e in after if isinstance(e, TextMessageContentEvent)]
    assert text[-1] == "sent"
    _assert_no_interleaving(after)
    done = client.get(f"{URL}?job_id={resumed}", headers=alice.key).get_json()
    assert done["output"]["text"] == "sent"


def test_sync_run_that_pauses_is_resumed_under_its_job_id(client, alice, llm):
    flow_id = flow_with(client, alice, _approval_flow())
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    r = client.post(URL, json={"flow_id": flow_id, "input_value": "go", "mode": "sync"}, headers=alice.key)
    body = r.get_json()
    assert body["status"] == "suspended", body
    request_id = body["human_request"]["request_id"]
    llm.reply("sent")
    decision = {"request_id": request_id, "decision": {"action_id": "reject", "values": {"message": "no"}}}
    r = client.post(f"{URL}/{body['job_id']}/resume", json=decision, headers=alice.key)
    assert r.status_code == 200, r.get_json()
    resumed = r.get_json()["job_id"]
    wait_for(lambda: client.get(f"{URL}?job_id={resumed}", headers=alice.key).get_json()["status"] == "completed")
    assert llm.chat_requests[-1]["messages"][-1]["content"] == "The user refused this tool call. Reason: no"
    # the sync run's own id now reads the resumed run's state (issue 27)
    followed = client.get(f"{URL}?job_id={body['job_id']}", headers=alice.key)
    assert followed.status_code == 200 and followed.get_json()["status"] == "completed", followed.get_json()


# --- run state ----------------------------------------------------------------------------------------
def test_state_deltas_apply_to_the_snapshot_and_give_the_final_state(client, alice):
    flow_id = flow_with(client, alice, chain())
    events = _stream(client, alice, flow_id, "hey")
    deltas = [e for e in events if isinstance(e, StateDeltaEvent)]
    assert len(deltas) == 4  # running, then completed, for each of the two components
    assert [op["op"] for d in deltas for op in _patch(d)] == ["add", "replace", "add", "replace"]
    state, last = _final_state(events)
    assert state == last
    assert state == {
        "nodes": {
            "ChatInput-AAAAA": {"status": "completed", "output": "hey"},
            "ChatOutput-BBBBB": {"status": "completed", "output": "hey"},
        }
    }
    kinds = types(events)
    assert kinds[1] == "STATE_SNAPSHOT" and kinds[-2:] == ["STATE_SNAPSHOT", "RUN_FINISHED"]


def test_state_of_a_failed_component_and_of_a_replayed_job(client, alice):
    flow_id = flow_with(client, alice, failing_flow())
    events = _stream(client, alice, flow_id, "x")
    assert isinstance(events[-1], RunErrorEvent)
    state = events[1].snapshot
    for e in events:
        if isinstance(e, StateDeltaEvent):
            state = jsonpatch.apply_patch(state, _patch(e))
    failed = [v for v in state["nodes"].values() if v["status"] == "failed"]
    assert len(failed) == 1 and "boom" in failed[0]["error"]
    ok = flow_with(client, alice, chain())
    job_id = client.post(
        URL, json={"flow_id": ok, "input_value": "bg", "mode": "background"}, headers=alice.key
    ).get_json()["job_id"]
    wait_for(lambda: client.get(f"{URL}?job_id={job_id}", headers=alice.key).get_json()["status"] == "completed")
    replayed = agui_events(client.get(f"{URL}/{job_id}/events?stream_protocol=agui", headers=alice.key).get_data())
    assert replayed[0].thread_id == ok and replayed[0].run_id == job_id  # session (the flow's), job
    state, last = _final_state(replayed)
    assert state == last and state["nodes"]["ChatOutput-BBBBB"] == {"status": "completed", "output": "bg"}


def test_published_state_becomes_json_patches():
    """A component's own state (``StateChanged``) goes out as the RFC 6902 diff from the state before."""
    t = Translator("thread", "run")
    run = [
        VertexStarted("A-1", "A", "A"),
        StateChanged({"plan": ["search"], "step": 1}),
        StateChanged({"plan": ["search", "answer"], "step": 2}),
        StateChanged({"plan": ["search", "answer"], "step": 2}),  # unchanged: no delta
        StateChanged({"plan": ["answer"]}),
        RunFinished(),
    ]
    events = [*t.started(), *(e for item in run for e in t.translate(item))]
    deltas = [e for e in events if isinstance(e, StateDeltaEvent)]
    assert len(deltas) == 4  # the node starting, then three changes
    assert any(op["op"] == "remove" for op in _patch(deltas[-1]))
    state, last = _final_state(events)
    assert state == last == {"plan": ["answer"], "nodes": {"A-1": {"status": "running"}}}
