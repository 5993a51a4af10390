"""Flow logic: owner-scoped lookups, unique names, create/update/upsert, listing.

No request objects here: views pass plain values and an :class:`core.auth.Actor`
or a user id. Every query is scoped by owner; another user's flow answers
exactly like a missing one (404).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from typing import Any, cast

import sqlalchemy as sa
from flask import g, has_request_context
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core import appstate, audit, db
from core.auth import Actor, check_access
from core.contracts import FlowRecord, ResourceRef
from core.errors import ApiError
from service_flows import concurrency, examples, hookspecs, sanitize, shares
from service_flows.config import settings as flows_settings
from service_flows.models import Flow, Folder

FLOW_NOT_FOUND = "Flow not found"
PROJECT_NOT_FOUND = "Project not found"

#: Members of the create body copied onto a new or upserted flow.
CREATE_MEMBERS = (
    "description",
    "data",
    "endpoint_name",
    "workspace_id",
    "icon",
    "icon_bg_color",
    "gradient",
    "is_component",
    "locked",
    "webhook",
    "mcp_enabled",
    "action_name",
    "action_description",
    "tags",
    "access_type",
    "flow_type",
    "a2a_enabled",
    "a2a_card_overrides",
)
#: Members of the update (PATCH) body.
UPDATE_MEMBERS = (
    "name",
    "description",
    "data",
    "endpoint_name",
    "folder_id",
    "workspace_id",
    "locked",
    "mcp_enabled",
    "action_name",
    "action_description",
    "access_type",
    "flow_type",
    "a2a_enabled",
    "a2a_card_overrides",
)
DEFAULTS: dict[str, Any] = {
    "is_component": False,
    "locked": False,
    "webhook": False,
    "mcp_enabled": False,
    "access_type": "PRIVATE",
    "flow_type": "workflow",
    "a2a_enabled": False,
}


def _uuid(value: Any) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError):
        return None


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is not None and value.tzinfo is None:  # SQLite returns naive UTC datetimes
        return value.replace(tzinfo=dt.UTC)
    return value


# --- output shapes ----------------------------------------------------------------------------------
def flow_out(flow: Flow) -> dict[str, Any]:
    """The reference's FlowRead members (``fs_path`` is never returned)."""
    return {
        "name": flow.name,
        "description": flow.description,
        "icon": flow.icon,
        "icon_bg_color": flow.icon_bg_color,
        "gradient": flow.gradient,
        "data": flow.data,
        "is_component": flow.is_component,
        "updated_at": _aware(flow.updated_at),
        "webhook": flow.webhook,
        "endpoint_name": flow.endpoint_name,
        "tags": flow.tags if flow.tags is not None else [],
        "locked": flow.locked,
        "mcp_enabled": flow.mcp_enabled,
        "action_name": flow.action_name,
        "action_description": flow.action_description,
        "access_type": flow.access_type,
        "flow_type": flow.flow_type,
        "a2a_enabled": flow.a2a_enabled,
        "a2a_card_overrides": flow.a2a_card_overrides,
        "id": flow.id,
        "user_id": flow.user_id,
        "folder_id": flow.folder_id,
        "workspace_id": flow.workspace_id,
        "name_key": None,
        "version_token": flow.version_token,
    }


HEADER_MEMBERS = (
    "id",
    "name",
    "folder_id",
    "is_component",
    "endpoint_name",
    "description",
    "data",
    "access_type",
    "tags",
    "mcp_enabled",
    "flow_type",
    "a2a_enabled",
    "a2a_card_overrides",
    "action_name",
    "action_description",
)


def header_out(flow: dict[str, Any]) -> dict[str, Any]:
    """A flow header: the reference sends ``data`` only for components."""
    out = {k: flow.get(k) for k in HEADER_MEMBERS}
    if not flow.get("is_component"):
        out["data"] = None
    return out


def export_out(flow: dict[str, Any]) -> dict[str, Any]:
    """A flow as downloaded: every read member, secrets blanked."""
    return {**flow, "data": sanitize.blank_secrets(flow.get("data"))}


def page_of(items: list[Any], total: int, page: int, size: int) -> dict[str, Any]:
    return {"items": items, "total": total, "page": page, "size": size, "pages": math.ceil(total / size)}


# --- projects needed by flows -------------------------------------------------------------------------
def default_folder(s: Session, user_id: uuid.UUID) -> Folder:
    """The user's default project (``default_folder_name``), created on first use."""
    name = flows_settings().default_folder_name
    query = sa.select(Folder).where(Folder.user_id == user_id, Folder.name == name)
    folder = s.scalar(query)
    if folder is not None:
        return folder
    try:
        with s.begin_nested():
            folder = Folder(
                user_id=user_id, name=name, description="Manage your own projects. Download and upload projects."
            )
            s.add(folder)
    except IntegrityError:  # another request created it first
        folder = s.scalar(query)
        assert folder is not None
    return folder


def own_folder(s: Session, user_id: uuid.UUID, folder_id: Any, verb: str | None = None) -> Folder:
    """The caller's project; with ``verb``, also one shared with them that allows it (404/403, core.auth)."""
    key = _uuid(folder_id)
    folder = s.scalar(sa.select(Folder).where(Folder.user_id == user_id, Folder.id == key)) if key else None
    if folder is None and verb is not None and key is not None:
        folder = s.get(Folder, key)
        if folder is not None:
            check_access(caller(user_id), verb, project_ref(folder), not_found=PROJECT_NOT_FOUND)
    if folder is None:
        raise ApiError(404, PROJECT_NOT_FOUND)
    return folder


# --- shared access (teams): core.auth decides, owners never ask ---------------------------------------------
def caller(user_id: uuid.UUID) -> Actor:
    """The request's actor when it is ``user_id`` (flags included), else a plain user actor."""
    actor = g.get("actor") if has_request_context() else None
    return actor if actor is not None and actor.id == user_id else Actor(id=user_id)


def flow_ref(flow: Any) -> ResourceRef:
    folder = getattr(flow, "folder_id", None)
    return ResourceRef("flow", str(flow.id), str(flow.user_id), str(folder) if folder else None)


def project_ref(folder: Folder) -> ResourceRef:
    return ResourceRef("project", str(folder.id), str(folder.user_id), str(folder.id))


# --- lookups --------------------------------------------------------------------------------------------
def own_flow(s: Session, user_id: uuid.UUID, flow_id: Any, verb: str | None = None) -> Flow:
    """The caller's flow; with ``verb``, also one shared with them that allows it (404/403, core.auth)."""
    key = _uuid(flow_id)
    flow = s.scalar(sa.select(Flow).where(Flow.user_id == user_id, Flow.id == key)) if key else None
    if flow is None and verb is not None and key is not None:
        flow = s.get(Flow, key)
        if flow is not None:
            check_access(caller(user_id), verb, flow_ref(flow), not_found=FLOW_NOT_FOUND)
    if flow is None:
        raise ApiError(404, FLOW_NOT_FOUND)
    return flow


def readable_flow(s: Session, user_id: uuid.UUID, flow_id: Any) -> dict[str, Any]:
    """The caller's flow, or an example flow (readable by everyone)."""
    key = _uuid(flow_id)
    if key is not None:
        example = examples.get_example(key)
        if example is not None:
            return example
    return flow_out(own_flow(s, user_id, flow_id, "read"))


# --- unique names ---------------------------------------------------------------------------------------
def _taken(s: Session, column: Any, user_id: uuid.UUID, value: str, exclude: uuid.UUID | None) -> bool:
    query = sa.select(Flow.id).where(Flow.user_id == user_id, column == value)
    if exclude is not None:
        query = query.where(Flow.id != exclude)
    return s.scalar(query.limit(1)) is not None


def unique_name(s: Session, user_id: uuid.UUID, name: str, exclude: uuid.UUID | None = None) -> str:
    """``name``, or ``"name (n)"`` with n one above the highest existing copy number (as the reference)."""
    if not _taken(s, Flow.name, user_id, name, exclude):
        return name
    pattern = re.compile(rf"^{re.escape(name)} \((\d+)\)$")
    names = s.scalars(
        sa.select(Flow.name).where(Flow.user_id == user_id, Flow.name.startswith(f"{name} (", autoescape=True))
    ).all()
    numbers = [int(m.group(1)) for n in names if (m := pattern.match(n))]
    candidate = max(numbers, default=0) + 1
    while _taken(s, Flow.name, user_id, f"{name} ({candidate})", exclude):
        candidate += 1
    return f"{name} ({candidate})"


def unique_endpoint(
    s: Session, user_id: uuid.UUID, endpoint: str | None, exclude: uuid.UUID | None = None
) -> str | None:
    """``endpoint``, or ``"endpoint-n"`` when the user already has it (as the reference does on create)."""
    if endpoint is None or not _taken(s, Flow.endpoint_name, user_id, endpoint, exclude):
        return endpoint
    pattern = re.compile(rf"^{re.escape(endpoint)}-(\d+)$")
    names = s.scalars(
        sa.select(Flow.endpoint_name).where(
            Flow.user_id == user_id, Flow.endpoint_name.startswith(f"{endpoint}-", autoescape=True)
        )
    ).all()
    numbers = [int(m.group(1)) for n in names if n and (m := pattern.match(n))]
    candidate = max(numbers, default=0) + 1
    while _taken(s, Flow.endpoint_name, user_id, f"{endpoint}-{candidate}", exclude):
        candidate += 1
    return f"{endpoint}-{candidate}"


# --- writes ---------------------------------------------------------------------------------------------
def notify_changed(flow: Flow, *, autosave: bool = True) -> None:
    """Tell other plugins (``on_flow_changed``) a flow was written, inside this transaction."""
    updated = _aware(flow.updated_at)
    author = flow.last_modified_by or flow.user_id
    appstate.hooks().notify(
        hookspecs.on_flow_changed,
        flow_id=str(flow.id),
        user_id=str(flow.user_id) if flow.user_id else None,
        author_id=str(author) if author else None,
        autosave=autosave,
        flow=FlowRecord(
            id=str(flow.id),
            name=flow.name,
            user_id=str(flow.user_id),
            data=flow.data,
            updated_at=None if updated is None else updated.isoformat(),
            version_token=str(flow.version_token) if flow.version_token else None,
        ),
    )


def notify_deleted(flow_ids: list[uuid.UUID], user_id: uuid.UUID | None) -> None:
    hooks = appstate.hooks()
    owner = str(user_id) if user_id else None
    for fid in flow_ids:
        hooks.notify(
            hookspecs.on_flow_changed, flow_id=str(fid), user_id=owner, flow=None, author_id=owner, autosave=False
        )
        audit.record("flow:delete", "flow", fid, user_id=user_id)


def _store_data(data: Any) -> Any:
    """Flow data as stored: secrets blanked first when ``SERVICE_REMOVE_API_KEYS`` is on."""
    if flows_settings().remove_api_keys:
        return sanitize.blank_secrets(data)
    return data


def _flush(s: Session, status: int = 409) -> None:
    """Flush; a unique clash that slipped past the checks (a concurrent write) is a clean error."""
    try:
        with s.begin_nested():
            s.flush()
    except IntegrityError:
        raise ApiError(status, "Flow name and endpoint name must be unique") from None


def _target_folder(s: Session, user_id: uuid.UUID, folder_id: Any, foreign_folder: str) -> uuid.UUID:
    if folder_id is not None:
        key = _uuid(folder_id)
        folder = s.scalar(sa.select(Folder).where(Folder.user_id == user_id, Folder.id == key)) if key else None
        if folder is not None:
            return folder.id
        if foreign_folder == "error":
            raise ApiError(404, PROJECT_NOT_FOUND)
    return default_folder(s, user_id).id


def _creation_target(
    s: Session, user_id: uuid.UUID, folder_id: Any, foreign_folder: str
) -> tuple[uuid.UUID, uuid.UUID]:
    """(owner, project) of a new flow: the caller's project (their default one without ``folder_id``), or with
    ``foreign_folder`` ``"error"`` another user's project shared with the caller that lets them ``create``
    (404 when they may not see it, 403 when they may only read or run it): the flow is then the project
    owner's, like every flow in it, and follows the project's shares (docs/teams-and-sso.md)."""
    key = _uuid(folder_id) if folder_id is not None else None
    if key is not None and foreign_folder == "error":
        own = s.scalar(sa.select(Folder.id).where(Folder.user_id == user_id, Folder.id == key))
        if own is not None:
            return user_id, own
        folder = s.get(Folder, key)
        if folder is None:
            raise ApiError(404, PROJECT_NOT_FOUND)
        check_access(caller(user_id), "create", project_ref(folder), not_found=PROJECT_NOT_FOUND)
        return folder.user_id, folder.id
    return user_id, _target_folder(s, user_id, folder_id, foreign_folder)


def create_flow(
    s: Session,
    user_id: uuid.UUID,
    body: dict[str, Any],
    *,
    flow_id: uuid.UUID | None = None,
    foreign_folder: str = "error",
) -> Flow:
    """A new flow; a taken name or endpoint name gets a numbered suffix.

    ``foreign_folder``: ``"error"`` answers 404 for a ``folder_id`` the caller may not see and 403 for one
    shared with them that does not let them ``create``; a project shared with them that does takes the flow,
    owned by the project's owner (the caller is its ``last_modified_by``); ``"default"`` (imports) puts the
    flow in the caller's default project instead of any project not theirs.
    """
    owner, folder = _creation_target(s, user_id, body.get("folder_id"), foreign_folder)
    values = {k: body.get(k) for k in CREATE_MEMBERS}
    for key, default in DEFAULTS.items():
        if values.get(key) is None:
            values[key] = default
    values["data"] = _store_data(values["data"])
    flow = Flow(
        id=flow_id or db.new_id(),
        user_id=owner,
        folder_id=folder,
        name=unique_name(s, owner, body["name"]),
        **{k: v for k, v in values.items() if k != "endpoint_name"},
        endpoint_name=unique_endpoint(s, owner, values["endpoint_name"]),
        created_at=db.utcnow(),
        updated_at=db.utcnow(),
        version_token=uuid.uuid4(),
        last_modified_by=_author(user_id),
    )
    s.add(flow)
    _flush(s)
    notify_changed(flow, autosave=False)
    audit.record("flow:create", "flow", flow.id, name=flow.name, user_id=owner)
    return flow


def _author(default: uuid.UUID | None) -> uuid.UUID | None:
    """The account making this request's write (a team member may edit a flow they do not own)."""
    actor = g.get("actor") if has_request_context() else None
    return actor.id if actor is not None and getattr(actor, "kind", "user") == "user" else default


def apply_changes(
    s: Session,
    flow: Flow,
    changes: dict[str, Any],
    members: tuple[str, ...],
    *,
    on_clash: str = "error",
    clash_status: int = 400,
    foreign_folder: str = "error",
    expected_token: uuid.UUID | None = None,
    autosave: bool = True,
    audit_details: dict[str, Any] | None = None,
) -> Flow:
    """Set the given members (None means unchanged); unique clashes answer ``clash_status`` or rename.

    A change of ``data`` takes the write turn first (:func:`service_flows.concurrency.claim`): with
    ``expected_token`` (the request's ``If-Match``) a stale token answers 409 before anything is written.
    """
    new_data = changes.get("data") if "data" in members else None
    if new_data is not None and _store_data(new_data) != flow.data:
        concurrency.claim(s, flow, expected_token, _author(flow.user_id), new_data)
    written = [k for k in members if k in changes and changes[k] is not None]
    for key in members:
        if key not in changes or changes[key] is None:
            continue
        value = changes[key]
        if key == "name" and value != flow.name:
            if _taken(s, Flow.name, flow.user_id, value, flow.id):
                if on_clash == "error":
                    raise ApiError(clash_status, "Name must be unique")
                value = unique_name(s, flow.user_id, value, flow.id)
        elif key == "endpoint_name" and value != flow.endpoint_name:
            if _taken(s, Flow.endpoint_name, flow.user_id, value, flow.id):
                if on_clash == "error":
                    raise ApiError(clash_status, "Endpoint name must be unique")
                value = unique_endpoint(s, flow.user_id, value, flow.id)
        elif key == "folder_id":
            value = _target_folder(s, flow.user_id, value, foreign_folder)
        elif key == "data":
            value = _store_data(value)
        setattr(flow, key, value)
    flow.updated_at = db.utcnow()
    _flush(s, clash_status)
    notify_changed(flow, autosave=autosave)
    details = {"fields": written, **(audit_details or {})}
    audit.record("flow:write", "flow", flow.id, name=flow.name, user_id=flow.user_id, details=details)
    return flow


def update_flow(
    s: Session, user_id: uuid.UUID, flow_id: Any, changes: dict[str, Any], expected_token: uuid.UUID | None = None
) -> Flow:
    """PATCH: the spec's update body; a name or endpoint clash is a 400 like the reference's. The owner may move
    the flow into a project shared with them that lets them ``create`` (:func:`move_into_shared`)."""
    flow = own_flow(s, user_id, flow_id, "write")
    moved = changes.get("folder_id") is not None and _uuid(changes["folder_id"]) != flow.folder_id
    if flow.user_id != user_id and moved:  # a member edits the flow in place, never moves it out of the share
        raise ApiError(403, "Only the owner can move a shared flow to another project")
    details = move_into_shared(s, user_id, flow, changes["folder_id"]) if moved else None
    return apply_changes(
        s, flow, changes, UPDATE_MEMBERS, clash_status=400, expected_token=expected_token, audit_details=details
    )


def shared_target(s: Session, user_id: uuid.UUID, folder_id: Any) -> Folder | None:
    """Another user's project ``folder_id`` that the caller may ``create`` in (None: their own project, or no
    project id at all); 404 when they may not see it, 403 when they may only read or run in it."""
    key = _uuid(folder_id)
    if key is None or s.scalar(sa.select(Folder.id).where(Folder.user_id == user_id, Folder.id == key)) is not None:
        return None
    folder = s.get(Folder, key)
    if folder is None:
        raise ApiError(404, PROJECT_NOT_FOUND)
    check_access(caller(user_id), "create", project_ref(folder), not_found=PROJECT_NOT_FOUND)
    return folder


def move_into_shared(s: Session, user_id: uuid.UUID, flow: Flow, folder_id: Any) -> dict[str, Any] | None:
    """Before the caller's own ``flow`` moves to ``folder_id``: when that is another user's project shared with the
    caller (``create`` needed, :func:`shared_target`), the flow becomes the project owner's, as a flow created
    there does (:func:`_creation_target`): in the owner's namespace (a taken name or endpoint name gets a
    numbered suffix), its public share with it, the mover its ``last_modified_by``; other plugins re-own what
    they keep of it under its owner (``on_flow_owner_changed``; the versions plugin on ``on_flow_changed``).
    The audit details of the move (None: an ordinary move between the caller's projects)."""
    folder = shared_target(s, user_id, folder_id)
    if folder is None or flow.user_id != user_id:
        return None
    previous = flow.user_id
    # both names first: a query autoflushes, and a new name must not be written under the old owner
    name = unique_name(s, folder.user_id, flow.name, flow.id)
    endpoint = unique_endpoint(s, folder.user_id, flow.endpoint_name, flow.id)
    flow.user_id, flow.name, flow.endpoint_name = folder.user_id, name, endpoint
    flow.last_modified_by = _author(user_id)
    shares.follow_owner(s, [flow.id], folder.user_id)
    s.flush()
    appstate.hooks().notify(
        hookspecs.on_flow_owner_changed,
        flow_id=str(flow.id),
        previous_owner_id=str(previous),
        owner_id=str(folder.user_id),
    )
    return {"project_id": str(folder.id), "previous_owner_id": str(previous)}


def move_own_flows_into(s: Session, user_id: uuid.UUID, folder: Folder, flow_ids: list[Any]) -> int:
    """The bulk move (``PATCH /projects/{id}`` with ``flows``/``components``) of a project shared with the caller:
    their own flows among ``flow_ids`` move in as :func:`move_into_shared` moves one (``create`` needed: 403
    otherwise); other ids are left to the owner's move. The number moved."""
    keys = [key for key in (_uuid(value) for value in flow_ids) if key is not None]
    if folder.user_id == user_id or not keys:
        return 0
    own = list(s.scalars(sa.select(Flow).where(Flow.user_id == user_id, Flow.id.in_(keys)).order_by(Flow.id)))
    for flow in own:
        details = move_into_shared(s, user_id, flow, folder.id)
        apply_changes(s, flow, {"folder_id": folder.id}, ("folder_id",), clash_status=400, audit_details=details)
    return len(own)


def upsert_flow(
    s: Session, user_id: uuid.UUID, flow_id: Any, body: dict[str, Any], expected_token: uuid.UUID | None = None
) -> tuple[Flow, bool]:
    """PUT: create with this id (True) or update the caller's flow (False); someone else's id is 404."""
    key = _uuid(flow_id)
    if key is None:
        raise ApiError(404, FLOW_NOT_FOUND)
    existing = s.get(Flow, key)
    if existing is None and not examples.is_example(key):
        return create_flow(s, user_id, body, flow_id=key), True
    if existing is None or existing.user_id != user_id:
        raise ApiError(404, FLOW_NOT_FOUND)
    members = ("name", "folder_id", *CREATE_MEMBERS)
    moved = body.get("folder_id") is not None and _uuid(body["folder_id"]) != existing.folder_id
    details = move_into_shared(s, user_id, existing, body["folder_id"]) if moved else None
    updated = apply_changes(
        s, existing, body, members, clash_status=409, expected_token=expected_token, audit_details=details
    )
    return updated, False


def delete_flows(s: Session, user_id: uuid.UUID, flow_ids: list[uuid.UUID]) -> int:
    """Delete those of ``flow_ids`` the caller owns; others are ignored (and not counted)."""
    if not flow_ids:
        return 0
    owned_ids = list(s.scalars(sa.select(Flow.id).where(Flow.user_id == user_id, Flow.id.in_(flow_ids))))
    if not owned_ids:
        return 0
    shares.delete_for_flows(s, owned_ids)
    result = cast(
        "sa.CursorResult[Any]", s.execute(sa.delete(Flow).where(Flow.user_id == user_id, Flow.id.in_(owned_ids)))
    )
    notify_deleted(owned_ids, user_id)
    return int(result.rowcount or 0)


def delete_flow(s: Session, user_id: uuid.UUID, flow_id: Any) -> None:
    flow = own_flow(s, user_id, flow_id, "delete")
    shares.delete_for_flows(s, [flow.id])  # a share never outlives its flow (ids can be reused by PUT)
    s.delete(flow)
    s.flush()
    notify_deleted([flow.id], flow.user_id)


def delete_user_rows(s: Session, user_id: str) -> None:
    owner = _uuid(user_id)
    if owner is None:
        return
    s.execute(sa.delete(Flow).where(Flow.user_id == owner))
    s.execute(sa.delete(Folder).where(Folder.user_id == owner))
    shares.delete_for_user(s, owner)
