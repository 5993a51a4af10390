"""Hook implementations of the files plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import FileRecord
from core.records import Job, Migrations, SettingsSection


@hookimpl
def register_settings():
    from service_files.config import SETTINGS_PREFIX, FilesConfig

    return [SettingsSection("files", FilesConfig, SETTINGS_PREFIX)]


@hookimpl
def register_blueprints():
    from service_files.resources import files_blp, flow_files_blp

    return [files_blp, flow_files_blp]


@hookimpl
def register_jobs():
    from service_files.cleanup import CLEANUP_JOB, cleanup_job

    return [
        Job(CLEANUP_JOB, cleanup_job, "Delete ephemeral uploads older than SERVICE_FILES_EPHEMERAL_MAX_AGE_SECONDS")
    ]


@hookimpl
def register_migrations():
    return [Migrations("files", Path(__file__).parent / "migrations")]


@hookimpl
def on_app_created(app: Any) -> None:
    from service_files.config import init_app

    init_app(app)


@hookimpl
def read_user_file(user_id: str, ref: str) -> bytes | None:
    import uuid

    from core import appstate, db
    from core.builtin.code_execution import hardening_of
    from service_files import services
    from service_files.config import runtime

    rt = runtime()
    hardening = hardening_of(appstate.settings())
    return services.read_for_user(db.session(), rt.storage, rt.root, hardening, uuid.UUID(str(user_id)), ref)


@hookimpl
def write_user_file(user_id: str, name: str, content: bytes, append: bool) -> FileRecord | None:
    import uuid

    from core import db
    from service_files import services
    from service_files.config import runtime

    s = db.session()
    try:
        row = services.write_for_user(s, runtime().storage, uuid.UUID(str(user_id)), name, content, append=append)
        out = services.file_out(row)
        s.commit()
    except Exception:
        s.rollback()
        raise
    return FileRecord(id=str(out["id"]), name=out["name"], path=out["path"], size=out["size"])


@hookimpl
def on_user_deleted(user_id: str) -> None:
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_files.config import runtime
    from service_files.models import StoredFile

    s = db.session()
    keys = list(s.scalars(sa.select(StoredFile.storage_key).where(StoredFile.user_id == uuid.UUID(str(user_id)))))
    s.execute(sa.delete(StoredFile).where(StoredFile.user_id == uuid.UUID(str(user_id))))
    s.flush()
    storage = runtime().storage

    def _remove_bytes(_session: Any) -> None:  # only once the deletion is committed
        from service_files.services import remove_bytes

        remove_bytes(storage, keys)

    sa.event.listen(s, "after_commit", _remove_bytes, once=True)


@hookimpl(optionalhook=True)
def resource_ref(kind: str, resource_id: str) -> Any:
    """The teams plugin's ``resource_ref`` for a stored user file (shares of ``file``), any owner's."""
    if kind != "file":
        return None
    from core import db
    from service_files import services
    from service_files.models import StoredFile

    key = services._uuid(resource_id)
    row = None if key is None else db.session().get(StoredFile, key)
    return None if row is None or row.ephemeral else services.file_ref(row)


@hookimpl(optionalhook=True)
def on_flow_owner_changed(flow_id: str, previous_owner_id: str, owner_id: str) -> None:
    """The flow's v1 files (``/api/v1/files/*/{flow_id}``, kept under the flow's owner) follow it to its new
    owner, in the moving transaction; their bytes stay at their storage keys."""
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_files.models import StoredFile

    s = db.session()
    s.execute(
        sa.update(StoredFile)
        .where(StoredFile.flow_id == uuid.UUID(flow_id), StoredFile.user_id == uuid.UUID(previous_owner_id))
        .values(user_id=uuid.UUID(owner_id))
    )
