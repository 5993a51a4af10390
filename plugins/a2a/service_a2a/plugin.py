"""Hook implementations of the A2A plugin (thin: the logic is in services and rpc)."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.records import Migrations


@hookimpl
def register_blueprints():
    from service_a2a.resources import blp

    return [blp]


@hookimpl
def register_migrations():
    return [Migrations("a2a", Path(__file__).parent / "migrations")]


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from service_a2a import services

    services.delete_user_rows(user_id)
