"""The teams plugin's hooks called directly: SSO groups to memberships, and the flows plugin's resource lookup."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from core import appstate, db, hookimpl
from core.contracts import SsoIdentity
from tests.conftest import superuser
from tests.run.runkit import chat_echo, create_flow

PLUGINS = ["accounts", "flows", "variables", "catalog", "standard", "teams", "sso"]


def test_on_sso_signed_in_follows_the_groups(make_app):
    from service_sso import hookspecs
    from service_teams.models import Team, TeamMember

    app = make_app(plugins=PLUGINS)
    user = uuid.uuid4()
    with app.app_context():
        with db.transaction() as s:
            s.add_all([Team(team_name="A", adom_name="a"), Team(team_name="B", adom_name="b")])
        notify = appstate.hooks().notify

        def groups_now() -> list[tuple[str, str]]:
            query = sa.select(Team.adom_name, TeamMember.source).join(TeamMember, TeamMember.team_id == Team.id)
            return sorted(tuple(r) for r in db.session().execute(query.where(TeamMember.user_id == user)))

        identity = SsoIdentity(provider="oidc", subject="x", username="x", groups=("a", "b", "unknown"))
        with db.transaction():
            notify(hookspecs.on_sso_signed_in, user_id=str(user), identity=identity)
        assert groups_now() == [("a", "sso"), ("b", "sso")]
        with db.transaction():
            notify(
                hookspecs.on_sso_signed_in,
                user_id=str(user),
                identity=identity.__class__(provider="oidc", subject="x", username="x", groups=("b",)),
            )
        assert groups_now() == [("b", "sso")]


def test_resource_ref_is_answered_by_the_flows_plugin(make_app):
    from service_teams import hookspecs

    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    root = superuser(client)
    flow = create_flow(client, root, chat_echo(), name="f")
    with app.app_context():
        first = appstate.hooks().first
        ref = first(hookspecs.resource_ref, kind="flow", resource_id=flow["id"])
        assert ref is not None and (ref.kind, ref.id, ref.owner_id) == ("flow", flow["id"], root.id)
        assert ref.project_id == flow["folder_id"]
        project = first(hookspecs.resource_ref, kind="project", resource_id=flow["folder_id"])
        assert project is not None and project.owner_id == root.id and project.project_id == flow["folder_id"]
        assert first(hookspecs.resource_ref, kind="flow", resource_id=str(uuid.uuid4())) is None
        assert first(hookspecs.resource_ref, kind="file", resource_id=flow["id"]) is None


def test_shared_with_lists_shares_to_the_user_and_their_teams(make_app):
    from service_teams.models import Share, Team, TeamMember

    from core.auth import shared_ids

    app = make_app(plugins=PLUGINS)
    user, direct, via_team, other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with app.app_context():
        with db.transaction() as s:
            team = Team(team_name="T", adom_name="t")
            s.add(team)
            s.flush()
            s.add(TeamMember(team_id=team.id, user_id=user))
            s.add(Share(resource_type="project", resource_id=direct, scope="user", target_id=user))
            s.add(Share(resource_type="project", resource_id=via_team, scope="team", target_id=team.id))
            s.add(Share(resource_type="project", resource_id=other, scope="user", target_id=uuid.uuid4()))
        assert appstate.hooks().shared_with(user_id=str(user), kind="project") == sorted([str(direct), str(via_team)])
        assert shared_ids(user, "project") == sorted([str(direct), str(via_team)])
        assert shared_ids(user, "variable") == []
        # the relay's answers, one list per implementation (the teams plugin's)
        assert appstate.host().hook.shared_with(user_id=str(user), kind="project") == [
            sorted([str(direct), str(via_team)])
        ]


class OwnerChanges:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    @hookimpl
    def on_flow_owner_changed(self, flow_id: str, previous_owner_id: str, owner_id: str) -> None:
        self.calls.append((flow_id, previous_owner_id, owner_id))


def test_on_flow_owner_changed_is_told_of_a_move_into_a_shared_project_only(make_app):
    """The flows plugin tells ``on_flow_owner_changed`` once per flow moved into another user's project (by PATCH
    and by the bulk move); a move between the caller's own projects and a refused move tell nothing."""
    from tests.conftest import make_user

    recorder = OwnerChanges()
    app = make_app(plugins=[*PLUGINS, ("owner-changes", recorder)])
    client = app.test_client()
    root = superuser(client)
    owner, member = make_user(client, root, username="owner"), make_user(client, root, username="member")
    project = client.post("/api/v1/projects/", json={"name": "P"}, headers=owner.bearer).get_json()["id"]
    team = client.post("/api/v1/authz/teams", json={"team_name": "T", "adom_name": "t"}, headers=root.bearer)
    team_id = team.get_json()["id"]
    assert client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": member.id}, headers=root.bearer)
    body = {"resource_type": "project", "resource_id": project, "scope": "team", "target_id": team_id}
    share = client.post("/api/v1/authz/shares", json={**body, "permission_level": "read"}, headers=owner.bearer)
    assert share.status_code == 201
    first = create_flow(client, member, chat_echo(), name="first")
    second = create_flow(client, member, chat_echo(), name="second")
    elsewhere = client.post("/api/v1/projects/", json={"name": "mine"}, headers=member.bearer).get_json()["id"]
    own_move = client.patch(f"/api/v1/flows/{first['id']}", json={"folder_id": elsewhere}, headers=member.bearer)
    assert own_move.status_code == 200
    refused = client.patch(f"/api/v1/flows/{first['id']}", json={"folder_id": project}, headers=member.bearer)
    assert refused.status_code == 403  # a reader of the project
    assert recorder.calls == []
    upgrade = {"permission_level": "write"}
    share_id = share.get_json()["id"]
    assert client.patch(f"/api/v1/authz/shares/{share_id}", json=upgrade, headers=owner.bearer).status_code == 200
    moved = client.patch(f"/api/v1/flows/{first['id']}", json={"folder_id": project}, headers=member.bearer)
    assert moved.status_code == 200
    bulk = client.patch(f"/api/v1/projects/{project}", json={"flows": [second["id"]]}, headers=member.bearer)
    assert bulk.status_code == 200
    assert recorder.calls == [(first["id"], member.id, owner.id), (second["id"], member.id, owner.id)]
