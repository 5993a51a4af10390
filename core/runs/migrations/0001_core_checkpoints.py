"""core: checkpoints of suspended runs

Revision ID: core_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "core_0001"
down_revision = None
branch_labels = ("core",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs_checkpoint",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("surface", sa.String(32), nullable=False),
        sa.Column("job_id", sa.String(64), nullable=True),
        sa.Column("vertex_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("resumed_job_id", sa.String(64), nullable=True),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
    )
    op.create_index("ix_runs_checkpoint_owner", "runs_checkpoint", ["owner"])
    op.create_index("ix_runs_checkpoint_flow_id", "runs_checkpoint", ["flow_id"])
    op.create_index("ix_runs_checkpoint_job_id", "runs_checkpoint", ["job_id"])


def downgrade() -> None:
    op.drop_table("runs_checkpoint")
