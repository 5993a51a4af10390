"""The teams plugin's sections of ``service settings`` (core.settings_file): ``teams`` (with their members),
``roles`` (custom roles; the built-in ones are not listed) and ``role_assignments``. Users are named by id
(the accounts plugin owns names); teams by ``adom_name``, roles by name. Applying makes the stored rows
match: missing ones are added, changed ones updated, ones absent from a present section removed."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import click
import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import audit
from service_teams.access import bump
from service_teams.models import Role, RoleAssignment, Share, Team, TeamMember


def export(s: Session) -> dict[str, Any]:
    teams = []
    for team in s.scalars(sa.select(Team).order_by(Team.adom_name)):
        members = sorted(str(u) for u in s.scalars(sa.select(TeamMember.user_id).where(TeamMember.team_id == team.id)))
        teams.append({"adom_name": team.adom_name, "team_name": team.team_name, "description": team.description,
                      "is_active": bool(team.is_active), "members": members})  # fmt: skip
    roles = [
        {"name": r.name, "description": r.description, "permissions": sorted(r.permissions or [])}
        for r in s.scalars(sa.select(Role).where(Role.is_system.is_(False)).order_by(Role.name))
    ]
    names = {r.id: r.name for r in s.scalars(sa.select(Role))}
    assignments = sorted(
        (_assignment_item(a, names) for a in s.scalars(sa.select(RoleAssignment))),
        key=lambda a: (a["user_id"], a["role"], a["domain_type"], a["domain_id"] or ""),
    )
    return {"teams": teams, "roles": roles, "role_assignments": assignments}


def _assignment_item(a: RoleAssignment, names: dict[uuid.UUID, str]) -> dict[str, Any]:
    return {
        "user_id": str(a.user_id),
        "role": names.get(a.role_id, str(a.role_id)),
        "domain_type": a.domain_type,
        "domain_id": None if a.domain_id is None else str(a.domain_id),
    }


def _uuid(value: Any, where: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise click.ClickException(f"{where}: {value!r} is not a user id") from None


def _items(sections: Mapping[str, Any], name: str, key: str) -> dict[str, dict[str, Any]] | None:
    if name not in sections:
        return None
    items = sections[name]
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get(key), str) for i in items):
        raise click.ClickException(f"{name}: a list of objects, each with a {key!r} string")
    return {i[key]: i for i in items}


def apply(s: Session, sections: Mapping[str, Any], dry_run: bool) -> list[str]:
    lines: list[str] = []
    # roles are written even in a dry run (the core rolls the transaction back, audit entries with it):
    # the assignments below name them
    lines += _apply_roles(s, _items(sections, "roles", "name"), False)
    lines += _apply_teams(s, _items(sections, "teams", "adom_name"), dry_run)
    if "role_assignments" in sections:
        lines += _apply_assignments(s, sections["role_assignments"], dry_run)
    if lines and not dry_run:
        bump(s)
    return lines


def _apply_roles(s: Session, wanted: dict[str, dict[str, Any]] | None, dry_run: bool) -> list[str]:
    if wanted is None:
        return []
    lines, have = [], {r.name: r for r in s.scalars(sa.select(Role).where(Role.is_system.is_(False)))}
    for name, item in sorted(wanted.items()):
        permissions = sorted(str(p) for p in item.get("permissions") or [])
        if any(":" not in p for p in permissions):
            raise click.ClickException(f"roles: {name}: permissions are '<resource>:<verb>' slugs")
        role = have.get(name)
        if role is None:
            lines.append(f"roles: add {name} {permissions}")
            if not dry_run:
                s.add(Role(name=name, description=item.get("description"), permissions=permissions, is_system=False))
        elif sorted(role.permissions or []) != permissions or role.description != item.get("description"):
            lines.append(f"roles: change {name} {sorted(role.permissions or [])} -> {permissions}")
            if not dry_run:
                role.permissions, role.description = permissions, item.get("description")
                audit.record("role:write", "role", role.id, name=name, details={"permissions": permissions})
    for name, role in sorted(have.items()):
        if name not in wanted:
            lines.append(f"roles: remove {name}")
            if not dry_run:
                s.execute(sa.delete(RoleAssignment).where(RoleAssignment.role_id == role.id))
                s.delete(role)
                audit.record("role:delete", "role", role.id, name=name)
    s.flush()
    return lines


def _apply_teams(s: Session, wanted: dict[str, dict[str, Any]] | None, dry_run: bool) -> list[str]:
    if wanted is None:
        return []
    lines, have = [], {t.adom_name: t for t in s.scalars(sa.select(Team))}
    for slug, item in sorted(wanted.items()):
        team = have.get(slug)
        fields = {"team_name": item.get("team_name") or slug, "description": item.get("description"),
                  "is_active": bool(item.get("is_active", True))}  # fmt: skip
        if team is None:
            lines.append(f"teams: add {slug}")
            team = Team(adom_name=slug, **fields)
            if not dry_run:
                s.add(team)
                s.flush()
                audit.record("team:create", "team", team.id, name=team.team_name, details={"adom_name": slug})
        else:
            changed = sorted(k for k, v in fields.items() if getattr(team, k) != v)
            if changed:
                lines.append(f"teams: change {slug} ({', '.join(changed)})")
                if not dry_run:
                    for k in changed:
                        setattr(team, k, fields[k])
                    audit.record("team:write", "team", team.id, name=team.team_name, details={"fields": changed})
        members = {_uuid(u, f"teams: {slug}: members") for u in item.get("members") or []}
        current = set() if team.id is None else set(
            s.scalars(sa.select(TeamMember.user_id).where(TeamMember.team_id == team.id))
        )  # fmt: skip
        for user in sorted(members - current, key=str):
            lines.append(f"teams: add member {user} to {slug}")
            if not dry_run:
                s.add(TeamMember(team_id=team.id, user_id=user, source="manual"))
                _member_audit("team:member:create", team, user)
        for user in sorted(current - members, key=str):
            lines.append(f"teams: remove member {user} from {slug}")
            if not dry_run:
                s.execute(sa.delete(TeamMember).where(TeamMember.team_id == team.id, TeamMember.user_id == user))
                _member_audit("team:member:delete", team, user)
    for slug, team in sorted(have.items()):
        if slug not in wanted:
            lines.append(f"teams: remove {slug}")
            if not dry_run:
                s.execute(sa.delete(Share).where(Share.scope == "team", Share.target_id == team.id))
                s.execute(sa.delete(TeamMember).where(TeamMember.team_id == team.id))
                s.delete(team)
                audit.record("team:delete", "team", team.id, name=team.team_name)
    s.flush()
    return lines


def _member_audit(action: str, team: Team, user_id: uuid.UUID) -> None:
    details = {"team_id": str(team.id), "member_user_id": str(user_id), "source": "manual"}
    audit.record(action, "team", team.id, name=team.team_name, details=details)


def _apply_assignments(s: Session, items: Any, dry_run: bool) -> list[str]:
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise click.ClickException("role_assignments: a list of objects")
    roles = {r.name: r.id for r in s.scalars(sa.select(Role))}
    wanted = set()
    for item in items:
        if item.get("role") not in roles:
            raise click.ClickException(f"role_assignments: no role {item.get('role')!r}")
        domain = item.get("domain_type") or "global"
        if domain not in ("global", "project"):
            raise click.ClickException("role_assignments: domain_type is global or project")
        domain_id = _uuid(item["domain_id"], "role_assignments: domain_id") if item.get("domain_id") else None
        wanted.add((_uuid(item.get("user_id"), "role_assignments"), roles[item["role"]], domain, domain_id))
    current = {(a.user_id, a.role_id, a.domain_type, a.domain_id): a for a in s.scalars(sa.select(RoleAssignment))}
    names = {v: k for k, v in roles.items()}
    lines = []
    for key in sorted(wanted - set(current), key=str):
        lines.append(f"role_assignments: give {names[key[1]]} to {key[0]} ({key[2]}{f' {key[3]}' if key[3] else ''})")
        if not dry_run:
            s.add(RoleAssignment(user_id=key[0], role_id=key[1], domain_type=key[2], domain_id=key[3]))
    for key in sorted(set(current) - wanted, key=str):
        lines.append(f"role_assignments: take {names.get(key[1], key[1])} from {key[0]} ({key[2]})")
        if not dry_run:
            s.delete(current[key])
    s.flush()
    return lines
