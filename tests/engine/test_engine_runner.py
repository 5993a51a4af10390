"""Execution: routing, loops, sub-flows, cancellation, limits, errors, frozen vertices, partial runs."""

from __future__ import annotations

import threading
import time

from service_bundle_standard.bundle import all_components

from core.engine import Component, Message, Output, Registry, RunContext, run_flow
from core.engine.inputs import MessageTextInput
from tests.flowkit import EventLog, edge, flow, load_reference, node, standard_registry


def router_flow(text: str, match: str = "yes"):
    src = node("TextInput", "TextInput-1", input_value=text)
    router = node("ConditionalRouter", "ConditionalRouter-1", match_text=match)
    t_out = node("TextOutput", "TextOutput-true")
    f_pass = node("Pass", "Pass-false")
    f_out = node("TextOutput", "TextOutput-false")
    edges = [
        edge(src, "text", router, "input_text"),
        edge(router, "true_result", t_out, "input_value"),
        edge(router, "false_result", f_pass, "input_message"),
        edge(f_pass, "output_message", f_out, "input_value"),
    ]
    return flow([src, router, t_out, f_pass, f_out], edges)


def test_router_true_branch_inactivates_false_branch():
    log = EventLog()
    result = run_flow(router_flow("yes"), standard_registry(), RunContext(emit=log))
    assert result.ok
    assert result.output("TextOutput-true").text == "yes"
    assert set(result.inactivated) == {"Pass-false", "TextOutput-false"}
    assert "TextOutput-false" not in result.results
    router_end = next(d for d in log.of("end_vertex") if d["build_data"]["id"] == "ConditionalRouter-1")
    assert set(router_end["build_data"]["inactivated_vertices"]) == {"Pass-false", "TextOutput-false"}
    assert router_end["build_data"]["next_vertices_ids"] == ["TextOutput-true"]


def test_router_false_branch():
    result = run_flow(router_flow("no"), standard_registry(), RunContext())
    assert result.output("TextOutput-false").text == "no"
    assert result.inactivated == ["TextOutput-true"]


def test_router_merge_vertex_runs_with_live_input():
    src = node("TextInput", "TextInput-1", input_value="yes")
    router = node(
        "ConditionalRouter", "ConditionalRouter-1", match_text="yes", true_case_message="T", false_case_message="F"
    )
    comb = node("CombineText", "CombineText-1")
    data = flow(
        [src, router, comb],
        [
            edge(src, "text", router, "input_text"),
            edge(router, "true_result", comb, "text1"),
            edge(router, "false_result", comb, "text2"),
        ],
    )
    result = run_flow(data, standard_registry(), RunContext())
    assert result.output("CombineText-1").text == "T "


def test_loop_runs_body_per_item_and_collects():
    csv = node("CSVtoData", "CSVtoData-1", csv_string="name\nada\nbob\n")
    loop = node("LoopComponent", "LoopComponent-1")
    parser = node("ParserComponent", "ParserComponent-1", pattern="hi {name}")
    to_data = node("TypeConverterComponent", "TypeConverterComponent-1", output_type="JSON")
    done_parser = node("ParserComponent", "ParserComponent-done", pattern="{text}", sep=" | ")
    out = node("ChatOutput", "ChatOutput-1")
    edges = [
        edge(csv, "data_list", loop, "data"),
        edge(loop, "item", parser, "input_data"),
        edge(parser, "parsed_text", to_data, "input_data"),
        edge(to_data, "data_output", loop, "item", loop=True),
        edge(loop, "done", done_parser, "input_data"),
        edge(done_parser, "parsed_text", out, "input_value"),
    ]
    log = EventLog()
    result = run_flow(
        flow([csv, loop, parser, to_data, done_parser, out], edges), standard_registry(), RunContext(emit=log)
    )
    assert result.ok, result.error
    assert result.answer() == "hi ada | hi bob"
    parser_runs = [d for d in log.of("end_vertex") if d["build_data"]["id"] == "ParserComponent-1"]
    assert len(parser_runs) == 2


def test_loop_with_empty_input_skips_body():
    csv = node("JSONtoData", "JSONtoData-1", json_string="[]")
    loop = node("LoopComponent", "LoopComponent-1")
    parser = node("ParserComponent", "ParserComponent-1", pattern="x")
    done = node("ParserComponent", "ParserComponent-done", mode="Stringify")
    edges = [
        edge(csv, "data", loop, "data"),
        edge(loop, "item", parser, "input_data"),
        edge(loop, "done", done, "input_data"),
    ]
    result = run_flow(flow([csv, loop, parser, done], edges), standard_registry(), RunContext())
    assert result.ok, result.error
    assert "ParserComponent-1" not in result.results
    assert result.output("ParserComponent-done").text == ""


def _child_flow():
    return load_reference("data-operations-uppercase.json")["data"]


def test_sub_flow_runs_through_load_flow():
    loaded = []

    def load_flow(ident):
        loaded.append(ident)
        return {"id": "child-1", "name": "upper", "data": _child_flow()} if ident in ("upper", "child-1") else None

    rf = node("RunFlow", "RunFlow-1", flow_name_selected="upper")
    rf["data"]["node"]["template"]["Operations-QQQQQ~text_input"] = {
        "name": "Operations-QQQQQ~text_input",
        "type": "str",
        "show": True,
        "value": "from parent",
        "input_types": ["Message"],
    }
    out = node("ChatOutput", "ChatOutput-1")
    data = flow([rf, out], [edge(rf, "flow_outputs_message", out, "input_value")])
    result = run_flow(data, standard_registry(), RunContext(flow_id="parent", load_flow=load_flow))
    assert result.ok, result.error
    assert result.answer() == "FROM PARENT"
    assert loaded == ["upper"]


def test_sub_flow_errors():
    rf = node("RunFlow", "RunFlow-1", flow_name_selected="missing")
    out = node("ChatOutput", "ChatOutput-1")
    data = flow([rf, out], [edge(rf, "flow_outputs_message", out, "input_value")])
    result = run_flow(data, standard_registry(), RunContext(load_flow=lambda i: None))
    assert result.status == "failed" and "not found" in result.error["message"]
    # a flow that runs itself is refused instead of recursing
    selfish = {"id": "me", "name": "me", "data": data}
    data2 = flow(
        [node("RunFlow", "RunFlow-1", flow_name_selected="me"), out],
        [edge(rf, "flow_outputs_message", out, "input_value")],
    )
    selfish["data"] = data2
    result = run_flow(data2, standard_registry(), RunContext(flow_id="me", load_flow=lambda i: selfish))
    assert result.status == "failed" and "calls itself" in result.error["message"]


class Slow(Component):
    key = "TestSlow"
    display_name = "Slow"
    inputs = [MessageTextInput("input_value", "In", "")]
    outputs = [Output("out", "Out", "go", ["Message"])]
    delay = 0.05

    def go(self) -> Message:
        time.sleep(self.delay)
        return Message(text=(self.input_value or "") + ".")


class SlowIO(Slow):
    key = "TestSlowIO"
    io_bound = True


class Boom(Component):
    key = "TestBoom"
    display_name = "Boom"
    inputs = [MessageTextInput("input_value", "In", "")]
    outputs = [Output("out", "Out", "go", ["Message"])]

    def go(self) -> Message:
        raise RuntimeError("secret internal detail")


def _test_registry() -> Registry:
    return Registry.from_classes([*all_components(), Slow, SlowIO, Boom])


def _chain(key: str, n: int):
    nodes = [node("TextInput", "TextInput-0", input_value="")]
    edges = []
    for i in range(1, n + 1):
        nodes.append(
            {"id": f"{key}-{i}", "type": "genericNode", "data": {"type": key, "node": {"template": {}, "outputs": []}}}
        )
    for i in range(1, n + 1):
        src = nodes[i - 1]
        out = "text" if i == 1 else "out"
        edges.append(
            {
                "source": src["id"],
                "target": nodes[i]["id"],
                "data": {
                    "sourceHandle": {"id": src["id"], "name": out},
                    "targetHandle": {"id": nodes[i]["id"], "fieldName": "input_value"},
                },
            }
        )
    return flow(nodes, edges)


def test_cancellation_between_vertices():
    calls = {"n": 0}

    def cancelled():
        calls["n"] += 1
        return calls["n"] > 3

    log = EventLog()
    result = run_flow(_chain("TestSlow", 6), _test_registry(), RunContext(cancelled=cancelled, emit=log))
    assert result.status == "cancelled"
    assert 0 < len(result.order) < 7
    assert "end" not in log.names


def test_time_limit():
    result = run_flow(_chain("TestSlow", 10), _test_registry(), RunContext(time_limit=0.12))
    assert result.status == "timed_out"
    assert len(result.order) < 11


def test_vertex_error_is_captured_without_traceback():
    data = _chain("TestBoom", 1)
    log = EventLog()
    result = run_flow(data, _test_registry(), RunContext(emit=log))
    assert result.status == "failed"
    assert result.error == {
        "vertex_id": "TestBoom-1",
        "display_name": "Boom",
        "message": "RuntimeError: secret internal detail",
    }
    assert log.names[-2:] == ["end_vertex", "error"]
    failed = log.of("end_vertex")[-1]["build_data"]
    assert failed["valid"] is False
    assert failed["data"]["outputs"]["out"]["type"] == "error"
    assert failed["data"]["outputs"]["out"]["message"]["stackTrace"] == ""
    assert "Traceback" not in str(log.events)
    assert log.of("error")[0]["text"] == "RuntimeError: secret internal detail"


def _fan_out(count: int) -> dict:
    """A text input feeding ``count`` TestSlowIO vertices (``TestSlowIO-0`` ...), all of one layer."""
    src = node("TextInput", "TextInput-0", input_value="x")
    nodes, edges = [src], []
    for i in range(count):
        nid = f"TestSlowIO-{i}"
        nodes.append({"id": nid, "type": "genericNode", "data": {"type": "TestSlowIO", "node": {"template": {}}}})
        edges.append(
            {
                "source": src["id"],
                "target": nid,
                "data": {
                    "sourceHandle": {"id": src["id"], "name": "text"},
                    "targetHandle": {"id": nid, "fieldName": "input_value"},
                },
            }
        )
    return flow(nodes, edges)


def test_io_bound_vertices_of_a_layer_run_concurrently():
    reg = _test_registry()
    data = _fan_out(4)
    t0 = time.perf_counter()
    result = run_flow(data, reg, RunContext())
    elapsed = time.perf_counter() - t0
    assert result.ok
    assert all(result.output(f"TestSlowIO-{i}").text == "x." for i in range(4))
    assert elapsed < 4 * Slow.delay  # not serial


def test_frozen_vertex_reuses_cached_result():
    counter = {"n": 0}

    class Counting(Component):
        key = "TestCounting"
        display_name = "Counting"
        inputs = [MessageTextInput("input_value", "In", "")]
        outputs = [Output("out", "Out", "go", ["Message"])]

        def go(self) -> Message:
            counter["n"] += 1
            return Message(text=f"run {counter['n']}")

    reg = Registry.from_classes([*all_components(), Counting])
    data = flow(
        [
            {
                "id": "TestCounting-1",
                "type": "genericNode",
                "data": {"type": "TestCounting", "node": {"template": {}, "frozen": True}},
            }
        ],
        [],
    )
    cache: dict = {}
    first = run_flow(data, reg, RunContext(flow_id="f", frozen_cache=cache))
    second = run_flow(data, reg, RunContext(flow_id="f", frozen_cache=cache))
    assert first.output("TestCounting-1").text == second.output("TestCounting-1").text == "run 1"
    assert second.results["TestCounting-1"].used_frozen_result is True
    data["nodes"][0]["data"]["node"]["frozen"] = False
    assert run_flow(data, reg, RunContext(flow_id="f", frozen_cache=cache)).output("TestCounting-1").text == "run 2"


def test_partial_runs():
    a = node("TextInput", "TextInput-a", input_value="a")
    p1 = node("Pass", "Pass-1")
    p2 = node("Pass", "Pass-2")
    out = node("TextOutput", "TextOutput-1")
    data = flow(
        [a, p1, p2, out],
        [
            edge(a, "text", p1, "input_message"),
            edge(p1, "output_message", p2, "input_message"),
            edge(p2, "output_message", out, "input_value"),
        ],
    )
    reg = standard_registry()
    stopped = run_flow(data, reg, RunContext(), stop_component_id="Pass-1")
    assert stopped.order == ["TextInput-a", "Pass-1"]
    full = run_flow(data, reg, RunContext())
    again = run_flow(data, reg, RunContext(), start_component_id="Pass-2", previous_results=full.results)
    assert again.order == ["Pass-2", "TextOutput-1"]
    assert again.answer() == "a"
    fresh = run_flow(data, reg, RunContext(), start_component_id="Pass-2")
    assert fresh.order == ["TextInput-a", "Pass-1", "Pass-2", "TextOutput-1"]


def test_emit_is_serialised_across_threads():
    reg = _test_registry()
    data = _fan_out(3)
    inside = {"now": 0, "max": 0}
    lock = threading.Lock()

    def emit(event):
        with lock:
            inside["now"] += 1
            inside["max"] = max(inside["max"], inside["now"])
        time.sleep(0.001)
        with lock:
            inside["now"] -= 1

    assert run_flow(data, reg, RunContext(emit=emit)).ok
    assert inside["max"] == 1


def test_input_value_goes_to_matching_input_vertices():
    ci = node("ChatInput", "ChatInput-1", input_value="stored")
    ti = node("TextInput", "TextInput-1", input_value="text stored")
    c = node("CombineText", "CombineText-1")
    out = node("ChatOutput", "ChatOutput-1")
    data = flow(
        [ci, ti, c, out],
        [edge(ci, "message", c, "text1"), edge(ti, "text", c, "text2"), edge(c, "combined_text", out, "input_value")],
    )
    reg = standard_registry()
    assert run_flow(data, reg, RunContext(), input_value="new").answer() == "new text stored"
    assert run_flow(data, reg, RunContext(), input_value="new", input_type="text").answer() == "stored new"
    assert run_flow(data, reg, RunContext(), input_value="new", input_type="any").answer() == "new new"
    assert run_flow(data, reg, RunContext()).answer() == "stored text stored"
