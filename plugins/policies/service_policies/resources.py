"""HTTP endpoints of the policies plugin (superusers only, as in the reference).

* ``/api/v1/catalog-policy/components`` and ``/templates``: GET, PUT ``{blocked}``
* ``/api/v1/catalog-policy/usage`` and ``/usage/flows``: component usage
* ``/api/v1/model-provider-policy``: GET, PUT and POST ``{approved_provider_ids}``
* ``/api/v1/policy-changes``: the change log (ours; the reference keeps a policy-bundle history)
"""

from __future__ import annotations

import logging
from typing import Any

from flask_smorest import Blueprint
from sqlalchemy.exc import IntegrityError

from core import db
from core.auth import authenticated, current_actor
from service_policies import hookspecs, schemas, services, usage
from service_policies.runtime import canonical, runtime

log = logging.getLogger(__name__)

catalog_blp = Blueprint("catalog_policy", __name__, url_prefix="/api/v1/catalog-policy", description="Catalog policy")
provider_blp = Blueprint("model_provider_policy", __name__, url_prefix="/api/v1", description="Model provider policy")


def _catalog_out(state: services.PolicyState) -> dict[str, Any]:
    return {"blocked": state.items, "managed_externally": state.managed_externally}


def _read(kind: str) -> dict[str, Any]:
    return _catalog_out(services.read(db.session(), runtime().cfg, kind))


def _replace(kind: str, items: list[str]) -> services.PolicyState:
    rt = runtime()
    with db.transaction() as s:
        state = services.replace(s, rt.cfg, kind, items, current_actor())
    rt.snapshot.invalidate()
    return state


@catalog_blp.route("/components", methods=["GET"])
@catalog_blp.response(200, schemas.CatalogPolicySchema)
@authenticated("superuser")
def get_component_policy():
    """The complete set of blocked component keys."""
    return _read("components")


@catalog_blp.route("/components", methods=["PUT"])
@catalog_blp.arguments(schemas.BlockedSetSchema)
@catalog_blp.response(200, schemas.CatalogPolicySchema)
@authenticated("superuser")
def put_component_policy(body):
    """Replace the blocked component keys (at most 1000, each 1-255 characters); 409 when managed externally."""
    return _catalog_out(_replace("components", body["blocked"]))


@catalog_blp.route("/templates", methods=["GET"])
@catalog_blp.response(200, schemas.CatalogPolicySchema)
@authenticated("superuser")
def get_template_policy():
    """The complete set of blocked template keys."""
    return _read("templates")


@catalog_blp.route("/templates", methods=["PUT"])
@catalog_blp.arguments(schemas.BlockedSetSchema)
@catalog_blp.response(200, schemas.CatalogPolicySchema)
@authenticated("superuser")
def put_template_policy(body):
    """Replace the blocked template keys; 409 when managed externally."""
    return _catalog_out(_replace("templates", body["blocked"]))


@catalog_blp.route("/usage", methods=["GET"])
@catalog_blp.response(200, schemas.UsageSchema)
@authenticated("superuser")
def get_usage():
    """How many flows use each component (canonical keys; a flow counts once per component)."""
    rt = runtime()

    def compute() -> dict[str, Any]:
        s = db.session()
        ensure_index(s)
        return usage.counts(s)

    return rt.counts.get(compute)


@catalog_blp.route("/usage/flows", methods=["GET"])
@catalog_blp.arguments(schemas.UsageFlowsQuerySchema, location="query")
@catalog_blp.response(200, schemas.UsageFlowsSchema)
@authenticated("superuser")
def get_usage_flows(query):
    """The flows using ``component``, sorted by name then id, at most ``limit``; ``total`` counts all."""
    s = db.session()
    ensure_index(s)
    key = canonical()(query["component"])
    out = usage.flows_using(s, key, query["limit"])
    out["component"] = query["component"]
    return out


def ensure_index(s: Any) -> None:
    """Backfill the usage index once (flows stored before the plugin was installed)."""
    if usage.index_complete(s):
        return
    from core import appstate

    hooks = appstate.hooks()
    try:
        with db.transaction() as tx:
            usage.rebuild(
                tx, lambda after, limit: hooks.first(hookspecs.stored_flows, after_id=after, limit=limit), canonical()
            )
    except IntegrityError:  # another process rebuilt it at the same moment: its index is as good
        log.info("usage index built concurrently by another process")


def ensure_index_if_small() -> None:
    """Build the usage index now when it is missing and every stored flow fits in one page."""
    from core import appstate

    s = db.session()
    try:
        if usage.index_complete(s):
            return
        first = appstate.hooks().first(hookspecs.stored_flows, after_id=None, limit=usage.PAGE) or []
    finally:
        s.rollback()
    if len(first) < usage.PAGE:
        ensure_index(s)


def _provider_out(state: services.PolicyState) -> dict[str, Any]:
    from service_policies.providers import registered

    return {
        "approved_provider_ids": state.items,
        "registered_providers": registered(),
        "managed_externally": state.managed_externally,
    }


@provider_blp.route("/model-provider-policy", methods=["GET"])
@provider_blp.response(200, schemas.ProviderPolicySchema)
@authenticated("superuser")
def get_provider_policy():
    """Approved provider ids (empty: every provider allowed) and the registered providers."""
    return _provider_out(services.read(db.session(), runtime().cfg, "providers"))


@provider_blp.route("/model-provider-policy", methods=["PUT", "POST"])
@provider_blp.arguments(schemas.ProviderPolicyWriteSchema)
@provider_blp.response(200, schemas.ProviderPolicySchema)
@authenticated("superuser")
def put_provider_policy(body):
    """Replace the approved provider ids atomically (ids slug-normalised: ``"Bad Id!"`` -> ``bad-id``)."""
    return _provider_out(_replace("providers", body["approved_provider_ids"]))


@provider_blp.route("/policy-changes", methods=["GET"])
@provider_blp.arguments(schemas.ChangesQuerySchema, location="query")
@provider_blp.response(200, schemas.ChangeSchema(many=True))
@authenticated("superuser")
def get_changes(query):
    """The policy change log, newest first: who, when, before, after."""
    return services.changes(db.session(), query["policy"], query["limit"])
