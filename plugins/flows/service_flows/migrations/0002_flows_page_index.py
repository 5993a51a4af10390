"""flows: index a project's flows in page order

Revision ID: flows_0002
Revises: flows_0001
Create Date: 2026-11-22

A project's page (``GET /flows/?get_all=false``, ``GET /projects/{id}?page=``) orders by
``updated_at DESC, id``: without this index every page sorted all of the project's flows, data
included (about 100 ms a page at 10,000 flows on SQLite; 25 ms with it at page 77, less nearer the front).
"""

import sqlalchemy as sa
from alembic import op

revision = "flows_0002"
down_revision = "flows_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_flows_flow_owner_folder_updated", "flows_flow", ["user_id", "folder_id", sa.text("updated_at DESC"), "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_flows_flow_owner_folder_updated", table_name="flows_flow")
