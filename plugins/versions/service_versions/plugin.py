"""Hook implementations of the versions plugin (thin: the logic is in store, audit and resources)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import AuditEntry, FlowRecord, PublishedVersion
from core.records import Migrations

#: the hooks this plugin publishes (it calls ``restore_flow``; the flows plugin answers)
HOOKSPECS = "service_versions.hookspecs"


@hookimpl
def register_blueprints():
    from service_versions.audit_resources import audits_blp, flow_audits_blp
    from service_versions.resources import versions_blp

    return [flow_audits_blp, audits_blp, versions_blp]


@hookimpl
def register_migrations():
    return [Migrations("versions", Path(__file__).parent / "migrations")]


@hookimpl
def register_settings():
    from core.records import SettingsSection
    from service_versions.config import SETTINGS_NAME, SETTINGS_PREFIX, VersionsSettings

    return [SettingsSection(SETTINGS_NAME, VersionsSettings, SETTINGS_PREFIX)]


@hookimpl
def on_audit(entry: AuditEntry) -> None:
    from core import appstate
    from service_versions import audit

    audit.submit(appstate.engine(), entry)


@hookimpl
def on_app_created(app: Any) -> None:
    from core import appstate
    from service_versions import audit
    from service_versions.config import settings

    days = settings(app).audit_retention_days
    if days:
        audit.prune(appstate.engine(app), days)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_versions import store

    store.delete_user_rows(db.session(), user_id)


# --- hooks the flows plugin publishes (it may be absent) ---------------------------------------------
@hookimpl(optionalhook=True)
def on_flow_changed(
    flow_id: str, user_id: str | None, flow: FlowRecord | None, author_id: str | None, autosave: bool
) -> None:
    from core import db
    from service_versions import store

    if flow is None:
        store.forget_flow(db.session(), flow_id)
    else:
        store.record_save(db.session(), flow, author_id, autosave=autosave)


@hookimpl(optionalhook=True)
def published_version(flow_id: str, changed_at: str | None) -> PublishedVersion | None:
    from service_versions import store

    return store.published_version(flow_id, changed_at)
