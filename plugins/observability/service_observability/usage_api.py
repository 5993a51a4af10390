"""``/api/v1/monitor/usage`` (tokens, calls and cost, grouped) and ``/api/v1/monitor/budgets``.

Usage is the caller's own (the flows they own); a superuser adds ``all=true`` for everyone's. Budgets are
set and removed by superusers; a user lists those that apply to them, with what is used and what is left.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, cast

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify, request

from core import appstate, db
from core.auth import allowed, authenticated, current_actor
from core.errors import ApiError, ValidationFailed
from service_observability import budgets
from service_observability.models import Budget, Usage

usage_blp = Blueprint("observability_usage", __name__, url_prefix="/api/v1/monitor")
_USAGE = cast(sa.Table, Usage.__table__)
_BUDGET = cast(sa.Table, Budget.__table__)
GROUPS = ("model", "flow", "day", "user", "project")


def _bad(name: str, msg: str, type_: str = "value_error") -> ValidationFailed:
    return ValidationFailed(
        [{"loc": ["query" if request.method == "GET" else "body", name], "msg": msg, "type": type_}]
    )


def _time(name: str) -> dt.datetime | None:
    raw = request.args.get(name)
    if not raw:
        return None
    try:
        when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise _bad(name, "Input should be a valid datetime", "datetime_parsing") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _figures(calls: Any, tokens_in: Any, tokens_out: Any, cost: Any) -> dict[str, Any]:
    tokens_in, tokens_out = int(tokens_in or 0), int(tokens_out or 0)
    return {
        "calls": int(calls or 0),
        "inputTokens": tokens_in,
        "outputTokens": tokens_out,
        "totalTokens": tokens_in + tokens_out,
        "cost": round(float(cost or 0), 8),
    }


@usage_blp.get("/usage")
@authenticated()
def usage() -> Response:
    actor = current_actor()
    group = request.args.get("group_by", "model")
    if group not in GROUPS:
        raise _bad("group_by", f"Input should be one of {', '.join(GROUPS)}", "enum")
    where: list[Any] = []
    if not (request.args.get("all") == "true" and allowed(actor, "admin")):
        where.append(_USAGE.c.user_id == str(actor.id))
    if request.args.get("flow_id"):
        where.append(_USAGE.c.flow_id == request.args["flow_id"])
    start, end = _time("start_time"), _time("end_time")
    if start is not None:
        where.append(_USAGE.c.created_at >= start)
    if end is not None:
        where.append(_USAGE.c.created_at <= end)
    sums = [
        sa.func.sum(_USAGE.c.calls),
        sa.func.sum(_USAGE.c.input_tokens),
        sa.func.sum(_USAGE.c.output_tokens),
        sa.func.sum(_USAGE.c.cost),
    ]
    keys: dict[str, Any] = {
        "model": _USAGE.c.model,
        "flow": _USAGE.c.flow_id,
        "user": _USAGE.c.user_id,
        "project": _USAGE.c.project_id,
        "day": sa.func.substr(sa.cast(_USAGE.c.created_at, sa.String), 1, 10),
    }
    key = keys[group].label("key")
    from service_observability.native import writer

    writer(appstate.engine()).flush()
    s = db.session()
    rows = s.execute(sa.select(key, *sums).where(*where).group_by(key).order_by(key)).all()
    total = s.execute(sa.select(*sums).where(*where)).one()
    return jsonify(
        {
            "groupBy": group,
            "rows": [{"key": r[0], **_figures(*r[1:])} for r in rows],
            "total": _figures(total[0], total[1], total[2], total[3]),
        }
    )


# --- budgets -------------------------------------------------------------------------------------------
def _shown(budget: budgets.BudgetRow) -> dict[str, Any]:
    so_far = budgets.used(appstate.engine(), budget)
    _start, end = budgets.period_bounds(budget.period)
    return {
        "id": budget.id,
        "scope": budget.scope,
        "scopeId": budget.scope_id,
        "metric": budget.metric,
        "period": budget.period,
        "limit": budget.limit,
        "used": so_far,
        "remaining": max(0.0, budget.limit - so_far),
        "resetsAt": end.isoformat().replace("+00:00", "Z"),
    }


def _mine(budget: budgets.BudgetRow, user_id: str) -> bool:
    if budget.scope == "user":
        return budget.scope_id == user_id
    column = _USAGE.c.flow_id if budget.scope == "flow" else _USAGE.c.project_id
    if budget.scope == "flow":
        found = appstate.hooks().find_flow(user_id=user_id, flow_id_or_name=budget.scope_id, public=False)
        if found is not None:
            return True
    hit = db.session().execute(
        sa.select(_USAGE.c.id).where(_USAGE.c.user_id == user_id, column == budget.scope_id).limit(1)
    )
    return hit.first() is not None


@usage_blp.get("/budgets")
@authenticated()
def list_budgets() -> Response:
    actor = current_actor()
    every = budgets.all_budgets(appstate.engine())
    if not allowed(actor, "admin"):
        every = [b for b in every if _mine(b, str(actor.id))]
    return jsonify([_shown(b) for b in every])


@usage_blp.post("/budgets")
@authenticated("superuser")
def create_budget() -> tuple[Response, int]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ValidationFailed([{"loc": ["body"], "msg": "Input should be a valid dictionary", "type": "dict_type"}])
    errors: list[dict[str, Any]] = []
    for name, choices in (("scope", budgets.SCOPES), ("metric", budgets.METRICS), ("period", budgets.PERIODS)):
        if body.get(name) not in choices:
            errors.append(
                {"loc": ["body", name], "msg": f"Input should be one of {', '.join(choices)}", "type": "enum"}
            )
    scope_id = body.get("scope_id")
    if not isinstance(scope_id, str) or not scope_id.strip() or len(scope_id) > 64:
        errors.append(
            {"loc": ["body", "scope_id"], "msg": "Input should be a user, project or flow id", "type": "string_type"}
        )
    limit = body.get("limit")
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 0:
        errors.append({"loc": ["body", "limit"], "msg": "Input should be a number >= 0", "type": "greater_than_equal"})
    if errors:
        raise ValidationFailed(errors)
    row = {
        "id": str(uuid.uuid4()),
        "scope": body["scope"],
        "scope_id": str(scope_id).strip(),
        "metric": body["metric"],
        "period": body["period"],
        "limit": float(cast(float, limit)),
    }
    s = db.session()
    s.execute(sa.insert(_BUDGET).values(**row))
    s.commit()
    budgets.forget()
    return jsonify(_shown(budgets.BudgetRow(**row))), 201


@usage_blp.delete("/budgets/<budget_id>")
@authenticated("superuser")
def delete_budget(budget_id: str) -> Response:
    s = db.session()
    result = cast(Any, s.execute(sa.delete(_BUDGET).where(_BUDGET.c.id == budget_id)))
    if not result.rowcount:
        raise ApiError(404, "Budget not found")
    s.commit()
    budgets.forget()
    return Response(status=204)
