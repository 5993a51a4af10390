"""``service schedules ...`` and ``service executions ...``: the API's operations for one user, on the command line."""

from __future__ import annotations

import json
from typing import Any

import click
from flask import current_app
from flask.cli import with_appcontext


def _app() -> Any:
    return current_app._get_current_object()  # type: ignore[attr-defined]


def _user(user_id: str) -> str:
    """The user id given with ``--user`` (``service users list`` shows them), as stored."""
    import uuid

    try:
        return str(uuid.UUID(user_id))
    except ValueError:
        raise click.ClickException(f"--user takes a user id (a UUID), not {user_id!r}") from None


def _echo(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str))


@click.group("schedules", help="List, create, pause, resume and delete flow schedules.")
def schedules_group() -> None:
    pass


@schedules_group.command("list", help="A user's schedules with their next five fire times.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.option("--flow", "flow_id", default=None)
@with_appcontext
def list_command(username: str, flow_id: str | None) -> None:
    from service_triggers import schedules

    _echo(schedules.list_for(_app(), _user(username), flow_id))


@schedules_group.command("create", help="Schedule a flow: --cron (with --timezone) or --every SECONDS.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.option("--flow", "flow_id", required=True)
@click.option("--cron", default=None)
@click.option("--every", "interval_s", type=int, default=None)
@click.option("--timezone", default="UTC")
@click.option("--input", "input_value", default=None)
@click.option("--tweaks", default=None, help="JSON object")
@click.option("--missed", type=click.Choice(["skip", "run_once"]), default="skip")
@click.option("--name", default=None)
@with_appcontext
def create_command(username: str, flow_id: str, tweaks: str | None, **options: Any) -> None:
    from core.errors import ApiError
    from service_triggers import schedules

    body = {"flow_id": flow_id, **options, "tweaks": json.loads(tweaks) if tweaks else None}
    try:
        _echo(schedules.create(_app(), _user(username), body))
    except ApiError as exc:
        raise click.ClickException(json.dumps(exc.detail)) from None


def _toggle(username: str, schedule_id: str, enabled: bool) -> None:
    from core.errors import ApiError
    from service_triggers import schedules

    try:
        _echo(schedules.update(_app(), _user(username), schedule_id, {"enabled": enabled}))
    except ApiError as exc:
        raise click.ClickException(json.dumps(exc.detail)) from None


@schedules_group.command("pause", help="Stop a schedule firing.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.argument("schedule_id")
@with_appcontext
def pause_command(username: str, schedule_id: str) -> None:
    _toggle(username, schedule_id, False)


@schedules_group.command("resume", help="Let a paused schedule fire again (from its next tick).")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.argument("schedule_id")
@with_appcontext
def resume_command(username: str, schedule_id: str) -> None:
    _toggle(username, schedule_id, True)


@schedules_group.command("delete", help="Delete a schedule.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.argument("schedule_id")
@with_appcontext
def delete_command(username: str, schedule_id: str) -> None:
    from core.errors import ApiError
    from service_triggers import schedules

    try:
        schedules.delete(_app(), _user(username), schedule_id)
    except ApiError as exc:
        raise click.ClickException(json.dumps(exc.detail)) from None
    click.echo("deleted")


@schedules_group.command("tick", help="Run one scheduler tick now (fire due schedules, start due retries).")
@with_appcontext
def tick_command() -> None:
    from service_triggers.ticker import tick

    _echo(tick(_app()))


@click.group("executions", help="List and retry flow executions.")
def executions_group() -> None:
    pass


@executions_group.command("list", help="A user's executions, newest first.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.option("--flow", "flow_id", default=None)
@click.option("--status", default=None)
@click.option("--trigger", default=None)
@click.option("--limit", type=int, default=20)
@with_appcontext
def executions_list(username: str, **options: Any) -> None:
    from service_triggers import executions

    _echo(executions.list_executions(_app(), _user(username), **options))


@executions_group.command("retry", help="Run an execution again with the same inputs.")
@click.option("--user", "username", required=True, help="The user id the schedules belong to.")
@click.argument("execution_id")
@with_appcontext
def executions_retry(username: str, execution_id: str) -> None:
    from core.errors import ApiError
    from service_triggers import executions

    try:
        _echo(executions.retry(_app(), _user(username), execution_id))
    except ApiError as exc:
        raise click.ClickException(json.dumps(exc.detail)) from None
