"""Hook implementations of the policies plugin (thin: the logic is in services, usage and enforce)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core import hookimpl
from core.auth import Actor
from core.contracts import FlowRecord
from core.records import Migrations, SettingsSection

#: the hooks this plugin publishes: the stored flows it indexes, the model providers it governs
HOOKSPECS = "service_policies.hookspecs"


@hookimpl
def register_settings():
    from service_policies.config import POLICIES_PREFIX, PoliciesConfig, UsageConfig

    return [
        SettingsSection("policies", PoliciesConfig, POLICIES_PREFIX),
        SettingsSection("usage", UsageConfig, "SERVICE_"),
    ]


@hookimpl
def register_blueprints():
    from service_policies.resources import catalog_blp, provider_blp

    return [catalog_blp, provider_blp]


@hookimpl
def register_migrations():
    return [Migrations("policies", Path(__file__).parent / "migrations")]


@hookimpl
def register_commands():
    from service_policies.cli import policies_group

    return [policies_group]


def _blocked() -> Any:
    from service_policies.runtime import runtime

    return runtime().snapshot.get()


@hookimpl
def blocked_components() -> list[str] | None:
    from core.runs import registry
    from service_policies.enforce import expanded

    snap = _blocked()
    if not snap.components:
        return None
    return sorted(expanded(snap.components, snap.revisions, registry()))


@hookimpl
def blocked_templates() -> list[str] | None:
    snap = _blocked()
    return sorted(snap.templates) or None


@hookimpl
def check_run(user_id: str | None, flow: FlowRecord, surface: str) -> None:
    # on every run's path: one snapshot read, one cached expansion, one cached node-type lookup
    snap = _blocked()
    if not snap.components:
        return
    from core import appstate
    from service_policies.enforce import check, expanded

    check(flow, expanded(snap.components, snap.revisions, appstate.registry()))


@hookimpl
def extend_config(actor: Actor | None, public: bool) -> Mapping[str, object] | None:
    from core.runs import registry
    from service_policies.enforce import display_names

    snap = _blocked()
    return {
        "catalog_governance_enabled": bool(snap.components or snap.templates),
        "blocked_component_types": display_names(snap.components, registry()),
    }


@hookimpl
def model_provider_allowed(provider_id: str) -> bool | None:
    from service_policies.providers import approved

    return approved(provider_id)


@hookimpl(optionalhook=True)  # the flows plugin publishes it
def on_flow_changed(flow_id: str, user_id: str | None, flow: FlowRecord | None) -> None:
    from core import db
    from service_policies import usage
    from service_policies.runtime import canonical, runtime

    s = db.session()
    if flow is None:
        usage.unindex_flow(s, flow_id)
    else:
        usage.index_flow(s, flow.replace(id=flow_id, user_id=user_id), canonical())
    runtime().counts.clear()


@hookimpl
def on_user_deleted(user_id: str) -> None:
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_policies.models import FlowComponent, FlowEntry
    from service_policies.runtime import runtime

    s = db.session()
    uid = uuid.UUID(str(user_id))
    ids = sa.select(FlowEntry.flow_id).where(FlowEntry.user_id == uid)
    s.execute(sa.delete(FlowComponent).where(FlowComponent.flow_id.in_(ids)))
    s.execute(sa.delete(FlowEntry).where(FlowEntry.user_id == uid))
    runtime().counts.clear()


@hookimpl
def on_app_created(app: Any) -> None:
    """A small or new server gets its usage index at start-up; a large one on the first usage read."""
    from service_policies.resources import ensure_index_if_small

    with app.app_context():
        ensure_index_if_small()


@hookimpl
def settings_export() -> dict[str, Any]:
    """The ``policies`` section of ``service settings``: each kind's list (those managed externally too)."""
    from core import db
    from service_policies import services
    from service_policies.runtime import runtime

    cfg = runtime().cfg
    return {"policies": {kind: services.read(db.session(), cfg, kind).items for kind in services.KINDS}}


@hookimpl
def settings_apply(sections: Mapping[str, Any], dry_run: bool) -> list[str]:
    """Replace each kind listed under ``policies`` (a kind managed externally must already match)."""
    import uuid

    import click

    from core import db
    from core.errors import ApiError
    from service_policies import services
    from service_policies.runtime import runtime

    wanted = sections.get("policies")
    if wanted is None:
        return []
    if not isinstance(wanted, Mapping) or set(wanted) - set(services.KINDS):
        raise click.ClickException(f"policies: an object of lists by kind ({', '.join(services.KINDS)})")
    s, cfg, lines = db.session(), runtime().cfg, []
    actor = Actor(id=uuid.UUID(int=0), username="settings-file", is_superuser=True, via="cli")
    for kind in sorted(wanted):
        items = wanted[kind]
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise click.ClickException(f"policies: {kind}: a list of strings")
        try:
            cleaned = services.clean_items(kind, items)
        except ApiError:
            raise click.ClickException(f"policies: {kind}: an item is not valid") from None
        current = services.read(s, cfg, kind)
        if current.items == cleaned:
            continue
        if current.managed_externally:
            raise click.ClickException(f"policies: {kind} is managed externally by {current.source}; change it there")
        added, removed = sorted(set(cleaned) - set(current.items)), sorted(set(current.items) - set(cleaned))
        lines.append(f"policies: {kind} +{added} -{removed}")
        if not dry_run:
            services.replace(s, cfg, kind, cleaned, actor)
            runtime().snapshot.invalidate()
    return lines
