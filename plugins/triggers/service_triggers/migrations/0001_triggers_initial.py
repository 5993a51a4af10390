"""triggers: executions, schedules, signed webhooks, retry policies

Revision ID: triggers_0001
Revises:
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "triggers_0001"
down_revision = None
branch_labels = ("triggers",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "triggers_execution",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("flow_id", sa.String(36), nullable=False),
        sa.Column("flow_name", sa.String(255), nullable=True),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("due_at", sa.Float(), nullable=True),
        sa.Column("request", sa.JSON(), nullable=True),
        sa.Column("input_text", sa.Text(), nullable=True),
        sa.Column("output_text", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("job_id", sa.String(64), nullable=True),
        sa.Column("session_id", sa.String(255), nullable=True),
        sa.Column("retry_of", sa.String(36), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.String(36), nullable=True),
        sa.Column("dedupe_key", sa.String(160), nullable=True),
        sa.Column("followed_up", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_triggers_execution"),
        sa.UniqueConstraint("dedupe_key", name="uq_triggers_execution_dedupe_key"),
    )
    op.create_index(
        "ix_triggers_execution_user_flow_started", "triggers_execution", ["user_id", "flow_id", "started_at"]
    )
    op.create_index("ix_triggers_execution_status_due", "triggers_execution", ["status", "due_at"])
    op.create_table(
        "triggers_schedule",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("flow_id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("cron", sa.String(120), nullable=True),
        sa.Column("interval_s", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("input_value", sa.Text(), nullable=True),
        sa.Column("tweaks", sa.JSON(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("missed", sa.String(16), nullable=False),
        sa.Column("next_fire_at", sa.Float(), nullable=True),
        sa.Column("last_fired_at", sa.Float(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_triggers_schedule"),
    )
    op.create_index("ix_triggers_schedule_user_id", "triggers_schedule", ["user_id"])
    op.create_index("ix_triggers_schedule_next_fire_at", "triggers_schedule", ["next_fire_at"])
    op.create_table(
        "triggers_webhook",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("public_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("flow_id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("tolerance_s", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_triggers_webhook"),
        sa.UniqueConstraint("public_id", name="uq_triggers_webhook_public_id"),
    )
    op.create_index("ix_triggers_webhook_user_id", "triggers_webhook", ["user_id"])
    op.create_table(
        "triggers_policy",
        sa.Column("flow_id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("backoff_s", sa.Float(), nullable=False),
        sa.Column("error_flow_id", sa.String(36), nullable=True),
        sa.PrimaryKeyConstraint("flow_id", name="pk_triggers_policy"),
    )
    op.create_index("ix_triggers_policy_user_id", "triggers_policy", ["user_id"])


def downgrade() -> None:
    op.drop_table("triggers_policy")
    op.drop_table("triggers_webhook")
    op.drop_table("triggers_schedule")
    op.drop_table("triggers_execution")
