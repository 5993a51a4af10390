"""Hook implementations of the SSO plugin (thin: the protocol is in ``oidc``, the routes in ``resources``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.records import Migrations, Permission, SettingsSection

HOOKSPECS = "service_sso.hookspecs"


@hookimpl
def register_settings():
    from service_sso.config import SsoConfig

    return [SettingsSection("sso", SsoConfig, "SERVICE_SSO_")]


@hookimpl
def register_blueprints():
    from service_sso.resources import browser_blp, sso_blp

    return [sso_blp, browser_blp]


@hookimpl
def register_migrations():
    return [Migrations("sso", Path(__file__).parent / "migrations")]


@hookimpl
def on_app_created(app):
    from core.appstate import settings_of
    from core.errors import StartupError
    from service_sso.config import SsoConfig

    cfg = settings_of(SsoConfig, app)
    if cfg.enabled:
        for name in ("discovery_url", "client_id", "client_secret"):
            if not getattr(cfg, name):
                raise StartupError(f"SERVICE_SSO_{name.upper()} is required when SERVICE_SSO_ENABLED is true")


@hookimpl
def permission_allowed(actor: Any, action: str, resource: Any) -> Permission | None:
    """SSO-only mode: nobody but a superuser registers accounts (people arrive through the provider)."""
    if action != "users.create":
        return None
    from core.appstate import settings_of
    from service_sso.config import SsoConfig

    cfg = settings_of(SsoConfig)
    if cfg.enabled and cfg.only and not (actor is not None and actor.is_superuser):
        return Permission(False, "SSO-only mode: accounts come from the identity provider")
    return None


@hookimpl(optionalhook=True)
def password_login_allowed(username: str, is_superuser: bool) -> bool | None:
    """SSO-only mode: passwords only for the break-glass superuser."""
    from core.appstate import settings_of
    from service_sso.config import SsoConfig

    cfg = settings_of(SsoConfig)
    if not (cfg.enabled and cfg.only):
        return None
    return is_superuser and (cfg.break_glass_user is None or username == cfg.break_glass_user.strip())


@hookimpl
def on_user_deleted(user_id: str):
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_sso.models import SsoIdentity

    db.session().execute(sa.delete(SsoIdentity).where(SsoIdentity.user_id == uuid.UUID(user_id)))
