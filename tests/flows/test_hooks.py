def test_find_flow_for_any_owner_matches_ids_and_unique_endpoint_names(app, client, alice, bob):
    from core.app import state

    def create(who, name, endpoint):
        response = client.post("/api/v1/flows/", json={"name": name, "endpoint_name": endpoint}, headers=who.key)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    mine = create(alice, "a", "only-alice")
    create(alice, "b", "shared-name")
    create(bob, "c", "shared-name")
    with app.app_context():
        find = state(app).host.hooks.find_flow
        assert find(user_id=None, flow_id_or_name=mine["id"], public=False).user_id == alice.id
        assert find(user_id=None, flow_id_or_name="only-alice", public=False).id == mine["id"]
        assert find(user_id=None, flow_id_or_name="shared-name", public=False) is None  # ambiguous
        assert find(user_id=None, flow_id_or_name=mine["id"], public=True) is None  # private
