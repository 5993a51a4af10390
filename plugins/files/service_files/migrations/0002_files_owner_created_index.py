"""files: a user's files in list order

Revision ID: files_0002
Revises: files_0001
Create Date: 2026-11-27

``GET /api/v2/files`` (and the v1 lists) return a user's files by ``created_at``: this index gives
that order without sorting them (tests/core/test_list_query_plans.py).
"""

from alembic import op

revision = "files_0002"
down_revision = "files_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_files_file_owner_created", "files_file", ["user_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_files_file_owner_created", table_name="files_file")
