"""Result shapers: what a surface makes of a background run, named, so the one run job serves every surface.

The core's run job (:mod:`core.runs.jobs`) is one skeleton: prepare the run (a request, or a
checkpoint to resume), execute it with its events in the job's stream, end the job (cancelled,
suspended) and return a result. What differs between surfaces is a :class:`RunShaper`,
contributed by name through the ``register_run_shapers`` hook (the core's own ``v1.run``
included) and chosen by the job's ``shaper`` argument:

* :meth:`~RunShaper.keep`: which run events the job's stream keeps;
* :meth:`~RunShaper.refused`: a run that cannot start (flow not found, invalid, refused);
  raise to fail the job (the default), or return the job's result;
* :meth:`~RunShaper.previous_results` and :meth:`~RunShaper.ran`: around the execution
  (the build's partial-build cache);
* :meth:`~RunShaper.closing_events`: events written before the run's held ``end``
  (the v2 ``output`` frames; the job's ``hold_end`` option);
* :meth:`~RunShaper.result`: the job's result (raise to fail the job).

Each hook gets the :class:`ShapedRun` of one job: its context, arguments, request, prepared
run and outcome, and a ``scratch`` dict the shaper may use between its hooks.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from core.engine import RunEvent, simplified_run_response
from core.errors import ApiError

if TYPE_CHECKING:
    from flask import Flask

    from core.engine import VertexResult
    from core.jobs import JobContext
    from core.runs.service import PreparedRun, RunOutcome, RunRequest

#: the shaper of the core's ``runs.flow`` / ``runs.resume`` jobs: the simplified run response
V1_RUN = "v1.run"
EXTENSION = "core.run_shapers"


@dataclass
class ShapedRun:
    """One run of the run job, as its shaper sees it."""

    ctx: JobContext
    request: RunRequest
    #: the shaper's own JSON arguments, given at enqueue time (``args=``)
    args: dict[str, Any] = field(default_factory=dict)
    prepared: PreparedRun | None = None
    outcome: RunOutcome | None = None
    #: True when the run continues a checkpoint
    resumed: bool = False
    #: the checkpoint's stored data when ``resumed`` (its ``flow``, ``session_id``, ...)
    checkpoint: dict[str, Any] | None = None
    #: what the shaper keeps between its hooks for this run
    scratch: dict[str, Any] = field(default_factory=dict)
    #: writes a run event to the job's stream (through the job's event filter)
    emit: Callable[[RunEvent], None] = field(default=lambda event: None)

    @property
    def app(self) -> Flask:
        return self.ctx.app

    @property
    def job_id(self) -> str:
        return self.ctx.job_id

    @property
    def done(self) -> RunOutcome:
        assert self.outcome is not None, "the run has not executed yet"
        return self.outcome


class RunShaper(abc.ABC):
    """What a surface makes of a background run (subclass it; ``name`` is unique)."""

    name: ClassVar[str]

    def keep(self, event: RunEvent) -> bool:
        """True for the run events the job's stream keeps (besides the ``events`` option)."""
        return True

    def refused(self, run: ShapedRun, exc: ApiError) -> Any:
        """The run could not start (404 flow, 422 graph, 403 ``check_run``): raise to fail the job, or
        return the job's result (the run's events may say why)."""
        raise exc

    def previous_results(self, run: ShapedRun) -> Mapping[str, VertexResult] | None:
        """Results a partial run reuses (``run.prepared`` is built); None: none."""
        return None

    def ran(self, run: ShapedRun) -> None:  # noqa: B027 - optional: most shapers keep nothing
        """Called once the run executed (``run.outcome``), before the job ends."""

    def closing_events(self, run: ShapedRun) -> list[tuple[str, Any]]:
        """``(name, data)`` events written to the stream after the run, before its held ``end``."""
        return []

    @abc.abstractmethod
    def result(self, run: ShapedRun) -> Any:
        """The job's JSON result of a completed or failed run (raise to fail the job)."""


class V1RunShaper(RunShaper):
    """``v1.run``: a failing component fails the job, naming it; the result is the simplified run response."""

    name = V1_RUN

    def result(self, run: ShapedRun) -> Any:
        from core.runs.service import RunInput, failure_text

        outcome = run.done
        if outcome.failed is not None:
            raise RuntimeError(failure_text(outcome.failed))
        first = run.request.inputs[0] if run.request.inputs else RunInput()
        return simplified_run_response(outcome.results[-1], input_value=first.value)


class UnknownShaper(LookupError):
    """No result shaper of that name is registered."""


def shapers(app: Flask) -> dict[str, RunShaper]:
    """The app's shapers by name (``register_run_shapers``, collected once per app; duplicates are refused)."""
    found: dict[str, RunShaper] | None = app.extensions.get(EXTENSION)
    if found is None:
        from core import appstate

        collected: list[RunShaper] = appstate.host(app).collect("register_run_shapers", key=lambda s: s.name)
        found = {s.name: s for s in collected}
        app.extensions[EXTENSION] = found
    return found


def shaper(app: Flask, name: str) -> RunShaper:
    try:
        return shapers(app)[name]
    except KeyError:
        raise UnknownShaper(f"no run result shaper {name!r} is registered") from None


__all__ = ["V1_RUN", "RunShaper", "ShapedRun", "UnknownShaper", "V1RunShaper", "shaper", "shapers"]
