"""Project (folder) logic: list, create, read, update, delete, download, upload."""

from __future__ import annotations

import re
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import audit, db
from core.errors import ApiError
from service_flows import services, shares, transfer
from service_flows.mcp_projects import public_auth_settings
from service_flows.models import Flow, Folder
from service_flows.services import default_folder, own_folder


def project_out(folder: Folder) -> dict[str, Any]:
    return {
        "name": folder.name,
        "description": folder.description,
        "auth_settings": folder.auth_settings,
        "id": folder.id,
        "parent_id": folder.parent_id,
    }


def _name_taken(s: Session, user_id: uuid.UUID, name: str, exclude: uuid.UUID | None = None) -> bool:
    query = sa.select(Folder.id).where(Folder.user_id == user_id, Folder.name == name)
    if exclude is not None:
        query = query.where(Folder.id != exclude)
    return s.scalar(query.limit(1)) is not None


def unique_project_name(s: Session, user_id: uuid.UUID, name: str) -> str:
    if not _name_taken(s, user_id, name):
        return name
    pattern = re.compile(rf"^{re.escape(name)} \((\d+)\)$")
    names = s.scalars(
        sa.select(Folder.name).where(Folder.user_id == user_id, Folder.name.startswith(f"{name} (", autoescape=True))
    ).all()
    n = max((int(m.group(1)) for x in names if (m := pattern.match(x))), default=0) + 1
    while _name_taken(s, user_id, f"{name} ({n})"):
        n += 1
    return f"{name} ({n})"


def list_projects(s: Session, user_id: uuid.UUID, username: str) -> list[dict[str, Any]]:
    default_folder(s, user_id)
    folders = s.scalars(sa.select(Folder).where(Folder.user_id == user_id).order_by(Folder.created_at, Folder.id))
    own = [{**project_out(f), "owner_username": username, "is_owner": True} for f in folders]
    return own + _shared_projects(s, user_id)


def _shared_projects(s: Session, user_id: uuid.UUID) -> list[dict[str, Any]]:
    """Other users' projects shared with the caller (teams plugin), each one checked with ``core.auth``."""
    from service_flows.services import caller, project_ref
    from service_flows.team_lists import shared_keys, shared_role

    keys = shared_keys(user_id, "project")
    if not keys:
        return []
    query = sa.select(Folder).where(Folder.id.in_(keys), Folder.user_id != user_id).order_by(Folder.name, Folder.id)
    actor, out = caller(user_id), []
    for folder in s.scalars(query):
        role = shared_role(actor, project_ref(folder))
        if role is not None:
            out.append({**project_out(folder), "owner_username": None, "is_owner": False, "shared_role": role})
    return out


def _move_flows(s: Session, user_id: uuid.UUID, folder_id: uuid.UUID, flow_ids: list[uuid.UUID]) -> None:
    """Move the caller's flows among ``flow_ids`` into the project; other ids are ignored."""
    if flow_ids:
        s.execute(
            sa.update(Flow)
            .where(Flow.user_id == user_id, Flow.id.in_(flow_ids))
            .values(folder_id=folder_id, updated_at=db.utcnow())
        )


def create_project(s: Session, user_id: uuid.UUID, body: dict[str, Any]) -> Folder:
    default_folder(s, user_id)
    folder = Folder(
        user_id=user_id,
        name=unique_project_name(s, user_id, body["name"]),
        description=body.get("description"),
        auth_settings=public_auth_settings(body.get("auth_settings")),
        created_at=db.utcnow(),
        updated_at=db.utcnow(),
    )
    s.add(folder)
    s.flush()
    _move_flows(s, user_id, folder.id, [*(body.get("components_list") or []), *(body.get("flows_list") or [])])
    audit.record("project:create", "project", folder.id, name=folder.name, user_id=user_id)
    return folder


def project_flows(s: Session, user_id: uuid.UUID, folder: Folder, q: dict[str, Any]) -> Any:
    """The project's flows: all (no page/size) or one page, with the read filters."""
    query = sa.select(Flow).where(Flow.user_id == user_id, Flow.folder_id == folder.id)
    if q.get("is_component"):
        query = query.where(Flow.is_component.is_(True))
    if q.get("is_flow"):
        query = query.where(Flow.is_component.is_(False))
    if q.get("search"):
        query = query.where(Flow.name.ilike(f"%{_escape_like(q['search'])}%", escape="\\"))
    order = (Flow.updated_at.desc(), Flow.id)
    if q.get("page") and q.get("size"):
        total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
        rows = db.page(s, query, Flow.id, order, (q["page"] - 1) * q["size"], q["size"])
        page = services.page_of([services.flow_out(f) for f in rows], total, q["page"], q["size"])
        return {"folder": project_out(folder), "flows": page}
    return {**project_out(folder), "flows": [services.flow_out(f) for f in s.scalars(query.order_by(*order))]}


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def update_project(s: Session, user_id: uuid.UUID, folder_id: Any, body: dict[str, Any]) -> Folder:
    folder = own_folder(s, user_id, folder_id, "write")
    mover, user_id = user_id, folder.user_id  # a shared project changes in its owner's namespace
    name = body.get("name")
    if name is not None and name != folder.name:
        if _name_taken(s, user_id, name, folder.id):
            raise ApiError(400, "Name must be unique")
        folder.name = name
    if body.get("description") is not None:
        folder.description = body["description"]
    if body.get("auth_settings") is not None:
        folder.auth_settings = public_auth_settings(body["auth_settings"])
    if "parent_id" in body:
        folder.parent_id = _checked_parent(s, user_id, folder, body["parent_id"])
    moving = [*(body.get("components") or []), *(body.get("flows") or [])]
    _move_flows(s, user_id, folder.id, moving)
    services.move_own_flows_into(s, mover, folder, moving)  # a member's own flows join the shared project
    folder.updated_at = db.utcnow()
    s.flush()
    written = [k for k in ("name", "description", "auth_settings", "parent_id", "flows", "components") if k in body]
    audit.record("project:write", "project", folder.id, name=folder.name, user_id=user_id, details={"fields": written})
    return folder


def _checked_parent(s: Session, user_id: uuid.UUID, folder: Folder, parent_id: uuid.UUID | None) -> uuid.UUID | None:
    if parent_id is None:
        return None
    parent = own_folder(s, user_id, parent_id)
    seen = {folder.id}
    cursor: Folder | None = parent
    while cursor is not None:
        if cursor.id in seen:
            raise ApiError(400, "A project cannot be moved inside itself")
        seen.add(cursor.id)
        cursor = s.get(Folder, cursor.parent_id) if cursor.parent_id else None
    return parent.id


def delete_project(s: Session, user_id: uuid.UUID, folder_id: Any) -> None:
    """Delete the project with its flows; its sub-projects move to the top level."""
    folder = own_folder(s, user_id, folder_id, "delete")
    user_id = folder.user_id
    ids = list(s.scalars(sa.select(Flow.id).where(Flow.user_id == user_id, Flow.folder_id == folder.id)))
    shares.delete_for_flows(s, ids)
    s.execute(sa.delete(Flow).where(Flow.user_id == user_id, Flow.folder_id == folder.id))
    services.notify_deleted(ids, user_id)
    s.execute(sa.update(Folder).where(Folder.user_id == user_id, Folder.parent_id == folder.id).values(parent_id=None))
    s.delete(folder)
    s.flush()
    audit.record("project:delete", "project", folder.id, name=folder.name, user_id=user_id)


def export_project(s: Session, user_id: uuid.UUID, folder_id: Any) -> tuple[Folder, bytes]:
    folder = own_folder(s, user_id, folder_id, "read")
    user_id = folder.user_id
    flows = s.scalars(
        sa.select(Flow).where(Flow.user_id == user_id, Flow.folder_id == folder.id).order_by(Flow.name, Flow.id)
    )
    return folder, transfer.zip_flows([services.export_out(services.flow_out(f)) for f in flows])


_ZIP_NAME = re.compile(r"^(?:\d{8}_\d{6}_)?(?P<name>.+?)(?:_flows)?\.(?:zip|json)$", re.IGNORECASE)


def import_project(s: Session, user_id: uuid.UUID, filename: str, raw: bytes) -> list[Flow]:
    """Create a new project from a project JSON (``folder_name``, ``folder_description``, ``flows``),
    a flows JSON, or a ZIP of flows. Flows are copied with new ids."""
    documents = transfer.read_documents(filename, raw)
    flows = transfer.validate_flows(documents)
    first = documents[0][1] if len(documents) == 1 else None
    name = description = None
    if isinstance(first, dict) and isinstance(first.get("folder_name"), str) and first["folder_name"].strip():
        name, description = first["folder_name"].strip()[:255], first.get("folder_description")
    if name is None:
        match = _ZIP_NAME.match(filename or "")
        name = (match.group("name") if match else "") or "Imported project"
    default_folder(s, user_id)
    folder = Folder(
        user_id=user_id,
        name=unique_project_name(s, user_id, name[:255]),
        description=description if isinstance(description, str) else None,
        created_at=db.utcnow(),
        updated_at=db.utcnow(),
    )
    s.add(folder)
    s.flush()
    return transfer.import_flows(s, user_id, flows, folder.id, keep_ids=False)
