"""observability: the traces lists read in index order (an owner's of every flow; a shared flow's)

Revision ID: observability_0003
Revises: observability_0002
Create Date: 2026-11-28
"""

from alembic import op

revision = "observability_0003"
down_revision = "observability_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_observability_trace_owner_time", "observability_trace", ["user_id", "start_time"])
    op.create_index("ix_observability_trace_flow_time", "observability_trace", ["flow_id", "start_time"])


def downgrade() -> None:
    op.drop_index("ix_observability_trace_flow_time", table_name="observability_trace")
    op.drop_index("ix_observability_trace_owner_time", table_name="observability_trace")
