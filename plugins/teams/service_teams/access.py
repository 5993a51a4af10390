"""What a user may do on a resource through teams, shares and role assignments.

* A share gives a team (``scope`` team) or one user (``scope`` user) a level on a flow or a project; a
  project's share covers every resource in it. Levels are the built-in roles: ``read`` = viewer,
  ``execute`` = run-only, ``write`` = developer, ``admin`` = admin.
* A role assignment gives a user a role's permissions (``<resource>:<verb>`` slugs, ``*`` for every
  verb) everywhere (``global``) or in one project (``project``, ``domain_id``).
* Owners need none of this (``core.auth.can``); nobody is denied here: other plugins' denies win there.
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.contracts import ResourceRef
from service_teams.models import Role, RoleAssignment, Share, Team, TeamMember

KINDS = ("flow", "project", "file", "knowledge_base", "variable")
READ = frozenset({"read"})
RUN = READ | {"execute"}
EDIT = RUN | {"write", "create", "delete"}
ALL = EDIT | {"share"}
LEVELS: dict[str, frozenset[str]] = {"read": READ, "execute": RUN, "write": EDIT, "admin": ALL}
#: the built-in roles (``is_system``), by share level
SYSTEM_ROLES: dict[str, tuple[str, str]] = {
    "viewer": ("read", "Sees projects and flows and their results; changes nothing"),
    "run-only": ("execute", "Runs flows and reads their results; edits nothing (support staff, callers)"),
    "developer": ("write", "Reads, runs, edits, creates and deletes"),
    "admin": ("admin", "Everything a developer does, and shares with others"),
}


def slugs(level: str) -> list[str]:
    return sorted(f"{kind}:{verb}" for kind in KINDS for verb in LEVELS[level])


def ensure_system_roles(s: Session) -> None:
    """Create the built-in roles when missing (idempotent; a concurrent process may win the insert)."""
    have = set(s.scalars(sa.select(Role.name).where(Role.is_system.is_(True))))
    for name, (level, description) in SYSTEM_ROLES.items():
        if name in have:
            continue
        try:
            with s.begin_nested():
                s.add(Role(name=name, description=description, is_system=True, permissions=slugs(level)))
        except IntegrityError:
            continue


def _key(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (TypeError, ValueError):
        return None


def team_ids(s: Session, user_id: uuid.UUID) -> list[uuid.UUID]:
    query = (
        sa.select(TeamMember.team_id)
        .join(Team, Team.id == TeamMember.team_id)
        .where(TeamMember.user_id == user_id, Team.is_active.is_(True))
    )
    return list(s.scalars(query))


def verbs(s: Session, user_id: Any, resource: ResourceRef) -> frozenset[str]:
    """Every verb ``user_id`` holds on ``resource`` through shares and role assignments."""
    user, rid, project = _key(user_id), _key(resource.id), _key(resource.project_id)
    if user is None or rid is None:
        return frozenset()
    teams = team_ids(s, user)
    targets = [Share.scope == "user", Share.target_id == user]
    on = [sa.and_(Share.resource_type == resource.kind, Share.resource_id == rid)]
    if project is not None:
        on.append(sa.and_(Share.resource_type == "project", Share.resource_id == project))
    who = sa.and_(*targets)
    if teams:
        who = sa.or_(who, sa.and_(Share.scope == "team", Share.target_id.in_(teams)))
    found: set[str] = set()
    for level in s.scalars(sa.select(Share.permission_level).where(sa.or_(*on), who)):
        found |= LEVELS.get(level, frozenset())
    where = [RoleAssignment.domain_type == "global"]
    if project is not None:
        where.append(sa.and_(RoleAssignment.domain_type == "project", RoleAssignment.domain_id == project))
    query = (
        sa.select(Role.permissions)
        .join(RoleAssignment, RoleAssignment.role_id == Role.id)
        .where(RoleAssignment.user_id == user, sa.or_(*where))
    )
    for permissions in s.scalars(query):
        for slug in permissions or ():
            kind, _, verb = str(slug).partition(":")
            if kind == resource.kind:
                found |= ALL if verb == "*" else {verb}
    return frozenset(found)


def follow_groups(s: Session, user_id: uuid.UUID, groups: tuple[str, ...]) -> None:
    """SSO sign-in: the user is a member (``source`` sso) of exactly the teams named by their groups."""
    wanted = set(s.scalars(sa.select(Team.id).where(Team.adom_name.in_(groups)))) if groups else set()
    rows = list(s.scalars(sa.select(TeamMember).where(TeamMember.user_id == user_id)))
    have = {row.team_id: row for row in rows}
    for row in rows:
        if row.source == "sso" and row.team_id not in wanted:
            s.delete(row)
    for team_id in wanted - set(have):
        s.add(TeamMember(team_id=team_id, user_id=user_id, source="sso"))
    s.flush()


def shared_ids(s: Session, user_id: uuid.UUID, kind: str) -> list[str]:
    """Ids of resources of ``kind`` shared with the user or their teams, or (projects) where they hold a role."""
    teams = team_ids(s, user_id)
    who = sa.and_(Share.scope == "user", Share.target_id == user_id)
    if teams:
        who = sa.or_(who, sa.and_(Share.scope == "team", Share.target_id.in_(teams)))
    found = {str(i) for i in s.scalars(sa.select(Share.resource_id).where(Share.resource_type == kind, who))}
    if kind == "project":
        query = sa.select(RoleAssignment.domain_id).where(
            RoleAssignment.user_id == user_id, RoleAssignment.domain_type == "project"
        )
        found |= {str(i) for i in s.scalars(query) if i is not None}
    return sorted(found)
