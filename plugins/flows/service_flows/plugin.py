"""Hook implementations of the flows plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.records import Migrations


@hookimpl
def register_blueprints():
    from service_flows.project_resources import legacy_folders_bp, projects_blp
    from service_flows.resources import flows_blp, starter_blp

    return [flows_blp, starter_blp, projects_blp, legacy_folders_bp]


@hookimpl
def register_migrations():
    return [Migrations("flows", Path(__file__).parent / "migrations")]


@hookimpl
def find_flow(user_id: str | None, flow_id_or_name: str, public: bool) -> dict[str, Any] | None:
    from core import db
    from service_flows import services

    return services.find_flow(db.session(), user_id, flow_id_or_name, public)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_flows import services

    services.delete_user_rows(db.session(), user_id)
