"""Built-in endpoints: health, version, configuration and the API docs."""

from __future__ import annotations

import logging

import flask
from flask import current_app, jsonify, send_from_directory
from flask_smorest import Blueprint
from marshmallow import INCLUDE, Schema, fields, post_dump

from core import appstate
from core.auth import resolve_actor
from core.builtin import services
from core.errors import ApiError

log = logging.getLogger(__name__)

health_blp = Blueprint("health", __name__, description="Liveness and readiness")
base_blp = Blueprint("base", __name__, url_prefix="/api/v1", description="Version and configuration")
docs_blp = flask.Blueprint("docs", __name__)


class HealthSchema(Schema):
    status = fields.String(required=True)


class VersionSchema(Schema):
    version = fields.String(required=True)
    main_version = fields.String(required=True)
    package = fields.String(required=True)


def _config_schema() -> type[Schema]:
    """Every configuration member of the spec, typed (``type`` is ``full`` or ``public``)."""
    kinds = {bool: fields.Boolean, int: fields.Integer, str: fields.String, dict: fields.Dict}
    members: dict[str, fields.Field] = {}
    for key, kind in services.CONFIG_MEMBERS.items():
        members[key] = fields.List(fields.String()) if kind is list else kinds[kind]()
    members["type"] = fields.String(required=True, metadata={"description": "`full` or `public`"})
    return Schema.from_dict(members, name="ConfigSchema")


ConfigSchema = _config_schema()


@health_blp.route("/health")
@health_blp.response(200, HealthSchema)
def health():
    """Liveness: the process answers."""
    return {"status": "ok"}


class HealthCheckSchema(Schema):
    """``status`` and one member per probe (``register_health_checks``): ``"ok"`` or what it reported."""

    class Meta:
        unknown = INCLUDE

    status = fields.String(required=True)
    db = fields.String()
    chat = fields.String()
    redis = fields.String()

    @post_dump(pass_original=True)
    def _probes(self, data: dict, original: dict, **_kw: object) -> dict:
        # every probe a plugin contributed is reported, not only the ones named above
        return {**{k: str(v) for k, v in original.items()}, **data}


@health_blp.route("/health_check")
@health_blp.response(200, HealthCheckSchema)
@health_blp.alt_response(500, schema=HealthCheckSchema)
def health_check():
    """Readiness: the database and, when configured, Redis and the job queue answer."""
    result = {"status": "ok"}
    failed = False
    for check in appstate.state().health_checks:
        try:
            outcome = check.func(current_app._get_current_object())  # type: ignore[attr-defined]
            result[check.name] = outcome or "ok"
        except Exception as exc:  # a probe's failure is reported, not raised
            log.warning("health check %s failed: %s", check.name, exc)
            result[check.name] = "error"
            failed = True
    result["chat"] = "ok" if appstate.state().jobs is not None else "error"
    if failed:
        result["status"] = "error"
        response = jsonify({"detail": result})
        response.status_code = 500
        return response
    return result


@base_blp.route("/version")
@base_blp.response(200, VersionSchema)
def version():
    """Version of the running service."""
    return services.version_info()


@base_blp.route("/config")
@base_blp.response(200, ConfigSchema)
def config():
    """Configuration for the editor: full for authenticated callers, reduced otherwise."""
    try:
        actor = resolve_actor("optional")
    except ApiError:
        actor = None  # a stale token must not hide the public configuration
    svc = appstate.state()
    extensions = svc.host.hooks.extend_config(actor=actor, public=actor is None)
    return services.config_for(svc.settings, actor, extensions)


_DOCS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Flow Builder Service API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#swagger-ui"});</script>
</body></html>"""


@docs_blp.route("/docs")
def docs():
    """Interactive API documentation (Swagger UI served from local files, no CDN)."""
    return flask.Response(_DOCS_PAGE, mimetype="text/html")


@docs_blp.route("/docs/static/<path:filename>")
def docs_static(filename: str):
    import swagger_ui_bundle

    return send_from_directory(swagger_ui_bundle.swagger_ui_path, filename)
