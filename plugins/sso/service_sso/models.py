"""Tables of the SSO plugin (prefix ``sso_``). No foreign key to the accounts plugin's table: the link
is dropped by ``on_user_deleted`` (plugins own their tables and migrations separately)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class SsoIdentity(Base):
    """An identity provider's subject linked to one account (the reference's ``SSOUserProfile``)."""

    __tablename__ = "sso_identity"
    __table_args__ = (sa.UniqueConstraint("provider", "subject", name="uq_sso_identity_provider_subject"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    provider: Mapped[str] = mapped_column(sa.String(64))
    subject: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    email: Mapped[str | None] = mapped_column(sa.String(320), default=None)
    name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    groups: Mapped[list[Any] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_login_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class SsoPending(Base):
    """A started sign-in: the ``state`` sent to the provider, with the nonce and PKCE verifier (single use)."""

    __tablename__ = "sso_pending"

    state: Mapped[str] = mapped_column(sa.String(128), primary_key=True)
    nonce: Mapped[str] = mapped_column(sa.String(128))
    code_verifier: Mapped[str] = mapped_column(sa.String(128))
    next_path: Mapped[str | None] = mapped_column(sa.String(512), default=None)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
