"""variables: encrypted user variables

Revision ID: variables_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "variables_0001"
down_revision = None
branch_labels = ("variables",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "variables_variable",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("default_fields", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_variables_variable"),
        sa.UniqueConstraint("user_id", "name", name="uq_variables_variable_user_id_name"),
    )
    op.create_index("ix_variables_variable_user_id", "variables_variable", ["user_id"])


def downgrade() -> None:
    op.drop_table("variables_variable")
