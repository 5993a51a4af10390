"""HTTP endpoints of extensions (``/api/v1/extensions/...``): events, bundle reload, plugins on and off."""

from __future__ import annotations

from flask import request
from flask_smorest import Blueprint

from core import audit, db, plugin_state
from core.auth import authenticated, current_actor, require
from core.errors import ApiError
from core.openapi import no_body
from service_extensions import schemas, services
from service_extensions.config import settings as extensions_settings

extensions_blp = Blueprint("extensions", __name__, url_prefix="/api/v1/extensions", description="Extensions")


@extensions_blp.route("/events", methods=["GET"])
@extensions_blp.arguments(schemas.EventsQuerySchema, location="query")
@extensions_blp.response(200, schemas.EventsSchema)
@authenticated("user")
def get_extension_events(query):
    """The caller's extension lifecycle events after ``since`` (UTC epoch), and whether reloads settled."""
    if "keyspace" in request.args:
        raise ApiError(
            422,
            services.typed_error(
                "extension-events-keyspace-rejected",
                "The keyspace query parameter is not accepted: events are scoped to the caller",
                location="query.keyspace",
                hint="Drop the keyspace parameter.",
            ),
        )
    events = services.events_since(db.session(), current_actor().owner_id, query["since"])
    return {"events": events, "settled": services.settled(), "generation": services.components_generation()}


@extensions_blp.route("/<extension_id>/bundles/<bundle_name>/reload", methods=["POST"])
@extensions_blp.doc(requestBody=no_body("the bundle is named by the path"))
@extensions_blp.response(200, schemas.ReloadResultSchema)
@authenticated("user")
def reload_extension_bundle(extension_id: str, bundle_name: str):
    """Re-import an installed bundle and swap its components into every process (superuser).

    404 unless ``SERVICE_ENABLE_EXTENSION_RELOAD``; 409 while another reload runs; 422 with the
    typed result when the bundle is broken, its source is missing, its name does not match or a
    component key clashes.
    """
    if not extensions_settings().enable_extension_reload:
        raise ApiError(
            404,
            services.typed_error(
                "extension-reload-disabled",
                "Extension bundle reload is disabled",
                location=f"{extension_id}/{bundle_name}",
                hint="Set SERVICE_ENABLE_EXTENSION_RELOAD=true to allow reloading bundles at run time.",
            ),
        )
    require("admin")
    result = services.reload_bundle(current_actor().owner_id, extension_id, bundle_name)
    audit.record("extension:reload", "plugin", extension_id, name=bundle_name, user_id=current_actor().id)
    return result


@extensions_blp.route("/plugins", methods=["GET"])
@extensions_blp.response(200, schemas.PluginsSchema)
@authenticated("superuser")
def list_plugins():
    """Installed plugins: enabled or not, the stored override, and whether this process loaded them."""
    return plugin_state.status(state_app())


@extensions_blp.route("/plugins/<name>/<action>", methods=["POST"])
@extensions_blp.doc(requestBody=no_body("the plugin and the action are named by the path"))
@extensions_blp.response(200, schemas.SwitchSchema)
@authenticated("superuser")
def switch_plugin(name: str, action: str):
    """Switch a plugin on (its migrations run first) or off in every web process and worker."""
    if action not in ("enable", "disable"):
        raise ApiError(404, "Not Found")
    if action == "disable" and name == "extensions":
        raise ApiError(409, "The extensions plugin serves this API; use `service plugins disable extensions`")
    try:
        result = plugin_state.switch(state_app(), name, action == "enable", by=current_actor().username or None)
        audit.record(f"plugin:{action}", "plugin", name, name=name, user_id=current_actor().id)
        return result
    except plugin_state.SwitchError as exc:
        status = 404 if str(exc).startswith("No installed plugin") else 409
        raise ApiError(status, str(exc)) from None


def state_app():
    from flask import current_app

    return current_app._get_current_object()  # type: ignore[attr-defined]
