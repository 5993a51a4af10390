"""observability: native run traces

Revision ID: observability_0001
Revises:
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "observability_0001"
down_revision = None
branch_labels = ("observability",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "observability_trace",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("surface", sa.String(32), nullable=False),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.Column("start_time", UTCDateTime(), nullable=False),
        sa.Column("end_time", UTCDateTime(), nullable=True),
        sa.Column("total_latency_ms", sa.Integer(), nullable=False),
        sa.Column("total_tokens", sa.Integer(), nullable=False),
        sa.Column("input", sa.JSON(), nullable=True),
        sa.Column("output", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("spans", sa.JSON(), nullable=False),
    )
    op.create_index(
        "ix_observability_trace_owner_flow_time", "observability_trace", ["user_id", "flow_id", "start_time"]
    )


def downgrade() -> None:
    op.drop_index("ix_observability_trace_owner_flow_time", table_name="observability_trace")
    op.drop_table("observability_trace")
