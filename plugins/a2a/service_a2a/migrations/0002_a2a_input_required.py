"""a2a: tasks waiting for input (the checkpoint they resume and what the flow asks)

Revision ID: a2a_0002
Revises: a2a_0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "a2a_0002"
down_revision = "a2a_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("a2a_task") as batch:
        batch.add_column(sa.Column("checkpoint_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("input_request", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("a2a_task") as batch:
        batch.drop_column("input_request")
        batch.drop_column("checkpoint_id")
