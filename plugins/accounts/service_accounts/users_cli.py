"""``service users ...``: list, create, activate, promote and delete accounts from the command line.

With auto-login off, each command needs an existing superuser's credentials (``--auth-username`` /
``--auth-password`` or ``SERVICE_CLI_AUTH_USERNAME`` / ``SERVICE_CLI_AUTH_PASSWORD``), like ``service superuser``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

import click
from flask.cli import with_appcontext

from core import db
from core.auth import Actor
from core.errors import ApiError


def _auth(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--auth-password", envvar="SERVICE_CLI_AUTH_PASSWORD", default=None, help="Its password.")(func)
    return click.option(
        "--auth-username",
        envvar="SERVICE_CLI_AUTH_USERNAME",
        default=None,
        help="An existing superuser (required when auto-login is off).",
    )(func)


def _admin(auth_username: str | None, auth_password: str | None) -> Actor:
    """The superuser the command acts as (checked when auto-login is off)."""
    from service_accounts import cli, services

    cli._require_superuser_auth(auth_username, auth_password)
    user = services.user_by_name(db.session(), auth_username or services.settings().superuser)
    if user is None:
        raise click.ClickException("no superuser to act as")
    return services.actor_of(user, "cli")


def _user_line(user: Any) -> str:
    return json.dumps(
        {
            "id": str(user.id),
            "username": user.username,
            "is_active": bool(user.is_active),
            "is_superuser": bool(user.is_superuser),
        }
    )


@click.group("users", help="Manage user accounts.")
def users_group() -> None:
    """``service users``."""


@users_group.command("list", help="List accounts (JSON lines: id, username, is_active, is_superuser).")
@click.option("--search", default=None, help="Only names containing this.")
@_auth
@with_appcontext
def list_users(search: str | None, auth_username: str | None, auth_password: str | None) -> None:
    from service_accounts import services

    _admin(auth_username, auth_password)
    _total, users = services.list_users(db.session(), 0, 10_000, search)
    for user in users:
        click.echo(_user_line(user))


@users_group.command("create", help="Create an active account; prints it (and a generated password).")
@click.argument("username")
@click.option("--password", default=None, help="Its password (default: a generated one, printed once).")
@click.option("--superuser", is_flag=True, help="Make it a superuser.")
@_auth
@with_appcontext
def create_user(
    username: str, password: str | None, superuser: bool, auth_username: str | None, auth_password: str | None
) -> None:
    from service_accounts import services

    _admin(auth_username, auth_password)
    generated = password is None
    password = password or secrets.token_urlsafe(18)
    try:
        with db.transaction() as s:
            user = services.create_user(s, username, password, is_superuser=superuser, is_active=True)
            line = _user_line(user)
    except ApiError as exc:
        raise click.ClickException(str(exc.detail)) from None
    click.echo(line)
    if generated:
        click.echo(f"password: {password}")


def _update(username: str, changes: dict[str, Any], auth_username: str | None, auth_password: str | None) -> None:
    from service_accounts import services, sessions

    admin = _admin(auth_username, auth_password)
    try:
        with db.transaction() as s:
            user = services.user_by_name(s, username)
            if user is None:
                raise click.ClickException(f"no user named {username}")
            user = services.update_user(s, admin, user.id, changes)
            line, user_id = _user_line(user), user.id
    except ApiError as exc:
        raise click.ClickException(str(exc.detail)) from None
    sessions.cache().changed(user_id)
    click.echo(line)


@users_group.command("set-active", help="Activate (or, with --no, deactivate) an account.")
@click.argument("username")
@click.option("--no", "inactive", is_flag=True, help="Deactivate (ends its sessions).")
@_auth
@with_appcontext
def set_active(username: str, inactive: bool, auth_username: str | None, auth_password: str | None) -> None:
    _update(username, {"is_active": not inactive}, auth_username, auth_password)


@users_group.command("set-superuser", help="Make an account a superuser (or, with --no, an ordinary user).")
@click.argument("username")
@click.option("--no", "ordinary", is_flag=True, help="Remove superuser status.")
@_auth
@with_appcontext
def set_superuser(username: str, ordinary: bool, auth_username: str | None, auth_password: str | None) -> None:
    _update(username, {"is_superuser": not ordinary}, auth_username, auth_password)


@users_group.command("delete", help="Delete an account and everything it owns.")
@click.argument("username")
@click.confirmation_option(prompt="Delete this account and everything it owns?")
@_auth
@with_appcontext
def delete_user(username: str, auth_username: str | None, auth_password: str | None) -> None:
    from service_accounts import services, sessions

    admin = _admin(auth_username, auth_password)
    try:
        with db.transaction() as s:
            user = services.user_by_name(s, username)
            if user is None:
                raise click.ClickException(f"no user named {username}")
            user_id = user.id
            services.delete_user(s, admin, user_id)
    except ApiError as exc:
        raise click.ClickException(str(exc.detail)) from None
    sessions.cache().changed(user_id)
    click.echo("deleted")
