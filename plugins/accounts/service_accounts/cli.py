"""``service superuser`` and ``service api-key create``."""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from core import db
from core.appstate import settings_of
from core.errors import ApiError
from service_accounts.sessions import AccountsConfig


def services_settings() -> AccountsConfig:
    return settings_of(AccountsConfig)


def _require_superuser_auth(username: str | None, password: str | None) -> None:
    """With auto-login off, admin commands need an existing superuser's credentials."""
    from service_accounts import services

    settings = services_settings()
    if settings.auto_login:
        return
    username = username or click.prompt("Superuser username")
    password = password or click.prompt("Superuser password", hide_input=True)
    try:
        user = services.authenticate(db.session(), username, password)
    except ApiError as exc:
        raise click.ClickException(f"authentication failed: {exc.detail}") from None
    if not user.is_superuser:
        raise click.ClickException("authentication failed: not a superuser")


@click.command("superuser", help="Create a superuser account.")
@click.option("--username", prompt=True, help="Name of the new superuser.")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True, help="Its password.")
@click.option(
    "--auth-username",
    envvar="SERVICE_CLI_AUTH_USERNAME",
    default=None,
    help="An existing superuser (required when auto-login is off).",
)
@click.option("--auth-password", envvar="SERVICE_CLI_AUTH_PASSWORD", default=None, help="Its password.")
@with_appcontext
def superuser_command(username: str, password: str, auth_username: str | None, auth_password: str | None) -> None:
    from service_accounts import services

    if not services_settings().enable_superuser_cli:
        click.echo("Error: the superuser command is disabled (SERVICE_ENABLE_SUPERUSER_CLI=false)", err=True)
        sys.exit(1)
    if password == services.LEGACY_PASSWORD:
        raise click.ClickException("the legacy default password is refused; choose another one")
    _require_superuser_auth(auth_username, auth_password)
    try:
        with db.transaction() as s:
            services.create_user(s, username, password, is_superuser=True, is_active=True)
    except ApiError as exc:
        raise click.ClickException(str(exc.detail)) from None
    click.echo(f"superuser {username} created")


@click.group("api-key", help="Manage API keys (the way to get one in backend-only mode).")
def api_key_group() -> None:
    pass


@api_key_group.command("create", help="Create an API key for a user and print it once.")
@click.option("--username", default=None, help="Owner (default: the configured superuser).")
@click.option("--name", default="cli", show_default=True, help="Name of the key.")
@click.option(
    "--password",
    envvar="SERVICE_CLI_AUTH_PASSWORD",
    default=None,
    help="The owner's password (required when auto-login is off).",
)
@with_appcontext
def api_key_create(username: str | None, name: str, password: str | None) -> None:
    from service_accounts import services

    settings = services_settings()
    username = username or settings.superuser
    s = db.session()
    if settings.auto_login:
        user = services.user_by_name(s, username)
        if user is None:
            raise click.ClickException(f"no user named {username}")
    else:
        password = password or click.prompt(f"Password of {username}", hide_input=True)
        try:
            user = services.authenticate(s, username, password)
        except ApiError as exc:
            raise click.ClickException(f"authentication failed: {exc.detail}") from None
    with db.transaction() as s:
        _key, raw = services.create_api_key(s, user.id, name)
    click.echo(raw)
