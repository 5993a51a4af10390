"""sso: identities linked to accounts, pending sign-ins

Revision ID: sso_0001
Revises:
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "sso_0001"
down_revision = None
branch_labels = ("sso",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sso_identity",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("groups", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_login_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sso_identity"),
        sa.UniqueConstraint("provider", "subject", name="uq_sso_identity_provider_subject"),
    )
    op.create_index("ix_sso_identity_user_id", "sso_identity", ["user_id"])
    op.create_table(
        "sso_pending",
        sa.Column("state", sa.String(128), nullable=False),
        sa.Column("nonce", sa.String(128), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("next_path", sa.String(512), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("state", name="pk_sso_pending"),
    )


def downgrade() -> None:
    op.drop_table("sso_pending")
    op.drop_table("sso_identity")
