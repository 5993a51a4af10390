"""Grouped components (the reference's Ctrl+G): a node holding ``data.node.flow`` runs as its inner nodes."""

from __future__ import annotations

import copy
from typing import Any

from core.engine import RunContext, run_flow
from core.engine.errors import GraphValidationError
from core.engine.frozen import FrozenResults
from core.engine.groups import ungroup
from tests.flowkit import edge, flow, node, standard_registry


def _group(inner_nodes: list[dict[str, Any]], inner_edges: list[dict[str, Any]], gid: str = "GroupNode-1") -> dict:
    """A group node as the reference editor saves one: exposed fields and outputs carry a proxy."""
    connected = {(e["target"], e["data"]["targetHandle"]["fieldName"]) for e in inner_edges}
    sources = {e["source"] for e in inner_edges}
    template: dict[str, Any] = {}
    outputs: list[dict[str, Any]] = []
    for n in inner_nodes:
        for name, field in n["data"]["node"]["template"].items():
            if not isinstance(field, dict) or name in ("code", "_type") or (n["id"], name) in connected:
                continue
            template[f"{name}_{n['id']}"] = {**copy.deepcopy(field), "proxy": {"id": n["id"], "field": name}}
        if n["id"] not in sources:
            for out in n["data"]["node"]["outputs"]:
                outputs.append(
                    {**out, "name": f"{out['name']}_{n['id']}", "proxy": {"id": n["id"], "name": out["name"]}}
                )
    return {
        "id": gid,
        "type": "genericNode",
        "position": {"x": 0, "y": 0},
        "data": {
            "id": gid,
            "type": "GroupNode",
            "node": {
                "display_name": "Group",
                "template": template,
                "outputs": outputs,
                "flow": {"name": "Group", "data": {"nodes": inner_nodes, "edges": inner_edges}},
            },
        },
    }


def _group_edge(source: dict, output: str, group: dict, key: str) -> dict:
    e = edge(source, output, node("TextOutput", "placeholder"), "input_value")
    field = group["data"]["node"]["template"][key]
    e["target"] = group["id"]
    e["data"]["targetHandle"] = {
        "fieldName": key,
        "id": group["id"],
        "inputTypes": field.get("input_types"),
        "type": field.get("type"),
        "proxy": field["proxy"],
    }
    return e


def _from_group(group: dict, output: str, target: dict, field: str, *, proxy: bool = True) -> dict:
    e = edge(node("TextInput", "placeholder"), "text", target, field)
    e["source"] = group["id"]
    out = next(o for o in group["data"]["node"]["outputs"] if o["name"] == output)
    sh = {"dataType": "GroupNode", "id": group["id"], "name": output, "output_types": out["types"]}
    if not proxy:
        sh["name"] = out["proxy"]["name"]  # an edge saved by an editor that keeps the inner output name
    e["data"]["sourceHandle"] = sh
    return e


def grouped_flow(value_on_group: str = "world") -> dict:
    src = node("TextInput", "TextInput-a", input_value="hello")
    p1 = node("Pass", "Pass-1")
    comb = node("CombineText", "CombineText-1", text2="stale", delimiter=" ")
    group = _group([p1, comb], [edge(p1, "output_message", comb, "text1")])
    group["data"]["node"]["template"]["text2_CombineText-1"]["value"] = value_on_group
    out = node("TextOutput", "TextOutput-z")
    edges = [
        _group_edge(src, "text", group, "input_message_Pass-1"),
        _from_group(group, "combined_text_CombineText-1", out, "input_value"),
    ]
    return flow([src, group, out], edges)


def test_a_group_runs_as_its_inner_nodes_with_the_values_set_on_the_group():
    result = run_flow(grouped_flow(), standard_registry(), RunContext())
    assert result.ok, result
    assert result.output("TextOutput-z").text == "hello world"
    assert {"Pass-1", "CombineText-1"} <= set(result.results)


def test_an_edge_without_a_proxy_leaves_the_groups_last_node():
    data = grouped_flow()
    data["edges"][1] = _from_group(
        data["nodes"][1], "combined_text_CombineText-1", data["nodes"][2], "input_value", proxy=False
    )
    data["nodes"][1]["data"]["node"]["outputs"][0].pop("proxy")
    assert run_flow(data, standard_registry(), RunContext()).output("TextOutput-z").text == "hello world"


def test_groups_nest_and_the_outer_flow_is_not_changed():
    inner = grouped_flow()
    outer_group = _group([inner["nodes"][1]], [], gid="GroupNode-outer")
    data = copy.deepcopy(inner)
    data["nodes"][1] = outer_group
    data["edges"][0]["target"] = "GroupNode-outer"
    th = data["edges"][0]["data"]["targetHandle"]
    th.update(
        id="GroupNode-outer",
        fieldName="input_message_Pass-1_GroupNode-1",
        proxy={"id": "GroupNode-1", "field": "input_message_Pass-1"},
    )
    data["edges"][1]["source"] = "GroupNode-outer"
    data["edges"][1]["data"]["sourceHandle"].update(
        id="GroupNode-outer", name="combined_text_CombineText-1_GroupNode-1"
    )
    before = copy.deepcopy(data)
    assert run_flow(data, standard_registry(), RunContext()).output("TextOutput-z").text == "hello world"
    assert data == before
    assert [n["id"] for n in ungroup(data)["nodes"]] == ["TextInput-a", "Pass-1", "CombineText-1", "TextOutput-z"]


def test_a_frozen_group_freezes_its_inner_nodes():
    data = grouped_flow()
    data["nodes"][1]["data"]["node"]["frozen"] = True
    flat = ungroup(data)
    assert all(n["data"]["node"].get("frozen") for n in flat["nodes"] if n["id"] in ("Pass-1", "CombineText-1"))
    cache = FrozenResults(limit=8)
    first = run_flow(data, standard_registry(), RunContext(flow_id="f", frozen_cache=cache))
    again = run_flow(data, standard_registry(), RunContext(flow_id="f", frozen_cache=cache))
    assert first.ok and again.results["CombineText-1"].used_frozen_result is True


def test_an_edge_into_a_group_field_that_is_not_exposed_is_a_clear_error():
    data = grouped_flow()
    th = data["edges"][0]["data"]["targetHandle"]
    th.pop("proxy")
    th["fieldName"] = "nope"
    try:
        run_flow(data, standard_registry(), RunContext())
    except GraphValidationError as e:
        assert any("GroupNode-1" in err["msg"] for err in e.errors)
    else:
        raise AssertionError("a dangling edge into a group ran")


def test_the_frozen_store_forgets_the_least_recently_used():
    store = FrozenResults(limit=2)
    store["a"], store["b"] = 1, 2
    assert store["a"] == 1
    store["c"] = 3
    assert set(store) == {"a", "c"}
