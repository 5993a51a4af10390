"""Hook implementations of the A2A plugin (thin: the logic is in services and rpc)."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.records import Migrations

#: the hooks this plugin publishes: the agent lookups (the flows plugin answers them)
HOOKSPECS = "service_a2a.hookspecs"


@hookimpl
def register_blueprints():
    from service_a2a.resources import blp

    return [blp]


@hookimpl
def register_migrations():
    return [Migrations("a2a", Path(__file__).parent / "migrations")]


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from service_a2a import tasks

    tasks.delete_user_rows(user_id)


@hookimpl
def register_settings():
    from service_a2a.config import SECTION

    return [SECTION]


@hookimpl
def extend_config(actor, public):
    """``a2a_enabled`` of ``/api/v1/config``."""
    from service_a2a.config import settings

    cfg = settings()
    return {"a2a_enabled": cfg.a2a_enabled}
