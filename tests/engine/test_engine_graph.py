"""Graph building: validation errors, template rules, tweaks, variables."""

from __future__ import annotations

import pytest

from core.engine import Graph, GraphValidationError, RunContext, run_flow
from tests.flowkit import edge, flow, load_reference, node, standard_registry


def _errors(data):
    with pytest.raises(GraphValidationError) as info:
        Graph.build(data, standard_registry())
    return info.value.errors


def test_unknown_component():
    data = flow(
        [
            node("ChatInput", "ChatInput-1"),
            {"id": "X-1", "type": "genericNode", "data": {"type": "NoSuchThing", "node": {"template": {}}}},
        ],
        [],
    )
    [err] = _errors(data)
    assert err["type"] == "unknown_component"
    assert err["loc"] == ["nodes", "X-1", "data", "type"]
    assert "NoSuchThing" in err["msg"]


def test_dangling_edge():
    a = node("ChatInput", "ChatInput-1")
    b = node("ChatOutput", "ChatOutput-1")
    e = edge(a, "message", b, "input_value")
    e["target"] = "ChatOutput-missing"
    [err] = _errors(flow([a, b], [e]))
    assert err["type"] == "dangling_edge" and "ChatOutput-missing" in err["msg"]


def test_unknown_output_and_field():
    a = node("ChatInput", "ChatInput-1")
    b = node("ChatOutput", "ChatOutput-1")
    e1 = edge(a, "message", b, "input_value")
    e1["data"]["sourceHandle"]["name"] = "nope"
    e2 = edge(a, "message", b, "input_value")
    e2["data"]["targetHandle"]["fieldName"] = "no_field"
    errors = _errors(flow([a, b], [e1, e2]))
    assert [e["type"] for e in errors] == ["unknown_output", "unknown_field"]
    assert errors[0]["loc"] == ["nodes", "ChatInput-1", "outputs", "nope"]
    assert errors[1]["loc"] == ["nodes", "ChatOutput-1", "template", "no_field"]


def test_type_mismatch_and_aliases():
    web = node("Webhook", "Webhook-1")  # JSON output
    text = node("TextOutput", "TextOutput-1")  # accepts Message only
    [err] = _errors(flow([web, text], [edge(web, "output_data", text, "input_value")]))
    assert err["type"] == "type_mismatch"
    assert err["loc"] == ["nodes", "TextOutput-1", "template", "input_value"]
    # JSON output into a field accepting "Data" is fine (alias)
    parser = node("ParserComponent", "Parser-1")
    Graph.build(flow([web, parser], [edge(web, "output_data", parser, "input_data")]), standard_registry())


def test_cycle_rejected():
    a = node("Pass", "Pass-a")
    b = node("Pass", "Pass-b")
    errors = _errors(
        flow([a, b], [edge(a, "output_message", b, "input_message"), edge(b, "output_message", a, "input_message")])
    )
    assert {e["type"] for e in errors} == {"cycle"}
    assert {e["loc"][1] for e in errors} == {"Pass-a", "Pass-b"}


def test_edges_only_use_data_handles():
    a = node("ChatInput", "ChatInput-1")
    b = node("ChatOutput", "ChatOutput-1")
    e = edge(a, "message", b, "input_value")
    e["sourceHandle"] = "garbage"
    e["targetHandle"] = "garbage"
    g = Graph.build(flow([a, b], [e]), standard_registry())
    assert len(g.edges) == 1
    del e["data"]
    assert _errors(flow([a, b], [e]))[0]["type"] == "invalid_edge"


def test_note_nodes_are_skipped():
    note = {"id": "note-1", "type": "noteNode", "data": {"type": "note", "node": {"description": "hi"}}}
    g = Graph.build(flow([note, node("ChatInput", "ChatInput-1")], []), standard_registry())
    assert list(g.vertices) == ["ChatInput-1"]


def test_show_false_fields_use_class_default_unless_override_skip():
    data = load_reference("data-operations-uppercase.json")["data"]
    tmpl = data["nodes"][0]["data"]["node"]["template"]
    tmpl["case_type"]["show"] = False  # hand-written node: value kept but hidden
    reg = standard_registry()
    assert run_flow(data, reg, RunContext()).answer() == "hello there"  # default: lowercase
    tmpl["case_type"]["override_skip"] = True
    assert run_flow(data, reg, RunContext()).answer() == "HELLO THERE"


def test_tweaks_by_id_display_name_and_global():
    data = load_reference("data-operations-uppercase.json")["data"]
    reg = standard_registry()
    assert run_flow(data, reg, RunContext(), tweaks={"Operations-QQQQQ": {"text_input": "by id"}}).answer() == "BY ID"
    assert (
        run_flow(data, reg, RunContext(), tweaks={"Data Operations": {"text_input": "by name"}}).answer() == "BY NAME"
    )
    assert run_flow(data, reg, RunContext(), tweaks={"text_input": "global"}).answer() == "GLOBAL"
    # a tweak sets even a hidden field
    assert (
        run_flow(
            data, reg, RunContext(), tweaks={"Operations-QQQQQ": {"case_type": "swapcase", "text_input": "AbC"}}
        ).answer()
        == "aBc"
    )


def test_load_from_db_resolution_request_variables_win():
    t = node("TextInput", "TextInput-1", input_value="MY_VAR")
    t["data"]["node"]["template"]["input_value"]["load_from_db"] = True
    out = node("TextOutput", "TextOutput-1")
    data = flow([t, out], [edge(t, "text", out, "input_value")])
    reg = standard_registry()
    calls = []

    def resolver(name, field):
        calls.append((name, field))
        return {"MY_VAR": "from store"}.get(name)

    assert run_flow(data, reg, RunContext(resolve_variable=resolver)).answer() == "from store"
    assert calls == [("MY_VAR", "input_value")]
    ctx = RunContext(resolve_variable=resolver, request_variables={"MY_VAR": "from header"})
    assert run_flow(data, reg, ctx).answer() == "from header"
    missing = run_flow(data, reg, RunContext(resolve_variable=lambda n, f: None))
    assert missing.status == "failed"
    assert missing.error["vertex_id"] == "TextInput-1"
    assert "MY_VAR" in missing.error["message"]
    # a tweak gives a literal value, no lookup
    assert run_flow(data, reg, RunContext(), tweaks={"TextInput-1": {"input_value": "literal"}}).answer() == "literal"


def test_layers_and_order():
    a = node("TextInput", "TextInput-a", input_value="A")
    b = node("TextInput", "TextInput-b", input_value="B")
    c = node("CombineText", "CombineText-c")
    d = node("TextOutput", "TextOutput-d")
    data = flow(
        [d, c, b, a],
        [edge(a, "text", c, "text1"), edge(b, "text", c, "text2"), edge(c, "combined_text", d, "input_value")],
    )
    g = Graph.build(data, standard_registry())
    assert g.layers() == [["TextInput-b", "TextInput-a"], ["CombineText-c"], ["TextOutput-d"]]
    assert run_flow(data, standard_registry(), RunContext()).answer() == "A B"


def test_bad_flow_shapes():
    assert _errors({"nodes": "x", "edges": []})[0]["type"] == "invalid_flow"
    dup = [node("Pass", "Pass-1"), node("Pass", "Pass-1")]
    assert _errors(flow(dup, []))[0]["type"] == "duplicate_node"
