"""Reading flows: the list (``GET /flows/``, with the examples and the flows shared with the caller), the
public read of a publicly shared flow, and the notes' translations."""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import db
from core.errors import ApiError
from service_flows import examples, sanitize, shares
from service_flows.models import Flow
from service_flows.services import (
    FLOW_NOT_FOUND,
    _uuid,
    caller,
    default_folder,
    flow_out,
    header_out,
    page_of,
    project_ref,
)


# --- listing --------------------------------------------------------------------------------------------
def _filtered(query: sa.Select[Any], q: dict[str, Any]) -> sa.Select[Any]:
    if q.get("components_only"):
        query = query.where(Flow.is_component.is_(True))
    if q.get("flow_type"):
        query = query.where(Flow.flow_type == q["flow_type"])
    return query


def _example_matches(example: dict[str, Any], q: dict[str, Any]) -> bool:
    if q.get("remove_example_flows") or q.get("components_only"):
        return False
    if q.get("flow_type") and example["flow_type"] != q["flow_type"]:
        return False
    return q.get("folder_id") in (None, examples.EXAMPLES_FOLDER_ID)


def list_flows(s: Session, user_id: uuid.UUID, q: dict[str, Any]) -> list[dict[str, Any]] | dict[str, Any]:
    """GET /flows/: a list (``get_all``) with the example flows, or a page of one project's flows.

    Flows shared with the caller (teams) follow their own, each with its ``shared_role``; a page of a
    project shared with the caller is a page of its owner's flows in it (the owner's index)."""
    from service_flows import team_lists

    default = default_folder(s, user_id)
    order = (Flow.updated_at.desc(), Flow.id)
    base = _filtered(sa.select(Flow).where(Flow.user_id == user_id), q)
    shape = header_out if q.get("header_flows") else (lambda f: f)
    if q["get_all"]:
        if q.get("folder_id") is not None:
            base = base.where(Flow.folder_id == q["folder_id"])
        flows = [flow_out(f) for f in s.scalars(base.order_by(*order))]
        shared = team_lists.shared_flows(s, user_id, q, order)
        flows += [e for e in examples.all_examples() if _example_matches(e, q)]
        return [shape(f) for f in flows] + [{**shape(f), "shared_role": f["shared_role"]} for f in shared]
    folder_id = q.get("folder_id") or default.id
    role = None
    folder = team_lists.shared_folder(s, user_id, q.get("folder_id"))
    if folder is not None:  # a project shared with the caller: a page of its owner's flows in it
        role = team_lists.shared_role(caller(user_id), project_ref(folder))
        base = _filtered(sa.select(Flow).where(Flow.user_id == folder.user_id), q)
    base = base.where(Flow.folder_id == folder_id)
    total = s.scalar(sa.select(sa.func.count()).select_from(base.subquery())) or 0
    rows = db.page(s, base, Flow.id, order, (q["page"] - 1) * q["size"], q["size"])
    items = [shape(flow_out(f)) for f in rows]
    if role is not None:
        items = [{**item, "shared_role": role} for item in items]
    return page_of(items, total, q["page"], q["size"])


# --- public read and notes ------------------------------------------------------------------------------
def public_flow(s: Session, flow_id: Any) -> dict[str, Any]:
    """A publicly granted flow for anonymous readers: password fields removed, owner ids withheld."""
    granted = shares.public_grant(s, flow_id)
    flow = s.get(Flow, _uuid(flow_id)) if granted is not None else None
    if flow is None:
        raise ApiError(404, FLOW_NOT_FOUND)
    out = flow_out(flow)
    out.update(
        data=sanitize.drop_secret_fields(out["data"]),
        user_id=None,
        folder_id=None,
        workspace_id=None,
        public_access={"can_read": True, "can_execute": True},
    )
    return out


def note_translations(flow: dict[str, Any], languages: list[str]) -> dict[str, str]:
    """``{node_id: markdown}`` for note nodes carrying ``data.node.translations[<language>]``.

    ``languages`` are the caller's preferred language tags, best first; ``fr-CA``
    falls back to ``fr``. Notes without a matching translation are omitted.
    """
    out: dict[str, str] = {}
    data = flow.get("data")
    nodes = data.get("nodes") if isinstance(data, dict) else None
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, dict) or node.get("type") != "noteNode":
            continue
        inner = (node.get("data") or {}).get("node") if isinstance(node.get("data"), dict) else None
        translations = inner.get("translations") if isinstance(inner, dict) else None
        if not isinstance(translations, dict):
            continue
        for tag in languages:
            text = translations.get(tag) or translations.get(tag.split("-")[0])
            if isinstance(text, str):
                out[str(node.get("id"))] = text
                break
    return out
