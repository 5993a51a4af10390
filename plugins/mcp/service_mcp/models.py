"""Tables of the MCP plugin (prefix ``mcp_``).

* ``mcp_project_secret``: a project's OAuth client secret, Fernet-encrypted (``core.secrets``);
  the project row (flows plugin) never holds it, and no response returns it.
* ``mcp_server``: a user's MCP server configs for the ``MCP Tools`` component; ``secret`` holds
  the encrypted JSON of header values and environment variables.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Base, UserOwned, unique_name_per_user, utcnow


class ProjectSecret(Base):
    __tablename__ = "mcp_project_secret"

    project_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    oauth_client_secret: Mapped[str] = mapped_column(sa.Text)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class Server(UserOwned, Base):
    __tablename__ = "mcp_server"
    __table_args__ = unique_name_per_user("mcp_server")

    name: Mapped[str] = mapped_column(sa.String(255))
    config: Mapped[dict[str, Any]] = mapped_column(sa.JSON)  # without secret values
    secret: Mapped[str | None] = mapped_column(sa.Text, default=None)  # Fernet token of {headers, env}
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
