"""Condition, Sub Flow, Flow as Tool, Listen/Notify, the Calculator tool, and an export/import round trip
of every native component of the three bundles."""

from __future__ import annotations

import json

import pytest
from service_bundle_data.bundle import all_components as data_components
from service_bundle_sandbox.bundle import register_components as sandbox_components
from service_bundle_standard.bundle import all_components as standard_components
from service_bundle_standard.flow_extras import DataConditionalRouter, FlowTool, Listen, Notify, SubFlow
from service_bundle_standard.utilities import CalculatorTool
from service_bundle_tools.bundle import all_components as tools_components

from core.engine import ComponentError, Data, Graph, Message, Registry, RunContext, run_flow, run_graph
from core.engine.tools import Tool
from tests.flowkit import edge, flow, load_reference, node

REGISTRY = Registry.from_classes(
    [*standard_components(), *data_components(), *tools_components(), *sandbox_components()]
)


def test_condition_routes_single_and_lists():
    c = DataConditionalRouter.build(data_input=Data({"ok": "yes"}), key_name="ok", operator="boolean validator")
    assert c.process_data().data == {"ok": "yes"} and c.stopped_outputs == {"false_output"}
    c = DataConditionalRouter.build(data_input=Data({"k": "abc"}), key_name="k", operator="contains", compare_value="z")
    c.process_data()
    assert c.stopped_outputs == {"true_output"}
    items = [Data({"k": "a1"}), Data({"k": "b2"}), Data({"other": 1})]
    c = DataConditionalRouter.build(data_input=items, key_name="k", operator="starts with", compare_value="a")
    assert [d.data for d in c.process_data()] == [{"k": "a1"}]
    c = DataConditionalRouter.build(data_input=Data({"x": 1}), key_name="k")
    assert "error" in c.process_data().data and c.stopped_outputs == {"true_output", "false_output"}
    with pytest.raises(ValueError, match="Invalid operator"):
        DataConditionalRouter.build(data_input=items, key_name="k", operator="regex").process_data()


def test_condition_in_a_flow_inactivates_the_other_branch():
    src = node("CreateList", "CreateList-1", registry=REGISTRY, texts=["go"])
    cond = node("DataConditionalRouter", "Cond-1", registry=REGISTRY, key_name="text", compare_value="go")
    yes = node("ParseData", "Yes-1", registry=REGISTRY, template="yes {text}")
    no = node("ParseData", "No-1", registry=REGISTRY, template="no {text}")
    out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    data = flow(
        [src, cond, yes, no, out],
        [
            edge(src, "list", cond, "data_input"),
            edge(cond, "true_output", yes, "data"),
            edge(cond, "false_output", no, "data"),
            edge(yes, "text", out, "input_value"),
        ],
    )
    result = run_flow(data, REGISTRY, RunContext())
    assert result.ok, result.error
    assert result.answer() == "yes go" and "No-1" in result.inactivated


def _shout_flow():
    chat_in = node("ChatInput", "ChatInput-1", registry=REGISTRY)
    ops = node(
        "Operations", "Operations-1", registry=REGISTRY, operation=[{"name": "Case Conversion"}], case_type="uppercase"
    )
    chat_out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    return flow(
        [chat_in, ops, chat_out],
        [edge(chat_in, "message", ops, "text_input"), edge(ops, "message_output", chat_out, "input_value")],
    )


def _child(ident):
    if ident in ("upper", "child-1"):
        return {"id": "child-1", "name": "upper", "data": load_reference("data-operations-uppercase.json")["data"]}
    if ident in ("shout", "child-2"):
        return {"id": "child-2", "name": "shout", "data": _shout_flow()}
    return None


def test_sub_flow_and_flow_as_tool():
    ctx = RunContext(flow_id="parent", load_flow=_child, registry=REGISTRY)
    sub = SubFlow({"flow_name": "upper"}, context=ctx, extra_params={"Operations-QQQQQ|text_input": "abc"})
    outputs = sub.generate_results()
    assert [d.data["text"] for d in outputs] == ["ABC"]
    tool = FlowTool({"flow_name": "shout", "tool_name": "shout"}, context=ctx).build_tool()
    assert isinstance(tool, Tool) and tool.name == "shout"
    assert tool.parameters["required"] == ["input_value"]
    assert tool.run({"input_value": "quiet"}) == "QUIET"
    assert tool.run("direct") == "DIRECT"
    with pytest.raises(ValueError, match="unknown arguments"):
        tool.run({"nope": 1})
    with pytest.raises(ValueError, match="not found"):
        FlowTool({"flow_name": "missing"}, context=ctx).build_tool()
    with pytest.raises(ValueError, match="required"):
        FlowTool({}, context=ctx).build_tool()
    with pytest.raises(ComponentError, match="not found"):
        SubFlow({"flow_name": "missing"}, context=ctx).generate_results()
    with pytest.raises(ValueError, match="Select a flow"):
        SubFlow({}, context=ctx).generate_results()


def test_listen_and_notify_share_signals_within_one_run():
    ctx = RunContext()
    Notify({"context_key": "k", "input_value": Message(text="first")}, context=ctx).notify_components()
    assert Listen({"context_key": "k"}, context=ctx).listen_for_data().data == {"text": "first"}
    Notify({"context_key": "k", "input_value": Data({"n": 2}), "append": True}, context=ctx).notify_components()
    assert [d.data for d in Listen({"context_key": "k"}, context=ctx).listen_for_data()] == [
        {"text": "first"},
        {"n": 2},
    ]
    assert Listen({"context_key": "k"}, context=RunContext()).listen_for_data().data == {}  # another run: nothing
    with pytest.raises(ValueError, match="Context Key"):
        Listen({"context_key": ""}, context=ctx).listen_for_data()
    with pytest.raises(ValueError, match="Context Key"):
        Notify({"context_key": " "}, context=ctx).notify_components()


def test_listen_runs_after_notify_of_the_same_name_without_an_edge():
    text = node("TextInput", "TextInput-1", registry=REGISTRY, input_value="signal")
    notify = node("Notify", "Notify-1", registry=REGISTRY, context_key="topic")
    other = node("Notify", "Notify-2", registry=REGISTRY, context_key="elsewhere")
    listen = node("Listen", "Listen-1", registry=REGISTRY, context_key="topic")
    parse = node("ParseData", "ParseData-1", registry=REGISTRY, template="got {text}")
    out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    data = flow(
        [listen, text, notify, other, parse, out],
        [
            edge(text, "text", notify, "input_value"),
            edge(listen, "data", parse, "data"),
            edge(parse, "text", out, "input_value"),
        ],
    )
    graph = Graph.build(data, REGISTRY)
    assert graph.waits_for == {"Listen-1": {"Notify-1"}}
    layers = graph.layers()
    assert layers[0] == ["TextInput-1", "Notify-2"] and layers[1] == ["Notify-1"] and layers[2] == ["Listen-1"]
    result = run_flow(data, REGISTRY, RunContext())
    assert result.ok, result.error
    assert result.answer() == "got signal"


def test_signal_order_contradicting_the_edges_is_dropped():
    listen = node("Listen", "Listen-1", registry=REGISTRY, context_key="k")
    parse = node("ParseData", "ParseData-1", registry=REGISTRY, template="{text}")
    notify = node("Notify", "Notify-1", registry=REGISTRY, context_key="k")
    data = flow(
        [listen, parse, notify], [edge(listen, "data", parse, "data"), edge(parse, "text", notify, "input_value")]
    )
    graph = Graph.build(data, REGISTRY)  # no cycle error: the data edges win
    assert graph.waits_for == {} and graph.order == ["Listen-1", "ParseData-1", "Notify-1"]


def test_calculator_tool():
    assert CalculatorTool.build(expression="2*(3+4)").run_model()[0].data == {"result": "14"}
    assert CalculatorTool.build(expression="1/0").run_model()[0].data["error"] == "Error: Division by zero"
    assert "Exponent" in CalculatorTool.build(expression="9**9**9").run_model()[0].data["error"]
    assert "Unsupported" in CalculatorTool.build(expression="__import__('os')").run_model()[0].data["error"]
    assert "syntax" in CalculatorTool.build(expression="").run_model()[0].data["error"]
    tool = CalculatorTool.build().build_tool()
    assert tool.run("10 / 4") == "2.5" and tool.run({"expression": "2**10"}) == "1024"


@pytest.mark.parametrize("key", sorted(REGISTRY.keys()))
def test_export_import_round_trip(key):
    """A node saved as the editor saves it survives export (JSON text) and import (graph build) unchanged."""
    n = node(key, f"{key.replace(' ', '')}-1", registry=REGISTRY)
    exported = json.dumps({"name": "rt", "data": flow([n], [])})
    imported = json.loads(exported)
    assert imported["data"]["nodes"][0]["data"]["node"] == json.loads(json.dumps(n["data"]["node"]))
    graph = Graph.build(imported["data"], REGISTRY)
    (vertex,) = graph.vertices.values()
    assert vertex.cls is REGISTRY[key]


def _approval_flow(decisions=None):
    chat_in = node("ChatInput", "ChatInput-1", registry=REGISTRY)
    extra = {"decisions": decisions} if decisions else {}
    human = node("HumanInput", "HumanInput-1", registry=REGISTRY, prompt="Ship it?", **extra)
    yes = node("ParseData", "Yes-1", registry=REGISTRY, template="shipped")
    no = node("ParseData", "No-1", registry=REGISTRY, template="held")
    out_yes = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    out_no = node("ChatOutput", "ChatOutput-2", registry=REGISTRY)
    msg_to_data = node("MessagetoData", "M2D-1", registry=REGISTRY)
    msg_to_data2 = node("MessagetoData", "M2D-2", registry=REGISTRY)
    edges = [
        edge(chat_in, "message", human, "prompt"),
        edge(human, "branch_approve", msg_to_data, "message"),
        edge(human, "branch_reject", msg_to_data2, "message"),
        edge(msg_to_data, "data", yes, "data"),
        edge(msg_to_data2, "data", no, "data"),
        edge(yes, "text", out_yes, "input_value"),
        edge(no, "text", out_no, "input_value"),
    ]
    return flow([chat_in, human, msg_to_data, msg_to_data2, yes, no, out_yes, out_no], edges)


@pytest.mark.parametrize(
    ("answer", "expected", "inactive"), [("approve", "shipped", "No-1"), ("Reject", "held", "Yes-1")]
)
def test_human_input_suspends_then_routes_the_answer(answer, expected, inactive):
    graph = Graph.build(_approval_flow(), REGISTRY)
    paused = run_graph(graph, RunContext(), input_value="Ship it?", registry=REGISTRY)
    assert paused.status == "suspended"
    request = paused.suspended
    assert request["vertex_id"] == "HumanInput-1"
    assert request["request"]["decisions"] == ["Approve", "Reject"] and request["request"]["type"] == "human_input"
    assert request["request"]["timeout_seconds"] == 3 * 86400
    done_before = {vid: paused.results[vid] for vid in paused.order if vid in paused.results}
    ctx = RunContext(resume={"HumanInput-1": {"request_id": "r1", "answer": answer, "state": request["state"]}})
    result = run_graph(
        graph, ctx, input_value="Ship it?", registry=REGISTRY, resume_from=done_before, inactive=set(paused.inactivated)
    )
    assert result.ok, result.error
    assert result.answer() == expected and inactive in result.inactivated


def test_human_input_bad_and_late_answers():
    from service_bundle_standard.human_input import HumanInput, branch_name, timeout_seconds

    def resumed(answer, deadline=None, **params):
        vertex_ctx = RunContext(resume={"H": {"request_id": "r", "answer": answer, "state": {"deadline": deadline}}})
        from core.engine import VertexInfo

        return HumanInput(
            {k: HumanInput.input_map()[k].coerce(v) for k, v in params.items()},
            context=vertex_ctx,
            vertex=VertexInfo("H", "HumanInput", "Human Input"),
        )

    with pytest.raises(ValueError, match="not one of the decisions"):
        resumed("maybe").route_branch()
    with pytest.raises(ValueError, match="after the timeout"):
        resumed("approve", deadline=1.0).route_branch()
    late = resumed("approve", deadline=1.0, enable_fallback=True)
    assert late.route_branch().properties["decision"] == "Reject"
    custom = resumed("branch_ship_it", decisions=["Ship it", "Wait"])
    custom.build_dynamic_output("branch_ship_it")
    assert custom.stopped_outputs == {"branch_wait"} and custom.active_outputs() == ["branch_ship_it", "branch_wait"]
    with pytest.raises(ValueError, match="at least one decision"):
        resumed("x", decisions=[]).route_branch()
    assert branch_name(" Needs review! ") == "branch_needs_review"
    assert timeout_seconds({"unit": "Hours", "value": 2}) == 7200 and timeout_seconds({}) is None
    with pytest.raises(ValueError, match="Invalid timeout unit"):
        timeout_seconds({"unit": "Weeks", "value": 1})
