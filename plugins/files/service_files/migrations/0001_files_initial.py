"""files: uploaded file metadata

Revision ID: files_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "files_0001"
down_revision = None
branch_labels = ("files",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "files_file",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("flow_id", sa.Uuid(), nullable=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("path", sa.String(512), nullable=False),
        sa.Column("storage_key", sa.String(255), nullable=False),
        sa.Column("provider", sa.String(32), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("content_type", sa.String(255), nullable=False),
        sa.Column("ephemeral", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_files_file"),
        sa.UniqueConstraint("user_id", "path", name="uq_files_file_user_id_path"),
    )
    op.create_index("ix_files_file_user_id", "files_file", ["user_id"])
    op.create_index("ix_files_file_flow_id", "files_file", ["flow_id"])


def downgrade() -> None:
    op.drop_table("files_file")
