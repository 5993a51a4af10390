"""hello: greeting counts

Revision ID: hello_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "hello_0001"
down_revision = None
branch_labels = ("hello",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hello_greeting",
        sa.Column("user_id", sa.Uuid(), primary_key=True),
        sa.Column("count", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("hello_greeting")
