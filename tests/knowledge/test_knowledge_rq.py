"""Ingestion on the RQ backend: a real ``service worker`` process on Redis, the same database as the
web app (SQLite file, or PostgreSQL with SERVICE_TEST_DATABASE_URL); a worker killed mid-ingestion
leaves the knowledge base ``failed`` with its previous content, nothing half-written.

Redis: ``SERVICE_TEST_KNOWLEDGE_REDIS_URL`` (default db 8), **flushed** before and after.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis

from tests.jobkit import stop_processes
from tests.knowledge.conftest import PLUGINS, create_kb, ingest, upload, wait_job, wait_kb
from tests.knowledge.corpus import DOCUMENTS, QUESTIONS

pytestmark = pytest.mark.slow

REDIS_URL = os.environ.get("SERVICE_TEST_KNOWLEDGE_REDIS_URL", "redis://127.0.0.1:6379/8")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def rq_redis(tmp_path_factory):
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    # one test at a time on this Redis database (xdist runs tests in parallel): the queue name is shared
    lock_path = Path(tempfile.gettempdir()) / f"service-knowledge-rq-{REDIS_URL.rsplit('/', 1)[-1]}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        client.flushdb()
        try:
            yield client
        finally:
            client.flushdb()
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def app(make_app, rq_redis):
    return make_app(plugins=PLUGINS, job_backend="rq", redis_url=REDIS_URL)


@pytest.fixture
def workers(app, tmp_path):
    from core.app import state

    procs: list[subprocess.Popen] = []
    url = state(app).engine.url.render_as_string(hide_password=False)

    def start(name: str) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
        env.update(
            SERVICE_ENV_FILE=os.devnull,
            SERVICE_CONFIG_DIR=str(state(app).settings.resolved_config_dir),
            SERVICE_DATABASE_URL=url,
            SERVICE_JOB_BACKEND="rq",
            SERVICE_REDIS_URL=REDIS_URL,
            SERVICE_PLUGINS=",".join(PLUGINS),
            SERVICE_LOG_LEVEL="warning",
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        )
        log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 - the child keeps its copy
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "worker", "--simple", "--name", name],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        procs.append(proc)
        return proc

    yield start
    stop_processes(procs)


def test_ingestion_runs_on_an_rq_worker(client, alice, workers):
    workers("kb-worker-1")
    create_kb(client, alice, "corpus", chunk_size=400, chunk_overlap=0)
    names = {upload(client, alice, text.encode(), name)["id"]: name for name, text in DOCUMENTS.items()}
    job_id = ingest(client, alice, "corpus", file_ids=list(names))
    kb = wait_kb(client, alice, "corpus", timeout=240)
    assert kb["status"] == "ready", kb
    job = wait_job(client, alice, "corpus", job_id)
    assert job["state"] == "finished" and job["progress"]["stage"] == "done"
    question, expected = next(iter(QUESTIONS.items()))
    hits = client.post(
        "/api/v1/knowledge_bases/corpus/search", json={"query": question}, headers=alice.bearer
    ).get_json()["results"]
    assert names[hits[0]["metadata"]["source"]] == expected


def test_a_worker_killed_mid_ingestion_leaves_the_base_failed_and_whole(client, alice, workers, app):
    proc = workers("kb-worker-2")
    create_kb(client, alice, "big", chunk_size=500, chunk_overlap=0)
    ingest(client, alice, "big", text="a first small text", source_name="first")
    before = wait_kb(client, alice, "big", timeout=240)
    assert before["status"] == "ready" and before["chunks"] == 1
    # long enough to be caught mid-way: hundreds of chunks to embed
    words = " ".join(f"word{i % 997}" for i in range(60000))
    job_id = ingest(client, alice, "big", text=words, source_name="second")
    end = time.monotonic() + 120
    while time.monotonic() < end:
        job = client.get(f"/api/v1/knowledge_bases/big/jobs/{job_id}", headers=alice.bearer).get_json()
        if job["progress"] and job["progress"]["stage"] == "embedding":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"ingestion never reached the embedding stage: {job}")
    os.kill(proc.pid, signal.SIGKILL)  # the machine is gone: no cleanup code runs
    proc.wait()
    after = wait_kb(client, alice, "big", timeout=90, until=("failed", "ready"))
    assert after["status"] == "failed", after
    assert "stopped unexpectedly" in after["failure_reason"]
    assert after["chunks"] == before["chunks"] == 1  # the first text intact, nothing of the second
    chunks = client.get("/api/v1/knowledge_bases/big/chunks", headers=alice.bearer).get_json()["chunks"]
    assert [c["content"] for c in chunks] == ["a first small text"]
    with app.app_context():
        import sqlalchemy as sa
        from service_knowledge.models import Pending

        from core import db

        assert db.session().scalar(sa.select(sa.func.count()).select_from(Pending)) == 0
