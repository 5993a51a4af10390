"""Background v2 runs: the core's run job with the ``v2.workflow`` result shaper.

* ``workflows.run``: a v2 run in the background, its events in the job's stream, the engine's
  ``end`` held back until the ``output`` events are written (as the reference frames them);
* ``workflows.resume``: the same job resuming a paused run (``POST /api/v2/workflows/{job_id}/resume``).

Both results are the v2 (sync-shaped) response (:func:`service_workflows.services.response`);
a cancelled or paused run ends the job ``cancelled`` / ``suspended`` (the core's run job does).
"""

from __future__ import annotations

from typing import Any

from core.runs import jobs as run_jobs
from core.runs.shapers import RunShaper, ShapedRun
from service_workflows import services

RUN_JOB = "workflows.run"
RESUME_JOB = "workflows.resume"
SHAPER = "v2.workflow"


class WorkflowShaper(RunShaper):
    """``v2.workflow``: the ``output`` frames before the held ``end``, and the v2 response as the result.

    Shaper arguments (``args``): ``output_ids`` and ``globals_`` of the v2 body.
    """

    name = SHAPER

    def closing_events(self, run: ShapedRun) -> list[tuple[str, Any]]:
        return [("output", item) for item in services.output_events(run.done, run.args.get("output_ids"))]

    def result(self, run: ShapedRun) -> Any:
        req = run.request
        assert run.prepared is not None
        return services.response(
            run.done,
            flow_id=run.prepared.flow.id,
            session_id=(run.checkpoint or {}).get("session_id") or req.session_id,
            job_id=run.job_id,
            output_ids=run.args.get("output_ids"),
            globals_=run.args.get("globals_"),
            public=req.public,
        )


JOBS = [
    run_jobs.job(
        RUN_JOB,
        "Run a flow in the background for the v2 workflows API",
        run_jobs.legacy_run(SHAPER, hold_end=True),  # kwargs {request, output_ids, globals_} of older versions
        module=__name__,
    ),
    run_jobs.job(
        RESUME_JOB, "Resume a paused v2 workflow run with its answer", run_jobs.legacy_resume(SHAPER), module=__name__
    ),
]
