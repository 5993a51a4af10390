"""Hook implementations of the accounts plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.auth import Actor
from core.records import Migrations, Permission, SettingsSection

HOOKSPECS = "service_accounts.hookspecs"


@hookimpl
def register_settings():
    from service_accounts.sessions import AccountsConfig

    return [SettingsSection("accounts", AccountsConfig, "SERVICE_")]


@hookimpl
def register_blueprints():
    from service_accounts.resources import api_keys_blp, login_blp, users_blp

    return [users_blp, api_keys_blp, login_blp]


@hookimpl
def register_migrations():
    return [Migrations("accounts", Path(__file__).parent / "migrations")]


@hookimpl
def register_commands():
    from service_accounts.cli import api_key_group, superuser_command
    from service_accounts.users_cli import users_group

    return [superuser_command, api_key_group, users_group]


@hookimpl
def actor_from_request(request, scheme):
    from service_accounts.services import actor_from_request as resolve

    return resolve(request, scheme)


@hookimpl
def permission_allowed(actor: Actor | None, action: str, resource: Any) -> Permission | None:
    """Superusers may administer; sign-up follows the spec's rules."""

    if action == "admin":
        return Permission(bool(actor and actor.kind == "user" and actor.is_superuser), "superuser")
    if action == "users.create":
        if actor is not None and actor.is_superuser:
            return Permission(True, "superuser")
        from core.appstate import settings_of
        from service_accounts.sessions import AccountsConfig

        cfg = settings_of(AccountsConfig)
        return Permission(bool(cfg.enable_signup and not cfg.auto_login), "public sign-up")
    return None


@hookimpl(optionalhook=True)
def user_is_superuser(user_id: str) -> bool | None:
    """The MCP plugin's question before a stored stdio server starts: is its owner a superuser now?"""
    import uuid

    from core import db
    from service_accounts.models import User

    try:
        key = uuid.UUID(str(user_id))
    except ValueError:
        return False
    user = db.session().get(User, key)
    return bool(user is not None and user.is_superuser and user.is_active)


@hookimpl
def user_names(user_ids):
    """``{id: username}`` of the known accounts among ``user_ids`` (one read; malformed ids left out)."""
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_accounts.models import User

    keys = set()
    for raw in user_ids:
        try:
            keys.add(uuid.UUID(str(raw)))
        except ValueError:
            continue
    if not keys:
        return {}
    rows = db.session().execute(sa.select(User.id, User.username).where(User.id.in_(keys)))
    return {str(uid): name for uid, name in rows}


@hookimpl
def on_app_created(app):
    from core import appstate, db
    from core.appstate import settings_of
    from service_accounts import security, services, sessions

    settings = appstate.settings(app)
    cfg = settings_of(sessions.AccountsConfig, app)
    services.check_startup_rules(cfg)
    security.configure_jwt(app, settings, cfg)
    sessions.init_app(app, cfg, settings.resolved_config_dir)
    with app.app_context():
        services.ensure_superuser(db.session(), cfg)


@hookimpl(optionalhook=True)
def sso_sign_in(identity):
    """Create (first sign-in) or update the account an identity provider vouched for; open its session."""
    from service_accounts.sso_bridge import sign_in

    return sign_in(identity)


@hookimpl(optionalhook=True)
def sso_sign_out(request):
    """End the session the request presents; the cookies to delete."""
    from service_accounts.sso_bridge import sign_out

    return sign_out(request)


@hookimpl
def settings_export() -> dict[str, Any]:
    from core import db
    from service_accounts import settings_file

    return settings_file.export(db.session())


@hookimpl
def settings_apply(sections: Any, dry_run: bool) -> list[str]:
    from core import db
    from service_accounts import settings_file

    return settings_file.apply(db.session(), sections, dry_run)
