"""A stored flow's ``data`` is decoded once per version and process (service_flows.services._shared_data)."""

from tests.flowkit import load_reference as reference_flow


def test_find_flow_decodes_data_once_per_stored_version_and_runs_leave_it_unchanged(app, client, alice):
    """An owner's lookups share one decoded ``data`` per stored version; an update (through the API or
    straight in the database, same ``updated_at`` or not) is seen at once; runs with tweaks, a changed
    input and an unsaved graph never change the shared value."""
    import copy
    import json
    import uuid

    import sqlalchemy as sa
    from service_flows.models import Flow

    from core import db
    from core.app import state

    data = reference_flow("chat-echo.json")["data"]
    flow = client.post("/api/v1/flows/", json={"name": "cached", "data": data}, headers=alice.key).get_json()
    find = state(app).host.hooks.find_flow
    with app.app_context():
        first = find(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
        second = find(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
    assert first.data is second.data  # decoded once
    pristine = copy.deepcopy(first.data)
    output = next(n["id"] for n in data["nodes"] if n["data"]["type"] == "ChatOutput")
    for body in (
        {"input_value": "hi"},
        {"input_value": "tweaked", "tweaks": {output: {"sender_name": "Changed", "data_template": "{text}!"}}},
    ):
        response = client.post(f"/api/v1/run/{flow['id']}", json=body, headers=alice.key)
        assert response.status_code == 200, response.get_json()
    with app.app_context():
        again = find(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
    assert again.data is first.data and again.data == pristine

    renamed = copy.deepcopy(data)
    renamed["nodes"][0]["data"]["node"]["display_name"] = "Renamed through the API"
    assert client.patch(f"/api/v1/flows/{flow['id']}", json={"data": renamed}, headers=alice.key).status_code == 200
    with app.app_context():
        updated = find(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
        assert updated.data["nodes"][0]["data"]["node"]["display_name"] == "Renamed through the API"
        s = db.session()
        row = s.get(Flow, uuid.UUID(flow["id"]))
        stamp = row.updated_at
        changed = json.loads(json.dumps(renamed))
        changed["nodes"][0]["data"]["node"]["display_name"] = "Changed in the database"
        s.execute(sa.update(Flow).where(Flow.id == row.id).values(data=changed, updated_at=stamp))
        s.commit()
        direct = find(user_id=alice.id, flow_id_or_name=flow["id"], public=False)
    assert direct.data["nodes"][0]["data"]["node"]["display_name"] == "Changed in the database"
