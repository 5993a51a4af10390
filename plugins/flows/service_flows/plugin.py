"""Hook implementations of the flows plugin (thin: the logic is in services)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import FlowRecord, FlowUsage, McpToolSettings, ProjectRecord
from core.records import Job, Migrations

#: the hooks this plugin publishes (it calls them; the policies plugin answers ``on_flow_changed``)
HOOKSPECS = "service_flows.hookspecs"


@hookimpl
def register_blueprints():
    from service_flows.conflict_resources import conflict_blp
    from service_flows.project_resources import legacy_folders_bp, projects_blp
    from service_flows.resources import flows_blp, starter_blp
    from service_flows.share_resources import shares_blp

    return [shares_blp, conflict_blp, flows_blp, starter_blp, projects_blp, legacy_folders_bp]


@hookimpl
def register_migrations():
    return [Migrations("flows", Path(__file__).parent / "migrations")]


@hookimpl
def register_commands():
    from service_flows.promotion import flows_group

    return [flows_group]


@hookimpl
def register_jobs():
    from service_flows.cleanup import CLEANUP_JOB, cleanup_job

    return [Job(CLEANUP_JOB, cleanup_job, "Delete anonymous playground sessions older than public_flow_expiration")]


@hookimpl
def find_flow(user_id: str | None, flow_id_or_name: str, public: bool, draft: bool) -> FlowRecord | None:
    from service_flows import lookups

    return lookups.find_flow(user_id, flow_id_or_name, public, draft)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_flows import services

    services.delete_user_rows(db.session(), user_id)


# --- hooks other plugins publish (they may be absent) ------------------------------------------------
@hookimpl(optionalhook=True)
def resource_ref(kind: str, resource_id: str):
    """The teams plugin asks who owns a flow or a project (any owner's), to share it or report permissions."""
    from service_flows import lookups

    return lookups.resource_ref(kind, resource_id)


@hookimpl(optionalhook=True)
def stored_flows(after_id: str | None, limit: int) -> list[FlowRecord] | None:
    from core import db
    from service_flows import lookups

    return lookups.stored_flows(db.session(), after_id, limit)


@hookimpl(optionalhook=True)
def find_project(user_id: str | None, project_id: str) -> ProjectRecord | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.find_project(db.session(), user_id, project_id)


@hookimpl(optionalhook=True)
def list_project_flows(user_id: str, project_id: str | None, with_data: bool) -> list[FlowRecord] | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.list_project_flows(db.session(), user_id, project_id, with_data)


@hookimpl(optionalhook=True)
def update_project_mcp(
    user_id: str, project_id: str, tools: Sequence[McpToolSettings], auth_settings: Mapping[str, Any] | None
) -> int | None:
    from core import db
    from service_flows import mcp_projects

    return mcp_projects.update_project_mcp(db.session(), user_id, project_id, tools, auth_settings)


@hookimpl(optionalhook=True)
def flows_using_components(component_keys: list[str]) -> list[FlowUsage] | None:
    from core import db
    from service_flows import lookups

    return lookups.flows_using_components(db.session(), component_keys)


@hookimpl(optionalhook=True)
def published_agents(user_id: str) -> list[FlowRecord] | None:
    from core import db
    from service_flows import lookups

    return lookups.published_agents(db.session(), user_id)


@hookimpl(optionalhook=True)
def find_agent_flow(flow_id: str, user_id: str | None) -> FlowRecord | None:
    from service_flows import lookups

    return lookups.find_agent_flow(flow_id, user_id)


@hookimpl(optionalhook=True)
def restore_flow(user_id: str, flow_id: str, data: Mapping[str, Any], expected_token: str | None) -> FlowRecord | None:
    from core import db
    from core.errors import ApiError
    from service_flows import concurrency, schemas, services

    owner = services._uuid(user_id)
    if owner is None:
        return None
    s = db.session()
    try:
        flow = services.own_flow(s, owner, flow_id)
    except ApiError:  # a foreign or missing flow: None, answered 404 by the caller
        return None
    expected = concurrency.parse_if_match(expected_token)
    services.apply_changes(s, flow, {"data": dict(data)}, ("data",), expected_token=expected, autosave=False)
    return FlowRecord.from_dict(schemas.FlowReadSchema().dump(services.flow_out(flow)))


@hookimpl
def register_settings():
    from service_flows.config import SECTION

    return [SECTION]


@hookimpl
def extend_config(actor, public):
    """``default_folder_name`` and ``public_flow_cleanup_interval`` of ``/api/v1/config``."""
    from service_flows.config import settings

    cfg = settings()
    return {
        "default_folder_name": cfg.default_folder_name,
        "public_flow_cleanup_interval": cfg.public_flow_cleanup_interval,
    }
