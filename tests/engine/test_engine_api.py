"""Public API pieces: values, inputs, frontend nodes, the registry and bundle loading."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pluggy
import pytest
from service_bundle_standard import bundle
from service_bundle_standard.inputs_outputs import ChatInput, ChatOutput

from core import hookspecs
from core.engine import (
    Component,
    Data,
    DataFrame,
    Message,
    Output,
    Registry,
    RegistryError,
    RegistryHolder,
    load_bundle_components,
)
from core.engine.inputs import (
    BoolInput,
    DropdownInput,
    HandleInput,
    IntInput,
    MessageTextInput,
    MultilineInput,
    SecretStrInput,
    SortableListInput,
)
from tests.flowkit import load_reference, standard_registry

ROOT = Path(__file__).resolve().parents[2]


def test_message_round_trip_and_shape():
    m = Message(text="hi", sender="User", sender_name="User", session_id="s", files=["a.png"])
    d = m.to_dict()
    assert d["text"] == d["data"]["text"] == "hi"
    assert d["text_key"] == "text" and d["default_value"] == ""
    assert d["properties"]["source"] == {"id": None, "display_name": None, "source": None}
    back = Message.from_dict(d)
    assert back.text == "hi" and back.files == ["a.png"] and back.session_id == "s"
    assert Message.from_dict({"text": "x", "files": "[]"}).files == []


def test_data_and_dataframe():
    d = Data({"a": 1}, default_value="none")
    assert d.get_text() == "none"
    assert d.to_dict() == {"text_key": "text", "data": {"a": 1}, "default_value": "none"}
    f = DataFrame([{"a": 1}, {"b": 2}])
    assert f.columns == ["a", "b"]
    assert f.to_records() == [{"a": 1, "b": None}, {"a": None, "b": 2}]
    assert f.to_markdown().splitlines()[2] == "| 1 |  |"


def test_input_descriptors_serialise_like_the_reference():
    ref = load_reference("chat-echo.json")["data"]["nodes"][0]["data"]["node"]["template"]
    ours = ChatInput.to_frontend_node()["template"]
    for name in ("input_value", "should_store_message", "sender", "sender_name", "session_id", "context_id", "files"):
        for key in ("name", "display_name", "type", "value", "show", "advanced", "_input_type", "required", "info"):
            assert ours[name].get(key) == ref[name].get(key), (name, key)
        if "input_types" in ref[name]:
            assert ours[name]["input_types"] == ref[name]["input_types"], name
        if "options" in ref[name]:
            assert ours[name]["options"] == ref[name]["options"]
    out_ref = load_reference("chat-echo.json")["data"]["nodes"][1]["data"]["node"]
    node = ChatOutput.to_frontend_node()
    assert node["outputs"] == out_ref["outputs"]
    assert node["field_order"] == out_ref["field_order"]
    for key in ("display_name", "description", "icon", "base_classes", "legacy", "beta", "minimized", "documentation"):
        assert node[key] == out_ref[key], key


def test_reference_nodes_match_catalog_fields():
    """Every template field of the reference exports exists in our catalog node (so edits round-trip)."""
    reg = standard_registry()
    for name in ("chat-echo.json", "data-operations-uppercase.json", "webhook-parser-chat.json"):
        for n in load_reference(name)["data"]["nodes"]:
            ours = reg[n["data"]["type"]].to_frontend_node()
            ref = n["data"]["node"]
            assert set(ref["template"]) - {"code"} <= set(ours["template"]), n["id"]
            assert [o["name"] for o in ref["outputs"]] == [o["name"] for o in ours["outputs"]]
            assert ref["display_name"] == ours["display_name"]
            for field, spec in ref["template"].items():
                if field in ("code", "_type"):
                    continue
                assert ours["template"][field]["type"] == spec["type"], (n["id"], field)
                assert ours["template"][field]["_input_type"] == spec["_input_type"], (n["id"], field)


def test_input_coercion():
    assert IntInput("n").coerce("5") == 5
    assert BoolInput("b").coerce("false") is False
    assert MessageTextInput("t").coerce(Message(text="x")) == "x"
    assert MessageTextInput("t", is_list=True).coerce("x") == ["x"]
    assert SortableListInput("o").coerce("Head") == [{"name": "Head"}]
    assert HandleInput("h", input_types=["Message"]).coerce(Message(text="k")).text == "k"
    with pytest.raises(ValueError, match="Invalid integer"):
        IntInput("n").coerce("many")
    secret = SecretStrInput("api_key").to_dict()
    assert secret["password"] is True and secret["load_from_db"] is True
    drop = DropdownInput("d", options=["a"]).to_dict()
    assert drop["options"] == ["a"] and "load_from_db" not in drop
    assert MultilineInput("m").to_dict()["multiline"] is True


class _A(Component):
    key = "Same"
    outputs = [Output("o", "O", "go", ["Message"])]


class _B(Component):
    key = "Same"


def test_registry_rejects_duplicates_naming_both():
    with pytest.raises(RegistryError) as info:
        Registry.from_classes([_A, _B])
    assert "_A" in str(info.value) and "_B" in str(info.value)
    with pytest.raises(RegistryError):
        Registry.from_classes([_A], aliases={"Same": "Same"})
    with pytest.raises(RegistryError):
        Registry.from_classes([_A], aliases={"Old": "Missing"})
    reg = Registry.from_classes([_A], aliases={"Old": "Same"})
    assert reg.get("Old") is _A and "Old" in reg and len(reg) == 1


def test_registry_holder_swaps_atomically():
    holder = RegistryHolder()
    assert len(holder.current) == 0
    first = holder.rebuild([_A])
    snapshot = holder.current
    with pytest.raises(RegistryError):
        holder.rebuild([_A, _B])  # a bad rebuild leaves the current snapshot alone
    assert holder.current is snapshot is first
    seen = []
    threads = [
        threading.Thread(target=lambda: seen.append(holder.swap(Registry.from_classes([_A])))) for _ in range(10)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 10


def test_load_bundle_components_through_pluggy():
    pm = pluggy.PluginManager("service")
    pm.add_hookspecs(hookspecs)
    pm.register(bundle)
    classes = load_bundle_components(pm)
    reg = Registry.from_classes(classes)
    assert {
        "ChatInput",
        "ChatOutput",
        "Operations",
        "TypeConverterComponent",
        "ParserComponent",
        "Webhook",
        "ConditionalRouter",
        "LoopComponent",
    } <= set(reg.keys())
    catalog = reg.catalog("de")
    assert catalog["input_output"]["ChatInput"]["display_name"] == "Chat-Eingabe"
    assert reg.display_names("en")["Operations"] == "Data Operations"


def test_engine_import_is_light_and_web_free():
    code = "import sys, core.engine; print([m for m in ('pandas', 'flask', 'werkzeug', 'numpy') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_no_dynamic_code_execution_in_engine_or_bundle():
    sources = list((ROOT / "core" / "engine").glob("*.py")) + list(
        (ROOT / "bundles" / "standard" / "service_bundle_standard").glob("*.py")
    )
    for path in sources:
        text = path.read_text()
        if path.name == "lazy.py":  # imports a module named in the code (checked below), never a user's text
            text = text.replace("import importlib", "").replace("importlib.import_module(name)", "")
        for needle in ("exec(", "eval(", "compile(", "importlib", "__import__("):
            hits = [
                line
                for line in text.splitlines()
                if needle in line
                and "literal_eval" not in line
                and "never eval" not in line
                and "re.compile" not in line
                and "regex.compile" not in line
                and "compile_jq" not in line
                and "jq.compile(" not in line
            ]
            assert not hits, (path.name, hits)


def test_lazy_imports_name_their_modules_in_the_code():
    """``core.engine.lazy.lazy_import`` is the engine's one ``importlib`` use: every call names a literal module."""
    calls = []
    for base in ("core", "plugins", "bundles"):
        for path in (ROOT / base).rglob("*.py"):
            calls += re.findall(r"lazy_import\(([^)]*)\)", path.read_text())
    calls = [c for c in calls if c.strip() not in ("name: str", "name")]  # the definition itself
    assert calls, "no lazy import found: the check below would pass vacuously"
    assert all(re.fullmatch(r'\s*"[\w.]+"\s*', c) for c in calls), calls
