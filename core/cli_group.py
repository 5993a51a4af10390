"""The ``service`` command group: our commands at the top, Flask's under ``service dev``.

Split from :mod:`core.cli` so that ``service run``, which only starts the server's own interpreter, imports
neither Flask nor SQLAlchemy (about 0.25 s of its start: docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable

import click
from flask import Flask
from flask.cli import FlaskGroup

#: Flask's and its extensions' commands: useful to developers, noise to operators, so they live
#: under ``service dev`` (``service dev routes``, ``service dev shell``, ...).
DEV_COMMANDS = ("limiter", "openapi", "routes", "shell")
#: FlaskGroup's own options (``-e/--env-file``, ``-A/--app``, ``--debug``): the service loads its own
#: app and reads ``SERVICE_*`` settings, so they would only mislead.
FLASK_OPTIONS = ("env_file", "app", "debug")


class DevGroup(click.Group):
    """``service dev``: the Flask internals, looked up through the parent group on demand."""

    def __init__(self, parent: FlaskGroup) -> None:
        super().__init__(
            "dev",
            help="Developer tools from Flask and its extensions (routes, shell, openapi, limiter).",
            short_help="Developer tools: routes, shell, openapi, limiter.",
        )
        self.flask_group = parent

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in DEV_COMMANDS if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in DEV_COMMANDS:
            return None
        return FlaskGroup.get_command(self.flask_group, ctx, name)


class ServiceGroup(FlaskGroup):
    """The ``service`` command: our commands at the top, Flask's under ``service dev``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted((set(super().list_commands(ctx)) - set(DEV_COMMANDS)) | {"dev"})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name == "dev":
            return DevGroup(self)
        if name in DEV_COMMANDS:
            return None
        return super().get_command(ctx, name)


def make_group(create_app: Callable[..., Flask], run_command: click.Command) -> ServiceGroup:
    """The whole ``service`` group: ``run``, ``settings``, Flask's ``shell`` and ``routes`` (under ``dev``), and
    every plugin's commands (``register_commands``), found through the app ``create_app`` builds."""
    group = ServiceGroup(
        create_app=create_app,
        add_default_commands=False,
        add_version_option=False,
        load_dotenv=False,
        help="Flow Builder Service administration. Settings come from SERVICE_* variables (see the README).",
    )
    group.params = [p for p in group.params if p.name not in FLASK_OPTIONS]
    group.add_command(run_command)
    from core.settings_file import settings_group

    group.add_command(settings_group)
    from flask.cli import routes_command, shell_command

    group.add_command(shell_command)
    group.add_command(routes_command)
    return group
