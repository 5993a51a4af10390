"""Property-based API test: every endpoint in the app's own OpenAPI document, authenticated.

Fails on any 5xx and on any response that does not match its declared schema.
Bounded (examples per operation, no deadline) so the whole run stays well under a minute,
and it covers every endpoint later plugins add, since it reads the live document.
(schemathesis' own pytest integration does not run on pytest 9 yet, so operations
are iterated here, each under its own hypothesis test.)
"""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.conftest import superuser
from tests.jobkit import redis_or_skip, wait_rq_workers

# Endpoints whose side effects would invalidate the session the fuzzer uses.
SKIP = {("POST", "/api/v1/logout"), ("DELETE", "/api/v1/users/{user_id}")}
EXAMPLES = 12
RQ_EXAMPLES = 5  # bounded: the same document again, now with jobs on RQ workers
REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def rq_worker(tmp_path, service_database_url):
    """A ``service worker --simple`` on a queue of its own, sharing the test app's database and config dir."""
    client = redis_or_skip(REDIS_URL, decode=False)
    queue = f"fuzz-{uuid.uuid4().hex[:8]}"
    config_dir = tmp_path / "config"
    database_url = service_database_url or f"sqlite:///{config_dir / 'service.db'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_CONFIG_DIR=str(config_dir),
        SERVICE_DATABASE_URL=database_url,
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_LOG_LEVEL="warning",
        PYTHONPATH=str(REPO),
    )
    yield queue, database_url, env, config_dir
    for key in client.scan_iter(match=f"*{queue}*", count=1000):
        client.delete(key)


def _start_worker(queue, env, log_path):
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "worker", "--simple", "--queue", queue],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    wait_rq_workers(redis.Redis.from_url(REDIS_URL), [queue], [proc], lambda: Path(log_path).read_text()[-2000:])
    return proc


def test_no_server_errors_and_responses_match_their_schema(make_app):
    app = make_app(rate_limit_enabled=False, enable_log_retrieval=True)
    _fuzz(app, EXAMPLES)


def test_no_server_errors_on_the_rq_backend(make_app, rq_worker):
    from core.app import state
    from core.jobs.rq_backend import RQQueue

    queue, database_url, env, config_dir = rq_worker
    app = make_app(
        rate_limit_enabled=False,
        enable_log_retrieval=True,
        job_backend="rq",
        redis_url=REDIS_URL,
        database_url=database_url,
    )
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    from service_build.config import init_app

    init_app(app)
    proc = _start_worker(queue, env, config_dir / "worker.log")
    try:
        _fuzz(app, RQ_EXAMPLES)
    finally:
        proc.terminate()
        proc.wait(10)


def _fuzz(app, examples):
    key = superuser(app.test_client()).api_key
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    tested = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIP:
            continue

        @given(case=operation.as_strategy())
        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case):
            # identity: schemathesis' WSGI transport does not decode gzip bodies
            case.call_and_validate(
                headers={"x-api-key": key, "Accept-Encoding": "identity"},
                checks=[not_a_server_error, response_schema_conformance],
            )

        check()
        tested.append(f"{operation.method.upper()} {operation.path}")
    assert len(tested) >= 15, tested
