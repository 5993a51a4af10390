"""``service worker``: run RQ jobs for the ``rq`` job backend.

The worker builds the app once (the CLI hands it over as the current app),
imports every job module before forking, and runs RQ's forking worker (or,
with ``--simple``, RQ's SimpleWorker: no fork, faster, but RQ's stop command
is ignored, so cancel is cooperative only). Forked work horses drop inherited
database connections through ``core.db``'s at-fork hook. No gevent here: run
workers as plain, unpatched processes.

rq is imported inside the command, so building the app (and every other
command) does not pay for it.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import TYPE_CHECKING

import click
from flask.cli import with_appcontext

if TYPE_CHECKING:
    from flask import Flask

log = logging.getLogger(__name__)


def preload(app: Flask) -> list[str]:
    """Import the module of every registered job (so forked work horses need no imports)."""
    from core.appstate import state

    modules = sorted({job.func.__module__ for job in state(app).job_registry.values()} | {"core.jobs.rq_backend"})
    for name in modules:
        if name != "__main__":
            importlib.import_module(name)
    return modules


def run_worker(
    app: Flask,
    *,
    queue: str = "service",
    burst: bool = False,
    simple: bool = False,
    name: str | None = None,
    logging_level: str | None = None,
) -> bool:
    """Run an RQ worker for ``app`` until stopped (or, with ``burst``, until the queue is empty)."""
    from rq.serializers import JSONSerializer

    from core.appstate import state
    from core.errors import StartupError
    from core.jobs import rq_backend

    settings = state(app).settings
    if not settings.redis_url:
        raise StartupError("service worker needs SERVICE_REDIS_URL")
    preload(app)
    kind = "simple" if simple else "fork"
    rq_backend.set_worker_app(app, kind)
    store = rq_backend.RedisJobStore(rq_backend.redis_client(settings.redis_url), queue)
    lost = store.reap()  # jobs of workers that died while nobody was looking
    if lost:
        log.warning("marked %d lost job(s) of queue %s as failed", lost, queue)
    fork_cls, simple_cls = rq_backend.worker_classes()
    cls = simple_cls if simple else fork_cls
    worker = cls(
        [queue],
        connection=rq_backend.redis_client(settings.redis_url, decode=False),
        serializer=JSONSerializer,
        name=name,
    )
    return bool(
        worker.work(burst=burst, with_scheduler=False, logging_level=logging_level or settings.log_level.upper())
    )


@click.command("worker")
@click.option("--queue", default="service", show_default=True, help="RQ queue to take jobs from.")
@click.option("--burst", is_flag=True, help="Quit once the queue is empty.")
@click.option(
    "--simple", is_flag=True, help="Run jobs in this process (no fork): faster, but cancel is cooperative only."
)
@click.option("--name", default=None, help="Worker name (default: random).")
@with_appcontext
def worker(queue: str, burst: bool, simple: bool, name: str | None) -> None:
    """Run background jobs of the rq job backend (SERVICE_JOB_BACKEND=rq)."""
    from flask import current_app

    from core.errors import StartupError

    app = current_app._get_current_object()  # type: ignore[attr-defined]
    try:
        run_worker(app, queue=queue, burst=burst, simple=simple, name=name)
    except StartupError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
