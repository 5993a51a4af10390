"""accounts: users and API keys

Revision ID: accounts_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "accounts_0001"
down_revision = None
branch_labels = ("accounts",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts_user",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("profile_image", sa.String(512), nullable=True),
        sa.Column("store_api_key", sa.String(512), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("is_superuser", sa.Boolean(), nullable=False),
        sa.Column("create_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_login_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("optins", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_accounts_user"),
    )
    op.create_index("ix_accounts_user_username", "accounts_user", ["username"], unique=True)
    op.create_table(
        "accounts_api_key",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("key_prefix", sa.String(16), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("total_uses", sa.Integer(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["accounts_user.id"], ondelete="CASCADE", name="fk_accounts_api_key_user_id_accounts_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_accounts_api_key"),
    )
    op.create_index("ix_accounts_api_key_key_hash", "accounts_api_key", ["key_hash"], unique=True)
    op.create_index("ix_accounts_api_key_user_id", "accounts_api_key", ["user_id"])


def downgrade() -> None:
    op.drop_table("accounts_api_key")
    op.drop_table("accounts_user")
