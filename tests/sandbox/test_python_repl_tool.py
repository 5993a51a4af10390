"""Python REPL (``PythonREPLTool``): runs only in the sandbox, as a component and as an agent's tool; the
hardening switches and the governance catalog policy refuse it."""

from __future__ import annotations

import pytest
from service_bundle_models.bundle import register_components as models_components
from service_bundle_sandbox.python_repl_tool import PythonREPLTool

from core import sandbox
from core.engine import ComponentError, EgressPolicy, Registry, RunContext, run_flow
from core.engine.host_access import CodeExecutionDenied, Hardening
from tests.conftest import make_user, superuser
from tests.flowkit import edge, flow, node, standard_registry
from tests.openai_server import OpenAIServer
from tests.run.runkit import create_flow

needs_sandbox = pytest.mark.skipif(sandbox.available() is not None, reason=f"{sandbox.available()}")
ALLOWED = Hardening(allow_code_execution=True)
MODEL = [{"name": "test-model", "provider": "OpenAI Compatible", "icon": "", "category": "", "metadata": {}}]


def registry() -> Registry:
    return Registry.from_classes([*standard_registry().classes(), *models_components(), PythonREPLTool])


def repl(hardening: Hardening = ALLOWED, **params) -> PythonREPLTool:
    return PythonREPLTool(params, context=RunContext(hardening=hardening))


def test_catalog_node_matches_the_reference():
    node_ = PythonREPLTool.to_frontend_node()
    assert node_["display_name"] == "Python REPL" and node_["legacy"] is True
    assert node_["template"]["name"]["value"] == "python_repl"
    assert node_["template"]["python_code"]["value"] == "print('Hello, World!')"
    assert [(o["name"], o["method"], o["types"]) for o in node_["outputs"]] == [
        ("api_run_model", "run_model", ["JSON"]),
        ("api_build_tool", "build_tool", ["Tool"]),
    ]


@needs_sandbox
def test_runs_code_in_the_sandbox_with_imports():
    assert repl(python_code="print(math.sqrt(81))").run_model().data == {"result": "9.0"}
    assert repl(python_code="import json\nprint(json.dumps([1]))", global_imports="").run_model().data == {
        "result": "[1]"
    }
    # no network, no host files: the sandbox's own guarantees hold for this component too
    out = repl(python_code="print(open('/etc/hostname').read())").run_model().data["result"]
    assert "No such file" in out or "Error" in out
    assert "Error" in repl(python_code="raise ValueError('boom')").run_model().data["result"]


def test_empty_and_bad_inputs_are_refused_before_running():
    with pytest.raises(ComponentError, match="no code"):
        repl(python_code="  ").run_model()
    with pytest.raises(ComponentError, match="is not a module name"):
        repl(python_code="print(1)", global_imports="os; rm -rf /").run_model()


def test_hardening_refuses_it_by_default_and_when_blocked():
    with pytest.raises(CodeExecutionDenied, match="SERVICE_ALLOW_CUSTOM_COMPONENTS"):
        repl(Hardening(), python_code="print(1)").run_model()
    with pytest.raises(CodeExecutionDenied, match="SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS"):
        repl(Hardening(allow_code_execution=True, block_code_interpreter=True)).build_tool()


@needs_sandbox
def test_the_tool_answers_an_agent():
    reg = registry()
    chat_in = node("ChatInput", "ChatInput-1", registry=reg)
    model = node("LanguageModelComponent", "LM-1", registry=reg, model=MODEL)
    agent = node("Agent", "Agent-1", registry=reg, add_current_date_tool=False)
    tool = node("PythonREPLTool", "REPL-1", registry=reg, name="py", global_imports="math")
    out = node("ChatOutput", "ChatOutput-1", registry=reg)
    data = flow(
        [chat_in, model, agent, tool, out],
        [
            edge(chat_in, "message", agent, "input_value"),
            edge(model, "model_output", agent, "model"),
            edge(tool, "api_build_tool", agent, "tools"),
            edge(agent, "response", out, "input_value"),
        ],
    )
    with OpenAIServer() as llm:
        llm.reply(tool_calls=[("py", {"code": "print(math.factorial(6))"})])
        llm.reply("6! is 720")
        ctx = RunContext(
            flow_id="f",
            session_id="s",
            registry=reg,
            hardening=ALLOWED,
            egress=EgressPolicy(allowed_hosts=("127.0.0.1",)),
            request_variables={"OPENAI_COMPATIBLE_BASE_URL": llm.url, "OPENAI_COMPATIBLE_API_KEY": "k"},
        )
        result = run_flow(data, reg, ctx, input_value="what is 6!?")
        assert result.ok, result.error
        assert result.answer() == "6! is 720"
        offered = llm.chat_requests[0]["tools"]
        assert offered[0]["function"]["name"] == "py"
        assert offered[0]["function"]["parameters"]["required"] == ["code"]
        tool_message = next(m for m in llm.chat_requests[1]["messages"] if m["role"] == "tool")
        assert tool_message["content"] == "720"


def test_governance_policy_blocks_it(make_app):
    app = make_app(
        plugins=["accounts", "flows", "run", "catalog", "build", "policies", "standard", "sandbox"],
        allow_custom_components=True,
    )
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    reg = Registry.from_classes([*standard_registry().classes(), PythonREPLTool])
    tool = node("PythonREPLTool", "REPL-1", registry=reg, python_code="print(1)")
    out = node("ChatOutput", "ChatOutput-1")
    created = create_flow(client, alice, flow([tool, out], [edge(tool, "api_run_model", out, "input_value")]))
    blocked = client.put(
        "/api/v1/catalog-policy/components", json={"blocked": ["PythonREPLTool"]}, headers=admin.bearer
    )
    assert blocked.status_code == 200, blocked.get_json()
    catalog = client.get("/api/v1/all", headers=alice.key).get_json()
    assert not any("PythonREPLTool" in group for group in catalog.values() if isinstance(group, dict))
    run = client.post(f"/api/v1/run/{created['id']}", json={"input_value": "x"}, headers=alice.key)
    assert run.status_code == 403
    assert run.get_json() == {
        "detail": "Component 'PythonREPLTool' blocked by the catalog policy: this flow cannot run"
    }
