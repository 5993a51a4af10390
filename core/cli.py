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

EXIT_STARTUP = 3


def _factory():
    from core.app import create_app
    from core.errors import StartupError
    from core.settings import SettingsError

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


def main() -> None:
    if sys.argv[1:2] == ["run"]:
        # ``service run`` goes straight to its command: it only starts the server's interpreter (os.execv
        # above), and the group below imports Flask, SQLAlchemy and every plugin's commands first
        run_command.main(sys.argv[2:], prog_name="service run")
        return
    from core.cli_group import make_group

    make_group(_factory, run_command).main(prog_name="service")


if __name__ == "__main__":
    main()
