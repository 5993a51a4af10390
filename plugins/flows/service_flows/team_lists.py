"""Other users' flows and projects shared with the caller (the teams plugin answers ``shared_with``), for the
lists and the single read: each is checked with ``core.auth.can`` and carries the caller's ``shared_role`` (the
editor's badge, and its read-only mode for viewers and run-only members)."""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.auth import shared_ids, shared_role
from core.contracts import ResourceRef
from service_flows import listing, services
from service_flows.models import Flow, Folder

__all__ = ["flow_role", "shared_flows", "shared_folder", "shared_keys", "shared_role"]


def shared_keys(user_id: uuid.UUID, kind: str) -> list[uuid.UUID]:
    """Ids of ``kind`` (``flow``, ``project``) shared with the user, as the ``shared_with`` answers say."""
    return [k for k in (services._uuid(i) for i in shared_ids(user_id, kind)) if k is not None]


def flow_role(user_id: uuid.UUID, flow: dict[str, Any]) -> str | None:
    """The caller's ``shared_role`` on a flow they read (``flow_out``'s shape): None for their own flow or an
    example (no permission hook is asked for the owner), else the role their shares amount to (as the list's)."""
    owner = flow.get("user_id")
    if owner is None or str(owner) == str(user_id):
        return None
    folder = flow.get("folder_id")
    ref = ResourceRef("flow", str(flow["id"]), str(owner), str(folder) if folder else None)
    return shared_role(services.caller(user_id), ref)


def shared_flows(s: Session, user_id: uuid.UUID, q: dict[str, Any], order: Any) -> list[dict[str, Any]]:
    """Other users' flows in projects shared with the caller, or shared one by one (``shared_role`` set)."""
    projects, flows = shared_keys(user_id, "project"), shared_keys(user_id, "flow")
    where = [column.in_(keys) for column, keys in ((Flow.folder_id, projects), (Flow.id, flows)) if keys]
    if not where:
        return []
    query = listing._filtered(sa.select(Flow).where(sa.or_(*where), Flow.user_id != user_id), q)
    if q.get("folder_id") is not None:
        query = query.where(Flow.folder_id == q["folder_id"])
    actor, out = services.caller(user_id), []
    for flow in s.scalars(query.order_by(*order)):
        role = shared_role(actor, services.flow_ref(flow))
        if role is not None:
            out.append({**services.flow_out(flow), "shared_role": role})
    return out


def shared_folder(s: Session, user_id: uuid.UUID, folder_id: Any) -> Folder | None:
    """Another user's project ``folder_id`` the caller may read (None: theirs, missing, or not shared)."""
    key = services._uuid(folder_id) if folder_id is not None else None
    if key is None or s.scalar(sa.select(Folder.id).where(Folder.id == key, Folder.user_id == user_id)) is not None:
        return None
    folder = s.get(Folder, key)
    if folder is None or shared_role(services.caller(user_id), services.project_ref(folder)) is None:
        return None
    return folder
