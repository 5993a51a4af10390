"""One test per hook that no feature test exercises directly: a test plugin implements it and sees it used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import sqlalchemy as sa
from flask.cli import with_appcontext

from core import hookimpl
from core.app import state
from core.records import HealthCheck, Migrations, Permission
from tests.conftest import make_user, superuser

MIGRATION = '''"""probe: one table

Revision ID: probe_0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "probe_0001"
down_revision = None
branch_labels = ("probe",)
depends_on = None


def upgrade() -> None:
    op.create_table("probe_thing", sa.Column("id", sa.Integer(), primary_key=True))


def downgrade() -> None:
    op.drop_table("probe_thing")
'''


class Probe:
    def __init__(self, migrations: Path) -> None:
        self.migrations = migrations
        self.created: list[Any] = []
        self.deleted: list[str] = []

    @hookimpl
    def on_app_created(self, app):
        self.created.append(app)

    @hookimpl
    def on_user_deleted(self, user_id):
        self.deleted.append(user_id)

    @hookimpl
    def permission_allowed(self, actor, action, resource):
        if action == "users.create" and actor is not None and actor.username == "probe-admin":
            return Permission(False, "probes create nobody")
        return None

    @hookimpl
    def register_commands(self):
        @click.command("probe-hello")
        @click.argument("name")
        @with_appcontext
        def hello(name: str) -> None:
            """Say hello (a command contributed by a plugin)."""
            click.echo(f"hello {name} from {state().settings.port}")

        return [hello]

    @hookimpl
    def register_health_checks(self):
        return [HealthCheck("probe", lambda app: "warming up"), HealthCheck("probe_ok", lambda app: None)]

    @hookimpl
    def register_migrations(self):
        return [Migrations("probe", self.migrations)]


def _app(make_app, tmp_path):
    versions = tmp_path / "probe_migrations"
    versions.mkdir()
    (versions / "0001_probe.py").write_text(MIGRATION)
    probe = Probe(versions)
    app = make_app(plugins=["accounts", ("probe", probe)])
    return app, probe


def test_lifecycle_hooks(make_app, tmp_path):
    app, probe = _app(make_app, tmp_path)
    assert probe.created == [app]  # on_app_created: once, with the app, after migrations
    with app.app_context():
        assert "probe_thing" in sa.inspect(state(app).engine).get_table_names()  # register_migrations
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    assert client.delete(f"/api/v1/users/{alice.id}", headers=admin.bearer).status_code == 200
    assert probe.deleted == [alice.id]  # on_user_deleted, inside the deleting transaction


def test_decision_and_contribution_hooks(make_app, tmp_path):
    app, _probe = _app(make_app, tmp_path)
    result = app.test_cli_runner().invoke(args=["probe-hello", "ada"])
    assert result.exit_code == 0 and result.output == "hello ada from 7860\n"  # register_commands
    health = app.test_client().get("/health_check").get_json()
    assert health["probe"] == "warming up" and health["probe_ok"] == "ok"  # register_health_checks
    client = app.test_client()
    admin = superuser(client)
    probe_admin = make_user(client, admin, username="probe-admin", is_superuser=True)
    # permission_allowed: any deny wins, even against a superuser's allow
    body = {"username": "newbie", "password": "a long enough password"}
    assert client.post("/api/v1/users/", json=body, headers=probe_admin.bearer).status_code == 403
    assert client.post("/api/v1/users/", json=body, headers=admin.bearer).status_code == 201
