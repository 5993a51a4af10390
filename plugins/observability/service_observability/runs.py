"""What the plugin does for each run: its OpenTelemetry span and its Prometheus samples."""

from __future__ import annotations

from core.contracts import RunEnded, RunStarted
from service_observability import metrics, otel


class RunWatch:
    """The observer of one run (``observe_run``): ends its span, counts it."""

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


def observe(run: RunStarted) -> RunWatch | None:
    """The run's observer, or None when neither tracing nor metrics are on."""
    measured = metrics.current()
    span = otel.start_run(run)
    if span is None and measured is None:
        return None
    return RunWatch(span, measured)
