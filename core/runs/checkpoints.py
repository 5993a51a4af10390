"""Checkpoints of suspended runs, in the database: any process (web or worker) resumes them.

A run pauses when a component calls ``Component.suspend(request, state)``
(human in the loop: an agent's tool call waiting for approval). The run
service then writes one row here: the request that ran (JSON), the graph it
ran (flow JSON), the completed vertices' results, and the pending request.
:func:`claim` takes a pending checkpoint for its owner exactly once (a second
answer is a 409), :func:`expire` ends the ones nobody answered in time.

Rows live in the core's own table ``runs_checkpoint`` (Alembic branch ``core``).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core import db
from core.appstate import state
from core.engine.result_codec import encode_results
from core.errors import ApiError

if TYPE_CHECKING:
    from flask import Flask

    from core.engine import RunResult
    from core.runs.service import PreparedRun, RunInput

PENDING, RESUMED, EXPIRED = "pending", "resumed", "expired"


class Checkpoint(db.Base):
    __tablename__ = "runs_checkpoint"

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)  # the request id
    owner: Mapped[str] = mapped_column(sa.String(64), index=True)  # job owner (user id or public principal)
    flow_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    surface: Mapped[str] = mapped_column(sa.String(32))
    job_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True, index=True)
    vertex_id: Mapped[str] = mapped_column(sa.String(255))
    status: Mapped[str] = mapped_column(sa.String(16), default=PENDING)
    created_at: Mapped[dt.datetime] = mapped_column(db.UTCDateTime(), default=db.utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(db.UTCDateTime())
    resumed_job_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    request: Mapped[str] = mapped_column(sa.Text)  # what is asked (JSON)
    data: Mapped[str] = mapped_column(sa.Text)  # run request, graph, results, component state (JSON)


def _owner(prepared: PreparedRun) -> str:
    req = prepared.request
    return str(req.user_id if not req.public else f"public:{req.principal}")


def save(
    prepared: PreparedRun, result: RunResult, item: RunInput, *, job_id: str | None, app: Flask | None = None
) -> dict[str, Any]:
    """Write the checkpoint of a run that paused; returns ``{checkpoint_id, vertex_id, request_id, request}``."""
    paused = result.suspended or {}
    req = prepared.request
    settings = state(app).settings
    now = db.utcnow()
    body = {
        "request": req.to_json(),
        "input": {"value": item.value, "type": item.type, "components": item.components, "session": item.session},
        "flow": {"id": prepared.flow.id, "name": prepared.name, "data": prepared.flow.data},
        "results": encode_results(result),
        "session_id": result.session_id,
        "vertex_id": paused["vertex_id"],
        "state": paused.get("state") or {},
    }
    row = Checkpoint(
        id=str(paused["request_id"]),
        owner=_owner(prepared),
        flow_id=prepared.flow.id,
        surface=req.surface,
        job_id=job_id,
        vertex_id=str(paused["vertex_id"]),
        status=PENDING,
        created_at=now,
        expires_at=now + dt.timedelta(seconds=settings.run_checkpoint_ttl_seconds),
        request=json.dumps(paused.get("request") or {}),
        data=json.dumps(body),
    )
    with db.transaction() as session:
        session.add(row)
    return {
        "checkpoint_id": row.id,
        "vertex_id": row.vertex_id,
        "request_id": row.id,
        "request": paused.get("request") or {},
        "expires_at": row.expires_at.isoformat(),
    }


def get(checkpoint_id: str, owner: str) -> Checkpoint | None:
    """The owner's checkpoint (another owner's is None, like a missing one)."""
    row = db.session().get(Checkpoint, checkpoint_id)
    return row if row is not None and row.owner == owner else None


def pending(owner: str, flow_id: str | None = None, limit: int = 100) -> list[Checkpoint]:
    """The owner's checkpoints still waiting for an answer, oldest first."""
    now = db.utcnow()
    query = sa.select(Checkpoint).where(
        Checkpoint.owner == owner, Checkpoint.status == PENDING, Checkpoint.expires_at > now
    )
    if flow_id:
        query = query.where(Checkpoint.flow_id == flow_id)
    return list(db.session().scalars(query.order_by(Checkpoint.created_at, Checkpoint.id).limit(limit)))


def claim(checkpoint_id: str, owner: str, resumed_job_id: str, *, paused_job_id: str | None = None) -> dict[str, Any]:
    """Take the owner's pending checkpoint exactly once; returns its stored data.

    ``resumed_job_id`` is recorded as the job that continues the run; ``paused_job_id`` becomes the
    checkpoint's ``job_id`` when it has none (a run paused in a request, under an id of the surface's).

    404 for a missing or foreign checkpoint, 409 when it was already answered,
    410 when it expired. The compare-and-set is one UPDATE, so two processes
    answering at once cannot both win.
    """
    session = db.session()
    row = get(checkpoint_id, owner)
    if row is None:
        raise ApiError(404, f"Pending request {checkpoint_id} not found")
    if row.status == RESUMED:
        raise ApiError(409, f"Request {checkpoint_id} was already answered")
    if row.status == EXPIRED or row.expires_at <= db.utcnow():
        raise ApiError(410, f"Request {checkpoint_id} expired")
    data = json.loads(row.data)
    values: dict[str, Any] = {"status": RESUMED, "resumed_job_id": resumed_job_id}
    if row.job_id is None and paused_job_id:
        values["job_id"] = paused_job_id
    won = session.execute(  # type: ignore[attr-defined]
        sa.update(Checkpoint).where(Checkpoint.id == checkpoint_id, Checkpoint.status == PENDING).values(**values)
    ).rowcount
    session.commit()
    if not won:
        raise ApiError(409, f"Request {checkpoint_id} was already answered")
    return data


def expire(now: dt.datetime | None = None) -> int:
    """Mark every pending checkpoint past its expiry ``expired``; returns how many."""
    with db.transaction() as session:
        count = session.execute(  # type: ignore[attr-defined]
            sa.update(Checkpoint)
            .where(Checkpoint.status == PENDING, Checkpoint.expires_at <= (now or db.utcnow()))
            .values(status=EXPIRED)
        ).rowcount
    return int(count or 0)
