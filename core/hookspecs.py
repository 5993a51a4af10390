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
    from core.records import HealthCheck, Job, Migrations, ModelProvider, Permission, SettingsSection
    from core.runs.shapers import RunShaper

__all__ = [
    "actor_from_request",
    "blocked_components",
    "blocked_templates",
    "check_run",
    "embed_texts",
    "extend_config",
    "find_flow",
    "find_flow_with_auth_type",
    "find_project",
    "flows_using_components",
    "get_variable",
    "list_models",
    "list_project_flows",
    "mcp_server_config",
    "message_history",
    "model_provider_allowed",
    "on_app_created",
    "on_flow_changed",
    "on_messages",
    "on_user_deleted",
    "on_vertex_built",
    "permission_allowed",
    "published_agents",
    "read_user_file",
    "reencrypt_secrets",
    "register_blueprints",
    "register_commands",
    "register_components",
    "register_health_checks",
    "register_jobs",
    "register_migrations",
    "register_model_providers",
    "register_run_shapers",
    "register_settings",
    "stored_flows",
    "update_project_mcp",
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
    ``access_type``, ``webhook``, ``data``, ...) or None (answered 404). ``data`` may be the
    same object for every lookup of the same stored version (it is decoded once per process):
    treat it as read-only and copy it before changing anything in it.
    """


@hookspec
def check_run(user_id: str | None, flow: dict[str, Any], surface: str) -> None:
    """A flow is about to run: refuse it by raising :class:`core.errors.ApiError`.

    Called by every run surface after the flow is looked up and before any
    component runs. ``user_id`` is the owner the run acts for (None for an
    anonymous public run); ``flow`` is the flow dict as ``find_flow`` returns
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
    ``error``, ``target_id`` and ``build``: True when the run asked for its
    vertex builds to be kept (editor builds), False for a run that records
    its transactions only (a missing ``build`` means True). Implementations
    must not block the run: queue the write and return.
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


@hookspec
def register_model_providers() -> list[ModelProvider]:
    """Return the model providers this plugin or bundle offers (:class:`core.records.ModelProvider`).

    Called when the model-provider policy is read (``registered_providers``)
    and by whoever checks a provider against the policy. ``provider_id`` is a
    slug (``^[a-z0-9][a-z0-9._-]*$``); duplicates across plugins are refused.
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
def on_flow_changed(flow_id: str, user_id: str | None, flow: dict[str, Any] | None) -> None:
    """A stored flow was created, updated or deleted (``flow`` None when deleted).

    Called by the flows plugin inside the writing transaction
    (:func:`core.db.session`), after the row is flushed, so an index kept by a
    plugin commits or rolls back with it. ``flow`` holds ``id``, ``name``,
    ``user_id``, ``data``, ``updated_at``. Used by the policies plugin to keep
    component usage current.
    """


@hookspec(firstresult=True)
def stored_flows(after_id: str | None, limit: int) -> list[dict[str, Any]] | None:
    """A page of every stored flow of every user, ordered by id, after ``after_id``.

    Each item holds ``id``, ``name``, ``user_id``, ``data``. For trusted
    internal scans only (rebuilding an index such as component usage); never
    serve the result to a user as is.
    """


@hookspec
def model_provider_allowed(provider_id: str) -> bool | None:
    """May a model of ``provider_id`` be used? True, False, or None (no opinion).

    Asked by model components (and the models plugin) before they call a
    provider. Every implementation is asked; any False refuses. The policies
    plugin answers from the stored model-provider policy (read at once, so a
    replacement is seen by every process); an empty approved list allows all.
    """


@hookspec
def flows_using_components(component_keys: list[str]) -> list[dict[str, Any]] | None:
    """Every stored flow (any owner) that uses one of ``component_keys``: which flows, which nodes.

    Asked after a bundle reload changed or removed components. Return
    ``[{"flow_id", "name", "user_id", "nodes": [{"id", "type"}]}]`` (one item per flow).
    """


@hookspec(firstresult=True)
def find_project(user_id: str | None, project_id: str) -> dict[str, Any] | None:
    """Look up a project (folder) by id, scoped by owner.

    With ``user_id`` set, only that user's project matches; with None, any
    owner's (trusted internal callers only, such as a project MCP server whose
    ``auth_settings`` say ``none``). Return a plain dict (``id``, ``name``,
    ``description``, ``user_id``, ``auth_settings``) or None (answered 404).
    """


@hookspec(firstresult=True)
def published_agents(user_id: str) -> list[dict[str, Any]] | None:
    """The flows ``user_id`` publishes over A2A: ``flow_type`` agent and ``a2a_enabled`` true.

    Plain dicts as ``find_flow`` returns them, without ``data`` (the owner's own flows only).
    """


@hookspec(firstresult=True)
def list_project_flows(user_id: str, project_id: str | None, with_data: bool) -> list[dict[str, Any]] | None:
    """The flows of ``user_id``'s project ``project_id`` (all of the user's flows when None), by name.

    Components are left out. Each dict holds ``id``, ``name``, ``description``,
    ``endpoint_name``, ``mcp_enabled``, ``action_name``, ``action_description``,
    ``updated_at`` (and ``data`` when ``with_data``). None when the project is not
    the user's (answered 404). Used by the MCP surface to list a project's tools.
    """


@hookspec(firstresult=True)
def update_project_mcp(
    user_id: str, project_id: str, tools: list[dict[str, Any]], auth_settings: dict[str, Any] | None
) -> int | None:
    """Set the MCP fields of a project's flows and, when given, the project's ``auth_settings``.

    ``tools`` items hold ``id`` and any of ``mcp_enabled``, ``action_name``,
    ``action_description``; ids of flows outside the project are ignored. Runs in
    the caller's transaction. Returns how many flows were updated, or None when the
    project is not the user's.
    """


@hookspec(firstresult=True)
def mcp_server_config(user_id: str, name: str) -> dict[str, Any] | None:
    """``user_id``'s stored MCP server ``name`` for a component's connection, or None.

    Called by the engine (``RunContext.mcp_server``) when an ``MCP Tools`` component
    connects. Returns ``{name, transport, url, headers}`` (HTTP/SSE) or ``{name,
    transport: "stdio", command, args, env}`` with secret values decrypted; raise
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
def write_user_file(user_id: str, name: str, content: bytes, append: bool) -> dict[str, Any] | None:
    """Keep ``content`` as a stored file of ``user_id`` named ``name``; its ``{id, name, path, size}``.

    Called by file components through ``RunContext.write_file`` (the Write File component). The
    file belongs to the run's user (a flow's owner; an anonymous public principal's files are its
    own and expire with it). ``name`` is a plain file name (no folders); ``append`` adds to the
    user's file of the same name (created when missing), otherwise an existing file of that name is
    replaced. Answer None when no storage is installed. Bytes are written before the row, so a
    failure never leaves a half-written readable file.
    """


@hookspec(firstresult=True)
def embed_texts(context: Any, provider: str, model: str, texts: list[str]) -> list[list[float]] | None:
    """Embed ``texts`` with embedding model ``model`` of ``provider`` (a provider name of the reference's
    model field, such as ``"OpenAI Compatible"``) on behalf of the owner of ``context`` (a
    :class:`core.engine.RunContext`: the owner's variables give endpoint and key, its egress policy
    guards the call, its ``provider_allowed`` applies the model-provider policy).

    Called by the knowledge plugin when it ingests into or searches a knowledge base recorded with a
    provider other than its local model. Return one vector per text, in order; None when this
    implementation does not know ``provider``. Raise ``ValueError`` when the provider is not usable as
    configured (no endpoint, no key, a blocked address or provider), any other error when it fails.
    """


@hookspec(firstresult=True)
def list_models(context: Any, provider: str, refresh: bool) -> list[str] | None:
    """The model ids ``provider`` (a provider name of the reference's model field, such as
    ``"OpenAI Compatible"``) offers to the owner of ``context`` (a :class:`core.engine.RunContext`
    with the owner's variables and the egress policy): live discovery from its ``GET /models``,
    cached; ``refresh`` bypasses the cache. None when this implementation does not know ``provider``.
    """


@hookspec(firstresult=True)
def find_flow_with_auth_type(flow_id: str, user_id: str | None) -> tuple[dict[str, Any], str | None] | None:
    """The flow ``flow_id`` as ``find_flow`` returns it and its project's ``auth_settings.auth_type``, in one read.

    ``user_id``: only that owner's flow; None: whoever owns it (trusted callers such as the A2A
    surface, which then checks the key against the owner). The auth type is None when the flow
    has no project or the project no auth settings; None when no
    such flow.
    """


@hookspec
def reencrypt_secrets(cipher: Any) -> int | None:
    """Re-encrypt this plugin's stored secrets under a rotated secret key; return how many tokens.

    Called by ``service secret-key rotate`` inside its one transaction (``core.db.session()``),
    after the variables: ``cipher`` is a ``MultiFernet`` whose first key is the new one and which
    also reads the old one, so ``cipher.rotate(token)`` gives each token under the new key (a token
    already under it is kept readable). Update the rows in that session and do not commit; raise
    to roll back the whole rotation (a token no key reads: nothing is changed anywhere).
    """
