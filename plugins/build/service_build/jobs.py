"""Build jobs: the core's run job under the name ``build.flow``, with the ``build.events`` result shaper.

What a build does that other background runs do not (:class:`BuildShaper`):

* its stream keeps the build events only (``core.runs.wire.is_build_event``);
* a build that cannot start (flow not found, invalid graph, refused by ``check_run``) is a
  finished job whose ``error`` event says why (the editor shows it), result ``{"status": "invalid"}``;
* a partial build (``start_component_id``) reuses the cached results of the vertices before it,
  and every build that was not cancelled refreshes the cache;
* a failed flow is a finished job (its ``error`` event says why); the result is
  ``{"status", "build_duration"}``.

A cancelled run ends the job ``cancelled`` (or failed, when the job's time limit was the
reason), a paused one ``suspended`` (its end event is the ``suspended`` event).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core import runs
from core.engine import RunEvent, RunFailed, VertexResult
from core.errors import ApiError, ValidationFailed
from core.runs import jobs as run_jobs
from core.runs.shapers import RunShaper, ShapedRun
from core.runs.wire import is_build_event
from service_build.events import error_payload
from service_build.services import BUILD_JOB, SHAPER, BuildRequest, for_cache, graph_error_text, store_results


class BuildShaper(RunShaper):
    """``build.events``: build events in the stream, the partial-build cache around the run."""

    name = SHAPER

    def keep(self, event: RunEvent) -> bool:
        return is_build_event(event)

    def refused(self, run: ShapedRun, exc: ApiError) -> Any:
        req = run.request
        extra: dict[str, Any] = {}
        if isinstance(exc, runs.FlowNotFound):
            text = f"Flow with id {req.flow} not found"
        elif isinstance(exc, ValidationFailed):
            text, extra = graph_error_text(list(exc.detail)), {"errors": exc.detail}
        else:  # refused by check_run
            text = str(exc.detail)
        first = req.inputs[0] if req.inputs else runs.RunInput()
        flow_id = req.run_flow_id or req.flow
        data = error_payload(text, flow_id=flow_id, session_id=first.session or flow_id, **extra)
        run.emit(RunFailed(text, data=data))
        return {"status": "invalid"}

    def previous_results(self, run: ShapedRun) -> Mapping[str, VertexResult] | None:
        assert run.prepared is not None
        prep = for_cache(run.prepared, run.ctx.owner)
        entry, valid = prep.cached(run.app)
        run.scratch.update(prep=prep, entry=entry)
        return valid if run.request.start_component_id else None

    def ran(self, run: ShapedRun) -> None:
        store_results(run.app, run.scratch["prep"], run.scratch["entry"], run.done)

    def result(self, run: ShapedRun) -> Any:
        result = run.done.results[-1]
        return {"status": result.status, "build_duration": result.build_duration}


def _legacy(kwargs: dict[str, Any]) -> run_jobs.RunJobArgs:
    """The kwargs of a build queued by an older version (a :class:`BuildRequest`)."""
    req = BuildRequest(**kwargs)
    return run_jobs.RunJobArgs(shaper=SHAPER, request=req.run_request().to_json(), flow=req.flow)


JOB = run_jobs.job(BUILD_JOB, "Build a flow, streaming its events", _legacy, module=__name__)
