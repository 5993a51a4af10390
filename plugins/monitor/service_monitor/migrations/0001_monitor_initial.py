"""monitor: messages, vertex builds, transactions

Revision ID: monitor_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "monitor_0001"
down_revision = None
branch_labels = ("monitor",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "monitor_message",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("flow_id", sa.Uuid(), nullable=True),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("timestamp", UTCDateTime(), nullable=False),
        sa.Column("sender", sa.String(64), nullable=False),
        sa.Column("sender_name", sa.String(255), nullable=False),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("category", sa.String(64), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.Column("edit", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Boolean(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=False),
        sa.Column("content_blocks", sa.JSON(), nullable=False),
        sa.Column("session_metadata", sa.JSON(), nullable=False),
    )
    op.create_index("ix_monitor_message_user_id", "monitor_message", ["user_id"])
    op.create_index(
        "ix_monitor_message_owner_flow_session", "monitor_message", ["user_id", "flow_id", "session_id", "timestamp"]
    )
    op.create_table(
        "monitor_vertex_build",
        sa.Column("build_id", sa.Uuid(), primary_key=True),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("job_id", sa.String(64), nullable=True),
        sa.Column("timestamp", UTCDateTime(), nullable=False),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("artifacts", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=True),
    )
    op.create_index("ix_monitor_vertex_build_owner_flow", "monitor_vertex_build", ["user_id", "flow_id", "timestamp"])
    op.create_table(
        "monitor_transaction",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("timestamp", UTCDateTime(), nullable=False),
        sa.Column("vertex_id", sa.String(255), nullable=False),
        sa.Column("target_id", sa.String(255), nullable=True),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("outputs", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index("ix_monitor_transaction_owner_flow", "monitor_transaction", ["user_id", "flow_id", "timestamp"])


def downgrade() -> None:
    op.drop_table("monitor_transaction")
    op.drop_table("monitor_vertex_build")
    op.drop_table("monitor_message")
