"""monitor: a flow's transactions in page order, from the index alone

Revision ID: monitor_0004
Revises: monitor_0003
Create Date: 2026-11-27

``GET /monitor/transactions`` pages newest first (``timestamp DESC, id DESC``). The index on
``(user_id, flow_id, timestamp)`` left the ``id`` tie-break to a sort and a far page's keys to the
table; with ``id`` in the index, read backwards, a page's keys come from the index alone
(tests/core/test_list_query_plans.py).
"""

from alembic import op

revision = "monitor_0004"
down_revision = "monitor_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_monitor_transaction_owner_flow_time", "monitor_transaction", ["user_id", "flow_id", "timestamp", "id"]
    )
    op.drop_index("ix_monitor_transaction_owner_flow", table_name="monitor_transaction")


def downgrade() -> None:
    op.create_index("ix_monitor_transaction_owner_flow", "monitor_transaction", ["user_id", "flow_id", "timestamp"])
    op.drop_index("ix_monitor_transaction_owner_flow_time", table_name="monitor_transaction")
