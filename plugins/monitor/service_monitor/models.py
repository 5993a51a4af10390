"""Tables of the monitor plugin (prefix ``monitor_``). Every row carries its owner's ``user_id``."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class Message(Base):
    __tablename__ = "monitor_message"
    __table_args__ = (
        sa.Index("ix_monitor_message_owner_flow_session", "user_id", "flow_id", "session_id", "timestamp"),
        # a flow's messages in time order (paged lists): migration monitor_0002
        sa.Index("ix_monitor_message_owner_flow_time", "user_id", "flow_id", "timestamp", "id"),
        # no index on user_id alone: both above start with it (migration monitor_0003 dropped it)
        # a shared flow's messages of every user in time order (the team view): migration monitor_0005
        sa.Index("ix_monitor_message_flow_time", "flow_id", "timestamp", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    flow_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    run_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    sender: Mapped[str] = mapped_column(sa.String(64), default="")
    sender_name: Mapped[str] = mapped_column(sa.String(255), default="")
    session_id: Mapped[str] = mapped_column(sa.String(255), default="")
    context_id: Mapped[str] = mapped_column(sa.String(255), default="")
    text: Mapped[str] = mapped_column(sa.Text, default="")
    category: Mapped[str] = mapped_column(sa.String(64), default="message")
    files: Mapped[list[str]] = mapped_column(sa.JSON, default=list)
    edit: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    error: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    duration: Mapped[float | None] = mapped_column(sa.Float, default=None)
    properties: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
    content_blocks: Mapped[list[Any]] = mapped_column(sa.JSON, default=list)
    session_metadata: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)


class VertexBuild(Base):
    __tablename__ = "monitor_vertex_build"
    __table_args__ = (
        sa.Index("ix_monitor_vertex_build_owner_flow", "user_id", "flow_id", "timestamp"),
        # a shared flow's builds of every user in time order (the team view): migration monitor_0006
        sa.Index("ix_monitor_vertex_build_flow_time", "flow_id", "timestamp"),
    )

    build_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    id: Mapped[str] = mapped_column(sa.String(255))  # the vertex id
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    job_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    valid: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    data: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
    artifacts: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
    params: Mapped[Any] = mapped_column(sa.JSON, default=None)


class Transaction(Base):
    __tablename__ = "monitor_transaction"
    # a flow's transactions newest first, keys from the index alone: migration monitor_0004
    __table_args__ = (
        sa.Index("ix_monitor_transaction_owner_flow_time", "user_id", "flow_id", "timestamp", "id"),
        # a shared flow's transactions of every user, newest first (the team view): migration monitor_0006
        sa.Index("ix_monitor_transaction_flow_time", "flow_id", "timestamp", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    vertex_id: Mapped[str] = mapped_column(sa.String(255))
    target_id: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    inputs: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
    outputs: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
    status: Mapped[str] = mapped_column(sa.String(32), default="success")
    error: Mapped[str | None] = mapped_column(sa.Text, default=None)
