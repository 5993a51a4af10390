"""Hook implementations of the extensions plugin (thin: the logic is in services and the core)."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.records import Migrations

#: the hooks this plugin publishes: the flows a bundle reload affects (the flows plugin answers)
HOOKSPECS = "service_extensions.hookspecs"


@hookimpl
def register_blueprints():
    from service_extensions.resources import extensions_blp

    return [extensions_blp]


@hookimpl
def register_migrations():
    import service_extensions.models  # noqa: F401 - the model joins the metadata (tests truncate it)

    return [Migrations("extensions", Path(__file__).parent / "migrations")]


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_extensions import services

    services.delete_user_rows(db.session(), user_id)


@hookimpl
def register_settings():
    from service_extensions.config import SECTION

    return [SECTION]


@hookimpl
def extend_config(actor, public):
    """``enable_extension_reload`` of ``/api/v1/config``."""
    from service_extensions.config import settings

    cfg = settings()
    return {"enable_extension_reload": cfg.enable_extension_reload}
