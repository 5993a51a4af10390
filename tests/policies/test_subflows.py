"""The catalog policy and the run checks apply to every graph a run runs: sub-flows (Run Flow, Sub Flow,
Flow as Tool), nested to any depth, checked before the run (403) and again when the engine loads them."""

from __future__ import annotations

import pytest

from core.app import state
from core.engine import RunContext, run_flow
from core.engine.errors import PolicyRefused
from core.runs.hook_ports import make_context
from tests.build.buildkit import parse
from tests.conftest import make_user
from tests.flowkit import edge, flow, node, standard_registry
from tests.policies.test_enforcement import block
from tests.run.runkit import answer, create_flow

BLOCKED = "TextInput"


def leaf() -> dict:
    """Text Input (the component the tests block) -> Chat Output."""
    text = node("TextInput", "TextInput-1", input_value="from the leaf")
    out = node("ChatOutput", "ChatOutput-1")
    return flow([text, out], [edge(text, "text", out, "input_value")])


def runner(target: str, *, kind: str = "RunFlow") -> dict:
    """A flow that runs ``target`` (Run Flow or Sub Flow) and shows its answer."""
    if kind == "RunFlow":
        rf = node("RunFlow", "RunFlow-1", flow_name_selected=target)
        out = node("ChatOutput", "ChatOutput-9")
        return flow([rf, out], [edge(rf, "flow_outputs_message", out, "input_value")])
    return flow([node("SubFlow", "SubFlow-1", flow_name=target)], [])


@pytest.fixture
def alice(client, admin):
    return make_user(client, admin, username="alice")


def test_a_blocked_component_in_a_sub_flow_refuses_the_run(client, admin, alice):
    target = create_flow(client, alice, leaf(), name="leaf")
    parent = create_flow(client, alice, runner(target["id"]), name="parent")
    ok = client.post(f"/api/v1/run/{parent['id']}", json={"input_value": "hi"}, headers=alice.key)
    assert ok.status_code == 200 and answer(ok.get_json()) == "from the leaf"  # the sub-flow does run
    block(client, admin, BLOCKED)
    refused = client.post(f"/api/v1/run/{parent['id']}", json={"input_value": "hi"}, headers=alice.key)
    assert refused.status_code == 403, refused.get_json()
    detail = refused.get_json()["detail"]
    assert "'leaf'" in detail and f"'{BLOCKED}'" in detail and "blocked by the catalog policy" in detail
    built = client.post(
        f"/api/v1/build/{parent['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}},
        headers=alice.bearer,
    )
    # a build checks its graph in the job: the stream ends with the refusal, and the sub-flow did not run
    events = parse(built.get_data(as_text=True))
    assert events[-1]["event"] == "error", events[-1]
    text = built.get_data(as_text=True)
    assert f"Sub-flow 'leaf' (component 'Run Flow') cannot run: Component '{BLOCKED}' blocked" in text
    assert "from the leaf" not in text


def test_nested_two_deep_and_a_tweaked_sub_flow_name(client, admin, alice):
    target = create_flow(client, alice, leaf(), name="leaf")
    middle = create_flow(client, alice, runner(target["id"]), name="middle")
    top = create_flow(client, alice, runner(middle["id"]), name="top")
    assert client.post(f"/api/v1/run/{top['id']}", json={}, headers=alice.key).status_code == 200
    block(client, admin, BLOCKED)
    refused = client.post(f"/api/v1/run/{top['id']}", json={}, headers=alice.key)
    assert refused.status_code == 403 and f"'{BLOCKED}'" in refused.get_json()["detail"]
    assert "'middle'" in refused.get_json()["detail"] and "'leaf'" in refused.get_json()["detail"]
    # a harmless target tweaked into a blocked one is checked too
    harmless = create_flow(client, alice, flow([node("ChatOutput", "ChatOutput-1")], []), name="harmless")
    fine = create_flow(client, alice, runner(harmless["id"]), name="fine")
    assert client.post(f"/api/v1/run/{fine['id']}", json={}, headers=alice.key).status_code == 200
    tweaked = client.post(
        f"/api/v1/run/{fine['id']}",
        json={"tweaks": {"RunFlow-1": {"flow_name_selected": target["id"]}}},
        headers=alice.key,
    )
    assert tweaked.status_code == 403 and f"'{BLOCKED}'" in tweaked.get_json()["detail"]


def test_flow_as_tool_and_sub_flow_components(client, admin, alice):
    target = create_flow(client, alice, leaf(), name="leaf")
    tool = node("FlowTool", "FlowTool-1", flow_name=target["id"], tool_name="leaf_tool")
    as_tool = create_flow(client, alice, flow([tool], []), name="as tool")
    sub = create_flow(client, alice, runner(target["id"], kind="SubFlow"), name="sub")
    for target in (as_tool, sub):
        assert client.post(f"/api/v1/run/{target['id']}", json={}, headers=alice.key).status_code == 200
    block(client, admin, BLOCKED)
    for target in (as_tool, sub):
        refused = client.post(f"/api/v1/run/{target['id']}", json={}, headers=alice.key)
        assert refused.status_code == 403, (target["name"], refused.get_json())
        assert f"'{BLOCKED}'" in refused.get_json()["detail"]


def test_the_engine_checks_a_sub_flow_it_loads_at_run_time(app, client, admin, alice):
    """A sub-flow named only while the run goes (no static name to check first) is refused by the engine."""
    target = create_flow(client, alice, leaf(), name="leaf")
    block(client, admin, BLOCKED)
    with app.app_context():
        ctx = make_context(user_id=alice.id, flow={"id": None, "name": "unsaved"}, store_messages=False)
        assert ctx.check_flow is not None
        result = run_flow(runner(target["id"]), state(app).components.current, ctx)
    assert result.status == "failed"
    message = result.error["message"]
    assert "Sub-flow 'leaf' cannot run" in message and f"'{BLOCKED}'" in message


def test_check_flow_runs_for_every_level_and_refusals_are_component_errors():
    flows = {
        "leaf": {"id": "leaf", "name": "leaf", "data": leaf()},
        "middle": {"id": "middle", "name": "middle", "data": runner("leaf")},
    }
    seen = []

    def check_flow(found):
        seen.append(found.get("name"))
        if BLOCKED in {n["data"]["type"] for n in found["data"]["nodes"]}:
            raise PolicyRefused(f"Sub-flow '{found.get('name')}' cannot run: '{BLOCKED}' is blocked")

    ctx = RunContext(flow_id="top", load_flow=flows.get, check_flow=check_flow)
    result = run_flow(runner("middle"), standard_registry(), ctx)
    assert result.status == "failed" and f"'{BLOCKED}' is blocked" in result.error["message"]
    assert seen == [None, "middle", "leaf"]  # the top graph run_flow was given, then each level
