"""knowledge: knowledge bases, chunks with embeddings, pending sources

Revision ID: knowledge_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "knowledge_0001"
down_revision = None
branch_labels = ("knowledge",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "knowledge_base",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("embedding_provider", sa.String(100), nullable=False),
        sa.Column("embedding_model", sa.String(255), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("chunk_size", sa.Integer(), nullable=False),
        sa.Column("chunk_overlap", sa.Integer(), nullable=False),
        sa.Column("separator", sa.String(32), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("last_job_id", sa.String(64), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("column_config", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_knowledge_base"),
        sa.UniqueConstraint("user_id", "name", name="uq_knowledge_base_user_id_name"),
    )
    op.create_index("ix_knowledge_base_user_id", "knowledge_base", ["user_id"])
    op.create_table(
        "knowledge_chunk",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("kb_id", sa.Uuid(), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.Column("source_type", sa.String(16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("characters", sa.Integer(), nullable=False),
        sa.Column("words", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=True),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["kb_id"], ["knowledge_base.id"], name="fk_knowledge_chunk_kb_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_knowledge_chunk"),
    )
    op.create_index("ix_knowledge_chunk_kb_id_source", "knowledge_chunk", ["kb_id", "source"])
    op.create_table(
        "knowledge_pending",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("kb_id", sa.Uuid(), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.Column("source_type", sa.String(16), nullable=False),
        sa.Column("file_ref", sa.String(512), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["kb_id"], ["knowledge_base.id"], name="fk_knowledge_pending_kb_id", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_knowledge_pending"),
    )
    op.create_index("ix_knowledge_pending_kb_id", "knowledge_pending", ["kb_id"])


def downgrade() -> None:
    op.drop_table("knowledge_pending")
    op.drop_table("knowledge_chunk")
    op.drop_table("knowledge_base")
