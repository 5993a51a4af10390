"""teams: the generation counter (bumped on every change of memberships, roles and shares)

Revision ID: teams_0002
Revises: teams_0001
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "teams_0002"
down_revision = "teams_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "teams_generation",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_teams_generation"),
    )
    op.bulk_insert(table, [{"id": 1, "value": 0}])


def downgrade() -> None:
    op.drop_table("teams_generation")
