"""The plugin's table: prefixed by the plugin's name."""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base


class Greeting(Base):
    __tablename__ = "hello_greeting"

    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    count: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)
