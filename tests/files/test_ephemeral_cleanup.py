"""Ephemeral uploads older than SERVICE_FILES_EPHEMERAL_MAX_AGE_SECONDS are deleted by a scheduled job."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
import sqlalchemy as sa

from core.app import state
from core.jobs import JobState
from tests.files.conftest import PLUGINS, upload


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS, files_ephemeral_max_age_seconds=3600)


def _age(app, file_id: str, seconds: float) -> None:
    from service_files.models import StoredFile

    from core import db

    with app.app_context(), db.transaction() as s:
        when = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)
        s.execute(sa.update(StoredFile).where(StoredFile.id == uuid.UUID(file_id)).values(created_at=when))


def _wait(app, job_id: str):
    jobs = state(app).jobs
    end = time.monotonic() + 120
    while not (info := jobs.info(job_id)).state.terminal and time.monotonic() < end:
        time.sleep(0.02)
    return info


def test_cleanup_job_deletes_only_old_ephemeral_files(client, alice, bob, app):
    from service_files.cleanup import CLEANUP_JOB, tick
    from service_files.config import runtime

    old = upload(client, alice, b"old bytes", "old.txt", "?ephemeral=true").get_json()
    young = upload(client, alice, b"young", "young.txt", "?ephemeral=true").get_json()
    kept = upload(client, alice, b"kept", "kept.txt").get_json()  # not ephemeral: never expires
    others = upload(client, bob, b"bob's", "b.txt", "?ephemeral=true").get_json()
    for file_id in (old["id"], kept["id"], others["id"]):
        _age(app, file_id, 7200)
    _age(app, young["id"], 60)
    with app.app_context():
        from service_files.models import StoredFile

        from core import db

        key = db.session().get(StoredFile, uuid.UUID(old["id"])).storage_key
        path = runtime(app).storage.local_path(key)
        assert path is not None and path.exists()
        job_id = tick(app)
        assert job_id is not None and tick(app) is None  # one job per interval, across processes
    info = _wait(app, job_id)
    assert info.name == CLEANUP_JOB and info.state is JobState.FINISHED, info.error
    assert info.result == {"removed": 2}  # alice's old one and bob's old one, whoever owns them
    assert client.get(f"/api/v2/files/{old['id']}", headers=alice.bearer).status_code == 404
    assert client.get(f"/api/v2/files/{others['id']}", headers=bob.bearer).status_code == 404
    assert not path.exists()  # the bytes went with the row
    assert client.get(f"/api/v2/files/{young['id']}", headers=alice.bearer).data == b"young"
    assert client.get(f"/api/v2/files/{kept['id']}", headers=alice.bearer).data == b"kept"


def test_a_files_request_starts_the_scheduler_once_per_process(client, alice, app):
    import os

    from service_files.cleanup import SCHEDULER

    upload(client, alice, b"x", "x.txt", "?ephemeral=true")
    assert SCHEDULER.pid == os.getpid()
    assert app in SCHEDULER.apps.values()
