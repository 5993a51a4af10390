"""HTTP endpoints of the catalog plugin (paths and codes as the reference serves them).

* ``GET /api/v1/all``: the component catalog
* ``POST /api/v1/validate/code``, ``POST /api/v1/validate/prompt``, ``POST /api/v1/custom_component/update``
* ``GET /api/v1/model_providers/models``: the model picker's live lists
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Response, request
from flask_smorest import Blueprint

from core import appstate, openapi, runs
from core.auth import allowed, authenticated, current_actor
from core.engine import ComponentError
from core.errors import ApiError
from core.runs import registry
from service_catalog import catalog, hookspecs, schemas, validate

blp = Blueprint("components", __name__, url_prefix="/api/v1", description="Component catalog and validation")
log = logging.getLogger(__name__)


# --- component catalog --------------------------------------------------------------------------------
@blp.route("/all", methods=["GET"])
@blp.arguments(schemas.CatalogQuerySchema, location="query")
@blp.response(200, description="``{category: {key: node}, component_display_names: {...}}``, gzip-encoded")
@blp.doc(
    responses={
        "200": {
            "description": "``{category: {key: node}, component_display_names: {...}}``, gzip-encoded",
            "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "object"}}}},
        }
    }
)
@authenticated("user")
def all_components(query: Mapping[str, Any]):
    """Every component type by category, display names in the ``Accept-Language`` locale."""
    if query["include_blocked"] and not allowed(current_actor(), "admin"):
        raise ApiError(403, "Only superusers can include blocked components")
    reg = registry()
    locale = request.accept_languages.best_match(catalog.locales(reg), default=catalog.DEFAULT_LOCALE)
    hidden: frozenset[str] = frozenset()
    if not query["include_blocked"]:
        hidden = appstate.hooks().blocked_components()
    raw, packed = catalog.encoded(reg, locale or catalog.DEFAULT_LOCALE, hidden)
    response = Response(raw, mimetype="application/json")
    response.vary.add("Accept-Encoding")
    response.vary.add("Accept-Language")
    response.headers["Content-Language"] = locale or catalog.DEFAULT_LOCALE
    if request.accept_encodings["gzip"] > 0:
        response.set_data(packed)
        response.headers["Content-Encoding"] = "gzip"
    return response


# --- validation ----------------------------------------------------------------------------------------
@blp.route("/validate/code", methods=["POST"])
@blp.arguments(schemas.CodeSchema)
@blp.response(200, schemas.CodeValidationSchema)
@authenticated("user")
def validate_code(body: Mapping[str, Any]):
    """Check Python code for syntax errors and unknown imports, with the AST only (nothing runs)."""
    return validate.validate_code(body["code"])


@blp.route("/custom_component/update", methods=["POST"])
@blp.arguments(schemas.CustomComponentUpdateSchema)
@blp.response(200, description="the component node with the field updated")
@blp.doc(
    responses={
        "200": {
            "description": "the component node with the field updated",
            "content": {"application/json": {"schema": {"type": "object", "description": "a frontend node"}}},
        }
    }
)
@authenticated("user")
def update_custom_component(body: Mapping[str, Any]):
    """Set one field of a custom component node (allowed by SERVICE_ALLOW_CUSTOM_COMPONENTS, else 403).

    With ``SERVICE_CUSTOM_COMPONENT_ADMIN_ONLY`` only superusers may. The code is
    checked for syntax with the AST only; it is never executed here.
    """
    from core.builtin.code_execution import require_custom_code

    require_custom_code(appstate.settings(), current_actor())
    return validate.update_custom_component(dict(body))


@blp.route("/validate/prompt", methods=["POST"])
@blp.arguments(schemas.PromptSchema)
@blp.response(200, schemas.PromptValidationSchema)
@authenticated("user")
def validate_prompt(body: Mapping[str, Any]):
    """The prompt's ``{variables}``, and the frontend node with one input field per variable."""
    return validate.validate_prompt(body)


# --- the model picker's live lists ---------------------------------------------------------------------
MODEL_LIST = {
    "type": "object",
    "properties": {"provider": {"type": "string"}, "models": {"type": "array", "items": {"type": "object"}}},
}


@blp.route("/model_providers/models", methods=["GET"])
@blp.doc(responses={"200": openapi.json_response("the provider's live model list", MODEL_LIST)})
@blp.response(200, description="`{provider, models}`: the provider's live model list")
@authenticated("user")
def model_provider_models():
    """The models a provider offers the caller (the editor's model picker): live from the provider's ``GET /models``.

    ``provider`` is a provider name of the model field (``OpenAI Compatible``, ``OpenAI``, ``Ollama``);
    ``refresh=true`` bypasses the short cache. 403 when the model-provider policy blocks it, 422 for an
    unknown or unconfigured provider (no endpoint, no key, an address the egress rules refuse), 502
    ``{detail}`` when the provider fails or cannot be reached: a fixed sentence naming the provider, never
    the failure's own text (that goes to the server log).
    """
    provider = (request.args.get("provider") or "OpenAI Compatible").strip()
    refresh = request.args.get("refresh", "").lower() in ("1", "true", "yes")
    ctx = runs.make_context(
        user_id=str(current_actor().owner_id),
        flow={"id": None, "name": "", "data": {}},
        store_messages=False,
        log_builds=False,
    )
    pid = provider.lower().replace(" ", "-")
    if ctx.provider_allowed is not None and not ctx.provider_allowed(pid):
        raise ApiError(403, f"Model provider '{pid}' is not allowed by the model-provider policy")
    try:
        models = appstate.hooks().first(hookspecs.list_models, context=ctx, provider=provider, refresh=refresh)
    except ComponentError as exc:
        if isinstance(exc, ValueError):  # not usable as configured: no endpoint or key, a blocked address, a bad key
            raise ApiError(422, [{"loc": ["query", "provider"], "msg": str(exc), "type": "value_error"}]) from exc
        log.warning("model list of %s failed: %s", provider, exc)
        raise ApiError(502, _unreachable(provider)) from exc
    except Exception as exc:  # an unexpected failure: logged whole, answered without its text
        log.exception("model list of %s failed unexpectedly", provider)
        raise ApiError(502, _unreachable(provider)) from exc
    if models is None:
        msg = f"Unknown provider '{provider}'"
        raise ApiError(422, [{"loc": ["query", "provider"], "msg": msg, "type": "value_error"}])
    return {"provider": provider, "models": list(models)}


def _unreachable(provider: str) -> str:
    return (
        f"{provider} could not list its models: it did not answer as expected. Check its base URL and key "
        "(Model providers page) and that the server is running."
    )
