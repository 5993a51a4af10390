"""OpenTelemetry tracing: the tracer provider from the standard ``OTEL_*`` variables, run spans, propagation.

Off until an OTLP endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT``, or the per-signal
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``_METRICS_ENDPOINT``); ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` / ``OTEL_METRICS_EXPORTER=none`` keep a signal off. The exporters are the
official OTLP ones, ``http/protobuf`` by default or ``grpc`` (``OTEL_EXPORTER_OTLP_PROTOCOL``; the plugin's
``grpc`` extra), which read the rest of the ``OTEL_EXPORTER_OTLP_*`` variables themselves (headers, timeout,
compression, certificate); the resource reads ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.
The metrics (``http.server.request.duration`` and the database client's) come from the HTTP and database
instrumentations (``instrument.py``).

The provider is process-wide (one per configuration: a test that points the variables elsewhere gets a new
one); it is this plugin's own, not the API's global, so an app built twice in one process never fights over
the global's set-once rule.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import opentelemetry.context as otel_context
import opentelemetry.trace as trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from core.contracts import RunEnded, RunStarted
from core.engine.observe import ModelCall

log = logging.getLogger(__name__)

SERVICE_NAME = "service"
#: the instrumentation scope of every span this plugin makes
SCOPE = "service_observability"

_propagator = TraceContextTextMapPropagator()
_lock = threading.Lock()
_config: tuple[object, ...] | None = None
_provider: Any = None
_tracer: trace.Tracer | None = None
_meter_provider: Any = None
#: ``spans.start`` once a tracer is made (the SDK is imported only when tracing is on)
_start: Any = None


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


#: the OTLP protocols served, and the exporter modules they need (gRPC: the ``grpc`` extra)
PROTOCOLS = {
    "http/protobuf": "opentelemetry.exporter.otlp.proto.http",
    "grpc": "opentelemetry.exporter.otlp.proto.grpc",
}
GRPC_MISSING = (
    "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the observability plugin's grpc extra: "
    "pip install 'service-observability[grpc]' (or export with http/protobuf)"
)


def _protocol(signal: str) -> str:
    protocol = _env(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or _env("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    return protocol.lower()


def _signal(signal: str) -> tuple[str, str] | None:
    """``(endpoint, protocol)`` of one signal (``TRACES``, ``METRICS``), or None while it is off."""
    exporters = [e.strip().lower() for e in (_env(f"OTEL_{signal}_EXPORTER") or "otlp").split(",")]
    if "otlp" not in exporters:
        return None
    endpoint = _env(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT") or _env("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        return None
    return endpoint, _protocol(signal)


def wanted() -> tuple[object, ...] | None:
    """The exporter configuration the variables ask for, or None when nothing is exported."""
    if _env("OTEL_SDK_DISABLED").lower() == "true":
        return None
    traces, metrics = _signal("TRACES"), _signal("METRICS")
    if traces is None and metrics is None:
        return None
    return (
        traces,
        metrics,
        _env("OTEL_SERVICE_NAME"),
        _env("OTEL_RESOURCE_ATTRIBUTES"),
        _env("OTEL_BSP_SCHEDULE_DELAY"),
        _env("OTEL_METRIC_EXPORT_INTERVAL"),
    )


def _exporter_module(protocol: str, signal: str) -> Any:
    """The official exporter module of a protocol and signal (``trace_exporter``, ``metric_exporter``)."""
    import importlib

    package = PROTOCOLS.get(protocol)
    if package is None:
        supported = ", ".join(PROTOCOLS)
        raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported (use one of: {supported})")
    try:
        return importlib.import_module(f"{package}.{signal}")
    except ImportError:
        if protocol == "grpc":
            raise ValueError(GRPC_MISSING) from None
        raise


def configure() -> trace.Tracer | None:
    """Build (or keep) the providers the variables ask for; the tracer, or None when tracing is off.

    ``ValueError`` (a start-up error) names an unsupported protocol, or gRPC asked for without its extra.
    """
    global _config, _provider, _tracer, _meter_provider, _start
    config = wanted()
    with _lock:
        if config == _config:
            return _tracer
        old, old_meters = _provider, _meter_provider
        _config, _provider, _tracer, _meter_provider = None, None, None, None
        if old is not None:
            old.shutdown()
        if old_meters is not None:
            old_meters.shutdown()
        if config is None:
            return None
        from opentelemetry.sdk.resources import Resource

        traces, metrics = config[0], config[1]
        # the stable HTTP and database conventions (``http.server.request.duration``, ``http.route``...) unless
        # the operator chose others: read once per process by the instrumentations
        os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "http,database")
        defaults = {} if config[2] or "service.name=" in str(config[3]) else {"service.name": SERVICE_NAME}
        resource = Resource.create(defaults)
        protocol = traces[1] if isinstance(traces, tuple) else None
        span_exporter = _exporter_module(protocol, "trace_exporter") if protocol is not None else None
        metric_exporter = _exporter_module(metrics[1], "metric_exporter") if isinstance(metrics, tuple) else None
        if span_exporter is not None:
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            provider = TracerProvider(resource=resource)
            if protocol == "http/protobuf":  # the official exporter with a direct encoder (encoding.py)
                from service_observability.encoding import SpanExporter

                exporter = SpanExporter()
            else:
                exporter = span_exporter.OTLPSpanExporter()
            provider.add_span_processor(BatchSpanProcessor(exporter))
            from service_observability import spans

            _start = spans.start
            _provider, _tracer = provider, provider.get_tracer(SCOPE)
        if metric_exporter is not None:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            reader = PeriodicExportingMetricReader(metric_exporter.OTLPMetricExporter())
            _meter_provider = MeterProvider(metric_readers=[reader], resource=resource)
        _config = config
        return _tracer


def tracer() -> trace.Tracer | None:
    """The tracer in force (None when tracing is off): cheap, no variable read."""
    return _tracer


def tracer_provider() -> Any:
    """The SDK tracer provider in force (None when tracing is off)."""
    return _provider


def meter_provider() -> Any:
    """The SDK meter provider exporting OTLP metrics (None when no metrics endpoint is set)."""
    return _meter_provider


def exporting() -> bool:
    """Whether spans or OTLP metrics are exported (the HTTP and database instrumentations are installed)."""
    return _provider is not None or _meter_provider is not None


def flush(timeout_ms: int = 10000) -> bool:
    """Export every finished span and the metrics recorded so far now (tests, shutdown)."""
    provider, meters = _provider, _meter_provider
    done = bool(provider.force_flush(timeout_ms)) if provider is not None else True
    return (bool(meters.force_flush(timeout_ms)) if meters is not None else True) and done


# --- propagation ----------------------------------------------------------------------------------------
def current_headers() -> dict[str, str]:
    """The current trace context as W3C headers (empty when no span is current)."""
    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        _propagator.inject(carrier)
    return carrier


def extract(carrier: Mapping[str, str]) -> otel_context.Context:
    return _propagator.extract(carrier)


def log_ids() -> tuple[str, str]:
    """The current trace and span ids as log fields (``""`` when no span is current)."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return "", ""
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


# --- run spans ------------------------------------------------------------------------------------------
class RunSpan:
    """The ``flow.execute`` span of one run, current in the run's thread until :meth:`end`."""

    __slots__ = ("span", "token")

    def __init__(self, span: trace.Span, token: object) -> None:
        self.span = span
        self.token = token

    def end(self, ended: RunEnded) -> None:
        span = self.span
        span.set_attributes({"status": ended.status, "duration_ms": round(ended.duration_s * 1000, 3)})
        if ended.status == "error":
            span.set_status(Status(StatusCode.ERROR, ended.error or "error"))
        elif ended.status == "ok":
            span.set_status(Status(StatusCode.OK))
        try:
            otel_context.detach(self.token)  # type: ignore[arg-type]
        finally:
            span.end()


def start_run(run: RunStarted) -> RunSpan | None:
    """Open the run's ``flow.execute`` span and make it current (the run's parent: the carried job context,
    else the current one, an inbound request's ``traceparent``)."""
    tracer = _tracer
    if tracer is None:
        return None
    carried = run.request.get("trace_context")
    parent = extract(carried) if carried else None
    attributes: dict[str, Any] = {
        "flow_id": run.flow_id,
        "run_id": run.run_id,
        "protocol": run.surface,
        "public": run.public,
    }
    if run.flow_name:
        attributes["flow_name"] = run.flow_name
    if run.session_id:
        attributes["session_id"] = run.session_id
    if run.job_id:
        attributes["job_id"] = run.job_id
    span = _start(tracer, "flow.execute", SpanKind.INTERNAL, attributes, parent)
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    return RunSpan(span, token)


# --- component and model call spans -----------------------------------------------------------------------
def start_component(vertex_id: str, display_name: str, component_type: str) -> Callable[[str, str | None], None]:
    """Open a component's span (current until it ends); the answer ends it with the component's status."""
    tracer = _tracer
    if tracer is None:
        return _no_end
    attributes = {"component.id": vertex_id, "component.type": component_type, "component.name": display_name}
    span = _start(tracer, display_name or component_type, SpanKind.INTERNAL, attributes)
    token = otel_context.attach(trace.set_span_in_context(span))

    def end(status: str, error: str | None) -> None:
        span.set_attribute("status", status)
        if status == "error":
            span.set_status(Status(StatusCode.ERROR, error or "error"))
        try:
            otel_context.detach(token)
        finally:
            span.end()

    return end


def _no_end(status: str, error: str | None) -> None:
    return None


def model_call_span(call: ModelCall, content: bool) -> None:
    """The span of one model call, after the fact (its real start and end), a child of the current component.

    GenAI semantic conventions: ``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``,
    ``gen_ai.response.model``, ``gen_ai.usage.input_tokens``/``output_tokens``; texts only when ``content``.
    """
    tracer = _tracer
    if tracer is None:
        return
    attributes = call.genai_attributes(content)
    start_ns = int(call.started_at * 1e9)
    span = _start(tracer, f"chat {call.model}", SpanKind.CLIENT, attributes, start_time=start_ns)
    if call.error:
        span.set_attribute("error.type", "provider_error")
        span.set_status(Status(StatusCode.ERROR, call.error))
    span.end(end_time=start_ns + int(call.duration_s * 1e9))
