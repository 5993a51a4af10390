"""teams: teams, members, roles, role assignments, shares

Revision ID: teams_0001
Revises:
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "teams_0001"
down_revision = None
branch_labels = ("teams",)
depends_on = None


def _when(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "teams_team",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_name", sa.String(255), nullable=False),
        sa.Column("adom_name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        _when("created_at"),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_teams_team"),
    )
    op.create_index("ix_teams_team_team_name", "teams_team", ["team_name"])
    op.create_index("ix_teams_team_adom_name", "teams_team", ["adom_name"], unique=True)
    op.create_table(
        "teams_member",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_teams_member"),
        sa.ForeignKeyConstraint(["team_id"], ["teams_team.id"], name="fk_teams_member_team_id", ondelete="CASCADE"),
        sa.UniqueConstraint("team_id", "user_id", name="uq_teams_member_team_id_user_id"),
    )
    op.create_index("ix_teams_member_team_id", "teams_member", ["team_id"])
    op.create_index("ix_teams_member_user_id", "teams_member", ["user_id"])
    op.create_table(
        "teams_role",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("is_system", sa.Boolean(), nullable=False),
        sa.Column("permissions", sa.JSON(), nullable=False),
        sa.Column("parent_role_id", sa.Uuid(), nullable=True),
        sa.Column("workspace_id", sa.Uuid(), nullable=True),
        _when("created_at"),
        _when("updated_at"),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_teams_role"),
    )
    op.create_index("ix_teams_role_name", "teams_role", ["name"], unique=True)
    op.create_table(
        "teams_role_assignment",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("role_id", sa.Uuid(), nullable=False),
        sa.Column("domain_type", sa.String(16), nullable=False),
        sa.Column("domain_id", sa.Uuid(), nullable=True),
        _when("assigned_at"),
        sa.Column("assigned_by", sa.Uuid(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_teams_role_assignment"),
        sa.ForeignKeyConstraint(
            ["role_id"], ["teams_role.id"], name="fk_teams_role_assignment_role_id", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_teams_role_assignment_user_id", "teams_role_assignment", ["user_id"])
    op.create_index("ix_teams_role_assignment_role_id", "teams_role_assignment", ["role_id"])
    op.create_index("ix_teams_role_assignment_domain_id", "teams_role_assignment", ["domain_id"])
    op.create_table(
        "teams_share",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("resource_type", sa.String(32), nullable=False),
        sa.Column("resource_id", sa.Uuid(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("target_id", sa.Uuid(), nullable=True),
        sa.Column("permission_level", sa.String(16), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_teams_share"),
    )
    op.create_index("ix_teams_share_resource_type", "teams_share", ["resource_type"])
    op.create_index("ix_teams_share_resource_id", "teams_share", ["resource_id"])
    op.create_index("ix_teams_share_scope", "teams_share", ["scope"])
    op.create_index("ix_teams_share_target_id", "teams_share", ["target_id"])


def downgrade() -> None:
    for table in ("teams_share", "teams_role_assignment", "teams_role", "teams_member", "teams_team"):
        op.drop_table(table)
