"""What the plugin does for each run: OpenTelemetry spans, Prometheus samples and the native trace."""

from __future__ import annotations

import logging
import os
from typing import Any

from core.contracts import RunEnded, RunStarted
from core.engine.observe import ComponentEnd, ModelCall
from service_observability import budgets, metrics, otel
from service_observability.native import NativeTrace, cost

log = logging.getLogger(__name__)

#: native traces on, and their retention (set when an app is created: process-wide, as tracing is)
native: dict[str, Any] = {"on": False, "retention_days": 30}


def capture_content() -> bool:
    """Prompt and completion texts go on model call spans only when the GenAI variable allows it."""
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def observing() -> bool:
    return native["on"] or otel.tracer() is not None or metrics.current() is not None


class RunWatch:
    """The observer of one run when only metrics are on: counts the run and its model calls."""

    __slots__ = ("budget", "measured", "span", "trace")

    def __init__(self, span: otel.RunSpan | None, measured: metrics.Metrics | None, trace: NativeTrace | None) -> None:
        self.span = span
        self.measured = measured
        self.trace = trace
        self.budget: budgets.RunBudget | None = None

    def end(self, ended: RunEnded) -> None:
        measured = self.measured
        if measured is not None:
            surface = ended.run.surface
            measured.runs.labels(surface, ended.status).inc()
            measured.run_duration.labels(surface, ended.status).observe(ended.duration_s)
        if self.span is not None:
            self.span.end(ended)
        if self.trace is not None:
            self.trace.finish(ended)

    def model_call(self, call: ModelCall) -> None:
        measured = self.measured
        if measured is not None:
            measured.model_calls.labels(call.provider, call.model).inc()
            if call.input_tokens:
                measured.model_tokens.labels(call.provider, call.model, "input").inc(call.input_tokens)
            if call.output_tokens:
                measured.model_tokens.labels(call.provider, call.model, "output").inc(call.output_tokens)
        if self.span is not None:
            otel.model_call_span(call, capture_content())
        if self.trace is not None:
            self.trace.model_call(call)
        if self.budget is not None:
            tokens = (call.input_tokens or 0) + (call.output_tokens or 0)
            self.budget.add(tokens, cost(call.model, call.input_tokens or 0, call.output_tokens or 0))


class SpanningRunWatch(RunWatch):
    """The observer of one run while tracing or native traces are on: components too."""

    __slots__ = ()

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        ends = []
        if self.span is not None:
            ends.append(otel.start_component(vertex_id, display_name, component_type))
        if self.trace is not None:
            ends.append(self.trace.component(vertex_id, display_name, component_type))

        def end(status: str, error: str | None) -> None:
            for finish in reversed(ends):
                finish(status, error)

        return end


class BudgetedRunWatch(SpanningRunWatch):
    """The observer of a run that counts against budgets: refuses the model call that would exceed one."""

    __slots__ = ()

    def before_model_call(self, provider: str, model: str) -> None:
        from core.engine import ComponentError

        assert self.budget is not None
        refused = self.budget.refused()
        if refused is not None:
            raise ComponentError(f"{budgets.message(refused)}: the model call was not made.")


def _native(run: RunStarted) -> NativeTrace | None:
    if not native["on"]:
        return None
    from core import appstate

    try:
        engine = appstate.engine()
    except RuntimeError:  # no app context: nowhere to store it
        log.debug("run %s: no app context, no native trace", run.run_id)
        return None
    return NativeTrace(run, engine, native["retention_days"])


def observe(run: RunStarted) -> RunWatch | None:
    """The run's observer, or None when tracing, metrics and native traces are all off."""
    measured = metrics.current()
    span = otel.start_run(run)
    trace = _native(run)
    counted = _budget(run, trace) if trace is not None else None
    if counted is not None and trace is not None:
        watch: RunWatch = BudgetedRunWatch(span, measured, trace)
        watch.budget = counted
        trace.budgeted = True
        return watch
    if span is not None or trace is not None:
        return SpanningRunWatch(span, measured, trace)
    return RunWatch(None, measured, None) if measured is not None else None


def _budget(run: RunStarted, trace: NativeTrace) -> budgets.RunBudget | None:
    """The budgets this run counts against, with their use so far (None when none applies)."""
    every = budgets.all_budgets(trace.engine)
    if not every:
        return None
    owner = str(run.owner_id or run.user_id)
    from service_observability.native import _project_of

    project = _project_of(run) if any(b.scope == "project" for b in every) else None
    found = budgets.applying(trace.engine, owner, run.flow_id, project)
    if not found:
        return None
    return budgets.RunBudget([(b, budgets.used(trace.engine, b)) for b in found])
