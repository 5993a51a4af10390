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
    __table_args__ = (sa.Index("ix_observability_trace_owner_flow_time", "user_id", "flow_id", "start_time"),)

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
