"""The app factory: settings, plugin host, extensions, blueprints, start-up hooks.

``create_app`` is cheap enough to call again: the WSGI holder in ``wsgi.py``
builds a fresh app when the plugin set changes and swaps it in. Long-lived
objects (database engines, Redis clients) are process-wide and survive the
rebuild; the plugin manager belongs to the app.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click
import flask
import flask_smorest
from flask import Flask
from marshmallow import Schema, fields
from werkzeug.routing import Rule

from core import __version__, db, errors, limits, plugin_state, requests, startup
from core.appstate import ServiceState, SharedStatePort, plugin_settings, settings_of, state
from core.jobs.backends import make_queue
from core.plugin_state import migration_records
from core.plugins import PluginHost, build_host
from core.records import HealthCheck, Job, SettingsSection
from core.settings import PREFIX, Settings, SettingsError, environment, load_section

if TYPE_CHECKING:
    from core.engine import RegistryHolder
    from core.reload import ComponentSources

log = logging.getLogger(__name__)

#: the typed state and its accessors live in the leaf module core.appstate; these names stay importable
#: from here for the tests and scripts that use them (plugins import core.appstate)
__all__ = ["Api", "ServiceState", "create_app", "migration_records", "plugin_settings", "settings_of", "state"]


class ErrorSchema(Schema):
    """Every error body: ``detail`` is a string, or a list of ``{loc, msg, type}`` for 422."""

    detail = fields.Raw(required=True, metadata={"description": "message, or validation items"})


class Api(flask_smorest.Api):
    """flask-smorest's Api with the spec's error bodies instead of its own, and each blueprint's part of the
    OpenAPI document written when the document is first read (``/openapi.json``, the docs pages) instead of
    as the app is made: documenting every route took about a third of ``create_app`` (0.2-0.3 s with every
    plugin; bench/NOTES.md), paid by every start-up and every test's app while few ever read the document."""

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._undocumented: list[tuple[Any, str, Any]] = []  # (blueprint, name, parameters), in order
        self._documenting = threading.RLock()  # other threads wait for the whole document
        self._in_progress = False  # this thread documents now (flask-smorest's callbacks read ``spec`` too)
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def spec(self) -> Any:
        """The OpenAPI document, with the blueprints registered so far documented in it."""
        if self._undocumented:
            with self._documenting:
                if not self._in_progress:
                    self._in_progress = True
                    try:
                        while self._undocumented:
                            blueprint, name, parameters = self._undocumented[0]
                            spec = self._spec
                            blueprint.register_views_in_doc(self, self._app, spec, name=name, parameters=parameters)
                            spec.tag({"name": name, "description": blueprint.description})
                            del self._undocumented[0]
                    finally:
                        self._in_progress = False
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        self._spec = value

    def register_blueprint(self, blp: Any, *, parameters: Any = None, **options: Any) -> None:
        """flask-smorest's registration, its documentation left for the first read of the document."""
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)
        self._undocumented.append((blp, name, parameters))

    def _register_error_handlers(self) -> None:  # errors.init_app installs ours
        pass

    def _register_responses(self) -> None:
        """flask-smorest's lazy response per status, with the 422 validation body's own schema."""
        import http

        from flask_smorest.utils import prepare_response

        from core.openapi import ValidationErrorSchema

        for status in [*http.HTTPStatus, None]:
            name = status.name if status is not None else self.DEFAULT_ERROR_RESPONSE_NAME
            response: dict[str, Any] = {"description": status.phrase if status is not None else "Error"}
            if status is None or not (100 <= status < 200 or status in (204, 304)):
                response["schema"] = ValidationErrorSchema if status == 422 else self.ERROR_SCHEMA
            prepare_response(response, self.spec, self.DEFAULT_RESPONSE_CONTENT_TYPE)
            self.spec.components.response(name, response, lazy=True)


class LazyBuilderRule(Rule):
    """werkzeug's URL rule with its two URL builders compiled on their first use instead of as the rule is added.

    werkzeug writes and compiles two Python functions per rule (for ``url_for``) when the rule joins the
    map: 0.15 s of each app with every plugin's 230 rules (about 40% of ``create_app``, paid by every
    start-up and every test's app: bench/NOTES.md), while a process builds URLs for few of them. Matching
    uses the parsed parts, which are still made at once. Hand-written: werkzeug has no switch for this;
    ``_compile_builder`` is werkzeug's own (pinned in constraints.txt), and tests/core/test_app.py
    builds URLs with and without unknown arguments through it."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        attribute = "_build_unknown" if append_unknown else "_build"

        def build_on_first_use(rule: Rule, **values: Any) -> tuple[str, str]:
            builder = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            setattr(rule, attribute, builder)  # the next call goes to the compiled builder
            return builder(**values)

        return build_on_first_use


def create_app(
    config: Mapping[str, Any] | None = None,
    plugins: Iterable[str | ModuleType | tuple[str, object]] | None = None,
    *,
    migrate: bool = True,
) -> Flask:
    """Build the service.

    ``config`` overrides settings (field or ``SERVICE_*`` names); ``plugins``
    lists exactly the plugins to load (default: every installed one, filtered
    by ``SERVICE_PLUGINS`` / ``SERVICE_DISABLED_PLUGINS``); ``migrate`` runs
    every plugin's migrations first (the ``service run`` master does it once and
    starts its workers with ``migrate=False``).
    """
    settings = Settings.load(config, strict=False)
    logging.basicConfig(level=settings.log_level.upper())
    logging.getLogger("alembic").setLevel(logging.WARNING)
    startup.check_redis(settings)
    settings.resolved_config_dir  # noqa: B018 -- created first: a SQLite database may live in it
    engine = db.get_engine(settings)
    startup.check_database(engine, settings)
    allow, deny = plugin_state.effective(engine, settings.plugins, settings.disabled_plugins)
    if plugins is not None:
        plugins = plugin_state.drop_disabled(engine, plugins)
    host = build_host(plugins, allow, deny)

    app = Flask("service")
    app.url_rule_class = LazyBuilderRule
    app.config.update(
        API_TITLE="Flow Builder Service",
        API_VERSION=__version__,
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH=None,
        JSON_SORT_KEYS=False,
        MAX_CONTENT_LENGTH=settings.max_file_size_upload * 1024 * 1024,
    )
    app.json = requests.JSONProvider(app)  # every request's JSON through core.requests.parse_json
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.strict_slashes = False

    sections_by_name = _plugin_settings(host, config or {})  # unknown config keys fail before anything runs
    errors.init_app(app, uses_redis=bool(settings.redis_url) or "redis" in settings.rate_limit_storage_uri)
    app.before_request(requests.check_body)  # first: body limits before any body read or authentication
    db.init_app(app, engine)
    if migrate:
        db.upgrade(engine, settings, migration_records(host))

    from core.openapi import StandardResponses

    api = Api(
        app,
        spec_kwargs={
            "info": {"description": "Stores, edits, builds and runs flows."},
            "extra_plugins": [StandardResponses()],
        },
    )
    _security_schemes(api)
    app.extensions["service.api"] = api
    blueprints: list[flask.Blueprint] = host.collect("register_blueprints", key=lambda b: b.name)
    for blueprint in blueprints:
        if isinstance(blueprint, flask_smorest.Blueprint):
            api.register_blueprint(blueprint)
        else:
            app.register_blueprint(blueprint)

    shared = shared_state(settings)
    components, sources = _component_registry(host, shared)
    plugins_generation = _plugins_generation(shared)
    limits.init_app(app, settings, shared)
    _cors(app, settings)
    _compress(app)
    health_checks: list[HealthCheck] = host.collect("register_health_checks", key=lambda h: h.name)
    registered_jobs: list[Job] = host.collect("register_jobs", key=lambda j: j.name)
    job_registry = {j.name: j for j in registered_jobs}
    app.extensions["service"] = ServiceState(
        settings=settings,
        host=host,
        engine=engine,
        jobs=make_queue(app, settings, job_registry),
        components=components,
        shared=shared,
        component_sources=sources,
        plugin_settings=sections_by_name,
        settings_by_schema={type(section): section for section in sections_by_name.values()},
        plugins_generation=plugins_generation,
        health_checks=health_checks,
        job_registry=job_registry,
    )
    commands: list[click.Command] = host.collect("register_commands", key=lambda c: str(c.name))
    for command in commands:
        app.cli.add_command(command)
    sections: list[SettingsSection] = host.collect("register_settings", key=lambda s: s.name)
    startup.warn_unknown_names(environment(), startup.known_names(app, sections))
    startup.warn_opened_host_reach(settings)

    host.hooks.on_app_created(app=app)
    return app


def _plugin_settings(host: PluginHost, config: Mapping[str, Any]) -> dict[str, Any]:
    """Parse every plugin's settings section; refuse config keys nobody declares."""
    sections: list[SettingsSection] = host.collect("register_settings", key=lambda s: s.name)
    parsed: dict[str, Any] = {s.name: load_section(s.schema, s.prefix, config, strict=False) for s in sections}
    known = {f.name for f in dataclasses.fields(Settings)}
    declared = known | {
        (s.prefix.removeprefix(PREFIX) + f.name).lower() for s in sections for f in dataclasses.fields(s.schema)
    }
    for key in config:
        if key.removeprefix(PREFIX).lower() not in declared:
            raise SettingsError(f"{key}: unknown setting")
    return parsed


def shared_state(settings: Settings) -> SharedStatePort:
    """The deployment's shared state: Redis when the RQ backend runs on it, else files of the config dir."""
    from core.shared import FileState, RedisState

    if settings.job_backend == "rq" and settings.redis_url:
        from core.jobs.rq_backend import redis_client

        return RedisState(redis_client(settings.redis_url))
    return FileState(settings.resolved_config_dir / "shared")


def _plugins_generation(shared: SharedStatePort) -> int:
    from core.reload import APPS_GEN, generation

    return generation(shared, APPS_GEN)


def _component_registry(host: PluginHost, shared: SharedStatePort) -> tuple[RegistryHolder, ComponentSources]:
    """The registry snapshot of every bundle's components (swapped atomically on reload), and its sources."""
    from core.engine import RegistryHolder
    from core.reload import COMPONENTS_GEN, component_sources, generation

    sources = component_sources(host)
    sources.generation = generation(shared, COMPONENTS_GEN)
    return RegistryHolder(sources.registry()), sources


def _compress(app: Flask) -> None:
    """gzip JSON, HTML, CSS and JS bodies over 1 KB when the client accepts it (Flask-Compress).

    Streamed responses (build events, run streams) are never compressed: a
    compressor would buffer events that clients must see at once.
    """
    from flask_compress import Compress

    app.config.update(
        COMPRESS_ALGORITHM=["gzip"],
        COMPRESS_STREAMS=False,
        COMPRESS_MIN_SIZE=1024,
        COMPRESS_LEVEL=5,
        COMPRESS_MIMETYPES=[
            "application/json",
            "text/html",
            "text/css",
            "text/javascript",
            "application/javascript",
            "image/svg+xml",
        ],
    )
    Compress(app)
    _only_when_asked(app, "after_request", "HTTP_ACCEPT_ENCODING", "Accept-Encoding")


def _only_when_asked(app: Flask, name: str, environ_key: str, vary: str) -> None:
    """Run the extension's ``after_request`` function ``name`` only for requests that carry ``environ_key``.

    Flask-CORS and Flask-Compress look at every response (match the path against their rules, choose
    an encoding from an empty header, ...: 30 us per request together, 2% of a simple run) even when
    the request has no ``Origin`` (not a cross-origin request: Starlette's CORS middleware, which the
    reference serves with, leaves those alone too) or no ``Accept-Encoding`` (nothing to compress
    for). Such a response only says that it depends on that header (``Vary``), as they would.
    """
    funcs = app.after_request_funcs.setdefault(None, [])
    index = next(i for i, f in enumerate(funcs) if getattr(f, "__name__", "") == name)
    wrapped = funcs[index]
    lowered = vary.lower()

    def after_request(response: flask.Response) -> flask.Response:
        if environ_key in flask.request.environ:
            return wrapped(response)  # type: ignore[return-value]
        present = response.headers.get("Vary")
        if not present:
            response.headers["Vary"] = vary
        elif lowered not in present.lower():
            response.headers["Vary"] = f"{present}, {vary}"
        return response

    after_request.__name__ = f"{name}_when_asked"
    funcs[index] = after_request


def _security_schemes(api: Api) -> None:
    spec = api.spec
    spec.components.security_scheme(
        "OAuth2PasswordBearerCookie",
        {"type": "oauth2", "flows": {"password": {"tokenUrl": "api/v1/login", "scopes": {}}}},
    )
    spec.components.security_scheme("API key query", {"type": "apiKey", "in": "query", "name": "x-api-key"})
    spec.components.security_scheme("API key header", {"type": "apiKey", "in": "header", "name": "x-api-key"})


def _cors(app: Flask, settings: Settings) -> None:
    """CORS per ``SERVICE_CORS_*``, without the reflect-any-origin-with-credentials hole.

    With origins ``*`` we answer ``Access-Control-Allow-Origin: *`` and never
    send ``Allow-Credentials`` (browsers then send no cookies cross-site);
    credentials are only allowed for an explicit list of origins, and only
    those origins are echoed back.
    """
    from flask_cors import CORS

    wildcard = "*" in settings.cors_origins
    methods = (
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
        if "*" in settings.cors_allow_methods
        else list(settings.cors_allow_methods)
    )
    headers = "*" if "*" in settings.cors_allow_headers else list(settings.cors_allow_headers)
    CORS(
        app,
        origins="*" if wildcard else list(settings.cors_origins),
        supports_credentials=settings.cors_allow_credentials and not wildcard,
        methods=methods,
        allow_headers=headers,
        expose_headers=["X-Next-Cursor"],  # a list's next-page cursor (the monitor's messages)
        send_wildcard=wildcard,
        vary_header=True,
    )
    _only_when_asked(app, "cors_after_request", "HTTP_ORIGIN", "Origin")
