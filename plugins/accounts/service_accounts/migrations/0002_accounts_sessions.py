"""accounts: revocable sessions (token version per user, revoked session ids)

Revision ID: accounts_0002
Revises: accounts_0001
Create Date: 2026-11-22

Every issued JWT carries the user's ``token_version`` (``ver``) and a session id
(``sid``). A password change or a deactivation bumps the version, which ends
every older token; logout records the session id until its refresh token
would have expired.
"""

import sqlalchemy as sa
from alembic import op

revision = "accounts_0002"
down_revision = "accounts_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("accounts_user") as batch:
        batch.add_column(sa.Column("token_version", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "accounts_revoked_session",
        sa.Column("sid", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["accounts_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sid"),
    )
    op.create_index("ix_accounts_revoked_session_user_id", "accounts_revoked_session", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_accounts_revoked_session_user_id", table_name="accounts_revoked_session")
    op.drop_table("accounts_revoked_session")
    with op.batch_alter_table("accounts_user") as batch:
        batch.drop_column("token_version")
