"""Schedules: a flow run on a cron expression in a time zone, or every N seconds.

Each schedule row holds its next fire time. A tick (:func:`tick`, every second in every process that
runs the ticker) reads the schedules that are due (one indexed query) and, for each, moves
``next_fire_at`` from the due time to the following one with a compare-and-set ``UPDATE``: the one
process whose update changed the row fires the tick, in the same transaction as the execution row it
queues, so a tick fires exactly once whatever the number of web and worker processes (the database is
the lease). After downtime, a schedule more than one period late either skips the missed ticks
(``missed: skip``) or runs once for all of them (``run_once``), then goes on from now.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
import zoneinfo
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from croniter import CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError, croniter
from flask import Flask

from core import appstate
from core.errors import ApiError, validation_error
from service_triggers import executions
from service_triggers.dbx import tx
from service_triggers.models import Execution, Schedule

_S: sa.Table = Schedule.__table__  # type: ignore[assignment]
_T: sa.Table = Execution.__table__  # type: ignore[assignment]
MISSED = ("skip", "run_once")
#: a due schedule later than this past its fire time (and more than its period) counts as missed
GRACE_S = 60.0


class NotFound(ApiError):
    def __init__(self) -> None:
        super().__init__(404, "Schedule not found")


def check_timezone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise validation_error(["body", "timezone"], f"Unknown time zone: {name}", "value_error") from None


def check_cron(expr: str) -> str:
    if not croniter.is_valid(expr) or len(expr.split()) not in (5, 6):
        raise validation_error(["body", "cron"], f"Invalid cron expression: {expr}", "value_error")
    return expr


def next_after(cron: str | None, interval_s: int | None, tz: str, after: float) -> float | None:
    """The first fire time strictly after ``after`` (epoch seconds)."""
    if interval_s:
        return (int(after // interval_s) + 1) * float(interval_s)  # aligned: every process computes the same
    if not cron:
        return None
    zone = zoneinfo.ZoneInfo(tz)
    try:
        it = croniter(cron, dt.datetime.fromtimestamp(after, zone))
        return float(it.get_next(float))
    except (CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError):
        return None


def next_times(m: Mapping[str, Any], count: int = 5, after: float | None = None) -> list[float]:
    times: list[float] = []
    t = time.time() if after is None else after
    for _ in range(count):
        nxt = next_after(m["cron"], m["interval_s"], m["timezone"], t)
        if nxt is None:
            break
        times.append(nxt)
        t = nxt
    return times


def iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat()


def out(row: Any) -> dict[str, Any]:
    m = row._mapping if hasattr(row, "_mapping") else row
    return {
        "id": m["id"],
        "flow_id": m["flow_id"],
        "name": m["name"],
        "cron": m["cron"],
        "interval_s": m["interval_s"],
        "timezone": m["timezone"],
        "input_value": m["input_value"],
        "tweaks": m["tweaks"],
        "enabled": m["enabled"],
        "missed": m["missed"],
        "next_fire_at": iso(m["next_fire_at"]) if m["enabled"] else None,
        "last_fired_at": iso(m["last_fired_at"]),
        "next_fire_times": [iso(t) for t in next_times(m)] if m["enabled"] else [],
    }


# --- CRUD (owner-scoped) ----------------------------------------------------------------------------
def _check_flow(app: Flask, user_id: str, flow_id: str) -> Any:
    flow = appstate.hooks(app).find_flow(user_id=user_id, flow_id_or_name=str(flow_id), public=False)
    if flow is None:
        raise ApiError(404, f"Flow identifier {flow_id} not found")
    return flow


def _validate(values: dict[str, Any]) -> None:
    if bool(values.get("cron")) == bool(values.get("interval_s")):
        raise validation_error(["body", "cron"], "Give either a cron expression or an interval", "value_error")
    if values.get("cron"):
        check_cron(values["cron"])
    check_timezone(values.get("timezone") or "UTC")
    if values.get("missed", "skip") not in MISSED:
        raise validation_error(["body", "missed"], "missed must be skip or run_once", "value_error")


def create(app: Flask, user_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    flow = _check_flow(app, user_id, body["flow_id"])
    now = time.time()
    values = {
        "id": str(uuid.uuid4()),
        "user_id": user_id,
        "flow_id": flow.id,
        "name": body.get("name") or f"Schedule of {flow.name or flow.id}",
        "cron": body.get("cron"),
        "interval_s": body.get("interval_s"),
        "timezone": body.get("timezone") or "UTC",
        "input_value": body.get("input_value"),
        "tweaks": body.get("tweaks"),
        "enabled": bool(body.get("enabled", True)),
        "missed": body.get("missed") or "skip",
        "last_fired_at": None,
        "created_at": now,
        "updated_at": now,
    }
    _validate(values)
    values["next_fire_at"] = next_after(values["cron"], values["interval_s"], values["timezone"], now)
    with tx() as conn:
        conn.execute(_S.insert().values(**values))
    return out(values)


def read(app: Flask, user_id: str | None, schedule_id: str) -> Any:
    """The row ``schedule_id`` of ``user_id`` (None: of any user; the caller checks access to its flow)."""
    with tx() as conn:
        query = sa.select(_S).where(_S.c.id == schedule_id)
        if user_id is not None:
            query = query.where(_S.c.user_id == user_id)
        row = conn.execute(query).first()
    if row is None:
        raise NotFound()
    return row


def list_for(app: Flask, user_id: str | None, flow_id: str | None = None) -> list[dict[str, Any]]:
    """``user_id``'s rows, or (None) every user's of ``flow_id`` (the caller may read that flow)."""
    query = sa.select(_S) if user_id is None else sa.select(_S).where(_S.c.user_id == user_id)
    if flow_id:
        query = query.where(_S.c.flow_id == flow_id)
    with tx() as conn:
        return [out(r) for r in conn.execute(query.order_by(_S.c.created_at))]


def update(app: Flask, user_id: str, schedule_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    values = dict(read(app, user_id, schedule_id)._mapping)
    for key in ("name", "cron", "interval_s", "timezone", "input_value", "tweaks", "enabled", "missed"):
        if key in body:
            values[key] = body[key]
    if "cron" in body and body["cron"] and "interval_s" not in body:
        values["interval_s"] = None
    if "interval_s" in body and body["interval_s"] and "cron" not in body:
        values["cron"] = None
    _validate(values)
    now = time.time()
    values["updated_at"] = now
    values["next_fire_at"] = next_after(values["cron"], values["interval_s"], values["timezone"], now)
    with tx() as conn:
        conn.execute(_S.update().where(_S.c.id == schedule_id).values(**values))
    return out(values)


def delete(app: Flask, user_id: str, schedule_id: str) -> None:
    read(app, user_id, schedule_id)
    with tx() as conn:
        conn.execute(_S.delete().where(_S.c.id == schedule_id))


def delete_user_rows(conn: Any, user_id: str) -> None:
    conn.execute(_S.delete().where(_S.c.user_id == user_id))


# --- the tick ---------------------------------------------------------------------------------------
def tick(app: Flask, now: float | None = None) -> int:
    """Fire every due schedule this process wins; returns how many it fired."""
    now = time.time() if now is None else now
    with tx() as conn:
        due = conn.execute(sa.select(_S).where(_S.c.enabled.is_(True), _S.c.next_fire_at <= now).limit(500)).all()
    fired = 0
    for schedule in due:
        m = schedule._mapping
        planned = float(m["next_fire_at"])
        following = next_after(m["cron"], m["interval_s"], m["timezone"], planned)
        late = following is not None and following <= now and now - planned > GRACE_S
        if late:  # downtime: the ticks missed since are skipped or run once, then on from now
            following = next_after(m["cron"], m["interval_s"], m["timezone"], now)
        fire = not late or m["missed"] == "run_once"
        row = None
        with tx() as conn:
            won = conn.execute(
                _S.update()
                .where(_S.c.id == m["id"], _S.c.next_fire_at == planned)
                .values(next_fire_at=following, last_fired_at=planned if fire else m["last_fired_at"])
            ).rowcount  # type: ignore[attr-defined]
            if won and fire:
                request = executions.request_for(m["flow_id"], m["user_id"], value=m["input_value"], tweaks=m["tweaks"])
                row = executions.new_row(
                    user_id=m["user_id"],
                    flow_id=m["flow_id"],
                    flow_name=None,
                    trigger="schedule",
                    request=request,
                    source_id=m["id"],
                    dedupe_key=f"schedule:{m['id']}:{planned:.3f}",
                )
                conn.execute(_T.insert(), [row])
        if row is not None:
            executions.start(app, row)
            fired += 1
    return fired
