"""Extension lifecycle events, kept per user (the reloading superuser, the owners of affected flows)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class ExtensionEvent(Base):
    __tablename__ = "extensions_event"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, nullable=False, index=True)
    type: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    #: UTC epoch seconds (the ``since`` cursor compares with it)
    timestamp: Mapped[float] = mapped_column(sa.Float, nullable=False, index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), nullable=False, default=utcnow)
    payload: Mapped[dict[str, Any]] = mapped_column(sa.JSON, nullable=False)
