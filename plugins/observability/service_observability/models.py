"""The observability plugin's table (prefix ``observability_``): one row per run's native trace.

A trace and its spans are one row (``spans`` is the span list as JSON): a run adds exactly one write,
batched with other runs' writes in the group commit. ``user_id`` is the flow owner the run is accounted
to (every lookup is scoped by it).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime


class Trace(Base):
    __tablename__ = "observability_trace"
    # the traces lists, newest first: an owner's of one flow, of every flow, and a shared flow's (its team's
    # view; migration observability_0003)
    __table_args__ = (
        sa.Index("ix_observability_trace_owner_flow_time", "user_id", "flow_id", "start_time"),
        sa.Index("ix_observability_trace_owner_time", "user_id", "start_time"),
        sa.Index("ix_observability_trace_flow_time", "flow_id", "start_time"),
    )

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)  # the run id
    user_id: Mapped[str] = mapped_column(sa.String(64))
    flow_id: Mapped[str] = mapped_column(sa.String(64))
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    status: Mapped[str] = mapped_column(sa.String(16), default="unset")
    surface: Mapped[str] = mapped_column(sa.String(32), default="")
    session_id: Mapped[str] = mapped_column(sa.String(255), default="")
    start_time: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    end_time: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=None)
    total_latency_ms: Mapped[int] = mapped_column(sa.Integer, default=0)
    total_tokens: Mapped[int] = mapped_column(sa.Integer, default=0)
    input: Mapped[Any] = mapped_column(sa.JSON, default=None)
    output: Mapped[Any] = mapped_column(sa.JSON, default=None)
    error: Mapped[str | None] = mapped_column(sa.Text, default=None)
    spans: Mapped[list[Any]] = mapped_column(sa.JSON, default=list)


class Usage(Base):
    """Model calls and tokens of one run for one model (written with the run's trace, in the same commit)."""

    __tablename__ = "observability_usage"
    __table_args__ = (
        sa.Index("ix_observability_usage_owner_time", "user_id", "created_at"),
        sa.Index("ix_observability_usage_flow_time", "flow_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(sa.String(64))
    user_id: Mapped[str] = mapped_column(sa.String(64))
    flow_id: Mapped[str] = mapped_column(sa.String(64))
    project_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    provider: Mapped[str] = mapped_column(sa.String(64))
    model: Mapped[str] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    calls: Mapped[int] = mapped_column(sa.Integer, default=0)
    input_tokens: Mapped[int] = mapped_column(sa.Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(sa.Integer, default=0)
    cost: Mapped[float] = mapped_column(sa.Float, default=0.0)


class Budget(Base):
    """A limit on tokens, calls or cost per day or month, for a user, a project or a flow (set by an admin)."""

    __tablename__ = "observability_budget"

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(sa.String(16))  # user, project, flow
    scope_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    metric: Mapped[str] = mapped_column(sa.String(16))  # tokens, calls, cost
    period: Mapped[str] = mapped_column(sa.String(16))  # day, month
    limit: Mapped[float] = mapped_column(sa.Float)
