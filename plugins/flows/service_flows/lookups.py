"""The flows plugin's answers to lookup hooks: flows and their graphs as :mod:`core.contracts` records.

``find_flow`` (the core's, on every run), ``published_agents`` / ``find_agent_flow`` (the A2A plugin's),
``stored_flows`` (the policies plugin's) and ``flows_using_components`` (the extensions plugin's). Every
answer is a frozen record with JSON values (ids and times as strings), ready for a job; an owner's
lookup runs on the driver through statements built once, and a flow's ``data`` is decoded once per
stored version (:func:`_shared_data`: read-only).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import appstate, db
from core.contracts import FlowRecord, FlowUsage, NodeRef, ResourceRef
from core.errors import ApiError
from service_flows import examples, hookspecs, shares
from service_flows.models import Flow, Folder
from service_flows.services import _aware, _uuid


def find_flow(user_id: str | None, flow_id_or_name: str, public: bool, draft: bool = False) -> FlowRecord | None:
    """The ``find_flow`` hook: the published version for API callers, the draft for editor builds.

    ``draft`` False (every surface but the editor's builds): a flow with a published version answers
    with that version's graph (the ``published_version`` hook this plugin publishes, answered by the
    versions plugin); see :func:`_draft_flow` for the lookup itself.
    """
    found = _draft_flow(user_id, flow_id_or_name, public)
    if found is None or draft:
        return found
    return _published(found)


def _published(found: FlowRecord) -> FlowRecord:
    """``found`` with its published version's graph (and save time), or unchanged when none is published."""
    published = appstate.hooks().first(hookspecs.published_version, flow_id=found.id, changed_at=found.updated_at)
    if published is None:
        return found
    return found.replace(data=published.data, updated_at=published.saved_at, published_version=published.version_number)


def _draft_flow(user_id: str | None, flow_id_or_name: str, public: bool) -> FlowRecord | None:
    """A stored flow as last saved: by id or endpoint name for an owner, by id for PUBLIC flows.

    The record holds JSON values only (ids and times as strings), ready for a job. An owner's lookup (every
    run) runs on the driver without a session, and its ``data`` is decoded once per stored version
    (:func:`_shared_data`: read-only); the other lookups use the request's session. Core selects and a
    hand-written dump: an ORM object plus a marshmallow dump cost about three times as much; the output
    record's ``as_dict()`` equals ``FlowReadSchema().dump(flow_out(flow))`` (tests/flows/test_find_flow_fast.py
    holds them together).
    """
    key = _uuid(flow_id_or_name)
    if user_id is not None:
        owner = _uuid(user_id)
        if owner is None:
            return None
        # the owner's lookups (every run) use statements built once, with the values bound per call
        by_id, by_name = _owner_statements()
        params = {"owner": owner, "key": key} if key else {"owner": owner, "name": flow_id_or_name}
        found = (by_id if key else by_name).first_mapping(params)
        if found is None and key is not None:
            return _shared_flow(owner, key)
        return None if found is None else _flow_record(found, shared_data=True)
    if public:  # the effective anonymous grant: a canonical share or a legacy grant (service_flows.shares)
        found_public = shares.public_grant(db.session(), key) if key is not None else None
        return None if found_public is None else _flow_record(found_public[1])
    if key is not None:  # any owner: trusted internal callers (webhooks with authentication off, A2A agents)
        row_any = db.session().connection().execute(_any_owner_statement(), {"key": key}).mappings().first()
        return None if row_any is None else _flow_record(row_any)
    else:
        query = sa.select(Flow.__table__).where(Flow.__table__.c.endpoint_name == flow_id_or_name).limit(2)
        matches = list(db.session().connection().execute(query).mappings())
        return _flow_record(matches[0]) if len(matches) == 1 else None  # ambiguous names match nothing


def _shared_flow(user_id: uuid.UUID, key: uuid.UUID) -> FlowRecord | None:
    """Someone else's flow by id, when shared with ``user_id`` for running (``core.auth``; teams plugin):
    None when they may not see it (404), 403 when they may see it but not run it. The run acts as the
    caller (their variables and keys), on the owner's flow."""
    from core.auth import check_access
    from service_flows.services import caller, flow_ref

    row = db.session().connection().execute(_any_owner_statement(), {"key": key}).mappings().first()
    if row is None:
        return None
    record = _flow_record(row)
    try:
        check_access(caller(user_id), "execute", flow_ref(record))
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise
    return record


def resource_ref(kind: str, resource_id: str) -> ResourceRef | None:
    """The teams plugin's ``resource_ref`` hook: a flow's or a project's owner and project, any owner's."""
    from service_flows.services import flow_ref, project_ref

    key = _uuid(resource_id)
    if key is None:
        return None
    if kind == "flow":
        flow = db.session().get(Flow, key)
        return None if flow is None else flow_ref(flow)
    if kind == "project":
        folder = db.session().get(Folder, key)
        return None if folder is None else project_ref(folder)
    return None


def published_agents(s: Session, user_id: str) -> list[FlowRecord]:
    """The ``published_agents`` hook: the owner's agent flows with A2A on, by name (no ``data``)."""
    owner = _uuid(user_id)
    if owner is None:
        return []
    t = Flow.__table__.c
    query = (
        sa.select(Flow.__table__)
        .where(t.user_id == owner, t.flow_type == "agent", t.a2a_enabled.is_(True))
        .order_by(t.name)
    )
    return [_flow_record(row).replace(data=None) for row in s.connection().execute(query).mappings()]


def find_agent_flow(flow_id: str, user_id: str | None) -> FlowRecord | None:
    """The A2A plugin's ``find_agent_flow`` hook: a flow by id (an owner's, or anyone's) with its project's auth type.

    One select joining the project (the A2A surface asks on every call); only ``auth_type`` leaves
    ``auth_settings`` (the rest may hold secrets).
    """
    key = _uuid(flow_id)
    if key is None:
        return None
    by_owner, any_owner = _with_auth_type_statements()
    if user_id is None:
        row = any_owner.first_mapping({"key": key})
    else:
        owner = _uuid(user_id)
        if owner is None:
            return None
        row = by_owner.first_mapping({"key": key, "owner": owner})
    if row is None:
        return None
    settings_ = row["project_auth_settings"]
    value = settings_.get("auth_type") if isinstance(settings_, Mapping) else None
    # an A2A call is an API surface: it runs the published version when there is one
    return _published(_flow_record(row, shared_data=True).replace(auth_type=str(value) if value else None))


_owner_lookups: tuple[db.Prepared, db.Prepared] | None = None
_with_auth_type: tuple[db.Prepared, db.Prepared] | None = None
_by_id_any_owner: Any = None


def _any_owner_statement() -> Any:
    """A flow by id whoever owns it (trusted callers), a Core select built once (as :func:`_owner_statements`)."""
    global _by_id_any_owner
    if _by_id_any_owner is None:
        _by_id_any_owner = sa.select(Flow.__table__).where(Flow.__table__.c.id == sa.bindparam("key"))
    return _by_id_any_owner


def _with_auth_type_statements() -> tuple[db.Prepared, db.Prepared]:
    """A flow by id with its project's ``auth_settings`` (an owner's, anyone's), Core selects built once,
    run on the driver (:class:`core.db.Prepared`)."""
    global _with_auth_type
    if _with_auth_type is None:
        t = Flow.__table__.c
        f = Folder.__table__.c
        query = (
            sa.select(*_hot_columns(), f.auth_settings.label("project_auth_settings"))
            .select_from(Flow.__table__.outerjoin(Folder.__table__, f.id == t.folder_id))
            .where(t.id == sa.bindparam("key"))
        )
        _with_auth_type = (db.Prepared(query.where(t.user_id == sa.bindparam("owner"))), db.Prepared(query))
    return _with_auth_type


def _owner_statements() -> tuple[db.Prepared, db.Prepared]:
    """An owner's flow by id and by endpoint name, as Core selects with bound values, built once
    and run on the driver (:class:`core.db.Prepared`).

    Building the ``where`` clauses and their cache key cost about 0.15 ms per run, and running
    them through the session about ten times what the driver costs; both statements still
    filter on the owner.
    """
    global _owner_lookups
    if _owner_lookups is None:
        t = Flow.__table__.c
        query = sa.select(*_hot_columns()).where(t.user_id == sa.bindparam("owner"))
        _owner_lookups = (
            db.Prepared(query.where(t.id == sa.bindparam("key"))),
            db.Prepared(query.where(t.endpoint_name == sa.bindparam("name"))),
        )
    return _owner_lookups


def _hot_columns() -> list[Any]:
    """The flow's columns for the run path's selects, ``data`` as its stored JSON text (see :func:`_shared_data`)."""
    return [sa.cast(c, sa.Text).label("data") if c.key == "data" else c for c in Flow.__table__.c]


#: decoded ``data`` by flow id, with the stored text it came from; bounded by the texts' total length
_decoded: dict[str, tuple[str, Any]] = {}
_decoded_chars = 0
_decoded_lock = threading.Lock()
DECODED_BUDGET_CHARS = 16_000_000


def _shared_data(flow_id: str, text: Any) -> Any:
    """A flow's ``data`` decoded once per stored version and process, the same object for every run of it.

    Decoding the graph's JSON (about 10 kB for two components) was the largest part of a run's flow
    lookup, and a stored flow's runs all read the same text: the text is compared with the one the
    cached value came from (equal text, same version), so an update is seen at once by every process.
    The value is shared, so the ``find_flow`` hook documents its ``data`` as read-only.
    """
    global _decoded_chars
    if not isinstance(text, str):
        return text  # NULL, or a driver that decodes JSON itself
    hit = _decoded.get(flow_id)
    if hit is not None and hit[0] == text:
        return hit[1]
    value = json.loads(text)
    if len(text) > DECODED_BUDGET_CHARS // 16:
        return value  # one very large flow would evict everything else: its runs decode it
    with _decoded_lock:
        old = _decoded.pop(flow_id, None)
        if old is not None:
            _decoded_chars -= len(old[0])
        while _decoded and _decoded_chars + len(text) > DECODED_BUDGET_CHARS:
            _decoded_chars -= len(_decoded.pop(next(iter(_decoded)))[0])
        _decoded[flow_id] = (text, value)
        _decoded_chars += len(text)
    return value


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _flow_record(row: Mapping[Any, Any], *, shared_data: bool = False) -> FlowRecord:
    """The record whose ``as_dict()`` is ``FlowReadSchema().dump(flow_out(flow))`` for a flow row (same values).

    ``shared_data``: the row's ``data`` is the stored JSON text (:func:`_hot_columns`), decoded through
    the per-process cache (:func:`_shared_data`).
    """
    updated = _aware(row["updated_at"])
    tags = row["tags"]
    overrides = row["a2a_card_overrides"]
    return FlowRecord(
        id=str(row["id"]),
        name=_str(row["name"]),
        description=_str(row["description"]),
        icon=_str(row["icon"]),
        icon_bg_color=_str(row["icon_bg_color"]),
        gradient=_str(row["gradient"]),
        data=_shared_data(str(row["id"]), row["data"]) if shared_data else row["data"],
        is_component=_bool(row["is_component"]),
        updated_at=None if updated is None else updated.isoformat(),
        webhook=_bool(row["webhook"]),
        endpoint_name=_str(row["endpoint_name"]),
        tags=tuple(str(tag) for tag in tags) if tags is not None else (),
        locked=_bool(row["locked"]),
        mcp_enabled=_bool(row["mcp_enabled"]),
        action_name=_str(row["action_name"]),
        action_description=_str(row["action_description"]),
        access_type=_str(row["access_type"]),
        flow_type=_str(row["flow_type"]),
        a2a_enabled=_bool(row["a2a_enabled"]),
        a2a_card_overrides=dict(overrides) if overrides is not None else None,
        user_id=_str(row["user_id"]),
        folder_id=_str(row["folder_id"]),
        workspace_id=_str(row["workspace_id"]),
        version_token=_str(row["version_token"]),
    )


def stored_flows(s: Session, after_id: str | None, limit: int) -> list[FlowRecord]:
    """The policies plugin's ``stored_flows`` hook: every stored flow and example, ordered by id, after
    ``after_id`` (trusted internal scans; ``id``, ``name``, ``user_id`` and ``data`` only)."""
    query = sa.select(Flow.id, Flow.name, Flow.user_id, Flow.data).order_by(Flow.id).limit(limit)
    after = _uuid(after_id) if after_id else None
    if after is not None:
        query = query.where(Flow.id > after)
    rows = [FlowRecord(id=str(r.id), name=r.name, user_id=str(r.user_id), data=r.data) for r in s.execute(query)]
    extra = [
        FlowRecord(id=str(e["id"]), name=e["name"], user_id=None, data=e["data"])
        for e in examples.shared_examples()  # read only: the records go to scans that only read them
        if after is None or e["id"] > after
    ]
    return sorted(rows + extra, key=lambda f: uuid.UUID(f.id))[:limit]


def flows_using_components(s: Session, component_keys: list[str]) -> list[FlowUsage]:
    """The extensions plugin's ``flows_using_components`` hook: flows (any owner) using the component types.

    A text pre-filter (the key quoted, as JSON writes it) keeps the scan to the candidate rows;
    each candidate's graph is then read node by node, so a key that only appears in a text field
    does not count.
    """
    keys = {k for k in component_keys if k}
    if not keys:
        return []
    t = Flow.__table__.c
    text = sa.cast(t.data, sa.Text)
    query = sa.select(t.id, t.name, t.user_id, t.data).where(sa.or_(*(text.contains(f'"{k}"') for k in keys)))
    found: list[FlowUsage] = []
    for row in s.connection().execute(query):
        nodes: list[NodeRef] = []
        for node in (row.data or {}).get("nodes") or []:
            data = node.get("data") if isinstance(node, Mapping) else None
            if isinstance(data, Mapping) and data.get("type") in keys:
                nodes.append(NodeRef(id=str(node.get("id")), type=str(data["type"])))
        if nodes:
            found.append(FlowUsage(flow_id=str(row.id), name=row.name, user_id=str(row.user_id), nodes=tuple(nodes)))
    return found
