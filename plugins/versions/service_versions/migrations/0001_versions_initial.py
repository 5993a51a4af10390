"""versions: flow versions, publications, the audit log

Revision ID: versions_0001
Revises:
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "versions_0001"
down_revision = None
branch_labels = ("versions",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "versions_flow_version",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("flow_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("author_id", sa.Uuid(), nullable=True),
        sa.Column("version_number", sa.Integer(), nullable=False),
        sa.Column("description", sa.String(500), nullable=True),
        sa.Column("data_z", sa.LargeBinary(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("auto", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("flow_id", "version_number", name="uq_versions_flow_version_number"),
    )
    op.create_index("ix_versions_flow_version_flow_id", "versions_flow_version", ["flow_id"])
    op.create_index("ix_versions_flow_version_user_id", "versions_flow_version", ["user_id"])
    op.create_table(
        "versions_publication",
        sa.Column("flow_id", sa.Uuid(), primary_key=True),
        sa.Column("version_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("published_by", sa.Uuid(), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_versions_publication_user_id", "versions_publication", ["user_id"])
    op.create_table(
        "versions_audit_event",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("action", sa.String(128), nullable=False),
        sa.Column("operation", sa.String(16), nullable=False),
        sa.Column("event_type", sa.String(16), nullable=False),
        sa.Column("result", sa.String(16), nullable=False),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("request_id", sa.Uuid(), nullable=False),
        sa.Column("resource_type", sa.String(32), nullable=False),
        sa.Column("resource_id", sa.String(64), nullable=True),
        sa.Column("resource_name", sa.String(255), nullable=True),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        sa.Column("actor_type", sa.String(16), nullable=False),
        sa.Column("actor_id", sa.String(64), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
    )
    op.create_index("ix_versions_audit_event_time", "versions_audit_event", ["timestamp", "id"])
    op.create_index("ix_versions_audit_event_action", "versions_audit_event", ["action"])
    op.create_index("ix_versions_audit_event_resource_type", "versions_audit_event", ["resource_type"])
    op.create_index("ix_versions_audit_event_resource_id", "versions_audit_event", ["resource_id"])
    op.create_index("ix_versions_audit_event_user_id", "versions_audit_event", ["user_id"])


def downgrade() -> None:
    op.drop_table("versions_audit_event")
    op.drop_table("versions_publication")
    op.drop_table("versions_flow_version")
