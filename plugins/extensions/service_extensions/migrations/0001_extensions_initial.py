"""extensions: lifecycle events

Revision ID: extensions_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "extensions_0001"
down_revision = None
branch_labels = ("extensions",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "extensions_event",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
    )
    op.create_index("ix_extensions_event_user_id", "extensions_event", ["user_id"])
    op.create_index("ix_extensions_event_timestamp", "extensions_event", ["timestamp"])


def downgrade() -> None:
    op.drop_table("extensions_event")
