"""Core CLI commands: ``service db upgrade`` and ``service plugins list``."""

from __future__ import annotations

from typing import Any

import click
from flask.cli import with_appcontext

from core import appstate, db
from core.plugin_state import migration_records


@click.group("db", help="Database maintenance.")
def db_group() -> None:
    pass


@db_group.command("upgrade", help="Apply every plugin's pending migrations.")
@with_appcontext
def db_upgrade() -> None:
    svc = appstate.state()
    done = db.upgrade(svc.engine, svc.settings, migration_records(svc.host))
    click.echo(f"database at head for: {', '.join(done) or '(no migrations)'}")


@click.group("plugins", help="Inspect installed plugins and switch them on or off at run time.")
def plugins_group() -> None:
    pass


@plugins_group.command("list", help="Loaded plugins, their versions and the hooks they implement.")
@with_appcontext
def plugins_list() -> None:
    host = appstate.host()
    for info in host.list():
        click.echo(f"{info.name:<16} {info.kind:<7} {info.version or '-':<10} {', '.join(info.hooks)}")
    for name, reason in sorted(host.failures.items()):
        click.echo(f"{name:<16} FAILED  {reason}")
    from core import plugin_state

    status = plugin_state.status(state_app())
    click.echo(f"\nplugin generation {status['generation']} (this process built for {status['process_generation']})")
    for item in status["plugins"]:
        stored = "" if item["stored"] is None else f" (set {'on' if item['stored'] else 'off'} at run time)"
        click.echo(f"{item['name']:<16} {'enabled' if item['enabled'] else 'disabled'}{stored}")


def state_app() -> Any:
    from flask import current_app

    return current_app._get_current_object()  # type: ignore[attr-defined]


def _switch(name: str, enabled: bool) -> None:
    from core import audit, plugin_state

    try:
        done = plugin_state.switch(state_app(), name, enabled, by="cli")
    except plugin_state.SwitchError as exc:
        raise click.ClickException(str(exc)) from None
    word = "enabled" if enabled else "disabled"
    # a system actor (no request): the versions plugin's writer flushes at exit
    audit.record(f"plugin:{'enable' if enabled else 'disable'}", "plugin", name, name=name, details={"via": "cli"})
    click.echo(f"{name} {word}: every process rebuilds (generation {done['generation']})")


@plugins_group.command("enable", help="Switch an installed plugin on in every process (its migrations run first).")
@click.argument("name")
@with_appcontext
def plugins_enable(name: str) -> None:
    _switch(name, True)


@plugins_group.command("disable", help="Switch a plugin off in every process (its tables and data stay).")
@click.argument("name")
@with_appcontext
def plugins_disable(name: str) -> None:
    _switch(name, False)
