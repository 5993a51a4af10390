"""Hook implementations of the monitor plugin (thin: logic in services and recorder)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import MessageRecord, VertexRecord
from core.records import Migrations

#: hooks this plugin publishes (``job_queue_metrics``; see docs/plugins/monitor.md)
HOOKSPECS = "service_monitor.hookspecs"

#: one recorder per database engine, shared by every app of the process
_recorders: dict[int, Any] = {}


def recorder(app: Any = None) -> Any:
    from core import appstate
    from service_monitor.recorder import Recorder

    engine = appstate.engine(app)
    found = _recorders.get(id(engine))
    if found is None or found.engine is not engine:
        found = _recorders[id(engine)] = Recorder(engine)
    return found


@hookimpl
def register_blueprints():
    from service_monitor.resources import blp, logs_blp

    return [blp, logs_blp]


@hookimpl
def register_migrations():
    return [Migrations("monitor", Path(__file__).parent / "migrations")]


@hookimpl
def on_messages(user_id: str, messages: Sequence[MessageRecord]) -> None:
    from core import appstate
    from service_monitor import services

    services.store_messages(appstate.engine(), user_id, messages)


@hookimpl
def message_history(user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[MessageRecord] | None:
    from core import db
    from service_monitor import services

    return services.history_records(db.session(), user_id, flow_id, session_id, limit)


@hookimpl
def on_vertex_built(record: VertexRecord) -> None:
    if record.user_id and record.flow_id:
        recorder().submit(record)


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_monitor import services

    services.delete_user_rows(db.session(), user_id)


@hookimpl
def on_app_created(app: Any) -> None:
    from service_monitor import logbuffer
    from service_monitor.config import settings as monitor_settings

    settings = monitor_settings(app)
    if settings.enable_log_retrieval:
        logbuffer.install(settings.log_retrieval_buffer_size)


@hookimpl
def register_settings():
    from service_monitor.config import SECTION

    return [SECTION]
