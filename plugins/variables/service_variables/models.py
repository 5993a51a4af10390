"""Tables of the variables plugin (prefix ``variables_``)."""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, new_id, utcnow


class Variable(Base):
    """A user's variable; ``value`` is a Fernet token, never the clear value."""

    __tablename__ = "variables_variable"
    __table_args__ = (sa.UniqueConstraint("user_id", "name", name="uq_variables_variable_user_id_name"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    value: Mapped[str] = mapped_column(sa.Text)
    type: Mapped[str] = mapped_column(sa.String(32), default="Credential")
    default_fields: Mapped[list[str] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
