"""Tables of the triggers plugin (prefix ``triggers_``). Times are epoch seconds (floats): one type on
SQLite and PostgreSQL, compared and indexed without time-zone conversions."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base


class Execution(Base):
    """One run of a flow, on any surface; ``id`` is the run's id (``RunStarted.run_id``).

    ``status``: ``scheduled`` (a retry waiting for ``due_at``), ``queued``, ``running``, ``ok``, ``error``,
    ``paused``, ``cancelled``. ``request`` is the run request's JSON (None when it was too large to keep:
    such an execution cannot be retried).
    """

    __tablename__ = "triggers_execution"
    __table_args__ = (
        # the lists' order, newest first with the id breaking ties (migration triggers_0002): an owner's
        # executions of every flow; a flow's, every user's (who may read the flow sees all of its runs)
        sa.Index("ix_triggers_execution_owner_started", "user_id", "started_at", "id"),
        sa.Index("ix_triggers_execution_flow_started", "flow_id", "started_at", "id"),
        sa.Index("ix_triggers_execution_status_due", "status", "due_at"),
    )

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    user_id: Mapped[str] = mapped_column(sa.String(36))
    flow_id: Mapped[str] = mapped_column(sa.String(36))
    flow_name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    trigger: Mapped[str] = mapped_column(sa.String(32))
    status: Mapped[str] = mapped_column(sa.String(16))
    started_at: Mapped[float] = mapped_column(sa.Float)
    ended_at: Mapped[float | None] = mapped_column(sa.Float, default=None)
    duration_s: Mapped[float | None] = mapped_column(sa.Float, default=None)
    due_at: Mapped[float | None] = mapped_column(sa.Float, default=None)
    request: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    input_text: Mapped[str | None] = mapped_column(sa.Text, default=None)
    output_text: Mapped[str | None] = mapped_column(sa.Text, default=None)
    error: Mapped[str | None] = mapped_column(sa.Text, default=None)
    job_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    session_id: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    retry_of: Mapped[str | None] = mapped_column(sa.String(36), default=None)
    attempt: Mapped[int] = mapped_column(sa.Integer, default=1)
    source_id: Mapped[str | None] = mapped_column(sa.String(36), default=None)
    dedupe_key: Mapped[str | None] = mapped_column(sa.String(160), default=None, unique=True)
    followed_up: Mapped[bool] = mapped_column(sa.Boolean, default=False)


class Schedule(Base):
    """A flow run on a cron expression (in ``timezone``) or every ``interval_s`` seconds."""

    __tablename__ = "triggers_schedule"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    user_id: Mapped[str] = mapped_column(sa.String(36), index=True)
    flow_id: Mapped[str] = mapped_column(sa.String(36))
    name: Mapped[str] = mapped_column(sa.String(255))
    cron: Mapped[str | None] = mapped_column(sa.String(120), default=None)
    interval_s: Mapped[int | None] = mapped_column(sa.Integer, default=None)
    timezone: Mapped[str] = mapped_column(sa.String(64), default="UTC")
    input_value: Mapped[str | None] = mapped_column(sa.Text, default=None)
    tweaks: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    enabled: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    missed: Mapped[str] = mapped_column(sa.String(16), default="skip")
    next_fire_at: Mapped[float | None] = mapped_column(sa.Float, default=None, index=True)
    last_fired_at: Mapped[float | None] = mapped_column(sa.Float, default=None)
    created_at: Mapped[float] = mapped_column(sa.Float)
    updated_at: Mapped[float] = mapped_column(sa.Float)


class Webhook(Base):
    """A signed webhook trigger: ``public_id`` names its ingress route, ``secret`` (Fernet) signs deliveries."""

    __tablename__ = "triggers_webhook"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    public_id: Mapped[str] = mapped_column(sa.String(64), unique=True)
    user_id: Mapped[str] = mapped_column(sa.String(36), index=True)
    flow_id: Mapped[str] = mapped_column(sa.String(36))
    name: Mapped[str] = mapped_column(sa.String(255))
    secret: Mapped[str] = mapped_column(sa.Text)
    enabled: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    tolerance_s: Mapped[int] = mapped_column(sa.Integer, default=300)
    created_at: Mapped[float] = mapped_column(sa.Float)


class Policy(Base):
    """A flow's retry policy (failed scheduled and webhook runs) and error flow."""

    __tablename__ = "triggers_policy"

    flow_id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    user_id: Mapped[str] = mapped_column(sa.String(36), index=True)
    attempts: Mapped[int] = mapped_column(sa.Integer, default=1)
    backoff_s: Mapped[float] = mapped_column(sa.Float, default=10.0)
    error_flow_id: Mapped[str | None] = mapped_column(sa.String(36), default=None)
