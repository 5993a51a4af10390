"""monitor: a flow's vertex builds and transactions of every user in time order (the team view)

Revision ID: monitor_0006
Revises: monitor_0005
Create Date: 2026-11-27

``GET /monitor/builds?flow_id=`` and ``GET /monitor/transactions?flow_id=`` of a flow shared with the caller
list every user's rows of that flow (``WHERE flow_id = ?``, no ``user_id``; docs/teams-and-sso.md), and
``DELETE /monitor/builds?flow_id=`` of a shared flow deletes them. The owner's indexes start with
``user_id``, so those statements scanned the tables. As monitor_0005 did for messages: an index that starts
with ``flow_id`` and reads in time order; the transactions' one carries ``id`` too, so a far page's keys come
from the index alone (tests/teams/test_team_query_plans.py).
"""

from alembic import op

revision = "monitor_0006"
down_revision = "monitor_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_monitor_vertex_build_flow_time", "monitor_vertex_build", ["flow_id", "timestamp"])
    op.create_index("ix_monitor_transaction_flow_time", "monitor_transaction", ["flow_id", "timestamp", "id"])


def downgrade() -> None:
    op.drop_index("ix_monitor_transaction_flow_time", table_name="monitor_transaction")
    op.drop_index("ix_monitor_vertex_build_flow_time", table_name="monitor_vertex_build")
