"""``/api/v1/monitor/traces``: native run traces in the reference's shapes (camelCase), owner-scoped; the
traces of another user's flow shared with the caller follow the flow's roles (``read`` to list and open them,
``delete`` to delete them; 404 for a flow the caller may not see, 403 when they may not delete).

``GET ""`` lists a page of trace summaries (filters ``flow_id``, ``session_id``, ``status``, ``query``,
``start_time``, ``end_time``; ``page`` from 1, a 0 reads as 1; ``size`` 1-200): ``{traces, total, pages}``.
``GET /{trace_id}`` is one trace with its span tree (model calls under their component), ``DELETE``
removes one trace, ``DELETE ?flow_id=`` every trace of a flow. Another user's trace is 404.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any, cast

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify, request

from core import db
from core.auth import authenticated, check_access, current_actor, flow_ref, foreign_flow
from core.errors import ApiError, ValidationFailed
from service_observability.models import Trace

traces_blp = Blueprint("observability_traces", __name__, url_prefix="/api/v1/monitor/traces")
_TABLE = cast(sa.Table, Trace.__table__)
STATUSES = ("unset", "ok", "error")


def _iso(value: dt.datetime | float | None) -> str | None:
    if value is None:
        return None
    when = dt.datetime.fromtimestamp(value, tz=dt.UTC) if isinstance(value, (int, float)) else value
    return when.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _query_args() -> dict[str, Any]:
    """The list's query parameters, checked (422 naming every bad one)."""
    args = request.args
    errors: list[dict[str, Any]] = []
    found: dict[str, Any] = {}

    def bad(name: str, msg: str, type_: str) -> None:
        errors.append({"loc": ["query", name], "msg": msg, "type": type_})

    for name in ("page", "size"):
        raw = args.get(name)
        if raw is None:
            continue
        try:
            found[name] = int(raw)
        except ValueError:
            bad(name, "Input should be a valid integer, unable to parse string as an integer", "int_parsing")
    if found.get("page", 1) < 0:
        bad("page", "Input should be greater than or equal to 0", "greater_than_equal")
    size = found.get("size", 50)
    if size < 1:
        bad("size", "Input should be greater than or equal to 1", "greater_than_equal")
    elif size > 200:
        bad("size", "Input should be less than or equal to 200", "less_than_equal")
    if args.get("flow_id"):
        try:
            found["flow_id"] = str(uuid.UUID(args["flow_id"]))
        except ValueError:
            bad("flow_id", "Input should be a valid UUID", "uuid_parsing")
    status = args.get("status")
    if status is not None and status not in STATUSES:
        bad("status", "Input should be 'unset', 'ok' or 'error'", "enum")
    for name in ("start_time", "end_time"):
        raw = args.get(name)
        if not raw:
            continue
        try:
            when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            bad(name, "Input should be a valid datetime", "datetime_parsing")
            continue
        found[name] = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    if errors:
        raise ValidationFailed(errors)
    return {
        **found,
        "page": max(found.get("page", 1), 1),
        "size": size,
        "status": status,
        "session_id": args.get("session_id") or None,
        "query": (args.get("query") or "").strip()[:255] or None,
    }


def _summary(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "startTime": _iso(row.start_time),
        "totalLatencyMs": row.total_latency_ms,
        "totalTokens": row.total_tokens,
        "flowId": row.flow_id,
        "sessionId": row.session_id,
        "input": row.input,
        "output": row.output,
    }


def _span(span: dict[str, Any], children: dict[str | None, list[dict[str, Any]]]) -> dict[str, Any]:
    attributes = span.get("attributes") or {}
    usage = None
    if span.get("type") == "llm":
        prompt = int(attributes.get("gen_ai.usage.input_tokens") or 0)
        completion = int(attributes.get("gen_ai.usage.output_tokens") or 0)
        usage = {"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion}
    return {
        "id": span["id"],
        "name": span["name"],
        "type": span["type"],
        "status": span["status"],
        "startTime": _iso(span.get("start")),
        "endTime": _iso(span.get("end")),
        "latencyMs": span.get("latency_ms", 0),
        "inputs": None,
        "outputs": None,
        "error": span.get("error"),
        "modelName": attributes.get("gen_ai.response.model"),
        "tokenUsage": usage,
        "children": [_span(child, children) for child in children.get(span["id"], [])],
    }


def _tree(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = {s["id"] for s in spans}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for span in sorted(spans, key=lambda s: s.get("start") or 0):
        parent = span.get("parent") if span.get("parent") in ids else None
        children.setdefault(parent, []).append(span)
    return [_span(root, children) for root in children.get(None, [])]


@traces_blp.get("")
@authenticated()
def list_traces() -> Response:
    q = _query_args()
    _flush()
    actor = current_actor()
    shared = foreign_flow(actor, q["flow_id"], "read") if "flow_id" in q else None
    # a flow shared with the caller: every user's runs of it (its team's view); else the caller's own
    where = [] if shared is not None else [_TABLE.c.user_id == str(actor.id)]
    if "flow_id" in q:
        where.append(_TABLE.c.flow_id == q["flow_id"])
    if q["session_id"]:
        where.append(_TABLE.c.session_id == q["session_id"])
    if q["status"]:
        where.append(_TABLE.c.status == q["status"])
    if q["query"]:
        like = f"%{q['query'].replace('%', '').replace('_', '')}%"
        where.append(sa.or_(_TABLE.c.name.ilike(like), _TABLE.c.id.ilike(like), _TABLE.c.session_id.ilike(like)))
    if "start_time" in q:
        where.append(_TABLE.c.start_time >= q["start_time"])
    if "end_time" in q:
        where.append(_TABLE.c.start_time <= q["end_time"])
    s = db.session()
    total = int(s.execute(sa.select(sa.func.count()).select_from(_TABLE).where(*where)).scalar_one())
    columns = [c for c in _TABLE.c if c.key != "spans"]
    rows = s.execute(
        sa.select(*columns)
        .where(*where)
        .order_by(_TABLE.c.start_time.desc())
        .offset((q["page"] - 1) * q["size"])
        .limit(q["size"])
    ).all()
    pages = math.ceil(total / q["size"]) if total else 0
    return jsonify({"traces": [_summary(r) for r in rows], "total": total, "pages": pages})


def _flush() -> None:
    """Write what this process queued first (a trace read right after its run is there)."""
    from core import appstate
    from service_observability.native import writer

    writer(appstate.engine()).flush()


def _owned(trace_id: str, verb: str = "read") -> Trace:
    """The caller's trace, or another user's trace of a flow shared with the caller that lets them ``verb``
    it (``core.auth.check_access`` on the flow: 404 when they may not see it, 403 when they may not ``verb``)."""
    _flush()
    found = db.session().get(Trace, trace_id)
    actor = current_actor()
    if found is None:
        raise ApiError(404, "Trace not found")
    if found.user_id != str(actor.id):
        flow = _flow_of(found)
        if flow is None:
            raise ApiError(404, "Trace not found")
        check_access(actor, verb, flow_ref(flow), not_found="Trace not found")
    return found


def _flow_of(trace: Trace) -> Any:
    from core import appstate

    if not trace.flow_id:
        return None
    found = appstate.hooks().find_flow(user_id=None, flow_id_or_name=str(trace.flow_id), public=False, draft=True)
    return found if found is not None and found.id == str(trace.flow_id) else None


@traces_blp.get("/<trace_id>")
@authenticated()
def get_trace(trace_id: str) -> Response:
    row = _owned(trace_id)
    return jsonify(
        {
            **_summary(row),
            "endTime": _iso(row.end_time),
            "spans": _tree(list(row.spans or [])),
        }
    )


@traces_blp.delete("/<trace_id>")
@authenticated()
def delete_trace(trace_id: str) -> Response:
    s = db.session()
    s.delete(_owned(trace_id, "delete"))
    s.commit()
    return Response(status=204)


@traces_blp.delete("")
@authenticated()
def delete_flow_traces() -> Response:
    raw = request.args.get("flow_id")
    try:
        flow_id = str(uuid.UUID(raw or ""))
    except ValueError:
        msg, type_ = ("Field required", "missing") if not raw else ("Input should be a valid UUID", "uuid_parsing")
        raise ValidationFailed([{"loc": ["query", "flow_id"], "msg": msg, "type": type_}]) from None
    _flush()
    shared = foreign_flow(current_actor(), flow_id, "delete")
    where = [] if shared is not None else [_TABLE.c.user_id == str(current_actor().id)]
    s = db.session()
    s.execute(sa.delete(_TABLE).where(*where, _TABLE.c.flow_id == flow_id))
    s.commit()
    return Response(status=204)


def delete_user_rows(user_id: str) -> None:
    """Every trace, usage row and user budget of ``user_id`` (``on_user_deleted``, in the deleting transaction)."""
    from service_observability import budgets
    from service_observability.models import Budget, Usage

    s = db.session()
    s.execute(sa.delete(_TABLE).where(_TABLE.c.user_id == user_id))
    s.execute(sa.delete(cast(sa.Table, Usage.__table__)).where(Usage.user_id == user_id))
    s.execute(sa.delete(cast(sa.Table, Budget.__table__)).where(Budget.scope == "user", Budget.scope_id == user_id))
    budgets.forget()
