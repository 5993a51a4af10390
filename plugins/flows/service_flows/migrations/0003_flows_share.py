"""flows: canonical shares (anonymous PUBLIC execute grants)

Revision ID: flows_0003
Revises: flows_0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "flows_0003"
down_revision = "flows_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flows_share",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("permission_level", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("flow_id", "scope", name="uq_flows_share_flow_id_scope"),
    )
    op.create_index("ix_flows_share_flow_id", "flows_share", ["flow_id"])
    op.create_index("ix_flows_share_user_id", "flows_share", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_flows_share_user_id", table_name="flows_share")
    op.drop_index("ix_flows_share_flow_id", table_name="flows_share")
    op.drop_table("flows_share")
