"""What the plugin does for each run: OpenTelemetry spans, Prometheus samples and the native trace."""

from __future__ import annotations

import logging
import os
from typing import Any

from core.contracts import RunEnded, RunStarted
from core.engine.observe import ComponentEnd, ModelCall
from service_observability import metrics, otel
from service_observability.native import NativeTrace

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

    __slots__ = ("measured", "span", "trace")

    def __init__(self, span: otel.RunSpan | None, measured: metrics.Metrics | None, trace: NativeTrace | None) -> None:
        self.span = span
        self.measured = measured
        self.trace = trace

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
    if span is not None or trace is not None:
        return SpanningRunWatch(span, measured, trace)
    return RunWatch(None, measured, None) if measured is not None else None
