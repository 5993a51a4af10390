"""What the plugin does for each run: its OpenTelemetry spans (run, components, model calls) and its samples."""

from __future__ import annotations

import os

from core.contracts import RunEnded, RunStarted
from core.engine.observe import ComponentEnd, ModelCall
from service_observability import metrics, otel


def capture_content() -> bool:
    """Prompt and completion texts go on model call spans only when the GenAI variable allows it."""
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


class RunWatch:
    """The observer of one run (``observe_run``) when only metrics are on: counts the run and its model calls."""

    __slots__ = ("measured", "span")

    def __init__(self, span: otel.RunSpan | None, measured: metrics.Metrics | None) -> None:
        self.span = span
        self.measured = measured

    def end(self, ended: RunEnded) -> None:
        measured = self.measured
        if measured is not None:
            surface = ended.run.surface
            measured.runs.labels(surface, ended.status).inc()
            measured.run_duration.labels(surface, ended.status).observe(ended.duration_s)
        if self.span is not None:
            self.span.end(ended)

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


class TracedRunWatch(RunWatch):
    """The observer of one run while tracing is on: a child span per component too."""

    __slots__ = ()

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        return otel.start_component(vertex_id, display_name, component_type)


def observe(run: RunStarted) -> RunWatch | None:
    """The run's observer, or None when neither tracing nor metrics are on."""
    measured = metrics.current()
    span = otel.start_run(run)
    if span is not None:
        return TracedRunWatch(span, measured)
    return RunWatch(None, measured) if measured is not None else None
