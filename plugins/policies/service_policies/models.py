"""Tables of the policies plugin (prefix ``policies_``).

* ``policies_policy``: one row per policy (``components``, ``templates``,
  ``providers``), its complete item list and a revision bumped on every
  replacement (processes compare revisions to refresh their snapshot).
* ``policies_change``: the change log (who, when, before, after).
* ``policies_flow`` / ``policies_flow_component``: the component-usage index,
  one row per stored flow and one per (flow, canonical component key), kept
  current by the flows plugin's ``on_flow_changed`` notifications, so counting
  usage is a ``GROUP BY`` instead of parsing every flow's JSON.
* ``policies_meta``: small facts such as "the usage index is complete".
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UTCDateTime, new_id, utcnow


class Policy(Base):
    __tablename__ = "policies_policy"

    kind: Mapped[str] = mapped_column(sa.String(32), primary_key=True)
    items: Mapped[list[str]] = mapped_column(sa.JSON, default=list)
    revision: Mapped[int] = mapped_column(sa.Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_by: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)


class PolicyChange(Base):
    __tablename__ = "policies_change"
    __table_args__ = (sa.Index("ix_policies_change_at", "at"),)

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(sa.String(32))
    actor_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    actor_name: Mapped[str | None] = mapped_column(sa.String(255), default=None)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    before: Mapped[list[str]] = mapped_column(sa.JSON, default=list)
    after: Mapped[list[str]] = mapped_column(sa.JSON, default=list)
    revision: Mapped[int] = mapped_column(sa.Integer, default=0)


class FlowEntry(Base):
    __tablename__ = "policies_flow"

    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, default=None)
    name: Mapped[str] = mapped_column(sa.String(255), default="")


class FlowComponent(Base):
    __tablename__ = "policies_flow_component"
    __table_args__ = (sa.Index("ix_policies_flow_component_component", "component"),)

    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    component: Mapped[str] = mapped_column(sa.String(255), primary_key=True)


class Meta(Base):
    __tablename__ = "policies_meta"

    key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    value: Mapped[Any] = mapped_column(sa.JSON, default=None)
