"""Tables of the flows plugin (prefix ``flows_``).

``user_id`` is a plain UUID column (no foreign key into the accounts plugin);
rows of a deleted user are removed through ``on_user_deleted``. Names and
endpoint names are unique per user (NULLs never clash, so rows without an
owner or without an endpoint name never collide).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UserOwned, new_id, unique_name_per_user, utcnow


class Folder(UserOwned, Base):
    """A project (the reference calls it a folder)."""

    __tablename__ = "flows_folder"
    __table_args__ = (
        *unique_name_per_user("flows_folder"),
        # a user's projects in list order: migration flows_0004
        sa.Index("ix_flows_folder_owner_created", "user_id", "created_at", "id"),
    )

    name: Mapped[str] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.Text, default=None)
    parent_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    auth_settings: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class Flow(Base):
    __tablename__ = "flows_flow"
    __table_args__ = (
        sa.UniqueConstraint("user_id", "name", name="uq_flows_flow_user_id_name"),
        sa.UniqueConstraint("user_id", "endpoint_name", name="uq_flows_flow_user_id_endpoint_name"),
        # a project's page order (updated_at DESC, id): migration flows_0002
        sa.Index("ix_flows_flow_owner_folder_updated", "user_id", "folder_id", sa.text("updated_at DESC"), "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    folder_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True, default=None)
    workspace_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    name: Mapped[str] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.Text, default=None)
    data: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    endpoint_name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    icon: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    icon_bg_color: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    gradient: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    is_component: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    locked: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    webhook: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    mcp_enabled: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    action_name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    action_description: Mapped[str | None] = mapped_column(sa.Text, default=None)
    tags: Mapped[list[str] | None] = mapped_column(sa.JSON, default=None)
    access_type: Mapped[str] = mapped_column(sa.String(16), default="PRIVATE")
    flow_type: Mapped[str] = mapped_column(sa.String(16), default="workflow")
    a2a_enabled: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    a2a_card_overrides: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    #: rotated by every write that changes ``data``; a save naming an older one answers 409 (flows_0005)
    version_token: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=new_id)
    #: who last changed ``data`` (an account id, no foreign key)
    last_modified_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)


class Share(Base):
    """A canonical share of a flow: for flows only ``execute`` at ``PUBLIC`` scope (one per flow).

    The anonymous grant of a flow is decided by :func:`service_flows.shares.public_grant` from this
    row and the legacy settings (``access_type``, the A2A folder's ``auth_type``).
    """

    __tablename__ = "flows_share"
    __table_args__ = (sa.UniqueConstraint("flow_id", "scope", name="uq_flows_share_flow_id_scope"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)  # the flow's owner, who shared it
    scope: Mapped[str] = mapped_column(sa.String(16), default="PUBLIC")
    permission_level: Mapped[str] = mapped_column(sa.String(16), default="execute")
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
