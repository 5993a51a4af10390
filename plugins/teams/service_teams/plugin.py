"""Hook implementations of the teams plugin (thin: rules in ``access``, routes in ``resources``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import ResourceRef
from core.records import Migrations, Permission

HOOKSPECS = "service_teams.hookspecs"


@hookimpl
def register_blueprints():
    from service_teams.resources import authz_blp

    return [authz_blp]


@hookimpl
def register_migrations():
    return [Migrations("teams", Path(__file__).parent / "migrations")]


@hookimpl
def register_commands():
    from service_teams.cli import teams_group

    return [teams_group]


@hookimpl
def on_app_created(app):
    from core import db
    from service_teams import access

    with app.app_context(), db.transaction() as s:
        access.ensure_system_roles(s)


_GRANTED = Permission(True, "shared with the caller or their team")
_access: Any = None  # service_teams.access, imported on the first check (the plugin module stays light)


@hookimpl
def permission_allowed(actor: Any, action: str, resource: Any) -> Permission | None:
    """Allow what a share or a role assignment grants on a :class:`ResourceRef` (never denies)."""
    if actor is None or not isinstance(resource, ResourceRef):
        return None
    user = actor.owner_id
    if user == str(resource.owner_id):
        return None  # owners need no grant (core.auth.can)
    global _access
    if _access is None:
        from service_teams import access

        _access = access
    if action.partition(":")[2] in _access.verbs(None, user, resource):
        return _GRANTED
    return None


@hookimpl(optionalhook=True)
def on_sso_signed_in(user_id: str, identity: Any) -> None:
    """Members follow the identity provider's groups: a group is the team whose ``adom_name`` it is."""
    import uuid

    from core import db
    from service_teams import access

    access.follow_groups(db.session(), uuid.UUID(user_id), tuple(identity.groups))


@hookimpl
def on_user_deleted(user_id: str) -> None:
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_teams.access import bump
    from service_teams.models import RoleAssignment, Share, TeamMember

    s, key = db.session(), uuid.UUID(user_id)
    s.execute(sa.delete(TeamMember).where(TeamMember.user_id == key))
    s.execute(sa.delete(RoleAssignment).where(RoleAssignment.user_id == key))
    s.execute(sa.delete(Share).where(Share.scope == "user", Share.target_id == key))
    bump(s)


@hookimpl
def shared_with(user_id: str, kind: str) -> list[str] | None:
    """Resources of ``kind`` shared with the user (directly or through a team), or projects where they hold a role."""
    import uuid

    from core import db
    from service_teams import access

    return access.shared_ids(db.session(), uuid.UUID(user_id), kind)


@hookimpl
def settings_export() -> dict[str, Any]:
    from core import db
    from service_teams import settings_file

    return settings_file.export(db.session())


@hookimpl
def settings_apply(sections: Any, dry_run: bool) -> list[str]:
    from core import db
    from service_teams import settings_file

    return settings_file.apply(db.session(), sections, dry_run)
