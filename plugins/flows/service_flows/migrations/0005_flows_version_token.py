"""flows: version_token and last_modified_by (safe concurrent editing, issue 31)

Revision ID: flows_0005
Revises: flows_0004
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "flows_0005"
down_revision = "flows_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("flows_flow") as batch:
        batch.add_column(sa.Column("version_token", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("last_modified_by", sa.Uuid(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("flows_flow") as batch:
        batch.drop_column("last_modified_by")
        batch.drop_column("version_token")
