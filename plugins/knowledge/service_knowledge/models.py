"""Tables of the knowledge plugin (prefix ``knowledge_``).

Vectors live in the service database next to their text (``knowledge_chunk.embedding``,
float32 bytes): SQLite in the embedded default, PostgreSQL in scale-out, so every web
process and worker reaches them without another server. See ``docs/plugins/knowledge.md``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UserOwned, new_id, unique_name_per_user, utcnow


class KnowledgeBase(UserOwned, Base):
    __tablename__ = "knowledge_base"
    __table_args__ = unique_name_per_user("knowledge_base")

    name: Mapped[str] = mapped_column(sa.String(100))
    embedding_provider: Mapped[str] = mapped_column(sa.String(100), default="Unknown")
    embedding_model: Mapped[str] = mapped_column(sa.String(255), default="Unknown")
    dimensions: Mapped[int] = mapped_column(sa.Integer, default=0)
    chunk_size: Mapped[int] = mapped_column(sa.Integer, default=1000)
    chunk_overlap: Mapped[int] = mapped_column(sa.Integer, default=200)
    separator: Mapped[str] = mapped_column(sa.String(32), default="\n")
    status: Mapped[str] = mapped_column(sa.String(20), default="empty")
    failure_reason: Mapped[str | None] = mapped_column(sa.Text, default=None)
    last_job_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    revision: Mapped[int] = mapped_column(sa.Integer, default=0)
    column_config: Mapped[Any] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class Chunk(Base):
    """One chunk of a source (an uploaded file or a text), with its embedding."""

    __tablename__ = "knowledge_chunk"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    kb_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, sa.ForeignKey("knowledge_base.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(sa.String(255))
    source_type: Mapped[str] = mapped_column(sa.String(16))
    position: Mapped[int] = mapped_column(sa.Integer)
    text: Mapped[str] = mapped_column(sa.Text)
    characters: Mapped[int] = mapped_column(sa.Integer)
    words: Mapped[int] = mapped_column(sa.Integer)
    size: Mapped[int] = mapped_column(sa.Integer)
    meta: Mapped[Any] = mapped_column(sa.JSON, default=None)
    embedding: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class Pending(Base):
    """A source waiting for its ingestion job: an uploaded file's id, or text received with the request."""

    __tablename__ = "knowledge_pending"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    kb_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, sa.ForeignKey("knowledge_base.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(sa.String(255))
    source_type: Mapped[str] = mapped_column(sa.String(16))
    file_ref: Mapped[str | None] = mapped_column(sa.String(512), default=None)
    text: Mapped[str | None] = mapped_column(sa.Text, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
