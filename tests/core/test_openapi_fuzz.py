"""Property-based API test: every endpoint in the app's own OpenAPI document, authenticated.

Fails on any 5xx and on any response that does not match its declared schema.
Bounded (examples per operation, no deadline), and it covers every endpoint later plugins add, since it
reads the live document. (schemathesis' own pytest integration does not run on pytest 9 yet, so operations
are iterated here, each under its own hypothesis test.)

The document's operations are dealt round-robin into ``SHARDS`` tests (``RQ_SHARDS`` on RQ), so that
pytest-xdist spreads the fuzz over its workers instead of one worker carrying a test of minutes: each
operation is in exactly one shard, with the same examples as before. The app (and on RQ its worker process)
is built once per test process (session scope) and shared by the shards that process runs; on PostgreSQL
it has a database of its own, since every other test empties the worker's database after it.
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

from core.testing import app_factory, isolated_service_env, own_database
from tests.conftest import superuser
from tests.jobkit import redis_or_skip, stop_processes, wait_rq_workers

# Endpoints whose side effects would invalidate the session the fuzzer uses.
SKIP = {("POST", "/api/v1/logout"), ("DELETE", "/api/v1/users/{user_id}")}
EXAMPLES = 12
RQ_EXAMPLES = 5  # bounded: the same document again, now with jobs on RQ workers
#: tests the operations are dealt into (about 67 s and 23 s of fuzz in all on a quiet machine, the longest shard 12 s)
SHARDS = 16
RQ_SHARDS = 12
#: the document has at least this many operations (a plugin's routes missing from it would drop below)
MIN_OPERATIONS = 15
#: streams that never end, and the seconds each example reads of one (schemathesis' default is its request timeout,
#: 10 s: about 12 s an example at the log stream's production poll, which is most of the fuzz's time). With the
#: poll made fast (``_fast_log_stream``) one second still runs the stream's loop more often than 10 s did.
ENDLESS_STREAMS = {("GET", "/logs-stream")}
STREAM_READ_SECONDS = 1.0
REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")
REPO = Path(__file__).resolve().parents[2]


class Fuzzed:
    """An app, the superuser's API key and the document's operations (less SKIP), in the document's order."""

    def __init__(self, app):
        self.app = app
        self.key = superuser(app.test_client()).api_key
        schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
        self.operations = [
            operation
            for operation in (result.ok() for result in schema.get_all_operations())
            if (operation.method.upper(), operation.path) not in SKIP
        ]
        assert len(self.operations) >= MIN_OPERATIONS, self.names(self.operations)

    @staticmethod
    def names(operations):
        return [f"{operation.method.upper()} {operation.path}" for operation in operations]

    def shard(self, index, shards):
        """Every ``shards``-th operation from the ``index``-th: the shards partition the operations."""
        operations = self.operations[index::shards]
        assert operations, f"shard {index} of {shards} is empty: {len(self.operations)} operations"
        return operations


@pytest.fixture(scope="session")
def fuzzed_app(tmp_path_factory, service_database_url):
    with isolated_service_env():
        database_url = own_database(service_database_url, "fuzz")
        with app_factory(tmp_path_factory.mktemp("fuzz") / "config", database_url) as make_app:
            yield Fuzzed(make_app(rate_limit_enabled=False, enable_log_retrieval=True))


@pytest.fixture(scope="session")
def fuzzed_rq_app(tmp_path_factory, service_database_url):
    """The app on the RQ backend, its jobs on a ``service worker --simple`` of a queue of its own that shares
    the app's database and config dir."""
    from core.app import state
    from core.jobs.rq_backend import RQQueue

    client = redis_or_skip(REDIS_URL, decode=False)
    queue = f"fuzz-{uuid.uuid4().hex[:8]}"
    config_dir = tmp_path_factory.mktemp("fuzzrq") / "config"
    with isolated_service_env():
        database_url = own_database(service_database_url, "fuzzrq") or f"sqlite:///{config_dir / 'service.db'}"
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
        try:
            with app_factory(config_dir, database_url) as make_app:
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
                    yield Fuzzed(app)
                finally:
                    stop_processes([proc], timeout=20)  # SIGKILL if a job it runs keeps it past that
        finally:
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


@pytest.fixture(autouse=True)
def _fast_log_stream(monkeypatch):
    """The log stream polls every 20 ms and writes a keep-alive after three idle polls (production: 1 s, five)."""
    try:
        from service_monitor import resources
    except ImportError:  # an install without the monitor plugin: no log stream in the document
        return
    monkeypatch.setattr(resources, "STREAM_POLL_SECONDS", 0.02)
    monkeypatch.setattr(resources, "STREAM_IDLE_POLLS_BEFORE_KEEPALIVE", 3)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_server_errors_and_responses_match_their_schema(fuzzed_app, shard):
    _fuzz(fuzzed_app, fuzzed_app.shard(shard, SHARDS), EXAMPLES)


@pytest.mark.parametrize("shard", range(RQ_SHARDS))
def test_no_server_errors_on_the_rq_backend(fuzzed_rq_app, shard):
    _fuzz(fuzzed_rq_app, fuzzed_rq_app.shard(shard, RQ_SHARDS), RQ_EXAMPLES)


def test_the_shards_cover_every_operation_once(fuzzed_app):
    dealt = [op for shard in range(SHARDS) for op in Fuzzed.names(fuzzed_app.shard(shard, SHARDS))]
    assert sorted(dealt) == sorted(Fuzzed.names(fuzzed_app.operations))
    assert len(set(dealt)) == len(dealt)


def _read_seconds(operation):
    """How long to read the operation's event stream (None: schemathesis' default). schemathesis' WSGI transport
    uses the timeout only for that."""
    return STREAM_READ_SECONDS if (operation.method.upper(), operation.path) in ENDLESS_STREAMS else None


def _fuzz(fuzzed, operations, examples):
    key = fuzzed.key
    for operation in operations:

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
                timeout=_read_seconds(case.operation),
            )

        check()
