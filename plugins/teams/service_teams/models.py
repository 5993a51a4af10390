"""Tables of the teams plugin (the reference's ``authz_*`` model; prefix ``teams_``). No foreign keys to
other plugins' tables: a deleted user's rows go through ``on_user_deleted``, a deleted resource's shares
are ignored (and cleaned by whoever deletes it when it asks)."""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class Team(Base):
    __tablename__ = "teams_team"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    team_name: Mapped[str] = mapped_column(sa.String(255), index=True)
    #: the administrative-domain slug, unique (often the SSO group name: members follow the group)
    adom_name: Mapped[str] = mapped_column(sa.String(255), unique=True, index=True)
    description: Mapped[str | None] = mapped_column(sa.Text, default=None)
    is_active: Mapped[bool] = mapped_column(sa.Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class TeamMember(Base):
    __tablename__ = "teams_member"
    __table_args__ = (sa.UniqueConstraint("team_id", "user_id", name="uq_teams_member_team_id_user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    team_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, sa.ForeignKey("teams_team.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    source: Mapped[str] = mapped_column(sa.String(16), default="manual")  # manual or sso
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Role(Base):
    __tablename__ = "teams_role"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True, index=True)
    description: Mapped[str | None] = mapped_column(sa.Text, default=None)
    is_system: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    permissions: Mapped[list[str]] = mapped_column(sa.JSON, default=list)
    parent_role_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    workspace_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)


class RoleAssignment(Base):
    __tablename__ = "teams_role_assignment"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    role_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, sa.ForeignKey("teams_role.id", ondelete="CASCADE"), index=True)
    domain_type: Mapped[str] = mapped_column(sa.String(16), default="global")  # global or project
    domain_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None, index=True)
    assigned_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    assigned_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)


class Share(Base):
    __tablename__ = "teams_share"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(sa.String(32), index=True)
    resource_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    scope: Mapped[str] = mapped_column(sa.String(16), index=True)  # team or user
    target_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None, index=True)
    permission_level: Mapped[str] = mapped_column(sa.String(16), default="read")
    created_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Generation(Base):
    """One row (``id`` 1): bumped by every change of memberships, roles and shares, read once per request
    by each process to drop its cached answers (``access.verbs``) when another process changed them."""

    __tablename__ = "teams_generation"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    value: Mapped[int] = mapped_column(sa.BigInteger, default=0)
