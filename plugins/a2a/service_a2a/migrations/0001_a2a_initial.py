"""a2a: tasks

Revision ID: a2a_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "a2a_0001"
down_revision = None
branch_labels = ("a2a",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "a2a_task",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("job_id", sa.String(64), nullable=True),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("status_text", sa.Text(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("request", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_a2a_task"),
    )
    op.create_index("ix_a2a_task_flow_id", "a2a_task", ["flow_id"])
    op.create_index("ix_a2a_task_owner_id", "a2a_task", ["owner_id"])


def downgrade() -> None:
    op.drop_table("a2a_task")
