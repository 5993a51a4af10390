"""The executor enforces the catalog policy it is given (``SERVICE_POLICIES_BLOCKED_COMPONENTS`` /
``SERVICE_POLICIES_FILE``): top flows are refused (403, exit 2), sub-flows at any depth fail the run."""

from __future__ import annotations

import json

import pytest
from service_exec.cli import main
from service_exec.engine import Executor, Flow, FlowError, Refused, Settings
from service_exec.server import create_app

from tests.flowkit import edge, flow, node, standard_registry

KEY = "executor-policy-key-0123456789"


def leaf() -> dict:
    text = node("TextInput", "TextInput-1", input_value="from the leaf")
    out = node("ChatOutput", "ChatOutput-1")
    return flow([text, out], [edge(text, "text", out, "input_value")])


def runner(target: str) -> dict:
    rf = node("RunFlow", "RunFlow-1", flow_name_selected=target)
    out = node("ChatOutput", "ChatOutput-9")
    return flow([rf, out], [edge(rf, "flow_outputs_message", out, "input_value")])


def executor(blocked: tuple[str, ...] = ()) -> Executor:
    ex = Executor(standard_registry(), Settings(api_key=KEY, blocked_components=blocked))
    ex.add(Flow("leaf-id", "leaf", None, leaf(), "leaf.json"))
    ex.add(Flow("middle-id", "middle", None, runner("leaf-id"), "middle.json"))
    ex.add(Flow("top-id", "top", None, runner("middle-id"), "top.json"))
    return ex


def test_without_a_policy_sub_flows_run():
    ex = executor()
    for name in ("leaf", "middle", "top"):
        result = ex.run(ex.find(name), "hi")
        assert result.ok and result.answer() == "from the leaf", (name, result.error)


def test_blocked_component_refused_in_top_flows_and_sub_flows():
    ex = executor(("TextInput",))
    with pytest.raises(Refused, match="'TextInput' of flow 'leaf' blocked by the catalog policy"):
        ex.run(ex.find("leaf"), "hi")
    for name in ("middle", "top"):  # one and two levels down: the engine asks before it builds
        result = ex.run(ex.find(name), "hi")
        assert result.status == "failed", name
        assert "'TextInput' of flow 'leaf' blocked" in result.error["message"]
        assert result.error["vertex_id"] == "RunFlow-1"


def test_aliases_and_the_policy_file(tmp_path):
    reg = standard_registry()
    alias = next((a for a, target in reg.aliases.items() if target == "ChatOutput"), None)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"blocked_components": ["ChatOutput"]}))
    settings = Settings.from_env({"SERVICE_POLICIES_FILE": str(policy), "SERVICE_POLICIES_BLOCKED_COMPONENTS": "A, B"})
    assert settings.blocked_components == ("A", "B", "ChatOutput")
    ex = Executor(reg, settings)
    assert "ChatOutput" in ex.blocked and (alias is None or alias in ex.blocked)
    policy.write_text(json.dumps({"blocked_components": "ChatOutput"}))
    with pytest.raises(FlowError, match="must be a list"):
        Settings.from_env({"SERVICE_POLICIES_FILE": str(policy)})


def test_serve_answers_403_and_a_failed_sub_flow_run():
    client = create_app(executor(("TextInput",))).test_client()
    headers = {"x-api-key": KEY}
    refused = client.post("/api/v1/run/leaf-id", json={"input_value": "hi"}, headers=headers)
    assert refused.status_code == 403
    assert "'TextInput' of flow 'leaf' blocked" in refused.get_json()["detail"]
    v2 = client.post("/api/v2/workflows", json={"flow_id": "leaf-id", "input_value": "hi"}, headers=headers)
    assert v2.status_code == 403
    nested = client.post("/api/v1/run/top-id", json={"input_value": "hi"}, headers=headers)
    assert nested.status_code != 200 and "from the leaf" not in nested.get_data(as_text=True)
    assert "'TextInput' of flow 'leaf' blocked" in nested.get_data(as_text=True)


def test_cli_run_exits_2_for_a_blocked_flow(tmp_path, monkeypatch, capsys):
    path = tmp_path / "leaf.json"
    path.write_text(json.dumps({"id": "leaf-id", "name": "leaf", "data": leaf()}))
    monkeypatch.setenv("SERVICE_POLICIES_BLOCKED_COMPONENTS", "TextInput")
    assert main(["run", str(path), "--input", "hi"]) == 2
    assert "'TextInput' of flow 'leaf' blocked by the catalog policy" in capsys.readouterr().err
    monkeypatch.delenv("SERVICE_POLICIES_BLOCKED_COMPONENTS")
    assert main(["run", str(path), "--input", "hi"]) == 0
