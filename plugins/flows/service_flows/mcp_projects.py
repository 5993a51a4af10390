"""What the MCP surface reads and writes of projects and flows (hooks ``find_project``,
``list_project_flows``, ``update_project_mcp``); the flows plugin owns these tables.

``auth_settings`` never keeps an OAuth client secret here: the MCP plugin keeps it encrypted in
its own table, and :func:`public_auth_settings` drops one sent through the projects API.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.contracts import FlowRecord, McpToolSettings, ProjectRecord
from core.db import utcnow
from service_flows.models import Flow, Folder

SECRET_KEYS = ("oauth_client_secret",)


def public_auth_settings(settings: dict[str, Any] | None) -> dict[str, Any] | None:
    """``auth_settings`` without secrets (they are never stored in the project row)."""
    if not isinstance(settings, dict):
        return settings
    return {k: v for k, v in settings.items() if k not in SECRET_KEYS}


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (TypeError, ValueError):
        return None


def _folder(s: Session, user_id: str | None, project_id: str) -> Folder | None:
    key = _uuid(project_id)
    if key is None:
        return None
    query = sa.select(Folder).where(Folder.id == key)
    if user_id is not None:
        owner = _uuid(user_id)
        if owner is None:
            return None
        query = query.where(Folder.user_id == owner)
    return s.scalar(query)


_by_id: Any = None


def find_project(s: Session, user_id: str | None, project_id: str) -> ProjectRecord | None:
    """One Core select built once (every MCP request admits its caller with it; the ORM cost 3x)."""
    global _by_id
    key = _uuid(project_id)
    owner = _uuid(user_id) if user_id is not None else None
    if key is None or (user_id is not None and owner is None):
        return None
    if _by_id is None:
        t = Folder.__table__.c
        _by_id = sa.select(t.id, t.user_id, t.name, t.description, t.auth_settings).where(t.id == sa.bindparam("key"))
    row = s.connection().execute(_by_id, {"key": key}).mappings().first()
    if row is None or (owner is not None and row["user_id"] != owner):
        return None
    return ProjectRecord(
        id=str(row["id"]),
        name=row["name"],
        description=row["description"],
        user_id=str(row["user_id"]),
        auth_settings=public_auth_settings(row["auth_settings"]),
    )


def list_project_flows(s: Session, user_id: str, project_id: str | None, with_data: bool) -> list[FlowRecord] | None:
    owner = _uuid(user_id)
    if owner is None:
        return None
    t = Flow.__table__.c
    columns = [
        t.id,
        t.name,
        t.description,
        t.endpoint_name,
        t.mcp_enabled,
        t.action_name,
        t.action_description,
        t.updated_at,
        t.folder_id,
    ]
    if with_data:
        columns.append(t.data)
    query = sa.select(*columns).where(t.user_id == owner, sa.or_(t.is_component.is_(None), t.is_component.is_(False)))
    if project_id is not None:
        folder = _folder(s, user_id, project_id)
        if folder is None:
            return None
        query = query.where(t.folder_id == folder.id)
    out = []
    for row in s.connection().execute(query.order_by(t.name)).mappings():
        updated = row["updated_at"]
        out.append(
            FlowRecord(
                id=str(row["id"]),
                name=row["name"],
                user_id=user_id,
                description=row["description"],
                endpoint_name=row["endpoint_name"],
                mcp_enabled=bool(row["mcp_enabled"]),
                action_name=row["action_name"],
                action_description=row["action_description"],
                updated_at=updated.isoformat() if isinstance(updated, dt.datetime) else None,
                folder_id=str(row["folder_id"]) if row["folder_id"] else None,
                data=row["data"] if with_data else None,
            )
        )
    return out


def update_project_mcp(
    s: Session,
    user_id: str,
    project_id: str,
    tools: Sequence[McpToolSettings],
    auth_settings: Mapping[str, Any] | None,
) -> int | None:
    folder = _folder(s, user_id, project_id)
    if folder is None:
        return None
    wanted = {key: item for item in tools if (key := _uuid(item.id)) is not None}
    count = 0
    if wanted:
        flows = s.scalars(sa.select(Flow).where(Flow.folder_id == folder.id, Flow.id.in_(list(wanted)))).all()
        for flow in flows:
            item = wanted[flow.id]
            if "mcp_enabled" in item.given:
                flow.mcp_enabled = bool(item.mcp_enabled)
            if "action_name" in item.given:
                flow.action_name = item.action_name
            if "action_description" in item.given:
                flow.action_description = item.action_description
            flow.updated_at = utcnow()
            count += 1
    if auth_settings is not None:
        folder.auth_settings = public_auth_settings(dict(auth_settings))
        folder.updated_at = utcnow()
    s.flush()
    return count
