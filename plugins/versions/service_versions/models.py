"""Tables of the versions plugin (prefix ``versions_``); ids of flows and users are plain UUIDs.

A version's graph is stored as zlib-compressed canonical JSON (sorted keys, no spaces): a flow
saved a thousand times holds at most ``max_flow_version_entries_per_flow`` compressed copies
(coalesced autosaves replace the newest), typically a tenth of the JSON's size each.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, new_id, utcnow


class FlowVersion(Base):
    __tablename__ = "versions_flow_version"
    __table_args__ = (sa.UniqueConstraint("flow_id", "version_number", name="uq_versions_flow_version_number"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    #: the flow's owner (what every lookup is scoped by)
    user_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True)
    #: who saved it
    author_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    version_number: Mapped[int] = mapped_column(sa.Integer)
    description: Mapped[str | None] = mapped_column(sa.String(500), default=None)
    #: zlib of the canonical JSON of the graph
    data_z: Mapped[bytes] = mapped_column(sa.LargeBinary)
    #: sha256 of the canonical JSON (an unchanged graph adds no version)
    digest: Mapped[str] = mapped_column(sa.String(64))
    #: bytes of the canonical JSON
    size: Mapped[int] = mapped_column(sa.Integer, default=0)
    #: an automatic (autosave) version, which later saves by its author may coalesce into
    auto: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    #: the flow's ``updated_at`` when this graph was saved (names the version in the run service's cache)
    saved_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class Publication(Base):
    """The version API callers run, one row per published flow."""

    __tablename__ = "versions_publication"

    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    version_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    user_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True)
    published_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    published_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class AuditEvent(Base):
    """One audit entry (append-only; the reference 1.13's ``audit_events`` members)."""

    __tablename__ = "versions_audit_event"
    __table_args__ = (sa.Index("ix_versions_audit_event_time", "timestamp", "id"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    timestamp: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    action: Mapped[str] = mapped_column(sa.String(128), index=True)
    operation: Mapped[str] = mapped_column(sa.String(16))
    event_type: Mapped[str] = mapped_column(sa.String(16), default="action")
    result: Mapped[str] = mapped_column(sa.String(16), default="succeeded")
    error_code: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    request_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid)
    resource_type: Mapped[str] = mapped_column(sa.String(32), index=True)
    resource_id: Mapped[str | None] = mapped_column(sa.String(64), index=True, default=None)
    resource_name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    user_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True, default=None)
    actor_type: Mapped[str] = mapped_column(sa.String(16), default="user")
    actor_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    details: Mapped[dict[str, Any]] = mapped_column(sa.JSON, default=dict)
