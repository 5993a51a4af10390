"""Safe concurrent editing: ``version_token``, If-Match, the 409 with both versions, fork, overwrite, version-state."""

from __future__ import annotations

import threading
import uuid

from tests.versions.vkit import create, edited, graph, save, versions


def test_two_clients_saving_with_one_token(client, alice):
    flow = create(client, alice, graph("base"))
    token = flow["version_token"]
    assert uuid.UUID(token)
    first = save(client, alice, flow["id"], graph("from tab one"), token)
    assert first.status_code == 200, first.get_json()
    assert first.get_json()["version_token"] not in (None, token)
    second = save(client, alice, flow["id"], graph("from tab two"), token)
    assert second.status_code == 409
    detail = second.get_json()["detail"]
    assert detail["code"] == "flow_version_conflict"
    assert detail["flow_id"] == flow["id"]
    assert detail["expected_version_token"] == token
    assert detail["current_version_token"] == first.get_json()["version_token"]
    assert detail["modified_by"]["id"] == alice.id
    # both versions: the stored one (the winner's) and the refused one
    assert detail["current"]["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] == "from tab one"
    assert detail["submitted"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] == "from tab two"
    # nothing was written by the loser
    stored = client.get(f"/api/v1/flows/{flow['id']}", headers=alice.bearer).get_json()
    assert stored["data"] == first.get_json()["data"]
    # a rename does not need (or take) the token; a save without If-Match behaves as before
    rename = client.patch(
        f"/api/v1/flows/{flow['id']}", json={"name": "n2"}, headers={**alice.bearer, "If-Match": token}
    )
    assert rename.status_code == 200 and rename.get_json()["version_token"] == stored["version_token"]
    assert save(client, alice, flow["id"], graph("no precondition")).status_code == 200


def test_concurrent_saves_one_wins(app, alice):
    flow = create(app.test_client(), alice, graph("base"))
    token = flow["version_token"]
    results: list[int] = []

    def worker(i: int) -> None:
        response = save(app.test_client(), alice, flow["id"], graph(f"writer {i}"), token)
        results.append(response.status_code)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200, 409, 409, 409]


def test_bad_if_match_is_400(client, alice):
    flow = create(client, alice, graph("a"))
    response = save(client, alice, flow["id"], graph("b"), "not-a-token")
    assert response.status_code == 400
    assert response.get_json() == {"detail": "Invalid If-Match header: expected a version token"}
    assert save(client, alice, flow["id"], graph("b"), f'W/"{flow["version_token"]}"').status_code == 200


def test_version_state(client, alice, bob):
    flow = create(client, alice, graph("a"))
    state = client.get(f"/api/v1/flows/{flow['id']}/version-state", headers=alice.bearer)
    assert state.status_code == 200
    body = state.get_json()
    assert set(body) == {"version_token", "last_modified_by", "last_modified_by_username", "updated_at"}
    assert body["version_token"] == flow["version_token"] and body["last_modified_by"] == alice.id
    assert client.get(f"/api/v1/flows/{flow['id']}/version-state", headers=bob.bearer).status_code == 404


def test_fork_is_inert_and_carries_my_graph(client, alice):
    flow = create(client, alice, graph("theirs"), endpoint_name="live-ep", webhook=True, mcp_enabled=True)
    mine = graph("mine")
    forked = client.post(f"/api/v1/flows/{flow['id']}/fork", json={"data": mine}, headers=alice.bearer)
    assert forked.status_code == 201, forked.get_json()
    body = forked.get_json()
    assert body["id"] != flow["id"] and body["name"] == "flow (copy)"
    assert body["endpoint_name"] is None and body["webhook"] is False and body["mcp_enabled"] is False
    assert body["access_type"] == "PRIVATE" and body["data"] == mine


def test_overwrite_needs_the_reviewed_token(client, alice):
    flow = create(client, alice, graph("a"))
    client.post(f"/api/v1/flows/{flow['id']}/versions/", json={"description": "start"}, headers=alice.bearer)
    winner = save(client, alice, flow["id"], graph("winner"), flow["version_token"]).get_json()
    url = f"/api/v1/flows/{flow['id']}/overwrite"
    merged = edited(graph("winner"), **{"N-0": "merged"})
    assert client.post(url, json={"data": merged}, headers=alice.bearer).status_code == 428
    stale = client.post(url, json={"data": merged}, headers={**alice.bearer, "If-Match": flow["version_token"]})
    assert stale.status_code == 409
    done = client.post(url, json={"data": merged}, headers={**alice.bearer, "If-Match": winner["version_token"]})
    assert done.status_code == 200 and done.get_json()["data"] == merged
    texts = set()
    for entry in versions(client, alice, flow["id"]):
        full = client.get(f"/api/v1/flows/{flow['id']}/versions/{entry['id']}", headers=alice.bearer).get_json()
        texts.add(full["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"])
    assert {"a", "winner", "merged"} <= texts  # the overwritten save stays a version, even from one author
