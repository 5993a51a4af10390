"""Hook implementations of the triggers plugin (thin: the logic is in its modules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.records import Migrations


@hookimpl
def register_blueprints():
    from service_triggers.resources import triggers_blp

    return [triggers_blp]


@hookimpl
def register_migrations():
    return [Migrations("triggers", Path(__file__).parent / "migrations")]


@hookimpl
def register_settings():
    from core.records import SettingsSection
    from service_triggers.config import SETTINGS_NAME, SETTINGS_PREFIX, TriggersSettings

    return [SettingsSection(SETTINGS_NAME, TriggersSettings, SETTINGS_PREFIX)]


@hookimpl
def register_jobs():
    from service_triggers.executions import RUN_JOB

    return [RUN_JOB]


@hookimpl
def register_commands():
    from service_triggers.cli import executions_group, schedules_group

    return [schedules_group, executions_group]


@hookimpl
def observe_run(run: Any) -> Any:
    from service_triggers.recorder import observe  # a loaded module's lookup: the first run imports it

    return observe(run)


@hookimpl
def on_run_queued(run: Any) -> None:
    from service_triggers.recorder import queued

    queued(run)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    import sqlalchemy as sa

    from core import db
    from service_triggers.models import Execution, Policy, Schedule, Webhook

    session = db.session()
    for model in (Execution, Schedule, Webhook, Policy):
        session.execute(sa.delete(model).where(model.user_id == str(user_id)))


@hookimpl(optionalhook=True)
def reencrypt_secrets(cipher: Any) -> int:
    """``service secret-key rotate``: the signing secrets of the webhook triggers, under the new key."""
    import sqlalchemy as sa

    from core import db
    from service_triggers.models import Webhook

    session = db.session()
    rows = session.execute(sa.select(Webhook.id, Webhook.secret)).all()
    for webhook_id, token in rows:
        rotated = cipher.rotate(token.encode()).decode()
        session.execute(sa.update(Webhook).where(Webhook.id == webhook_id).values(secret=rotated))
    return len(rows)
