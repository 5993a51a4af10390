"""``service teams ...``: list, create, delete teams and manage their members from the command line.

Commands run with the app's database (as ``flask --app wsgi``) and no caller: they are for the
operator of the deployment, who can already read the database.
"""

from __future__ import annotations

import json
import uuid

import click
import sqlalchemy as sa
from flask.cli import with_appcontext
from sqlalchemy.exc import IntegrityError

from core import audit, db
from service_teams.access import bump
from service_teams.models import Share, Team, TeamMember


def _team(s, name_or_id: str) -> Team:
    try:
        team = s.get(Team, uuid.UUID(name_or_id))
    except ValueError:
        team = None
    team = team or s.scalar(sa.select(Team).where(Team.adom_name == name_or_id))
    if team is None:
        raise click.ClickException(f"no team {name_or_id!r}")
    return team


def _member_audit(action: str, team: Team, user_id: uuid.UUID) -> None:
    details = {"team_id": str(team.id), "member_user_id": str(user_id), "source": "manual"}
    audit.record(action, "team", team.id, name=team.team_name, details=details)


@click.group("teams", help="Manage teams and their members.")
def teams_group() -> None:
    """``service teams``."""


@teams_group.command("list", help="List teams (JSON lines: id, adom_name, team_name, members).")
@with_appcontext
def list_teams() -> None:
    s = db.session()
    for team in s.scalars(sa.select(Team).order_by(Team.adom_name)):
        count = s.scalar(sa.select(sa.func.count()).where(TeamMember.team_id == team.id))
        line = {"id": str(team.id), "adom_name": team.adom_name, "team_name": team.team_name, "members": count}
        click.echo(json.dumps(line))


@teams_group.command("create", help="Create a team; ADOM_NAME is its unique slug (an SSO group name).")
@click.argument("adom_name")
@click.option("--name", "team_name", default=None, help="Display name (default: ADOM_NAME).")
@click.option("--description", default=None)
@with_appcontext
def create_team(adom_name: str, team_name: str | None, description: str | None) -> None:
    try:
        with db.transaction() as s:
            team = Team(adom_name=adom_name, team_name=team_name or adom_name, description=description)
            s.add(team)
            s.flush()
            audit.record("team:create", "team", team.id, name=team.team_name, details={"adom_name": adom_name})
            click.echo(str(team.id))
    except IntegrityError:
        raise click.ClickException(f"a team {adom_name!r} already exists") from None


@teams_group.command("delete", help="Delete a team (by id or adom_name), its memberships and shares.")
@click.argument("team")
@with_appcontext
def delete_team(team: str) -> None:
    with db.transaction() as s:
        found = _team(s, team)
        s.execute(sa.delete(Share).where(Share.scope == "team", Share.target_id == found.id))
        s.execute(sa.delete(TeamMember).where(TeamMember.team_id == found.id))
        s.delete(found)
        audit.record("team:delete", "team", found.id, name=found.team_name)
        bump(s)
    click.echo("deleted")


@teams_group.command("add-member", help="Add a user (by id) to a team (by id or adom_name).")
@click.argument("team")
@click.argument("user_id", type=click.UUID)
@with_appcontext
def add_member(team: str, user_id: uuid.UUID) -> None:
    try:
        with db.transaction() as s:
            found = _team(s, team)
            s.add(TeamMember(team_id=found.id, user_id=user_id, source="manual"))
            s.flush()
            _member_audit("team:member:create", found, user_id)
            bump(s)
    except IntegrityError:
        raise click.ClickException("already a member") from None
    click.echo("added")


@teams_group.command("remove-member", help="Remove a user (by id) from a team.")
@click.argument("team")
@click.argument("user_id", type=click.UUID)
@with_appcontext
def remove_member(team: str, user_id: uuid.UUID) -> None:
    with db.transaction() as s:
        found = _team(s, team)
        gone = s.execute(sa.delete(TeamMember).where(TeamMember.team_id == found.id, TeamMember.user_id == user_id))
        if not gone.rowcount:  # type: ignore[attr-defined]
            raise click.ClickException("not a member")
        _member_audit("team:member:delete", found, user_id)
        bump(s)
    click.echo("removed")


@teams_group.command("members", help="List a team's members (JSON lines: user_id, source).")
@click.argument("team")
@with_appcontext
def members(team: str) -> None:
    s = db.session()
    found = _team(s, team)
    for row in s.scalars(sa.select(TeamMember).where(TeamMember.team_id == found.id)):
        click.echo(json.dumps({"user_id": str(row.user_id), "source": row.source}))
