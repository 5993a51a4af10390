"""observability: token usage per run and model, budgets

Revision ID: observability_0002
Revises: observability_0001
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "observability_0002"
down_revision = "observability_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "observability_usage",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("project_id", sa.String(64), nullable=True),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cost", sa.Float(), nullable=False),
    )
    op.create_index("ix_observability_usage_owner_time", "observability_usage", ["user_id", "created_at"])
    op.create_index("ix_observability_usage_flow_time", "observability_usage", ["flow_id", "created_at"])
    op.create_table(
        "observability_budget",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(64), nullable=False),
        sa.Column("metric", sa.String(16), nullable=False),
        sa.Column("period", sa.String(16), nullable=False),
        sa.Column("limit", sa.Float(), nullable=False),
    )
    op.create_index("ix_observability_budget_scope_id", "observability_budget", ["scope_id"])


def downgrade() -> None:
    op.drop_index("ix_observability_budget_scope_id", table_name="observability_budget")
    op.drop_table("observability_budget")
    op.drop_index("ix_observability_usage_flow_time", table_name="observability_usage")
    op.drop_index("ix_observability_usage_owner_time", table_name="observability_usage")
    op.drop_table("observability_usage")
