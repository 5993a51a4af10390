"""flows: a user's projects in list order

Revision ID: flows_0004
Revises: flows_0003
Create Date: 2026-11-27

``GET /projects/`` lists a user's projects by ``created_at, id``: this index gives that order without
sorting (tests/core/test_list_query_plans.py).
"""

from alembic import op

revision = "flows_0004"
down_revision = "flows_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_flows_folder_owner_created", "flows_folder", ["user_id", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_flows_folder_owner_created", table_name="flows_folder")
