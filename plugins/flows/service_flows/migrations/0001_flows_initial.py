"""flows: projects (folders) and flows

Revision ID: flows_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "flows_0001"
down_revision = None
branch_labels = ("flows",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flows_folder",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("parent_id", sa.Uuid(), nullable=True),
        sa.Column("auth_settings", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_flows_folder"),
        sa.UniqueConstraint("user_id", "name", name="uq_flows_folder_user_id_name"),
    )
    op.create_index("ix_flows_folder_user_id", "flows_folder", ["user_id"])
    op.create_table(
        "flows_flow",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("folder_id", sa.Uuid(), nullable=True),
        sa.Column("workspace_id", sa.Uuid(), nullable=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("endpoint_name", sa.String(255), nullable=True),
        sa.Column("icon", sa.String(255), nullable=True),
        sa.Column("icon_bg_color", sa.String(255), nullable=True),
        sa.Column("gradient", sa.String(255), nullable=True),
        sa.Column("is_component", sa.Boolean(), nullable=False),
        sa.Column("locked", sa.Boolean(), nullable=False),
        sa.Column("webhook", sa.Boolean(), nullable=False),
        sa.Column("mcp_enabled", sa.Boolean(), nullable=False),
        sa.Column("action_name", sa.String(255), nullable=True),
        sa.Column("action_description", sa.Text(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("access_type", sa.String(16), nullable=False),
        sa.Column("flow_type", sa.String(16), nullable=False),
        sa.Column("a2a_enabled", sa.Boolean(), nullable=False),
        sa.Column("a2a_card_overrides", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_flows_flow"),
        sa.UniqueConstraint("user_id", "name", name="uq_flows_flow_user_id_name"),
        sa.UniqueConstraint("user_id", "endpoint_name", name="uq_flows_flow_user_id_endpoint_name"),
    )
    op.create_index("ix_flows_flow_user_id", "flows_flow", ["user_id"])
    op.create_index("ix_flows_flow_folder_id", "flows_flow", ["folder_id"])


def downgrade() -> None:
    op.drop_table("flows_flow")
    op.drop_table("flows_folder")
