"""core: plugins switched on or off at run time

Revision ID: core_0002
Revises: core_0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "core_0002"
down_revision = "core_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "core_plugin_state",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("changed_at", UTCDateTime(), nullable=False),
        sa.Column("changed_by", sa.String(100), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("core_plugin_state")
