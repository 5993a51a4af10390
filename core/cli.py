"""The ``service`` command: a Flask CLI group whose commands come from plugins.

``service run`` serves with gunicorn and gevent workers (``--dev`` for the
Flask development server); every other command (``db upgrade``, ``worker``,
``plugins list``, ``superuser``, ``api-key create``, ...) is contributed by a
plugin through ``register_commands`` and also works as ``flask --app wsgi ...``.
"""

from __future__ import annotations

import os
import sys

import click
from flask.cli import FlaskGroup

from core.errors import StartupError
from core.settings import SettingsError

EXIT_STARTUP = 3


def _factory():
    from core.app import create_app

    try:
        return create_app()
    except (StartupError, SettingsError) as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_STARTUP)


@click.command("run", help="Serve the service (gunicorn with gevent workers).")
@click.option("--host", default=None, help="Interface to bind (SERVICE_HOST, default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (SERVICE_PORT, default 7860).")
@click.option("--workers", default=None, type=int, help="Worker processes (SERVICE_WORKERS, default 2).")
@click.option("--dev", is_flag=True, help="Use the Flask development server (one process, reloader off).")
@click.option("--access-log/--no-access-log", default=False, help="Log every request.")
def run_command(host: str | None, port: int | None, workers: int | None, dev: bool, access_log: bool) -> None:
    if host:
        os.environ["SERVICE_HOST"] = host
    if port:
        os.environ["SERVICE_PORT"] = str(port)
    if workers:
        os.environ["SERVICE_WORKERS"] = str(workers)
    if dev:
        app = _factory()
        from core import appstate
        from core.startup import summary

        settings = appstate.settings(app)

        for line in summary(app):
            click.echo(line, err=True)
        app.run(host=settings.host, port=settings.port, threaded=True, use_reloader=False)
        return
    args = [sys.executable, "-m", "core.server"]
    if access_log:
        args.append("--access-log")
    sys.stdout.flush()
    # A fresh interpreter, so gevent patches the standard library before anything imports it.
    os.execv(sys.executable, args)  # noqa: S606 - fixed argv, no shell


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


def main() -> None:
    group = ServiceGroup(
        create_app=_factory,
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
    group.main(prog_name="service")


if __name__ == "__main__":
    main()
