"""Tables of the A2A plugin (prefix ``a2a_``): the tasks, so any process answers ``tasks/get``."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, utcnow


class Task(Base):
    """One A2A task: a run of an agent flow as a job, and what the caller may read of it."""

    __tablename__ = "a2a_task"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    flow_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    owner_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)  # the flow's owner
    context_id: Mapped[str] = mapped_column(sa.String(255))
    job_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    public: Mapped[bool] = mapped_column(sa.Boolean, default=False)  # started by an anonymous caller
    state: Mapped[str] = mapped_column(sa.String(32), default="submitted")
    #: the agent's status message (failures: the sanitized reason)
    status_text: Mapped[str | None] = mapped_column(sa.Text, default=None)
    #: the answer (the artifact's text) once completed
    answer: Mapped[str | None] = mapped_column(sa.Text, default=None)
    #: the user message that started the task (v0.3 JSON), for ``history``
    request: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    #: ``input-required``: the run's checkpoint the next message of the task resumes, and what it asks
    checkpoint_id: Mapped[str | None] = mapped_column(sa.String(64), default=None)
    input_request: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
