"""OpenTelemetry tracing: the tracer provider from the standard ``OTEL_*`` variables, run spans, propagation.

Off until an OTLP endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``);
``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none`` keep it off. The exporter is the official
OTLP/HTTP (protobuf) one, which reads the rest of the ``OTEL_EXPORTER_OTLP_*`` variables itself (headers,
timeout, compression, certificate); the resource reads ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.

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
_config: tuple[str, ...] | None = None
_provider: Any = None
_tracer: trace.Tracer | None = None


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def wanted() -> tuple[str, ...] | None:
    """The exporter configuration the variables ask for, or None when tracing is off."""
    if _env("OTEL_SDK_DISABLED").lower() == "true":
        return None
    exporters = [e.strip().lower() for e in (_env("OTEL_TRACES_EXPORTER") or "otlp").split(",")]
    if "otlp" not in exporters:
        return None
    traces_endpoint = _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    endpoint = _env("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not traces_endpoint and not endpoint:
        return None
    protocol = _env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or _env("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    return (
        traces_endpoint,
        endpoint,
        protocol,
        _env("OTEL_SERVICE_NAME"),
        _env("OTEL_RESOURCE_ATTRIBUTES"),
        _env("OTEL_BSP_SCHEDULE_DELAY"),
    )


def configure() -> trace.Tracer | None:
    """Build (or keep) the provider the variables ask for; the tracer, or None when tracing is off."""
    global _config, _provider, _tracer
    config = wanted()
    with _lock:
        if config == _config:
            return _tracer
        old = _provider
        _config, _provider, _tracer = config, None, None
        if old is not None:
            old.shutdown()
        if config is None:
            return None
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if config[2] != "http/protobuf":
            log.warning("OTLP protocol %r is not supported: exporting with http/protobuf", config[2])
        defaults = {} if config[3] or "service.name=" in config[4] else {"service.name": SERVICE_NAME}
        provider = TracerProvider(resource=Resource.create(defaults))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _provider, _tracer = provider, provider.get_tracer(SCOPE)
        return _tracer


def tracer() -> trace.Tracer | None:
    """The tracer in force (None when tracing is off): cheap, no variable read."""
    return _tracer


def flush(timeout_ms: int = 10000) -> bool:
    """Export every finished span now (tests, shutdown)."""
    provider = _provider
    return bool(provider.force_flush(timeout_ms)) if provider is not None else True


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
        span.set_attribute("status", ended.status)
        span.set_attribute("duration_ms", round(ended.duration_s * 1000, 3))
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
    span = tracer.start_span("flow.execute", context=parent, kind=SpanKind.INTERNAL, attributes=attributes)
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    return RunSpan(span, token)


# --- component and model call spans -----------------------------------------------------------------------
def start_component(vertex_id: str, display_name: str, component_type: str) -> Callable[[str, str | None], None]:
    """Open a component's span (current until it ends); the answer ends it with the component's status."""
    tracer = _tracer
    if tracer is None:
        return _no_end
    attributes = {"component.id": vertex_id, "component.type": component_type, "component.name": display_name}
    span = tracer.start_span(display_name or component_type, kind=SpanKind.INTERNAL, attributes=attributes)
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
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": call.provider,
        "gen_ai.request.model": call.model,
        "gen_ai.response.model": call.model,
        "gen_ai.request.stream": call.streamed,
    }
    if call.input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = call.input_tokens
    if call.output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = call.output_tokens
    if call.finish_reason:
        attributes["gen_ai.response.finish_reasons"] = (call.finish_reason,)
    if content:
        if call.prompt is not None:
            attributes["gen_ai.prompt"] = call.prompt
        if call.completion is not None:
            attributes["gen_ai.completion"] = call.completion
    start_ns = int(call.started_at * 1e9)
    span = tracer.start_span(f"chat {call.model}", kind=SpanKind.CLIENT, attributes=attributes, start_time=start_ns)
    if call.error:
        span.set_attribute("error.type", "provider_error")
        span.set_status(Status(StatusCode.ERROR, call.error))
    span.end(end_time=start_ns + int(call.duration_s * 1e9))
