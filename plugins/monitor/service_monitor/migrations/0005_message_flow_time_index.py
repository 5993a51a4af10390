"""monitor: a flow's messages of every user in time order (the team view)

Revision ID: monitor_0005
Revises: monitor_0004
Create Date: 2026-11-27

``GET /monitor/messages?flow_id=`` of a flow shared with the caller lists every user's messages of that
flow (``WHERE flow_id = ? ORDER BY timestamp, id``, docs/teams-and-sso.md). The owner's indexes all start
with ``user_id``, so that list scanned the table; this one starts with ``flow_id`` and carries ``id``, so
a page is one index range read in order and a far page's keys come from the index alone
(tests/core/test_list_query_plans.py).
"""

from alembic import op

revision = "monitor_0005"
down_revision = "monitor_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_monitor_message_flow_time", "monitor_message", ["flow_id", "timestamp", "id"])


def downgrade() -> None:
    op.drop_index("ix_monitor_message_flow_time", table_name="monitor_message")
