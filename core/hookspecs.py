"""Every hook the core calls, in one place: signatures and docstrings, no logic.

Three kinds of hook exist:

* ``register_*``: contributions. Each implementation returns a list of typed
  records (or classes); the host merges them and rejects duplicate names.
* decisions: ``actor_from_request`` is ``firstresult`` (the first plugin that
  recognises the caller wins); ``permission_allowed`` collects every verdict,
  any deny wins, and no verdict at all means deny.
* ``on_*``: notifications. Return values are ignored.

Plugins implement hooks with :data:`core.hookimpl` and call them through the typed facade
:class:`core.hookcalls.Hooks` (``appstate.hooks().find_flow(...)``). A hook that only plugins call is
published by the plugin that calls it (its own ``hookspecs.py``, see :mod:`core.plugins`); the two
catalog-policy hooks ``blocked_components`` / ``blocked_templates`` stay here because several plugins
(flows, catalog) ask them through :meth:`core.hookcalls.Hooks.blocked_components`, and ``user_names`` for
the same reason (the flows plugin's 409 and ``/version-state``, the versions plugin's authors: a spec
published by its answerer, the accounts plugin, could be called typed only by importing that plugin).
What crosses a boundary is a record of :mod:`core.contracts`. ``docs/hooks.md`` is checked against this module and every
published one by ``tests/core/test_docs.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    import click
    from flask import Blueprint, Flask, Request

    from core.auth import Actor
    from core.contracts import (
        AuditEntry,
        FileRecord,
        FlowRecord,
        McpServerConfig,
        MessageRecord,
        RunObserver,
        RunQueued,
        RunStarted,
        VertexRecord,
    )
    from core.records import HealthCheck, Job, Migrations, Permission, SettingsSection
    from core.runs.shapers import RunShaper

__all__ = [
    "actor_from_request",
    "blocked_components",
    "blocked_templates",
    "check_run",
    "extend_config",
    "find_flow",
    "get_variable",
    "mcp_server_config",
    "message_history",
    "model_provider_allowed",
    "observe_run",
    "on_app_created",
    "on_audit",
    "on_messages",
    "on_run_queued",
    "on_user_deleted",
    "on_vertex_built",
    "permission_allowed",
    "propagation_headers",
    "read_user_file",
    "register_blueprints",
    "register_commands",
    "register_components",
    "register_health_checks",
    "register_jobs",
    "register_migrations",
    "register_run_shapers",
    "register_settings",
    "settings_apply",
    "settings_export",
    "shared_with",
    "user_names",
    "write_user_file",
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

    Called while an app is built; decorate a command with
    ``flask.cli.with_appcontext`` to run it inside the app's context.
    """


@hookspec
def register_jobs() -> list[Job]:
    """Return the background jobs this plugin can run, by unique name.

    Called while an app is built and in every ``service worker`` process, so
    a job enqueued in a web process can run in any worker.
    """


@hookspec
def register_run_shapers() -> list[RunShaper]:
    """Return the result shapers of the run job, by unique name (:class:`core.runs.shapers.RunShaper`).

    The core's one background run job (:mod:`core.runs.jobs`) is enqueued with a shaper's
    name; the shaper decides which run events its stream keeps, what a run that cannot
    start becomes, the events written before the held ``end``, and the job's result.
    Collected once per app (and in every ``service worker`` process), on first use.
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
def extend_config(actor: Actor | None, public: bool) -> Mapping[str, object] | None:
    """Return members to merge into ``GET /api/v1/config``.

    ``public`` is true for the reduced anonymous response. The members are JSON values of the
    configuration document (free-form by design: each plugin names its own).
    """


@hookspec(firstresult=True)
def find_flow(user_id: str | None, flow_id_or_name: str, public: bool, draft: bool) -> FlowRecord | None:
    """Look up a flow for a run surface, scoped by owner.

    ``draft``: the editor's builds (surface ``build``) run the flow as last saved; every other
    surface (``draft`` False) runs the flow's published version when it has one (docs/versions.md).

    ``flow_id_or_name`` is a flow id or an ``endpoint_name``. With ``user_id``
    set, only that user's flows match; with ``public`` true (and ``user_id``
    None), only flows whose ``access_type`` is PUBLIC match, by id. With
    ``user_id`` None and ``public`` false, any owner's flow matches (trusted
    internal callers only, such as webhooks with authentication off); an
    endpoint name then matches only when exactly one flow has it. Return a
    :class:`core.contracts.FlowRecord` (``auth_type`` left None) or None (answered 404). ``data`` may be the
    same object for every lookup of the same stored version (it is decoded once per process):
    treat it as read-only and copy it before changing anything in it.
    """


@hookspec
def check_run(user_id: str | None, flow: FlowRecord, surface: str) -> None:
    """A flow is about to run: refuse it by raising :class:`core.errors.ApiError`.

    Called by every run surface after the flow is looked up and before any
    component runs. ``user_id`` is the owner the run acts for (None for an
    anonymous public run); ``flow`` is the record ``find_flow`` returns
    it (``data`` holds the graph actually run, an unsaved editor graph
    included); ``surface`` names the entry point (``"run"``, ``"webhook"``,
    ``"build"``, ``"build_public"``, ...; ``"subflow"`` for a flow a run loads to run inside it:
    Run Flow, Sub Flow, a flow as a tool, at any depth). Raise ``ApiError(403, ...)`` naming
    the reason (for example the blocked component); build jobs turn it into
    their ``error`` event. Must be cheap: it runs on every run.
    """


@hookspec(firstresult=True)
def get_variable(user_id: str, name: str) -> str | None:
    """The decrypted value of ``user_id``'s variable ``name``, or None.

    Used by the engine for template fields marked ``load_from_db``.
    """


@hookspec(firstresult=True)
def message_history(user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[MessageRecord] | None:
    """The last ``limit`` stored messages of a session, oldest first (for memory components).

    Asked by the run service for a memory component (``RunContext.get_messages``) and by the run
    plugin (does a session exist). ``flow_id`` None: the session's messages of any flow.
    """


@hookspec
def on_messages(user_id: str, messages: Sequence[MessageRecord]) -> None:
    """A run produced chat messages to keep (``should_store_message``); store them.

    Called by every run surface in the request (or job) that produced them,
    so a later read of the session sees them. Each message is a
    :class:`core.contracts.MessageRecord` (the reference's message members).
    """


@hookspec
def on_audit(entry: AuditEntry) -> None:
    """Something was changed by someone: keep it in the audit log (``core.audit.record`` calls it).

    ``entry`` is a :class:`core.contracts.AuditEntry` (who, what, when; names only, never a
    secret value). Called inside the request that made the change, by the plugin that owns the
    changed thing; implementations must not slow the request: queue the write and return.
    """


@hookspec
def on_vertex_built(record: VertexRecord) -> None:
    """A vertex finished in a build or run: record it (vertex builds, transactions).

    ``record`` is a :class:`core.contracts.VertexRecord`: ``user_id``, ``flow_id``, ``job_id``,
    ``vertex_id``, ``valid``, ``data``, ``artifacts``, ``params``, ``inputs``, ``outputs``,
    ``error``, ``target_id`` and ``build``: True when the run asked for its
    vertex builds to be kept (editor builds), False for a run that records
    its transactions only. Implementations
    must not block the run: queue the write and return.
    """


@hookspec
def observe_run(run: RunStarted) -> RunObserver | None:
    """A run of a flow starts, on any surface: return an observer to hear how it ends (or None).

    Called once per run by the one run path (``core.runs.service.execute``), in the thread (greenlet)
    that executes the run, before its first vertex: an implementation may make something current
    for the run's duration (a trace span) and undo it in ``RunObserver.end``, which the run path calls
    exactly once when the run ends, fails or pauses. ``run`` is a :class:`core.contracts.RunStarted`.
    Implementations must not block the run: record in memory or queue the write. Nothing is built for
    this hook when no plugin implements it.
    """


@hookspec
def on_run_queued(run: RunQueued) -> None:
    """A run was put on the job queue (``core.runs.jobs.enqueue``), before a worker starts it.

    ``run`` is a :class:`core.contracts.RunQueued`; its ``run_id`` is the id the run's ``observe_run`` will
    tell. Called in the request that queued it, after the job is queued (a worker may have started it
    already). Never called when no plugin implements it (and then a run's id is chosen as it starts).
    """


@hookspec
def propagation_headers() -> dict[str, str] | None:
    """The current trace context as the headers that carry it (W3C ``traceparent``, ``tracestate``).

    Called when a run is queued (``core.runs.jobs.enqueue``): the answers, merged, travel with the job
    as ``RunRequest.trace_context``, so the worker's run continues the trace of the request that queued
    it (``RunStarted.request["trace_context"]``). Never called when no plugin implements it.
    """


@hookspec
def on_app_created(app: Flask) -> None:
    """The app is built and its database is upgraded; seed data and check start-up rules.

    Raise :class:`core.errors.StartupError` to refuse to start (the CLI then
    exits with status 3 and the message).
    """


@hookspec(firstresult=True)
def user_names(user_ids: Sequence[str]) -> dict[str, str] | None:
    """The usernames of these accounts (``{id: username}``; unknown and deleted ids left out), or None.

    Asked where a person's name is shown for an id the caller already sees on one of their things (the
    last writer of a flow in a 409 and ``/version-state``, a version's author, an audit entry's actor),
    one call per response. The accounts plugin answers with one indexed read.
    """


@hookspec
def shared_with(user_id: str, kind: str) -> list[str] | None:
    """Ids of other users' resources of ``kind`` (``project``, ``flow``, ``knowledge_base``, ``variable``...)
    shared with ``user_id`` (directly, through a team, or for projects by a role assignment there); every
    answer is merged. Asked through :func:`core.auth.shared_ids` by the lists that show shared things after
    the caller's own (projects, flows, knowledge bases, variables) and by a run's variable lookup; the teams
    plugin answers. Each listed resource is still checked with ``core.auth.can`` before it is shown."""


@hookspec
def on_user_deleted(user_id: str) -> None:
    """A user was deleted: remove every row this plugin keeps for ``user_id``.

    Called inside the deleting request's database transaction
    (:func:`core.db.session`), so a failure rolls the whole deletion back.
    """


@hookspec
def blocked_components() -> list[str] | None:
    """Return the catalog keys (canonical registry keys) an admin has blocked, or None.

    Every implementation is asked; the union is blocked. Asked by the catalog
    (``GET /api/v1/all`` hides them unless ``include_blocked``), the starter
    projects and examples, and the flows plugin (to mark stored flows that
    use them). Must be cheap (an in-process snapshot).
    """


@hookspec
def blocked_templates() -> list[str] | None:
    """Return the template (starter project / example) keys an admin has blocked, or None.

    Keys are the examples' ``name_key`` (or name); the union of every answer is blocked.
    """


@hookspec
def model_provider_allowed(provider_id: str) -> bool | None:
    """May a model of ``provider_id`` be used? True, False, or None (no opinion).

    Asked by model components (and the models plugin) before they call a
    provider. Every implementation is asked; any False refuses. The policies
    plugin answers from the stored model-provider policy (read at once, so a
    replacement is seen by every process); an empty approved list allows all.
    """


@hookspec(firstresult=True)
def mcp_server_config(user_id: str, name: str) -> McpServerConfig | None:
    """``user_id``'s stored MCP server ``name`` for a component's connection, or None.

    Called by the engine (``RunContext.mcp_server``) when an ``MCP Tools`` component
    connects. Returns a :class:`core.contracts.McpServerConfig` (``url`` and ``headers`` for HTTP/SSE;
    ``command``, ``args``, ``env`` for ``stdio``) with secret values decrypted; raise
    :class:`core.errors.ApiError` when a deployment policy (``SERVICE_MCP_SERVERS_LOCKED``,
    ``SERVICE_MCP_SERVER_DOCKER_HARDENING``) refuses it. Never answered to a client.
    """


@hookspec(firstresult=True)
def read_user_file(user_id: str, ref: str) -> bytes | None:
    """The bytes of a file ``user_id`` may read in a run, named by ``ref``, or None.

    Called by file components through ``RunContext.read_file`` (wired by
    :func:`core.runs.make_context`). ``ref`` is a stored file's id or path
    (``<user_id>/<name>``, ``<flow_id>/<name>``) or, when
    ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` is off, a local path outside the
    config directory. Another user's file is never returned: answer None
    (the component then reports the file as not found).
    """


@hookspec(firstresult=True)
def write_user_file(user_id: str, name: str, content: bytes, append: bool) -> FileRecord | None:
    """Keep ``content`` as a stored file of ``user_id`` named ``name``; its :class:`core.contracts.FileRecord`.

    Called by file components through ``RunContext.write_file`` (the Write File component). The
    file belongs to the run's user (a flow's owner; an anonymous public principal's files are its
    own and expire with it). ``name`` is a plain file name (no folders); ``append`` adds to the
    user's file of the same name (created when missing), otherwise an existing file of that name is
    replaced. Answer None when no storage is installed. Bytes are written before the row, so a
    failure never leaves a half-written readable file.
    """


@hookspec
def settings_export() -> dict[str, Any] | None:
    """``service settings export``: this plugin's part of the deployment's reviewable settings file, as
    ``{section: JSON value}`` (names and flags, sorted; never a secret, a password or a key). A section is
    owned by one plugin (``users``: accounts; ``teams``, ``roles``, ``role_assignments``: teams;
    ``policies``: policies)."""


@hookspec
def settings_apply(sections: Mapping[str, Any], dry_run: bool) -> list[str] | None:
    """``service settings diff/apply``: make the sections this plugin owns (see :func:`settings_export`)
    match ``sections`` (a section that is absent is left alone) and return one line per change, such as
    ``"teams: add member <id> to support"``; with ``dry_run`` change nothing, only tell. Raise
    ``click.ClickException`` with a clear message for a bad value. Called inside one transaction."""
