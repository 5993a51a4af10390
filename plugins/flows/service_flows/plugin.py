"""Hook implementations of the flows plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.records import Job, Migrations


@hookimpl
def register_blueprints():
    from service_flows.project_resources import legacy_folders_bp, projects_blp
    from service_flows.resources import flows_blp, starter_blp
    from service_flows.share_resources import shares_blp

    return [shares_blp, flows_blp, starter_blp, projects_blp, legacy_folders_bp]


@hookimpl
def register_migrations():
    return [Migrations("flows", Path(__file__).parent / "migrations")]


@hookimpl
def register_jobs():
    from service_flows.cleanup import CLEANUP_JOB, cleanup_job

    return [Job(CLEANUP_JOB, cleanup_job, "Delete anonymous playground sessions older than public_flow_expiration")]


@hookimpl
def find_flow(user_id: str | None, flow_id_or_name: str, public: bool) -> dict[str, Any] | None:
    from service_flows import services

    return services.find_flow(user_id, flow_id_or_name, public)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_flows import services

    services.delete_user_rows(db.session(), user_id)


@hookimpl
def stored_flows(after_id: str | None, limit: int) -> list[dict[str, Any]] | None:
    from core import db
    from service_flows import services

    return services.stored_flows(db.session(), after_id, limit)


@hookimpl
def find_project(user_id: str | None, project_id: str) -> dict[str, Any] | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.find_project(db.session(), user_id, project_id)


@hookimpl
def list_project_flows(user_id: str, project_id: str | None, with_data: bool) -> list[dict[str, Any]] | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.list_project_flows(db.session(), user_id, project_id, with_data)


@hookimpl
def update_project_mcp(
    user_id: str, project_id: str, tools: list[dict[str, Any]], auth_settings: dict[str, Any] | None
) -> int | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.update_project_mcp(db.session(), user_id, project_id, tools, auth_settings)


@hookimpl
def flows_using_components(component_keys: list[str]) -> list[dict[str, Any]]:
    from core import db
    from service_flows import services

    return services.flows_using_components(db.session(), component_keys)


@hookimpl
def published_agents(user_id: str) -> list[dict[str, Any]] | None:
    from core import db
    from service_flows import services

    return services.published_agents(db.session(), user_id)


@hookimpl
def find_flow_with_auth_type(flow_id: str, user_id: str | None) -> tuple[dict[str, Any], str | None] | None:
    from service_flows import services

    return services.find_flow_with_auth_type(flow_id, user_id)


@hookimpl
def register_settings():
    from core.records import SettingsSection
    from service_flows.config import SETTINGS_NAME, SETTINGS_PREFIX, FlowsSettings

    return [SettingsSection(SETTINGS_NAME, FlowsSettings, SETTINGS_PREFIX)]


@hookimpl
def extend_config(actor, public):
    """``default_folder_name`` and ``public_flow_cleanup_interval`` of ``/api/v1/config``."""
    from service_flows.config import settings

    cfg = settings()
    return {
        "default_folder_name": cfg.default_folder_name,
        "public_flow_cleanup_interval": cfg.public_flow_cleanup_interval,
    }
