"""Hook implementations of the core's built-in features (thin: logic lives beside)."""

from __future__ import annotations

from core import hookimpl
from core.records import HealthCheck, Job


@hookimpl
def register_blueprints():
    from core.builtin.resources import base_blp, docs_blp, health_blp

    return [health_blp, base_blp, docs_blp]


@hookimpl
def register_commands():
    from core.builtin.cli import db_group, plugins_group
    from core.jobs.worker import worker

    return [db_group, plugins_group, worker]


@hookimpl
def register_jobs() -> list[Job]:
    from core.builtin.jobs import JOBS

    return JOBS


@hookimpl
def register_health_checks() -> list[HealthCheck]:
    from core.builtin.services import check_database, check_redis

    return [HealthCheck("db", check_database), HealthCheck("redis", check_redis)]
