"""What a run leaves behind, and the run service's graph cache (issue 10's hot path).

As in the reference, every run of a stored flow records its transactions, and only builds (the
editor's) record vertex builds. A stored flow's graph is built once per version: an update is run at
once, in every process, because the cache is keyed by the flow's ``updated_at``.
"""

from __future__ import annotations

from service_monitor import plugin as monitor_plugin

from core.app import state
from tests.run.runkit import chat_echo, create_flow


def _sender(client, caller, flow_id):
    body = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=caller.key).get_json()
    return body["outputs"][0]["outputs"][0]["results"]["message"]["sender_name"]


def test_a_run_records_transactions_and_no_vertex_builds(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=alice.key).status_code == 200
    with app.app_context():
        monitor_plugin.recorder(app).flush()
    page = client.get(f"/api/v1/monitor/transactions?flow_id={flow['id']}", headers=alice.key).get_json()
    assert sorted(t["vertex_id"] for t in page["items"]) == ["ChatInput-AAAAA", "ChatOutput-BBBBB"]
    assert {t["status"] for t in page["items"]} == {"success"}
    builds = client.get(f"/api/v1/monitor/builds?flow_id={flow['id']}", headers=alice.key).get_json()
    assert builds == {"vertex_builds": {}}


def test_a_flow_update_is_run_at_once(app, client, alice):
    from core.runs import service

    flow = create_flow(client, alice, chat_echo(sender_name="First"))
    assert _sender(client, alice, flow["id"]) == "First"
    cached = [graph for key, (_reg, graph) in service._graphs.items() if key[0] == flow["id"]]
    assert len(cached) == 1
    assert _sender(client, alice, flow["id"]) == "First"
    assert [g for key, (_reg, g) in service._graphs.items() if key[0] == flow["id"]] == cached  # reused
    patched = client.patch(
        f"/api/v1/flows/{flow['id']}", json={"data": chat_echo(sender_name="Second")}, headers=alice.bearer
    )
    assert patched.status_code == 200
    assert _sender(client, alice, flow["id"]) == "Second"
    # a tweaked run builds its own graph and leaves the cache alone
    tweaked = client.post(
        f"/api/v1/run/{flow['id']}",
        json={"input_value": "hi", "tweaks": {"ChatOutput-BBBBB": {"sender_name": "Tweaked"}}},
        headers=alice.key,
    ).get_json()
    assert tweaked["outputs"][0]["outputs"][0]["results"]["message"]["sender_name"] == "Tweaked"
    assert _sender(client, alice, flow["id"]) == "Second"
    assert state(app).settings is not None


def test_a_component_changing_a_list_parameter_does_not_change_the_shared_graph():
    from core.engine.graph import Vertex
    from core.engine.runner import _Run

    vertex = Vertex.__new__(Vertex)
    vertex.params = {"items": ["a"], "options": {"k": 1}, "text": "t"}
    vertex.extra_params = {"more": [1]}
    vertex.id = "V"
    vertex.db_fields = {}
    vertex.in_edges = []

    class _Cls:
        @staticmethod
        def input_map():
            return {}

    vertex.cls = _Cls  # type: ignore[assignment]
    run = _Run.__new__(_Run)
    run.overrides = {}
    run.res = {}
    run.inactive = set()
    params, extra = run._params(vertex)
    params["items"].append("b")
    params["options"]["k"] = 2
    extra["more"].append(2)
    assert vertex.params == {"items": ["a"], "options": {"k": 1}, "text": "t"}
    assert vertex.extra_params == {"more": [1]}
