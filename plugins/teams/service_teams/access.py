"""What a user may do on a resource through teams, shares and role assignments.

* A share gives a team (``scope`` team) or one user (``scope`` user) a level on a flow or a project; a
  project's share covers every resource in it. Levels are the built-in roles: ``read`` = viewer,
  ``execute`` = run-only, ``write`` = developer, ``admin`` = admin.
* A role assignment gives a user a role's permissions (``<resource>:<verb>`` slugs, ``*`` for every
  verb) everywhere (``global``) or in one project (``project``, ``domain_id``).
* Owners need none of this (``core.auth.can``); nobody is denied here: other plugins' denies win there.
* Answers are cached per process, keyed by the ``teams_generation`` row: every change of memberships,
  roles or shares bumps it (:func:`bump`), and each request reads it once (:func:`generation`), so a
  change made by any process is seen by every other one from its next request.
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from flask import current_app, g, has_request_context
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core import db
from core.auth import forget_access
from core.contracts import ResourceRef
from service_teams.models import Generation, Role, RoleAssignment, Share, Team, TeamMember

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


# --- the per-process cache and its cross-process generation ------------------------------------------------
_MAX_CACHED = 20_000


class _Cache:
    """One app's answers in this process, and the generation they were computed at."""

    def __init__(self) -> None:
        self.seen = -1
        self.answers: dict[tuple[Any, ...], frozenset[str]] = {}


def _cache() -> _Cache:
    extensions = current_app.extensions
    found: _Cache | None = extensions.get("service_teams.cache")
    if found is None:
        found = extensions["service_teams.cache"] = _Cache()
    return found


#: the counter's read: constant SQL (no parameter), the same text for every dialect
_GENERATION_SQL = "SELECT value FROM teams_generation WHERE id = 1"


def _read_generation(s: Session) -> int:
    """One indexed read on the session's own DB-API connection: no statement compilation, no bind, no result
    processing (``core.db.Prepared``'s execution layer measured ~5x the driver's for this one-int read)."""
    conn = s.connection().connection.dbapi_connection
    assert conn is not None
    cursor = conn.cursor()
    try:
        cursor.execute(_GENERATION_SQL)
        row = cursor.fetchone()
    finally:
        cursor.close()
    return int(row[0]) if row else 0


def generation(s: Session | None = None) -> int:
    """The counter's value, read once per request (outside one: every call); ``s`` None: the request's session."""
    in_request = has_request_context()
    if in_request:
        found = g.get("_teams_generation")
        if found is not None:
            return int(found)
    value = _read_generation(s if s is not None else db.session())
    if in_request:
        g._teams_generation = value
    return value


def bump(s: Session | None = None) -> None:
    """After a change of memberships, roles or shares: every process drops its cached answers.

    With ``s``: inside that session's transaction (committed with the change); else in its own."""
    if s is None:
        with db.transaction() as own:
            _bump(own)
    else:
        _bump(s)
    _cache().answers.clear()
    if has_request_context():
        g.pop("_teams_generation", None)
    forget_access()


def _bump(s: Session) -> None:
    done = s.execute(sa.update(Generation).where(Generation.id == 1).values(value=Generation.value + 1))
    if not done.rowcount:  # type: ignore[attr-defined]
        s.add(Generation(id=1, value=1))
        s.flush()


def verbs(s: Session | None, user_id: Any, resource: ResourceRef) -> frozenset[str]:
    """Every verb ``user_id`` holds on ``resource`` through shares and role assignments (cached per process,
    checked against the generation once per request). ``s`` None: the request's session, taken only when a
    read is needed (the generation, a miss)."""
    now, cache = generation(s), _cache()
    if now != cache.seen:
        cache.answers.clear()
        cache.seen = now
    key = (str(user_id), resource.kind, str(resource.id), resource.project_id)
    found = cache.answers.get(key)
    if found is None:
        if len(cache.answers) >= _MAX_CACHED:
            cache.answers.clear()
        found = cache.answers[key] = _verbs(s if s is not None else db.session(), user_id, resource)
    return found


def _verbs(s: Session, user_id: Any, resource: ResourceRef) -> frozenset[str]:
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
    gone = [row for row in rows if row.source == "sso" and row.team_id not in wanted]
    for row in gone:
        s.delete(row)
    added = wanted - set(have)
    for team_id in added:
        s.add(TeamMember(team_id=team_id, user_id=user_id, source="sso"))
    s.flush()
    if gone or added:
        for team_id in sorted(added, key=str):
            _sso_audit("team:member:create", team_id, user_id)
        for row in gone:
            _sso_audit("team:member:delete", row.team_id, user_id)
        bump(s)


def _sso_audit(action: str, team_id: uuid.UUID, user_id: uuid.UUID) -> None:
    from core import audit

    details = {"team_id": str(team_id), "member_user_id": str(user_id), "source": "sso"}
    audit.record(action, "team", team_id, details=details)


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
