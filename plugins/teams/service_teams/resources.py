"""HTTP endpoints of the teams plugin, at the reference 1.13's routes and in its shapes.

* ``/api/v1/authz/teams`` (+ ``/{id}/members``): superusers manage; members see their teams
* ``/api/v1/authz/roles``: everyone lists; superusers create, change and delete custom roles
* ``/api/v1/authz/role-assignments``: superusers only
* ``/api/v1/authz/shares``: whoever may ``share`` the resource (its owner, a team admin)
* ``POST /api/v1/authz/me/permissions``: what the caller may do on resources, for the editor's buttons
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from flask_smorest import Blueprint
from sqlalchemy.exc import IntegrityError

from core import appstate, audit, db
from core.auth import Actor, authenticated, can, current_actor
from core.contracts import ResourceRef
from core.errors import ApiError
from service_teams import hookspecs, schemas
from service_teams.access import bump
from service_teams.models import Role, RoleAssignment, Share, Team, TeamMember

authz_blp = Blueprint("authz", __name__, url_prefix="/api/v1/authz", description="Teams, roles and shares")

DEFAULT_ACTIONS = ("read", "write", "execute", "delete", "create")


def _key(value: Any, what: str) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise ApiError(404, f"{what} not found") from None


def _admin(actor: Actor) -> None:
    if not actor.is_superuser:
        raise ApiError(403, "The user doesn't have enough privileges")


def _flush(s: Any, detail: str) -> None:
    try:
        s.flush()
    except IntegrityError:
        raise ApiError(409, detail) from None


# --- teams ---------------------------------------------------------------------------------------------
def _team(s: Any, actor: Actor, team_id: str) -> Team:
    team = s.get(Team, _key(team_id, "Team"))
    mine = team is not None and (
        actor.is_superuser
        or s.scalar(sa.select(TeamMember.id).where(TeamMember.team_id == team.id, TeamMember.user_id == actor.id))
    )
    if team is None or not mine:
        raise ApiError(404, "Team not found")
    return team


@authz_blp.route("/teams", methods=["GET"])
@authz_blp.response(200, schemas.AuthzTeamSchema(many=True))
@authenticated("user")
def list_teams():
    """Every team (superusers) or the caller's teams."""
    actor, s = current_actor(), db.session()
    query = sa.select(Team).order_by(Team.team_name)
    if not actor.is_superuser:
        query = query.join(TeamMember, TeamMember.team_id == Team.id).where(TeamMember.user_id == actor.id)
    return list(s.scalars(query))


@authz_blp.route("/teams/<team_id>", methods=["GET"])
@authz_blp.response(200, schemas.AuthzTeamSchema)
@authenticated("user")
def get_team(team_id):
    return _team(db.session(), current_actor(), team_id)


@authz_blp.route("/teams", methods=["POST"])
@authz_blp.arguments(schemas.AuthzTeamCreateSchema)
@authz_blp.response(201, schemas.AuthzTeamSchema)
@authenticated("superuser")
def create_team(body):
    with db.transaction() as s:
        team = Team(**body)
        s.add(team)
        _flush(s, "A team with this adom_name already exists")
        audit.record("team:create", "team", team.id, name=team.team_name, details={"adom_name": team.adom_name})
    return team


@authz_blp.route("/teams/<team_id>", methods=["PATCH"])
@authz_blp.arguments(schemas.AuthzTeamUpdateSchema)
@authz_blp.response(200, schemas.AuthzTeamSchema)
@authenticated("superuser")
def update_team(body, team_id):
    with db.transaction() as s:
        team = _team(s, current_actor(), team_id)
        for name, value in body.items():
            if value is not None or name == "description":
                setattr(team, name, value)
        team.updated_at = db.utcnow()
        _flush(s, "A team with this adom_name already exists")
        audit.record("team:write", "team", team.id, name=team.team_name, details={"fields": sorted(body)})
    bump()
    return team


@authz_blp.route("/teams/<team_id>", methods=["DELETE"])
@authz_blp.response(204)
@authenticated("superuser")
def delete_team(team_id):
    with db.transaction() as s:
        team = _team(s, current_actor(), team_id)
        s.execute(sa.delete(Share).where(Share.scope == "team", Share.target_id == team.id))
        s.execute(sa.delete(TeamMember).where(TeamMember.team_id == team.id))
        s.delete(team)
        audit.record("team:delete", "team", team.id, name=team.team_name)
    bump()


@authz_blp.route("/teams/<team_id>/members", methods=["GET"])
@authz_blp.response(200, schemas.AuthzMemberSchema(many=True))
@authenticated("user")
def list_members(team_id):
    s = db.session()
    team = _team(s, current_actor(), team_id)
    return list(s.scalars(sa.select(TeamMember).where(TeamMember.team_id == team.id).order_by(TeamMember.created_at)))


@authz_blp.route("/teams/<team_id>/members", methods=["POST"])
@authz_blp.arguments(schemas.AuthzMemberCreateSchema)
@authz_blp.response(201, schemas.AuthzMemberSchema)
@authenticated("superuser")
def add_member(body, team_id):
    with db.transaction() as s:
        team = _team(s, current_actor(), team_id)
        member = TeamMember(team_id=team.id, user_id=body["user_id"], source=body["source"])
        s.add(member)
        _flush(s, "The user is already a member of this team")
        _member_audit("team:member:create", team, member.user_id, member.source)
    bump()
    return member


@authz_blp.route("/teams/<team_id>/members/<user_id>", methods=["DELETE"])
@authz_blp.response(204)
@authenticated("superuser")
def remove_member(team_id, user_id):
    with db.transaction() as s:
        team = _team(s, current_actor(), team_id)
        gone = s.execute(
            sa.delete(TeamMember).where(TeamMember.team_id == team.id, TeamMember.user_id == _key(user_id, "Member"))
        )
        if not gone.rowcount:  # type: ignore[attr-defined]
            raise ApiError(404, "Member not found")
        _member_audit("team:member:delete", team, user_id, None)
    bump()


def _member_audit(action: str, team: Team, user_id: Any, source: str | None) -> None:
    details = {"team_id": str(team.id), "member_user_id": str(user_id), **({"source": source} if source else {})}
    audit.record(action, "team", team.id, name=team.team_name, details=details)


# --- roles ---------------------------------------------------------------------------------------------
def _role(s: Any, role_id: str) -> Role:
    role = s.get(Role, _key(role_id, "Role"))
    if role is None:
        raise ApiError(404, "Role not found")
    return role


@authz_blp.route("/roles", methods=["GET"])
@authz_blp.response(200, schemas.AuthzRoleSchema(many=True))
@authenticated("user")
def list_roles():
    return list(db.session().scalars(sa.select(Role).order_by(Role.is_system.desc(), Role.name)))


@authz_blp.route("/roles/<role_id>", methods=["GET"])
@authz_blp.response(200, schemas.AuthzRoleSchema)
@authenticated("user")
def get_role(role_id):
    return _role(db.session(), role_id)


@authz_blp.route("/roles", methods=["POST"])
@authz_blp.arguments(schemas.AuthzRoleCreateSchema)
@authz_blp.response(201, schemas.AuthzRoleSchema)
@authenticated("superuser")
def create_role(body):
    with db.transaction() as s:
        role = Role(**body, is_system=False, created_by=current_actor().id)
        s.add(role)
        _flush(s, "A role with this name already exists")
        audit.record("role:create", "role", role.id, name=role.name, details={"permissions": list(role.permissions)})
    return role


@authz_blp.route("/roles/<role_id>", methods=["PATCH"])
@authz_blp.arguments(schemas.AuthzRoleUpdateSchema)
@authz_blp.response(200, schemas.AuthzRoleSchema)
@authenticated("superuser")
def update_role(body, role_id):
    with db.transaction() as s:
        role = _role(s, role_id)
        if role.is_system:
            raise ApiError(400, "Built-in roles cannot be changed")
        for name, value in body.items():
            if value is not None or name in ("description", "parent_role_id"):
                setattr(role, name, value)
        role.updated_at = db.utcnow()
        _flush(s, "A role with this name already exists")
        details = {"fields": sorted(body), "permissions": list(role.permissions or ())}
        audit.record("role:write", "role", role.id, name=role.name, details=details)
    bump()
    return role


@authz_blp.route("/roles/<role_id>", methods=["DELETE"])
@authz_blp.response(204)
@authenticated("superuser")
def delete_role(role_id):
    with db.transaction() as s:
        role = _role(s, role_id)
        if role.is_system:
            raise ApiError(400, "Built-in roles cannot be deleted")
        s.execute(sa.delete(RoleAssignment).where(RoleAssignment.role_id == role.id))
        s.delete(role)
        audit.record("role:delete", "role", role.id, name=role.name)
    bump()


# --- role assignments ----------------------------------------------------------------------------------
@authz_blp.route("/role-assignments", methods=["GET"])
@authz_blp.arguments(schemas.AuthzAssignmentQuerySchema, location="query")
@authz_blp.response(200, schemas.AuthzAssignmentSchema(many=True))
@authenticated("superuser")
def list_assignments(query):
    select = sa.select(RoleAssignment).order_by(RoleAssignment.assigned_at)
    if query.get("user_id"):
        select = select.where(RoleAssignment.user_id == query["user_id"])
    return [_assignment_out(a) for a in db.session().scalars(select)]


def _assignment_out(a: RoleAssignment) -> dict[str, Any]:
    source = {
        "source_kind": "manual",
        "provider_id": None,
        "external_group": None,
        "administrative_actor": a.assigned_by,
        "created_at": a.assigned_at,
        "updated_at": a.assigned_at,
    }
    out = {
        c: getattr(a, c) for c in ("id", "user_id", "role_id", "domain_type", "domain_id", "assigned_at", "assigned_by")
    }
    return {**out, "grant_sources": [source]}


@authz_blp.route("/role-assignments", methods=["POST"])
@authz_blp.arguments(schemas.AuthzAssignmentCreateSchema)
@authz_blp.response(201, schemas.AuthzAssignmentSchema)
@authenticated("superuser")
def create_assignment(body):
    with db.transaction() as s:
        _role(s, body["role_id"])
        assignment = RoleAssignment(**body, assigned_by=current_actor().id)
        s.add(assignment)
        s.flush()
        out = _assignment_out(assignment)
        details = _assignment_details(assignment)
        audit.record("role_assignment:create", "role_assignment", assignment.id, details=details)
    bump()
    return out


@authz_blp.route("/role-assignments/<assignment_id>", methods=["DELETE"])
@authz_blp.response(204)
@authenticated("superuser")
def delete_assignment(assignment_id):
    with db.transaction() as s:
        assignment = s.get(RoleAssignment, _key(assignment_id, "Role assignment"))
        if assignment is None:
            raise ApiError(404, "Role assignment not found")
        details = _assignment_details(assignment)
        s.delete(assignment)
        audit.record("role_assignment:delete", "role_assignment", assignment.id, details=details)
    bump()


def _assignment_details(a: RoleAssignment) -> dict[str, Any]:
    return {
        "member_user_id": str(a.user_id),
        "role_id": str(a.role_id),
        "domain_type": a.domain_type,
        "domain_id": None if a.domain_id is None else str(a.domain_id),
    }


# --- shares --------------------------------------------------------------------------------------------
def resource(kind: str, resource_id: Any) -> ResourceRef | None:
    return appstate.hooks().first(hookspecs.resource_ref, kind=kind, resource_id=str(resource_id))


def _may(actor: Actor, verb: str, kind: str, resource_id: Any) -> ResourceRef:
    """The resource if the caller may ``verb`` it; 404 when they cannot even see it, else 403."""
    ref = resource(kind, resource_id)
    if ref is None or not can(actor, "read", ref):
        raise ApiError(404, "Resource not found")
    if not can(actor, verb, ref):
        raise ApiError(403, "The user doesn't have enough privileges")
    return ref


def _share_out(s: Any, share: Share) -> dict[str, Any]:
    name = None
    if share.scope == "team" and share.target_id is not None:
        name = s.scalar(sa.select(Team.team_name).where(Team.id == share.target_id))
    cols = ("id", "resource_type", "resource_id", "scope", "target_id", "permission_level", "created_by", "created_at")
    return {**{c: getattr(share, c) for c in cols}, "target_name": name}


def _share_audit(action: str, share: Share) -> None:
    details = {
        "resource_type": share.resource_type,
        "resource_id": str(share.resource_id),
        "scope": share.scope,
        "target_id": None if share.target_id is None else str(share.target_id),
        "permission_level": share.permission_level,
    }
    audit.record(action, "authz_share", share.id, details=details)


@authz_blp.route("/shares", methods=["POST"])
@authz_blp.arguments(schemas.AuthzShareCreateSchema)
@authz_blp.response(201, schemas.AuthzShareSchema)
@authenticated("user")
def create_share(body):
    """Share a flow or a project with a team or a user (the caller must be allowed to share it)."""
    actor = current_actor()
    if body["scope"] not in ("team", "user"):
        raise ApiError(400, "Only team and user shares are stored here (public links: the flow's share)")
    _may(actor, "share", body["resource_type"], body["resource_id"])
    with db.transaction() as s:
        if body["scope"] == "team" and s.get(Team, body["target_id"]) is None:
            raise ApiError(404, "Team not found")
        existing = s.scalar(
            sa.select(Share).where(
                Share.resource_type == body["resource_type"],
                Share.resource_id == body["resource_id"],
                Share.scope == body["scope"],
                Share.target_id == body["target_id"],
            )
        )
        share = existing or Share(**body, created_by=actor.id)
        share.permission_level = body["permission_level"]
        s.add(share)
        s.flush()
        out = _share_out(s, share)
        _share_audit("authz_share:write" if existing else "authz_share:create", share)
    bump()
    return out


@authz_blp.route("/shares", methods=["GET"])
@authz_blp.arguments(schemas.AuthzShareQuerySchema, location="query")
@authz_blp.response(200, schemas.AuthzShareSchema(many=True))
@authenticated("user")
def list_shares(query):
    """A resource's shares (whoever can see it), or every share the caller made."""
    actor, s = current_actor(), db.session()
    select = sa.select(Share).order_by(Share.created_at)
    if query.get("resource_id"):
        kind = query.get("resource_type") or "flow"
        _may(actor, "read", kind, query["resource_id"])
        select = select.where(Share.resource_type == kind, Share.resource_id == query["resource_id"])
    elif not actor.is_superuser:
        select = select.where(Share.created_by == actor.id)
    return [_share_out(s, share) for share in s.scalars(select)]


def _share(s: Any, actor: Actor, share_id: str, verb: str) -> Share:
    share = s.get(Share, _key(share_id, "Share"))
    if share is None:
        raise ApiError(404, "Share not found")
    try:
        _may(actor, verb, share.resource_type, share.resource_id)
    except ApiError as exc:
        if exc.status == 404:
            raise ApiError(404, "Share not found") from None
        raise
    return share


@authz_blp.route("/shares/<share_id>", methods=["GET"])
@authz_blp.response(200, schemas.AuthzShareSchema)
@authenticated("user")
def get_share(share_id):
    s = db.session()
    return _share_out(s, _share(s, current_actor(), share_id, "read"))


@authz_blp.route("/shares/<share_id>", methods=["PATCH"])
@authz_blp.arguments(schemas.AuthzShareUpdateSchema)
@authz_blp.response(200, schemas.AuthzShareSchema)
@authenticated("user")
def update_share(body, share_id):
    with db.transaction() as s:
        share = _share(s, current_actor(), share_id, "share")
        share.permission_level = body["permission_level"]
        s.flush()
        out = _share_out(s, share)
        _share_audit("authz_share:write", share)
    bump()
    return out


@authz_blp.route("/shares/<share_id>", methods=["DELETE"])
@authz_blp.response(204)
@authenticated("user")
def delete_share(share_id):
    with db.transaction() as s:
        share = _share(s, current_actor(), share_id, "share")
        s.delete(share)
        _share_audit("authz_share:delete", share)
    bump()


# --- the caller's permissions ------------------------------------------------------------------------------
@authz_blp.route("/me/permissions", methods=["POST"])
@authz_blp.arguments(schemas.AuthzPermissionsRequestSchema)
@authz_blp.response(200, schemas.AuthzPermissionsSchema)
@authenticated("user")
def my_permissions(body):
    """``{resource_id: [allowed actions]}`` for the caller (empty list: none, or no such resource)."""
    actor = current_actor()
    actions = list(dict.fromkeys(a.strip().lower() for a in body.get("actions") or DEFAULT_ACTIONS if a.strip()))
    out: dict[str, list[str]] = {}
    for resource_id in body["resource_ids"]:
        ref = resource(body["resource_type"], resource_id)
        out[str(resource_id)] = [a for a in actions if ref is not None and can(actor, a, ref)]
    return {"resource_type": body["resource_type"], "permissions": out}
