"""monitor: drop the message index on the owner alone

Revision ID: monitor_0003
Revises: monitor_0002
Create Date: 2026-11-23

Both composite indexes of ``monitor_message`` start with ``user_id``, so every query by owner alone
already has an index; the third one only made each message insert write one more B-tree page
(about 15 us of SQLite's time per run of a chat flow).
"""

from alembic import op

revision = "monitor_0003"
down_revision = "monitor_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_monitor_message_user_id", table_name="monitor_message")


def downgrade() -> None:
    op.create_index("ix_monitor_message_user_id", "monitor_message", ["user_id"])
