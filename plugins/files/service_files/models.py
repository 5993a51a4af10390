"""Tables of the files plugin (prefix ``files_``): metadata only, bytes are in the storage."""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, new_id, utcnow


class StoredFile(Base):
    """One uploaded file. ``flow_id`` is set for the deprecated per-flow uploads.

    ``path`` is the logical path shown to clients (``<user_id>/<filename>`` or
    ``<flow_id>/<timestamp>_<filename>``), unique per owner; ``storage_key`` is
    where the bytes are (``<user_id>/<id>``), never built from a user's name.
    """

    __tablename__ = "files_file"
    __table_args__ = (
        sa.UniqueConstraint("user_id", "path", name="uq_files_file_user_id_path"),
        # a user's files in list order: migration files_0002
        sa.Index("ix_files_file_owner_created", "user_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    flow_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True, default=None)
    name: Mapped[str] = mapped_column(sa.String(255))
    path: Mapped[str] = mapped_column(sa.String(512))
    storage_key: Mapped[str] = mapped_column(sa.String(255))
    provider: Mapped[str] = mapped_column(sa.String(32), default="Local")
    size: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    content_type: Mapped[str] = mapped_column(sa.String(255), default="application/octet-stream")
    ephemeral: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
