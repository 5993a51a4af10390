"""Tables of the accounts plugin (prefix ``accounts_``)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class User(Base):
    __tablename__ = "accounts_user"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(sa.String(255), unique=True, index=True)
    password_hash: Mapped[str] = mapped_column(sa.String(255))
    profile_image: Mapped[str | None] = mapped_column(sa.String(512), default=None)
    store_api_key: Mapped[str | None] = mapped_column(sa.String(512), default=None)
    is_active: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    is_superuser: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    create_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    last_login_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=None)
    optins: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    #: in every JWT as ``ver``; bumped by a password change or a deactivation, which ends older tokens
    token_version: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")


class RevokedSession(Base):
    """A session ended by logout: its tokens (``sid`` claim) are refused until they would have expired."""

    __tablename__ = "accounts_revoked_session"

    sid: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("accounts_user.id", ondelete="CASCADE"), index=True
    )
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)


class RefreshFamily(Base):
    """The refresh tokens of one sign-in (``sid``): only ``current_jti`` may refresh; ``previous_jti`` is the
    one it replaced (honoured for ``SERVICE_REFRESH_REUSE_GRACE_SECONDS`` after ``rotated_at``, two tabs
    refreshing at once); any other token of the family presented again is a reuse, which revokes the sid."""

    __tablename__ = "accounts_refresh_family"

    sid: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("accounts_user.id", ondelete="CASCADE"), index=True
    )
    current_jti: Mapped[str] = mapped_column(sa.String(64))
    previous_jti: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    rotated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)


class ApiKey(Base):
    __tablename__ = "accounts_api_key"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    #: SHA-256 of the key: keys are 256-bit random, so a fast hash is enough and lookups stay O(1).
    key_hash: Mapped[str] = mapped_column(sa.String(64), unique=True, index=True)
    key_prefix: Mapped[str] = mapped_column(sa.String(16))
    user_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("accounts_user.id", ondelete="CASCADE"), index=True
    )
    total_uses: Mapped[int] = mapped_column(sa.Integer, default=0)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=None)
    is_active: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=None)
