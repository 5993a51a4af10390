"""Fixtures of the build tests: an in-process app, and RQ apps served by real ``service worker`` processes.

The RQ workers (one SimpleWorker, one forking worker, each on its own queue
named for this run) start once per test process and use a database shared
with the RQ apps of the tests (SQLite file, or the PostgreSQL test database
when ``SERVICE_TEST_DATABASE_URL`` is set). Redis: ``SERVICE_TEST_REDIS_URL``
(default db 11); every key of the run is deleted afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from tests import jobkit
from tests.build.buildkit import app_plugins, child_env
from tests.jobkit import stop_processes

REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")
WORKER_PLUGINS = "accounts,flows,build,standard,slowtest"


@pytest.fixture
def app(make_app):
    return make_app(plugins=app_plugins())


def redis_or_skip() -> redis.Redis:
    return jobkit.redis_or_skip(REDIS_URL)


def wait_workers(conn: Any, queues: list[str], procs: list[subprocess.Popen], logs: Path, count: int = 1) -> None:
    """Poll until the workers listen (:func:`tests.jobkit.wait_rq_workers`); a failure quotes their logs."""

    def describe() -> str:
        return "".join(f"--- {p.name}\n{p.read_text()[-2000:] or '(empty)'}\n" for p in sorted(logs.glob("*.log")))

    jobkit.wait_rq_workers(conn, queues, procs, describe, count)


def cleanup_redis(tags: list[str]) -> None:
    jobkit.forget_queues(redis.Redis.from_url(REDIS_URL), tags)


class RQEnv:
    """Two workers on two queues of this run, and the database they share with the tests' apps."""

    def __init__(self, tmp: Path, database_url: str | None) -> None:
        tag = uuid.uuid4().hex[:8]
        self.tag = f"b{tag}"
        self.queues = {"simple": f"{self.tag}-simple", "fork": f"{self.tag}-fork"}
        self.dir = tmp
        self.database_url = database_url or f"sqlite:///{tmp / 'service.db'}"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        from core.app import create_app

        create_app(config={"config_dir": self.dir, "database_url": self.database_url}, plugins=app_plugins())
        for kind, queue in self.queues.items():
            args = [sys.executable, "-m", "core.cli", "worker", "--queue", queue, "--name", f"{queue}-w"]
            if kind == "simple":
                args.append("--simple")
            env = child_env(
                self.dir,
                SERVICE_PLUGINS=WORKER_PLUGINS,
                SERVICE_REDIS_URL=REDIS_URL,
                SERVICE_JOB_BACKEND="rq",
                SERVICE_DATABASE_URL=self.database_url,
            )
            with open(self.dir / f"worker-{kind}.log", "w") as log:
                self.procs.append(subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT))
        wait_workers(redis.Redis.from_url(REDIS_URL), list(self.queues.values()), self.procs, self.dir)

    def stop(self) -> None:
        stop_processes(self.procs)
        cleanup_redis([self.tag])


@pytest.fixture(scope="session")
def rq_env(tmp_path_factory, service_database_url):
    redis_or_skip()
    env = RQEnv(tmp_path_factory.mktemp("buildrq"), service_database_url)
    try:
        env.start()
        yield env
    finally:
        env.stop()


def use_queue(app: Any, queue_name: str) -> Any:
    """Point an RQ app at one of this run's queues (and the build store at the same namespace)."""
    from service_build.config import init_app

    from core.app import state
    from core.jobs.rq_backend import RQQueue

    svc = state(app)
    svc.jobs.close()
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue_name)
    init_app(app)
    return app


@pytest.fixture
def make_rq_app(make_app, rq_env):
    def factory(kind: str = "simple", **config: Any) -> Any:
        app = make_app(
            plugins=app_plugins(),
            job_backend="rq",
            redis_url=REDIS_URL,
            config_dir=rq_env.dir,
            database_url=rq_env.database_url,
            **config,
        )
        return use_queue(app, rq_env.queues[kind])

    return factory


@pytest.fixture(params=["inprocess", "rq"])
def any_app(request, make_app):
    """The same test on the in-process backend and on RQ (SimpleWorker)."""
    if request.param == "inprocess":
        return make_app(plugins=app_plugins())
    return request.getfixturevalue("make_rq_app")("simple")
