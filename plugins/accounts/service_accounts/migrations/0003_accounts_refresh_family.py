"""accounts: refresh-token rotation with reuse detection

Revision ID: accounts_0003
Revises: accounts_0002
Create Date: 2026-11-26

One row per sign-in (``sid``) that has refreshed: the refresh token (``jti``) that may refresh next and
the one it replaced. Tokens issued before this revision have no row: the first refresh adopts them, so
signed-in users stay signed in across the upgrade.
"""

import sqlalchemy as sa
from alembic import op

revision = "accounts_0003"
down_revision = "accounts_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts_refresh_family",
        sa.Column("sid", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("current_jti", sa.String(64), nullable=False),
        sa.Column("previous_jti", sa.String(64), nullable=True),
        sa.Column("rotated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["accounts_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sid"),
    )
    op.create_index("ix_accounts_refresh_family_user_id", "accounts_refresh_family", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_accounts_refresh_family_user_id", table_name="accounts_refresh_family")
    op.drop_table("accounts_refresh_family")
