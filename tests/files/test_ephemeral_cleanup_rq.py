"""The ephemeral-file cleanup job on the RQ backend: enqueued by the scheduler's tick, run by a real
``service worker`` process on Redis against the web app's database and storage directory."""

from __future__ import annotations

import io

import pytest

from core.jobs import JobState
from tests.files.test_ephemeral_cleanup import _age, _wait
from tests.knowledge.conftest import upload
from tests.knowledge.test_knowledge_rq import app, rq_redis, workers  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow


def test_cleanup_runs_on_an_rq_worker(client, alice, app, workers):  # noqa: F811
    from service_files.cleanup import CLEANUP_JOB, tick

    workers("files-cleanup-worker")
    old = upload(client, alice, b"old", "old.txt")  # a regular file: kept
    temp = client.post(
        "/api/v2/files?ephemeral=true",
        data={"file": (io.BytesIO(b"temp"), "temp.txt")},
        headers=alice.bearer,
    ).get_json()
    _age(app, old["id"], 200_000)
    _age(app, temp["id"], 200_000)  # older than the default 86,400 s
    with app.app_context():
        job_id = tick(app)
    assert job_id is not None
    info = _wait(app, job_id)
    assert info.name == CLEANUP_JOB and info.state is JobState.FINISHED, info.error
    assert info.result == {"removed": 1}
    assert client.get(f"/api/v2/files/{temp['id']}", headers=alice.bearer).status_code == 404
    assert client.get(f"/api/v2/files/{old['id']}", headers=alice.bearer).data == b"old"
