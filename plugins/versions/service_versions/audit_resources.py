"""Reading the audit log (never writing it: entries come only through ``on_audit``).

* ``GET /api/v1/flows/audits``: flow events in the reference 1.13's shape (``{items, next_cursor}``,
  items with ``flow_id``, ``flow_name``, ``actor{type,id,user_id,acting_issuer,acting_subject}``...),
  newest first, keyset-paginated; a non-superuser sees events on their own flows and events they made.
* ``GET /api/v1/audits``: every kind of event (flows, versions, projects, variables, API keys, shares,
  policies, users, plugins), filterable (``resource_type``, ``action``, ``operation``, ``result``,
  ``resource_id``, ``user_id``, ``actor_id``, ``request_id``, ``since``, ``until``); superusers see
  everyone's, others their own.
* ``GET /api/v1/audits/export``: the same filters as JSON lines (``application/x-ndjson``).

Reading the log records nothing. Pending entries of this process are written first, so a change is
visible to the next read in the same process.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from flask import Response, request
from flask_smorest import Blueprint

from core import appstate, db
from core.auth import authenticated, current_actor
from core.errors import ApiError
from service_versions import audit
from service_versions.models import AuditEvent

flow_audits_blp = Blueprint("flow_audits", __name__, url_prefix="/api/v1/flows", description="Flows")
audits_blp = Blueprint("audits", __name__, url_prefix="/api/v1/audits", description="Audit")

MAX_PAGE = 200
_MULTI = ("operation", "result", "resource_type", "action", "actor_type")
_UUIDS = ("user_id", "request_id")
_TEXT = ("resource_id", "actor_id")
_FLOW_PARAMS = {"flow_id", "operation", "result", "event_type", "user_id", "actor_type", "actor_id", "request_id",
                "since", "until", "cursor", "limit"}  # fmt: skip
_ALL_PARAMS = {*_MULTI, *_UUIDS, *_TEXT, "since", "until", "cursor", "limit", "event_type"}


EVENT_MEMBERS = ("id", "timestamp", "action", "operation", "event_type", "result", "error_code", "request_id",
                 "actor", "details")  # fmt: skip


def _page_doc(description: str, *members: str) -> dict[str, Any]:
    item = {"type": "object", "properties": {m: {} for m in (*EVENT_MEMBERS, *members)}}
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": item}, "next_cursor": {}}}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _bad(msg: str) -> ApiError:
    return ApiError(400, msg)


def _time(name: str, value: str) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _bad(f"Invalid {name}: expected an RFC 3339 timestamp") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _id(name: str, value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise _bad(f"Invalid {name}: expected a UUID") from None


def _filters(allowed: set[str], *, flow: bool) -> tuple[list[Any], int, tuple[dt.datetime, uuid.UUID] | None]:
    args = request.args
    unknown = set(args) - allowed
    if unknown:
        raise _bad(f"Unsupported query parameter: {sorted(unknown)[0]}")
    c = AuditEvent.__table__.c
    where: list[Any] = []
    if flow:
        where.append(c.resource_type == "flow")
        if "flow_id" in args:
            where.append(c.resource_id == str(_id("flow_id", args["flow_id"])))
    for name in _MULTI:
        values = [v for v in args.getlist(name) if v]
        if values:
            where.append(c[name].in_(values))
    for name in _UUIDS:
        if name in args:
            where.append(c[name] == _id(name, args[name]))
    for name in _TEXT:
        if name in args:
            where.append(c[name] == args[name])
    if "since" in args:
        where.append(c.timestamp >= _time("since", args["since"]))
    if "until" in args:
        where.append(c.timestamp < _time("until", args["until"]))
    try:
        limit = int(args.get("limit", 50))
    except ValueError:
        raise _bad("Invalid limit") from None
    if not 1 <= limit <= MAX_PAGE:
        raise _bad(f"limit must be 1 to {MAX_PAGE}")
    cursor = None
    if "cursor" in args:
        try:
            stamp, _, key = base64.urlsafe_b64decode(args["cursor"].encode()).decode().partition("|")
            cursor = (_time("cursor", stamp), uuid.UUID(key))
        except (ValueError, UnicodeDecodeError):
            raise _bad("Invalid cursor") from None
    return where, limit, cursor


def _visible(where: list[Any]) -> list[Any]:
    """Owner scoping: a non-superuser sees entries about their things and entries they made."""
    actor = current_actor()
    if actor.is_superuser:
        return where
    c = AuditEvent.__table__.c
    return [*where, sa.or_(c.user_id == actor.id, c.actor_id == str(actor.id))]


def _rows(where: list[Any], limit: int | None, cursor: tuple[dt.datetime, uuid.UUID] | None) -> list[Any]:
    db.release()  # the writer may need this thread's (SQLite) connection
    audit.writer(appstate.engine()).flush()
    c = AuditEvent.__table__.c
    query = sa.select(AuditEvent.__table__).where(*where).order_by(c.timestamp.desc(), c.id.desc())
    if cursor is not None:
        query = query.where(sa.or_(c.timestamp < cursor[0], sa.and_(c.timestamp == cursor[0], c.id < cursor[1])))
    if limit is not None:
        query = query.limit(limit + 1)
    return list(db.session().execute(query).mappings())


def _stamp(value: dt.datetime) -> str:
    value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def event_out(row: Any) -> dict[str, Any]:
    """The reference's ``AuditEventReadBase`` members."""
    return {
        "id": str(row["id"]),
        "timestamp": _stamp(row["timestamp"]),
        "action": row["action"],
        "operation": row["operation"],
        "event_type": row["event_type"],
        "result": row["result"],
        "error_code": row["error_code"],
        "request_id": str(row["request_id"]),
        "actor": {
            "type": row["actor_type"],
            "id": row["actor_id"],
            "user_id": str(row["user_id"]) if row["user_id"] else None,
            "acting_issuer": None,
            "acting_subject": None,
        },
        "details": row["details"] or {},
    }


def _page(rows: list[Any], limit: int, shape: Any) -> dict[str, Any]:
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = None
    if more and rows:
        last = rows[-1]
        cursor = base64.urlsafe_b64encode(f"{_stamp(last['timestamp'])}|{last['id']}".encode()).decode()
    return {"items": [shape(r) for r in rows], "next_cursor": cursor}


def _flow_item(row: Any) -> dict[str, Any]:
    return {**event_out(row), "flow_id": row["resource_id"], "flow_name": row["resource_name"]}


def _item(row: Any) -> dict[str, Any]:
    return {
        **event_out(row),
        "resource_type": row["resource_type"],
        "resource_id": row["resource_id"],
        "resource_name": row["resource_name"],
    }


@flow_audits_blp.route("/audits", methods=["GET"])
@flow_audits_blp.response(200, description="{items, next_cursor}: flow events, newest first")
@flow_audits_blp.doc(responses={"200": _page_doc("flow events", "flow_id", "flow_name")})
@authenticated("user")
def read_flow_audits():
    """Flow audit events, newest first, filtered and keyset-paginated."""
    where, limit, cursor = _filters(_FLOW_PARAMS, flow=True)
    return _page(_rows(_visible(where), limit, cursor), limit, _flow_item)


@audits_blp.route("/", methods=["GET"])
@audits_blp.response(200, description="{items, next_cursor}: every kind of event, newest first")
@audits_blp.doc(responses={"200": _page_doc("events", "resource_type", "resource_id", "resource_name")})
@authenticated("user")
def read_audits():
    """Audit events of every kind (superusers: everyone's; others: their own)."""
    where, limit, cursor = _filters(_ALL_PARAMS, flow=False)
    return _page(_rows(_visible(where), limit, cursor), limit, _item)


@audits_blp.route("/export", methods=["GET"])
@audits_blp.response(200, description="JSON lines, one event per line")
@audits_blp.doc(
    responses={
        "200": {
            "description": "JSON lines",
            "content": {"application/x-ndjson": {"schema": {"type": "string", "description": "one event per line"}}},
        }
    }
)
@authenticated("user")
def export_audits():
    """The filtered events as JSON lines (``application/x-ndjson``), newest first."""
    where, _limit, cursor = _filters(_ALL_PARAMS, flow=False)
    rows = _rows(_visible(where), None, cursor)

    def lines() -> Iterator[str]:
        for row in rows:
            yield json.dumps(_item(row), ensure_ascii=False, sort_keys=True) + "\n"

    return Response(
        lines(),
        mimetype="application/x-ndjson",
        headers={"Content-Disposition": 'attachment; filename="audit.jsonl"'},
    )
