"""Two people edit one flow at once and neither loses work (issue 31, 'Done when', API level).

The flow's owner and a team member with write access load the flow (one ``version_token``), each changes a
different node; the second save is refused with 409 naming the first writer by username and carrying both
versions; the second writer merges (the stored graph plus their own change, what the editor's conflict
dialog saves by default) and overwrites over the version just reviewed. Both changes are in the flow, and
the history names each author.
"""

from __future__ import annotations

import copy

import pytest

from tests.conftest import make_user, superuser
from tests.versions.vkit import create, edited, graph, save, versions


@pytest.fixture
def team(make_app):
    app = make_app(plugins=["accounts", "flows", "versions", "teams"])
    client = app.test_client()
    root = superuser(client)
    alice = make_user(client, root, username="alice_owner")
    bob = make_user(client, root, username="bob_dev")
    carol = make_user(client, root, username="carol_outsider")
    project = client.post("/api/v1/projects/", json={"name": "Shared"}, headers=alice.bearer).get_json()
    made = client.post("/api/v1/authz/teams", json={"team_name": "devs", "adom_name": "team-devs"}, headers=root.bearer)
    assert made.status_code == 201, made.get_json()
    team_id = made.get_json()["id"]
    added = client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": bob.id}, headers=root.bearer)
    assert added.status_code == 201, added.get_json()
    shared = client.post(
        "/api/v1/authz/shares",
        json={"resource_type": "project", "resource_id": project["id"], "scope": "team",
              "target_id": team_id, "permission_level": "write"},
        headers=alice.bearer,
    )  # fmt: skip
    assert shared.status_code == 201, shared.get_json()
    return client, alice, bob, carol, project


def test_two_people_edit_one_flow_and_neither_loses_work(team):
    client, alice, bob, carol, project = team
    flow = create(client, alice, graph("a0", "a1", "a2"), folder_id=project["id"])
    fid = flow["id"]
    # both open the flow: the same token
    seen_by_bob = client.get(f"/api/v1/flows/{fid}", headers=bob.bearer).get_json()
    assert seen_by_bob["version_token"] == flow["version_token"]

    # bob changes node 0 and saves first
    bobs = save(client, bob, fid, edited(seen_by_bob["data"], **{"N-0": "bob's text"}), flow["version_token"])
    assert bobs.status_code == 200, bobs.get_json()

    # alice changes node 2 from the same start: refused, naming bob, with both versions
    alices_graph = edited(flow["data"], **{"N-2": "alice's text"})
    refused = save(client, alice, fid, alices_graph, flow["version_token"])
    assert refused.status_code == 409
    detail = refused.get_json()["detail"]
    assert detail["modified_by"] == {"id": bob.id, "username": "bob_dev"}
    assert detail["current_version_token"] == bobs.get_json()["version_token"]
    state = client.get(f"/api/v1/flows/{fid}/version-state", headers=alice.bearer).get_json()
    assert state["last_modified_by_username"] == "bob_dev"

    # the merge the dialog saves by default: theirs (the stored graph) plus alice's own change
    merged = copy.deepcopy(detail["current"]["data"])
    merged["nodes"][2] = copy.deepcopy(detail["submitted"]["nodes"][2])
    written = client.post(
        f"/api/v1/flows/{fid}/overwrite",
        json={"data": merged},
        headers={**alice.bearer, "If-Match": detail["current_version_token"]},
    )
    assert written.status_code == 200, written.get_json()
    texts = [n["data"]["node"]["template"]["text"]["value"] for n in written.get_json()["data"]["nodes"]]
    assert texts == ["bob's text", "a1", "alice's text"]

    # bob's stale tab is refused in turn (nothing of alice's is overwritten), naming alice
    stale = save(
        client, bob, fid, edited(seen_by_bob["data"], **{"N-1": "bob again"}), bobs.get_json()["version_token"]
    )
    assert stale.status_code == 409
    theirs = stale.get_json()["detail"]
    assert theirs["modified_by"]["username"] == "alice_owner"
    # bob, a team member with write access, merges too (his node 1 over alice's merged flow)
    assert client.get(f"/api/v1/flows/{fid}/version-state", headers=bob.bearer).status_code == 200
    merged = copy.deepcopy(theirs["current"]["data"])
    merged["nodes"][1] = copy.deepcopy(theirs["submitted"]["nodes"][1])
    headers = {"If-Match": theirs["current_version_token"]}
    overwrite = f"/api/v1/flows/{fid}/overwrite"
    assert client.post(overwrite, json={"data": merged}, headers={**carol.bearer, **headers}).status_code == 404
    written = client.post(overwrite, json={"data": merged}, headers={**bob.bearer, **headers})
    assert written.status_code == 200, written.get_json()
    texts = [n["data"]["node"]["template"]["text"]["value"] for n in written.get_json()["data"]["nodes"]]
    assert texts == ["bob's text", "bob again", "alice's text"]

    # the history names each author
    entries = versions(client, alice, fid)
    authors = [(e["version_number"], e["username"], e["user_id"]) for e in entries]
    assert authors[:3] == [(4, "bob_dev", bob.id), (3, "alice_owner", alice.id), (2, "bob_dev", bob.id)]
    # an outsider learns nothing: the flow, its versions and its state are 404
    for path in (f"/api/v1/flows/{fid}", f"/api/v1/flows/{fid}/versions/", f"/api/v1/flows/{fid}/version-state"):
        assert client.get(path, headers=carol.bearer).status_code == 404


def test_user_names_answers_known_ids_only(team):
    client, alice, bob, _carol, _project = team
    from core import appstate

    app = client.application
    with app.app_context():
        hooks = appstate.hooks()
        names = hooks.user_names(user_ids=[alice.id, bob.id, "not-an-id", "00000000-0000-0000-0000-000000000000"])
        assert names == {alice.id: "alice_owner", bob.id: "bob_dev"}
        assert hooks.user_names(user_ids=[]) == {}


def test_the_publication_names_who_published_it(team):
    """A team member publishes the owner's flow: the publication (what History shows) names them, and the
    version it names carries its author's username; an outsider's read is 404."""
    client, alice, bob, carol, project = team
    flow = create(client, alice, graph("a0"), folder_id=project["id"])
    fid = flow["id"]
    before = client.get(f"/api/v1/flows/{fid}/publish", headers=alice.bearer).get_json()
    assert before == {"flow_id": fid, "published": False, "version": None, "published_at": None,
                      "published_by": None, "published_by_username": None}  # fmt: skip
    published = client.post(f"/api/v1/flows/{fid}/publish", json={}, headers=bob.bearer)
    assert published.status_code == 200, published.get_json()
    for reader in (alice, bob):
        state = client.get(f"/api/v1/flows/{fid}/publish", headers=reader.bearer).get_json()
        assert state["published_by"] == bob.id
        assert state["published_by_username"] == "bob_dev"
        assert (state["version"]["user_id"], state["version"]["username"]) == (alice.id, "alice_owner")
    assert client.get(f"/api/v1/flows/{fid}/publish", headers=carol.bearer).status_code == 404
