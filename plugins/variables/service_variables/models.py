"""Tables of the variables plugin (prefix ``variables_``)."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UserOwned, unique_name_per_user, utcnow


class Variable(UserOwned, Base):
    """A user's variable; ``value`` is a Fernet token, never the clear value."""

    __tablename__ = "variables_variable"
    __table_args__ = unique_name_per_user("variables_variable")

    name: Mapped[str] = mapped_column(sa.String(255))
    value: Mapped[str] = mapped_column(sa.Text)
    type: Mapped[str] = mapped_column(sa.String(32), default="Credential")
    default_fields: Mapped[list[str] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
