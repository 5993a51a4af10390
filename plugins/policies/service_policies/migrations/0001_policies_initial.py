"""policies: catalog and provider policies, change log, component-usage index

Revision ID: policies_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from core.db import UTCDateTime

revision = "policies_0001"
down_revision = None
branch_labels = ("policies",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "policies_policy",
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        sa.PrimaryKeyConstraint("kind", name="pk_policies_policy"),
    )
    op.create_table(
        "policies_change",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor_id", sa.Uuid(), nullable=True),
        sa.Column("actor_name", sa.String(255), nullable=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("after", sa.JSON(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_policies_change"),
    )
    op.create_index("ix_policies_change_at", "policies_change", ["at"])
    op.create_table(
        "policies_flow",
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("flow_id", name="pk_policies_flow"),
    )
    op.create_table(
        "policies_flow_component",
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("component", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("flow_id", "component", name="pk_policies_flow_component"),
    )
    op.create_index("ix_policies_flow_component_component", "policies_flow_component", ["component"])
    op.create_table(
        "policies_meta",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("key", name="pk_policies_meta"),
    )


def downgrade() -> None:
    for table in ("policies_meta", "policies_flow_component", "policies_flow", "policies_change", "policies_policy"):
        op.drop_table(table)
