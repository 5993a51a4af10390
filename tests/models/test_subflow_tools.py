"""Flows used as an agent's tools go through the run checks: a blocked component in the flow a tool runs
fails the run (it never runs, and the refusal is not handed to the model as a tool failure)."""

from __future__ import annotations

import pytest

from core.engine import run_flow
from core.engine.errors import PolicyRefused
from tests.conftest import make_user, superuser
from tests.flowkit import edge, flow, node
from tests.models.conftest import context, registry
from tests.models.test_agent_engine import agent_flow
from tests.models.test_app_models import PLUGINS
from tests.policies.test_enforcement import block

BLOCKED = "TextInput"


def leaf() -> dict:
    text = node("TextInput", "TextInput-1", input_value="secret of the leaf", registry=registry())
    out = node("ChatOutput", "ChatOutput-1", registry=registry())
    return flow([text, out], [edge(text, "text", out, "input_value")])


def refuse_blocked(found):
    if BLOCKED in {n["data"]["type"] for n in (found.get("data") or {}).get("nodes") or []}:
        raise PolicyRefused(f"Sub-flow '{found.get('name')}' cannot run: Component '{BLOCKED}' is blocked")


def test_a_run_flow_tool_called_by_the_agent_fails_the_run(llm):
    """Run Flow in tool mode: the flow is loaded only when the model calls the tool."""
    flows = {"leaf-id": {"id": "leaf-id", "name": "leaf", "data": leaf()}}
    data = agent_flow(tools=[("RunFlow", {"flow_name_selected": "leaf-id"})])
    llm.reply(tool_calls=[("message_output", {})])
    llm.reply("the tool said something")
    ctx = context(llm, load_flow=flows.get)
    allowed = run_flow(data, registry(), ctx, input_value="go")
    assert allowed.ok, allowed.error
    tool_results = [m["content"] for m in llm.chat_requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results == ["secret of the leaf"]  # the tool did run the flow
    asked = len(llm.chat_requests)
    llm.reply(tool_calls=[("message_output", {})])
    llm.reply("must not be asked")
    refused = run_flow(data, registry(), context(llm, load_flow=flows.get, check_flow=refuse_blocked), input_value="go")
    assert refused.status == "failed"
    assert f"Component '{BLOCKED}' is blocked" in refused.error["message"]
    assert len(llm.chat_requests) == asked + 1  # the refusal was not sent back to the model


def test_flow_as_tool_of_an_agent_in_the_service_is_refused(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=[*PLUGINS, "policies"])
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    created = client.post("/api/v1/flows/", json={"name": "leaf", "data": leaf()}, headers=alice.bearer)
    target = created.get_json()["id"]
    data = agent_flow(add_calculator_tool=False)
    tool = node("FlowTool", "FlowTool-1", flow_name=target, tool_name="leaf_tool", registry=registry())
    agent = next(n for n in data["nodes"] if n["id"] == "Agent-1")
    data["nodes"].append(tool)
    data["edges"].append(edge(tool, "api_build_tool", agent, "tools"))
    parent = client.post("/api/v1/flows/", json={"name": "agent", "data": data}, headers=alice.bearer).get_json()
    llm.reply(tool_calls=[("leaf_tool", {"input_value": "x"})])
    llm.reply("done")
    ok = client.post(f"/api/v1/run/{parent['id']}", json={"input_value": "go"}, headers=alice.key)
    assert ok.status_code == 200, ok.get_json()
    assert [m["content"] for m in llm.chat_requests[1]["messages"] if m["role"] == "tool"] == ["x"]  # it ran
    block(client, admin, BLOCKED)
    asked = len(llm.chat_requests)
    refused = client.post(f"/api/v1/run/{parent['id']}", json={"input_value": "go"}, headers=alice.key)
    assert refused.status_code == 403, refused.get_json()
    assert f"Component '{BLOCKED}' blocked by the catalog policy" in refused.get_json()["detail"]
    assert len(llm.chat_requests) == asked  # refused before the model was asked anything


@pytest.mark.parametrize("depth", [2])
def test_nested_flow_tools_are_checked_at_every_level(llm, depth):
    """A flow tool whose flow runs a flow that uses the blocked component: refused when the tool is built."""
    from core.engine.flow_tools import flow_tool

    middle_rf = node("RunFlow", "RunFlow-1", flow_name_selected="leaf-id", registry=registry())
    out = node("ChatOutput", "ChatOutput-1", registry=registry())
    flows = {
        "leaf-id": {"id": "leaf-id", "name": "leaf", "data": leaf()},
        "middle-id": {
            "id": "middle-id",
            "name": "middle",
            "data": flow([middle_rf, out], [edge(middle_rf, "flow_outputs_message", out, "input_value")]),
        },
    }
    ctx = context(llm, load_flow=flows.get, check_flow=refuse_blocked)
    tool = flow_tool(ctx, "middle-id")  # the middle flow itself is fine
    with pytest.raises(PolicyRefused, match="Sub-flow 'leaf'"):
        tool.call({"input_value": "x"})  # its Run Flow loads the leaf: refused there, depth 2
    with pytest.raises(PolicyRefused):
        flow_tool(ctx, "leaf-id")  # refused when the tool is made
