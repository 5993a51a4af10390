"""Every key of the reference catalog resolves here, or is reported as an optional/planned bundle;
native components carry the reference's fields (name, type, default, show, advanced, list,
tool_mode where listed) and outputs (name, types, method) and legacy flag."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from service_bundle_a2a.bundle import all_components as a2a_components
from service_bundle_data.bundle import all_components as data_components
from service_bundle_documents.bundle import register_components as documents_components
from service_bundle_mcp.bundle import all_components as mcp_components
from service_bundle_models.bundle import register_components as models_components
from service_bundle_sandbox.bundle import register_components as sandbox_components
from service_bundle_standard.bundle import all_components as standard_components
from service_bundle_tools.bundle import all_components as tools_components
from service_knowledge.components import COMPONENTS as knowledge_components

from core.engine import Graph, GraphValidationError, Registry
from core.engine.catalog import COMPONENT_BUNDLES, missing_components

_HERE = Path(__file__).resolve().parent
#: ``../shared`` next to the checkout when there, else the copy kept beside this test
REFERENCE = next(
    (p for p in (_HERE.parents[1].parent / "shared" / "reference" / "reference-components.md",) if p.exists()),
    _HERE / "reference-components.md",
)
_HEAD = re.compile(r"^### `(?P<key>[^`]+)` — (?P<name>.+?)(?: \((?P<flags>[^)]*)\))?$")
_INPUT = re.compile(
    r"`(?P<name>\w+): (?P<type>\w+)(?: \[[^\]]*\])?(?: = (?P<default>[^`{]*?))?(?: \{[^`]*\})?`(?P<flags> [a-z,]+)?"
)
_OUTPUT = re.compile(r"`(?P<name>\w+) -> (?P<types>[\w/]+) \((?P<method>\w+)\)`")


def reference_catalog() -> dict[str, dict]:
    out: dict[str, dict] = {}
    current: dict | None = None
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        m = _HEAD.match(line)
        if m:
            flags = m.group("flags") or ""
            name = m.group("name")
            if name.endswith(" (legacy)"):  # "Guardrails (Legacy) (legacy)"
                name, flags = name[: -len(" (legacy)")], "legacy"
            current = out[m.group("key")] = {
                "name": name,
                "legacy": "legacy" in flags.split(", "),
                "inputs": {},
                "outputs": {},
            }
        elif current is not None and line.startswith("- inputs:"):
            for i in _INPUT.finditer(line):
                flags = set((i.group("flags") or "").strip().split(","))
                current["inputs"][i.group("name")] = (i.group("type"), flags, i.group("default"))
        elif current is not None and line.startswith("- outputs:"):
            for o in _OUTPUT.finditer(line):
                current["outputs"][o.group("name")] = (o.group("types"), o.group("method"))
    return out


REF = reference_catalog()
REGISTRY = Registry.from_classes(
    [
        *standard_components(),
        *data_components(),
        *tools_components(),
        *sandbox_components(),
        *mcp_components(),
        *documents_components(),
        *knowledge_components,
        *models_components(),
        *a2a_components(),
    ]
)


def test_reference_has_93_keys():
    assert len(REF) == 93


def test_every_reference_key_resolves_or_is_reported():
    native = [k for k in REF if k in REGISTRY]
    reported = [k for k in REF if k not in REGISTRY]
    assert all(k in COMPONENT_BUNDLES for k in reported), [k for k in reported if k not in COMPONENT_BUNDLES]
    assert len(native) == 93 and not reported  # 93 of 93: nothing planned any more
    assert not [k for k, info in COMPONENT_BUNDLES.items() if info.status == "planned"]
    # the table lists no key twice over: an optional-bundle key resolves when its bundle is installed
    optional = [k for k, info in COMPONENT_BUNDLES.items() if info.status == "optional"]
    assert all(k in REGISTRY for k in optional)
    assert not [k for k, info in COMPONENT_BUNDLES.items() if info.status == "planned" and k in REGISTRY]
    assert set(COMPONENT_BUNDLES) <= set(REF)


@pytest.mark.parametrize("key", sorted(k for k in REF if k in REGISTRY))
def test_native_component_matches_reference(key):
    ref = REF[key]
    node = REGISTRY[key].to_frontend_node()
    assert node["display_name"] == ref["name"]
    assert node["legacy"] == ref["legacy"]
    template = node["template"]
    for name, (ftype, flags, default) in ref["inputs"].items():
        assert name in template, f"{key}: missing field {name}"
        field = template[name]
        assert field["type"] == ftype, f"{key}.{name}: type {field['type']} != {ftype}"
        assert field["advanced"] == ("adv" in flags), f"{key}.{name}: advanced"
        assert field["show"] == ("hid" not in flags), f"{key}.{name}: show"
        assert field["list"] == ("list" in flags), f"{key}.{name}: list"
        assert field["required"] == ("req" in flags), f"{key}.{name}: required"
        assert bool(field.get("password")) == ("pw" in flags), f"{key}.{name}: password"
        if default is not None and default != '"<...>"':
            try:
                expected = json.loads(default)
            except ValueError:
                continue  # a default the reference listing truncated
            assert field["value"] == expected, f"{key}.{name}: default {field['value']!r} != {expected!r}"
    outputs = {o["name"]: o for o in node["outputs"]}
    for name, (types, method) in ref["outputs"].items():
        if REGISTRY[key].frontend_outputs is not None and name not in outputs:
            continue  # dynamic components show only their current outputs
        assert name in outputs, f"{key}: missing output {name}"
        assert outputs[name]["method"] == method
        assert set(outputs[name]["types"]) & set(types.split("/")), f"{key}.{name}: types"


def test_missing_component_is_reported_not_unknown():
    flow = {
        "nodes": [
            {"id": "a", "data": {"id": "a", "type": "Agent", "node": {"template": {}}}},
            {"id": "b", "data": {"id": "b", "type": "NoSuchThing", "node": {"template": {}}}},
        ],
        "edges": [],
    }
    without_models = Registry.from_classes([c for c in REGISTRY.classes() if c not in models_components()])
    with pytest.raises(GraphValidationError) as exc:
        Graph.build(flow, without_models)
    msgs = {e["loc"][1]: e["msg"] for e in exc.value.errors}
    assert msgs["a"] == "Component Agent (Agent) is not installed (bundle models) (node 'a')"
    assert msgs["b"] == "Unknown component 'NoSuchThing' in node 'b'"
    standard_only = Registry.from_classes(standard_components())
    flow["nodes"][1]["data"]["type"] = "SQLComponent"
    found = missing_components(flow, standard_only)
    assert [f["message"] for f in found] == [
        "component Agent (Agent) is not installed (bundle models)",
        "component SQL Database (SQLComponent) is not installed (bundle data)",
    ]
    assert missing_components(flow, without_models)[0]["bundle"] == "models"
