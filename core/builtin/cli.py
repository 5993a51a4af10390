"""Core CLI commands: ``service db upgrade`` and ``service plugins list``."""

from __future__ import annotations

import click
from flask.cli import with_appcontext

from core import db
from core.app import migration_records, state


@click.group("db", help="Database maintenance.")
def db_group() -> None:
    pass


@db_group.command("upgrade", help="Apply every plugin's pending migrations.")
@with_appcontext
def db_upgrade() -> None:
    svc = state()
    done = db.upgrade(svc.engine, svc.settings, migration_records(svc.host))
    click.echo(f"database at head for: {', '.join(done) or '(no migrations)'}")


@click.group("plugins", help="Inspect installed plugins.")
def plugins_group() -> None:
    pass


@plugins_group.command("list", help="Loaded plugins, their versions and the hooks they implement.")
@with_appcontext
def plugins_list() -> None:
    host = state().host
    for info in host.list():
        click.echo(f"{info.name:<16} {info.kind:<7} {info.version or '-':<10} {', '.join(info.hooks)}")
    for name, reason in sorted(host.failures.items()):
        click.echo(f"{name:<16} FAILED  {reason}")
