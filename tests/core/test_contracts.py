"""The records that cross plugin boundaries (core.contracts) and the typed hook facade (core.hookcalls)."""

from __future__ import annotations

import dataclasses
import types

import pluggy
import pytest

from core import PROJECT_NAME, hookimpl, hookspec, hookspecs
from core.contracts import FlowRecord, McpServerConfig, McpToolSettings, MessageRecord, ProjectRecord
from core.hookcalls import Hooks
from core.plugins import PluginHost


def _published() -> types.ModuleType:
    module = types.ModuleType("svc_test_published_specs")

    @hookspec(firstresult=True)
    def lookup(key: str) -> FlowRecord | None:
        """A firstresult lookup."""

    @hookspec
    def gather(key: str) -> list[str] | None:
        """Every answer counts."""

    module.lookup = lookup  # type: ignore[attr-defined]
    module.gather = gather  # type: ignore[attr-defined]
    module.__all__ = ["lookup", "gather"]  # type: ignore[attr-defined]
    return module


class Answers:
    @hookimpl(optionalhook=True)
    def lookup(self, key: str) -> FlowRecord | None:
        return FlowRecord(id=key, name="found") if key == "k" else None

    @hookimpl(optionalhook=True)
    def gather(self, key: str) -> list[str] | None:
        return [key, key]


def test_records_are_frozen_and_slotted():
    flow = FlowRecord(id="f", name="n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        flow.name = "other"  # type: ignore[misc]
    assert not hasattr(flow, "__dict__")
    assert flow.replace(name="m").name == "m" and flow.name == "n"


def test_flow_json_round_trip_leaves_auth_type_out():
    flow = FlowRecord(id="f", name="n", user_id="u", data={"nodes": []}, tags=("a",), auth_type="oauth")
    as_json = flow.as_dict()
    assert "auth_type" not in as_json and not any(k.startswith("_") for k in as_json)
    assert as_json["tags"] == ["a"] and as_json["name_key"] is None
    back = FlowRecord.from_dict(as_json)
    assert back == flow.replace(auth_type=None)


def test_project_auth_type_and_tool_settings_name_what_was_given():
    assert ProjectRecord(id="p", name="n", user_id="u", auth_settings={"auth_type": "none"}).auth_type == "none"
    assert ProjectRecord(id="p", name="n", user_id="u").auth_type is None
    given = McpToolSettings.from_dict({"id": "f", "action_name": None})
    assert given.given == frozenset({"action_name"}) and given.mcp_enabled is False


def test_message_record_normalises_like_the_store():
    record = MessageRecord.from_dict({"text": None, "files": ["a"], "category": "", "extra": 1})
    out = record.as_dict()
    assert out["text"] == "" and out["files"] == ["a"] and out["category"] == "message" and "extra" not in out


def test_mcp_server_config_json_has_its_transports_members():
    http = McpServerConfig(name="s", transport="sse", url="u", headers={"k": "v"}).as_dict()
    assert http == {"name": "s", "transport": "sse", "url": "u", "headers": {"k": "v"}}
    stdio = McpServerConfig(name="s", transport="stdio", command="c", args=("x",)).as_dict()
    assert stdio == {"name": "s", "transport": "stdio", "command": "c", "args": ["x"], "env": {}}


def test_published_hooks_are_called_by_their_spec():
    specs = _published()
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    hooks = Hooks(pm)
    # the publisher is not loaded: nobody answered
    assert hooks.first(specs.lookup, key="k") is None and hooks.each(specs.gather, key="k") == []
    pm.register(Answers())
    assert hooks.first(specs.lookup, key="k") is None  # an implementation without a published spec is not called
    pm.add_hookspecs(specs)
    found = hooks.first(specs.lookup, key="k")
    assert found is not None and found.name == "found"
    assert hooks.first(specs.lookup, key="x") is None
    assert hooks.each(specs.gather, key="g") == [["g", "g"]]


def test_the_facade_refuses_the_wrong_call_shape():
    specs = _published()
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(specs)
    hooks = Hooks(pm)
    with pytest.raises(TypeError, match="not firstresult"):
        hooks.first(specs.gather, key="k")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is firstresult"):
        hooks.each(specs.lookup, key="k")
    with pytest.raises(TypeError, match="keyword arguments only"):
        hooks.first(specs.lookup, "k")
    with pytest.raises(TypeError, match="not a hook specification"):
        hooks.first(lambda key: None, key="k")


def test_the_host_exposes_the_facade_and_what_plugins_publish():
    host = PluginHost()
    module = _published()
    plugin = types.SimpleNamespace(HOOKSPECS=module)
    host.add_specs(plugin, "publisher")
    assert host.published() == [module]
    host.register(Answers(), "answers")
    found = host.hooks.first(module.lookup, key="k")
    assert found is not None and found.id == "k"
    assert host.collect("not_published_anywhere") == []  # a contribution hook of an absent publisher
