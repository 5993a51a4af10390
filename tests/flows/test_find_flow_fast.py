"""The ``find_flow`` hook's hand-written dump equals the schema dump of the ORM flow (the fast path of runs)."""

from tests.flowkit import load_reference as reference_flow

from .conftest import secret_flow


def test_find_flow_matches_the_read_schema_dump(app, client, alice):
    import uuid

    import sqlalchemy as sa
    from service_flows import services
    from service_flows.models import Flow
    from service_flows.schemas import FlowReadSchema

    from core import db
    from core.app import state

    bodies = [
        {"name": "plain"},
        {
            "name": "full",
            "description": "d",
            "icon": "Bot",
            "icon_bg_color": "#fff",
            "gradient": "2",
            "endpoint_name": "full-flow",
            "tags": ["a", "b"],
            "locked": True,
            "webhook": True,
            "mcp_enabled": True,
            "action_name": "act",
            "action_description": "does",
            "access_type": "PUBLIC",
            "data": reference_flow("chat-echo.json")["data"],
        },
        secret_flow("secret"),
    ]
    created = []
    for body in bodies:
        response = client.post("/api/v1/flows/", json=body, headers=alice.key)
        assert response.status_code == 201, response.get_json()
        created.append(response.get_json())
    with app.app_context():
        s = db.session()
        s.execute(sa.update(Flow).where(Flow.id == uuid.UUID(created[0]["id"])).values(a2a_card_overrides={"x": 1}))
        s.commit()
        find = state(app).host.hooks.find_flow
        for flow in created:
            orm = s.scalar(sa.select(Flow).where(Flow.id == uuid.UUID(flow["id"])))
            expected = FlowReadSchema().dump(services.flow_out(orm))
            for ref in filter(None, (flow["id"], flow["endpoint_name"])):
                found = find(user_id=alice.id, flow_id_or_name=ref, public=False)
                assert found is not None
                got = found.as_dict()
                assert got == expected
                assert list(got) == list(expected)
        public = find(user_id=None, flow_id_or_name=created[1]["id"], public=True)
        assert public is not None and public.access_type == "PUBLIC"
