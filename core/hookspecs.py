"""Every hook the core calls, in one place: signatures and docstrings, no logic.

Three kinds of hook exist:

* ``register_*``: contributions. Each implementation returns a list of typed
  records (or classes); the host merges them and rejects duplicate names.
* decisions: ``actor_from_request`` is ``firstresult`` (the first plugin that
  recognises the caller wins); ``permission_allowed`` collects every verdict,
  any deny wins, and no verdict at all means deny.
* ``on_*``: notifications. Return values are ignored.

Plugins implement hooks with :data:`core.hookimpl`. ``docs/hooks.md`` is
checked against this module by ``tests/core/test_docs.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    import click
    from flask import Blueprint, Flask, Request

    from core.auth import Actor
    from core.records import HealthCheck, Job, Migrations, Permission, SettingsSection

__all__ = [
    "actor_from_request",
    "extend_config",
    "find_flow",
    "get_variable",
    "message_history",
    "on_app_created",
    "on_messages",
    "on_user_deleted",
    "on_vertex_built",
    "permission_allowed",
    "register_blueprints",
    "register_commands",
    "register_components",
    "register_health_checks",
    "register_jobs",
    "register_migrations",
    "register_settings",
]


@hookspec
def register_blueprints() -> list[Blueprint]:
    """Return the blueprints (flask-smorest or plain Flask) this plugin serves.

    Called once while an app is built, before the first request. A
    flask-smorest blueprint also lands in the OpenAPI document.
    """


@hookspec
def register_settings() -> list[SettingsSection]:
    """Return this plugin's settings sections (``SERVICE_<PLUGIN>_*`` variables).

    Called while an app is built, before any other contribution is used; the
    values come from the environment, ``.env`` and ``create_app(config=...)``,
    and an invalid one stops start-up naming the variable.
    """


@hookspec
def register_migrations() -> list[Migrations]:
    """Return the Alembic version directories this plugin owns.

    Called when the database is upgraded (on start and by ``service db
    upgrade``). Each directory is one branch labelled with the plugin name;
    its tables are prefixed with the plugin name.
    """


@hookspec
def register_commands() -> list[click.Command]:
    """Return click commands (or groups) added to the ``service`` CLI.

    Called while an app is built; the commands run inside its app context.
    """


@hookspec
def register_jobs() -> list[Job]:
    """Return the background jobs this plugin can run, by unique name.

    Called while an app is built and in every ``service worker`` process, so
    a job enqueued in a web process can run in any worker.
    """


@hookspec
def register_health_checks() -> list[HealthCheck]:
    """Return probes reported by ``GET /health_check`` (name -> "ok" or error)."""


@hookspec
def register_components() -> list[type]:
    """Return the component classes of a bundle (entry point group ``service.bundles``).

    Called when the component registry is built or reloaded. Bundles contribute
    components only: no routes, tables or commands.
    """


@hookspec(firstresult=True)
def actor_from_request(request: Request, scheme: str) -> Actor | None:
    """Identify the caller of ``request``.

    ``scheme`` is what the endpoint accepts: ``"user"`` (bearer token, cookie
    or API key), ``"api_key"`` (API key only), or ``"optional"`` (anonymous
    allowed). Return an :class:`core.auth.Actor`, return None when this plugin
    does not recognise the request, or raise :class:`core.errors.ApiError`
    (401/403) when a credential is present but invalid. The first non-None
    result wins.
    """


@hookspec
def permission_allowed(actor: Actor | None, action: str, resource: Any) -> Permission | None:
    """Give a verdict on ``actor`` performing ``action`` (for example ``"users.list"``).

    Return :class:`core.records.Permission` or None (no opinion). Every
    implementation is asked: any deny wins; without any allow the answer is deny.
    """


@hookspec
def extend_config(actor: Actor | None, public: bool) -> dict[str, Any] | None:
    """Return members to merge into ``GET /api/v1/config``.

    ``public`` is true for the reduced anonymous response.
    """


@hookspec(firstresult=True)
def find_flow(user_id: str | None, flow_id_or_name: str, public: bool) -> dict[str, Any] | None:
    """Look up a flow for a run surface, scoped by owner.

    ``flow_id_or_name`` is a flow id or an ``endpoint_name``. With ``user_id``
    set, only that user's flows match; with ``public`` true (and ``user_id``
    None), only flows whose ``access_type`` is PUBLIC match, by id. With
    ``user_id`` None and ``public`` false, any owner's flow matches (trusted
    internal callers only, such as webhooks with authentication off); an
    endpoint name then matches only when exactly one flow has it. Return a plain dict
    (``id``, ``name``, ``user_id``, ``folder_id``, ``endpoint_name``,
    ``access_type``, ``webhook``, ``data``, ...) or None (answered 404).
    """


@hookspec(firstresult=True)
def get_variable(user_id: str, name: str) -> str | None:
    """The decrypted value of ``user_id``'s variable ``name``, or None.

    Used by the engine for template fields marked ``load_from_db``.
    """


@hookspec(firstresult=True)
def message_history(user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[dict[str, Any]] | None:
    """The last ``limit`` stored messages of a session, oldest first (for memory components)."""


@hookspec
def on_messages(user_id: str, messages: list[dict[str, Any]]) -> None:
    """A run produced chat messages to keep (``should_store_message``); store them.

    Called by every run surface in the request (or job) that produced them,
    so a later read of the session sees them. Each message is the reference's
    message dict (``id``, ``flow_id``, ``session_id``, ``sender``, ``text``, ...).
    """


@hookspec
def on_vertex_built(record: dict[str, Any]) -> None:
    """A vertex finished in a build or run: record it (vertex builds, transactions).

    ``record`` holds ``user_id``, ``flow_id``, ``job_id``, ``vertex_id``,
    ``valid``, ``data``, ``artifacts``, ``params``, ``inputs``, ``outputs``,
    ``error``, ``target_id``. Implementations must not block the run: queue
    the write and return.
    """


@hookspec
def on_app_created(app: Flask) -> None:
    """The app is built and its database is upgraded; seed data and check start-up rules.

    Raise :class:`core.errors.StartupError` to refuse to start (the CLI then
    exits with status 3 and the message).
    """


@hookspec
def on_user_deleted(user_id: str) -> None:
    """A user was deleted: remove every row this plugin keeps for ``user_id``.

    Called inside the deleting request's database transaction
    (:func:`core.db.session`), so a failure rolls the whole deletion back.
    """
