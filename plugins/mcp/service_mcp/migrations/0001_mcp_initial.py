"""mcp: project OAuth secrets and per-user MCP server configs

Revision ID: mcp_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "mcp_0001"
down_revision = None
branch_labels = ("mcp",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_project_secret",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("oauth_client_secret", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("project_id", name="pk_mcp_project_secret"),
    )
    op.create_index("ix_mcp_project_secret_user_id", "mcp_project_secret", ["user_id"])
    op.create_table(
        "mcp_server",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_mcp_server"),
        sa.UniqueConstraint("user_id", "name", name="uq_mcp_server_user_id_name"),
    )
    op.create_index("ix_mcp_server_user_id", "mcp_server", ["user_id"])


def downgrade() -> None:
    op.drop_table("mcp_server")
    op.drop_table("mcp_project_secret")
