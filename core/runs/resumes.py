"""Where a paused run went on: the resume pointer, read from the checkpoints.

A run that paused is answered with :func:`core.runs.jobs.resume`, which continues it as a
new job; the checkpoint keeps both ids (``job_id``: the run that paused, ``resumed_job_id``:
the job that continues it). A surface that lets a client keep using the paused run's id
(the v2 workflows API: its status and stop follow the run) asks :func:`current` for the job
that now carries it, hop by hop (a resumed run may pause and be resumed again).
"""

from __future__ import annotations

import sqlalchemy as sa

from core import db
from core.jobs import JobInfo, JobQueue, JobState
from core.runs.checkpoints import RESUMED, Checkpoint

#: a run can pause and be resumed again; the chain is followed this far at most
MAX_RESUMES = 32


def resumed_as(owner: str, job_id: str) -> str | None:
    """The job that continued the owner's run ``job_id`` after it paused (None: not resumed)."""
    query = (
        sa.select(Checkpoint.resumed_job_id)
        .where(Checkpoint.owner == owner, Checkpoint.job_id == job_id, Checkpoint.status == RESUMED)
        .order_by(Checkpoint.created_at.desc())
        .limit(1)
    )
    found = db.session().scalar(query)
    return str(found) if found else None


def current(jobs: JobQueue, owner: str, job_id: str) -> JobInfo | None:
    """The owner's job that now carries the run ``job_id`` started: itself, or the job it was resumed as.

    A paused job (``suspended``), or a run that paused without a job of its own (a sync run or a live
    stream), leads to the job that continued it; every hop is looked up under ``owner``. None when
    neither the run nor a continuation is the owner's job.
    """
    info = jobs.info_for(job_id, owner)
    for _ in range(MAX_RESUMES):
        if info is not None and info.state is not JobState.SUSPENDED:
            break
        following = resumed_as(owner, job_id)
        nxt = jobs.info_for(following, owner) if following else None
        if nxt is None:
            break
        job_id, info = str(following), nxt
    return info


__all__ = ["MAX_RESUMES", "current", "resumed_as"]
