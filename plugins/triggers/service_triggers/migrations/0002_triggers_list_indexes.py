"""triggers: the executions lists read in index order (an owner's of every flow; a flow's, every user's)

Revision ID: triggers_0002
Revises: triggers_0001
Create Date: 2026-11-28
"""

from alembic import op

revision = "triggers_0002"
down_revision = "triggers_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_triggers_execution_user_flow_started", table_name="triggers_execution")
    op.create_index("ix_triggers_execution_owner_started", "triggers_execution", ["user_id", "started_at", "id"])
    op.create_index("ix_triggers_execution_flow_started", "triggers_execution", ["flow_id", "started_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_triggers_execution_flow_started", table_name="triggers_execution")
    op.drop_index("ix_triggers_execution_owner_started", table_name="triggers_execution")
    op.create_index(
        "ix_triggers_execution_user_flow_started", "triggers_execution", ["user_id", "flow_id", "started_at"]
    )
