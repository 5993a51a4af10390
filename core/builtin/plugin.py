"""Hook implementations of the core's built-in features (thin: logic lives beside)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import FlowRecord
from core.records import HealthCheck, Job, Migrations


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
    from core.runs.jobs import RESUME_JOB, RUN_JOB, job, legacy_resume, legacy_run
    from core.runs.shapers import V1_RUN

    return [
        *JOBS,
        job(RUN_JOB, "the run job: run a flow in the background (the run service's enqueue)", legacy_run(V1_RUN)),
        job(RESUME_JOB, "the run job resuming a suspended run from its checkpoint", legacy_resume(V1_RUN)),
    ]


@hookimpl
def register_run_shapers() -> list[Any]:
    from core.runs.shapers import V1RunShaper

    return [V1RunShaper()]


@hookimpl
def register_migrations() -> list[Migrations]:
    import core.plugin_state
    import core.runs.checkpoints  # noqa: F401 - the models join the metadata (tests truncate them)

    return [Migrations("core", Path(__file__).parent.parent / "runs" / "migrations")]


@hookimpl
def register_health_checks() -> list[HealthCheck]:
    from core.builtin.services import check_database, check_redis

    return [HealthCheck("db", check_database), HealthCheck("redis", check_redis)]


@hookimpl
def check_run(user_id: str | None, flow: FlowRecord, surface: str) -> None:
    from core import appstate
    from core.builtin.code_execution import check_code_execution, hardening_of

    st = appstate.state()
    check_code_execution(hardening_of(st.settings), st.components.current, flow)
