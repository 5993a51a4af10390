"""Bundle reload and extension events (no request objects here).

A reload takes the deployment-wide lock in the core's shared state (a second reload anywhere is
409), imports the bundle afresh (:func:`core.reload.import_bundle`), validates the new
snapshot against every other bundle's components, swaps it in here and publishes the new
component generation, which every other process takes before its next request or job. The flows
that use a changed or removed component are found through the ``flows_using_components`` hook
(the flows plugin owns flows) and reported to their owners as ``flow_migration`` events.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from flask import Flask
from sqlalchemy.orm import Session

from core import appstate, db
from core.engine import RegistryError
from core.errors import ApiError
from core.reload import (
    COMPONENTS_GEN,
    RELOAD_LOCK,
    RELOAD_LOCK_TTL,
    BundleError,
    component_diff,
    generation,
    import_bundle,
    publish_reload,
)
from service_extensions import hookspecs
from service_extensions.models import ExtensionEvent

RELOAD_DOCS = "docs/plugins/extensions.md"

__all__ = ["ReloadFailed", "delete_user_rows", "events_since", "reload_bundle", "settled", "typed_error"]


def typed_error(code: str, message: str, *, location: str = "", hint: str = "", content: Any = None) -> dict[str, Any]:
    """The reference's typed error (``detail`` of a 404/409/422 from the extension routes)."""
    return {
        "code": code,
        "message": message,
        "location": location,
        "content": content,
        "hint": hint,
        "ref_url": RELOAD_DOCS,
    }


class ReloadFailed(ApiError):
    """A reload that did not happen: 404 (unknown bundle), 409 (another in progress), 422 (broken)."""


# --- events ------------------------------------------------------------------------------------------
def add_events(s: Session, items: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
    """Store ``(user_id, type, payload)`` events with one timestamp."""
    now = time.time()
    for user_id, kind, payload in items:
        s.add(ExtensionEvent(user_id=uuid.UUID(str(user_id)), type=kind, timestamp=now, payload=payload))


def _emit(items: list[tuple[str, str, dict[str, Any]]]) -> None:
    with db.transaction() as s:
        add_events(s, items)


def events_since(s: Session, user_id: str, since: float, limit: int = 1000) -> list[dict[str, Any]]:
    """The caller's events strictly after ``since`` (UTC epoch seconds), oldest first."""
    rows = s.scalars(
        sa.select(ExtensionEvent)
        .where(ExtensionEvent.user_id == uuid.UUID(str(user_id)), ExtensionEvent.timestamp > since)
        .order_by(ExtensionEvent.timestamp, ExtensionEvent.created_at)
        .limit(limit)
    )
    return [{"type": e.type, "timestamp": e.timestamp, "payload": e.payload} for e in rows]


def settled(app: Flask | None = None) -> bool:
    """True when no reload is in flight anywhere in the deployment."""
    return appstate.shared(app).get(RELOAD_LOCK) is None


def components_generation(app: Flask | None = None) -> int:
    """The deployment's component generation: it moves with every successful reload (clients refresh palettes)."""
    return generation(appstate.shared(app), COMPONENTS_GEN)


def delete_user_rows(s: Session, user_id: str) -> None:
    s.execute(sa.delete(ExtensionEvent).where(ExtensionEvent.user_id == uuid.UUID(str(user_id))))


# --- reload ------------------------------------------------------------------------------------------
def _result(bundle: str, reload_id: str) -> dict[str, Any]:
    return {
        "ok": False,
        "bundle": bundle,
        "reload_id": reload_id,
        "components_added": [],
        "components_removed": [],
        "components_changed": [],
        "errors": [],
        "warnings": [],
    }


def reload_bundle(user_id: str, extension_id: str, bundle_name: str, app: Flask | None = None) -> dict[str, Any]:
    """Reload ``bundle_name`` (of distribution ``extension_id``) in every process; the typed result.

    Raises :class:`ReloadFailed`: 409 while another reload runs, 404 for an unknown bundle,
    422 (with the result) when the bundle cannot load or clashes with another bundle.
    """
    svc = appstate.state(app)
    reload_id = str(uuid.uuid4())
    if not svc.shared.cas(RELOAD_LOCK, None, reload_id, ttl=RELOAD_LOCK_TTL):
        raise ReloadFailed(
            409,
            typed_error(
                "extension-reload-in-progress",
                "Another extension bundle reload is in progress",
                location=f"{extension_id}/{bundle_name}",
                hint="Poll GET /api/v1/extensions/events until settled is true, then retry.",
            ),
        )
    result = _result(bundle_name, reload_id)
    try:
        started = {"bundle": bundle_name, "extension_id": extension_id, "reload_id": reload_id}
        _emit([(user_id, "bundle_reload_started", started)])
        return _reload_locked(svc, user_id, extension_id, bundle_name, result)
    finally:
        svc.shared.delete(RELOAD_LOCK)


def _fail(user_id: str, status: int, error: dict[str, Any], result: dict[str, Any]) -> ReloadFailed:
    result["errors"].append({k: error[k] for k in ("code", "message", "location", "hint")})
    _emit([(user_id, "bundle_reload_failed", {**result})])
    return ReloadFailed(status, {**error, "result": result})


def _reload_locked(
    svc: Any, user_id: str, extension_id: str, bundle_name: str, result: dict[str, Any]
) -> dict[str, Any]:
    sources = svc.component_sources
    try:
        loaded = import_bundle(bundle_name, extension_id)
    except BundleError as exc:
        error = typed_error(exc.code, exc.message, location=exc.location, hint=exc.hint)
        raise _fail(user_id, 404 if exc.code == "extension-not-found" else 422, error, result) from None
    result["warnings"].extend(loaded.warnings)
    with sources.lock:
        old = list(sources.sources.get(bundle_name, []))
        try:
            registry = sources.registry({bundle_name: loaded.classes})
        except RegistryError as exc:
            error = typed_error(
                "extension-duplicate-component",
                str(exc),
                location=f"{loaded.distribution}:{bundle_name}",
                hint="Every component key must be unique across the installed bundles.",
            )
            raise _fail(user_id, 422, error, result) from None
        diff = component_diff(old, loaded.classes)
        svc.components.swap(registry)
        sources.apply({bundle_name: loaded.classes})
        sources.generation = publish_reload(svc.shared, bundle_name)
    result.update(
        ok=True,
        components_added=diff["added"],
        components_removed=diff["removed"],
        components_changed=diff["changed"],
        generation=sources.generation,
        distribution=loaded.distribution,
        version=loaded.version,
    )
    affected = _affected_flows(svc, diff["removed"] + diff["changed"], set(diff["removed"]))
    result["flows_affected"] = affected
    events: list[tuple[str, str, dict[str, Any]]] = [(user_id, "bundle_reload_succeeded", {**result})]
    by_owner: dict[str, list[dict[str, Any]]] = {}
    for flow in affected:
        by_owner.setdefault(flow["user_id"], []).append(flow)
    for owner, flows in by_owner.items():
        events.append(
            (owner, "flow_migration", {"bundle": bundle_name, "reload_id": result["reload_id"], "flows": flows})
        )
    _emit(events)
    return result


def _affected_flows(svc: Any, keys: list[str], removed: set[str]) -> list[dict[str, Any]]:
    """Flows using the changed or removed components, each node marked ``changed`` or ``removed``."""
    if not keys:
        return []
    found: list[dict[str, Any]] = []
    for items in svc.host.hooks.each(hookspecs.flows_using_components, component_keys=sorted(keys)):
        for flow in items:
            nodes = [
                {"id": n.id, "type": n.type, "change": "removed" if n.type in removed else "changed"}
                for n in flow.nodes
            ]
            found.append({"flow_id": flow.flow_id, "name": flow.name, "user_id": flow.user_id, "nodes": nodes})
    return found
