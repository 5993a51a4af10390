"""OpenTelemetry for the executor: one ``flow.execute`` span per run, continuing the caller's trace.

Optional: the SDK and the OTLP/HTTP exporter come with the ``otel`` extra
(``pip install './executor[otel]'``) and are imported only when an endpoint is set. The variables are the
standard ones, read as the full service reads them: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) switches tracing on, ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` keep it off, ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` name the
resource (``service-executor`` by default), and the exporter reads the other ``OTEL_EXPORTER_OTLP_*``
variables itself (headers, timeout, compression, certificate). Only ``http/protobuf`` is served: the executor
does not carry the gRPC stack; asking for another protocol, or setting an endpoint without the extra, is a
:class:`TelemetryError` that stops start-up with a message naming the fix.

The spans are those of the full service (the observability plugin), with the same names and attributes:

* ``flow.execute`` (``flow_id``, ``flow_name``, ``run_id``, ``session_id``, ``protocol`` = ``executor``,
  ``executor.api`` = ``run`` | ``workflows`` | ``cli``, ``status`` = ``ok`` | ``error`` | ``cancelled``,
  ``duration_ms``), a child of the caller's span: an inbound W3C ``traceparent`` header for ``serve``, the
  ``TRACEPARENT`` environment variable for ``run`` (the OpenTelemetry convention for a process started inside
  a trace, as CI systems do);
* one span per component under it, and one ``CLIENT`` span per model call (GenAI semantic conventions;
  texts only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``);
* for ``serve``, the ecosystem's WSGI middleware gives each request a ``SERVER`` span named by its route;
* outbound HTTP through the engine's egress helper carries the run's ``traceparent``.

The duplication with the plugin's ``otel`` module is deliberate and small: the executor ships the engine
alone, without the service's core or plugins (``tests/observability/test_executor_spans.py`` checks the
reference's attribute names, as ``test_surface_spans.py`` does for the service).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.engine import RunResult
    from core.engine.observe import ComponentEnd, ModelCall

SERVICE_NAME = "service-executor"
SCOPE = "service_exec"
MISSING = (
    "OTEL_EXPORTER_OTLP_ENDPOINT is set but the executor's OpenTelemetry extra is not installed: "
    "pip install './executor[otel]' (or unset the variable)"
)

_lock = threading.Lock()
_config: tuple[str, ...] | None = None
_provider: Any = None
_tracer: Any = None


class TelemetryError(ValueError):
    """Tracing asked for in a way this install cannot serve (start-up stops with this message)."""


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def wanted(env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The trace exporter configuration the variables ask for, or None when nothing is exported."""
    env = os.environ if env is None else env
    if _env(env, "OTEL_SDK_DISABLED").lower() == "true":
        return None
    exporters = [e.strip().lower() for e in (_env(env, "OTEL_TRACES_EXPORTER") or "otlp").split(",")]
    endpoint = _env(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or _env(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
    if "otlp" not in exporters or not endpoint:
        return None
    protocol = (
        _env(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or _env(env, "OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    ).lower()
    return (endpoint, protocol, _env(env, "OTEL_SERVICE_NAME"), _env(env, "OTEL_RESOURCE_ATTRIBUTES"))


def configure(env: Mapping[str, str] | None = None) -> Any:
    """Build (or keep) the tracer the variables ask for; the tracer, or None while tracing is off.

    :class:`TelemetryError` names the fix when an endpoint is set that this install cannot export to.
    """
    global _config, _provider, _tracer
    config = wanted(env)
    with _lock:
        if config == _config:
            return _tracer
        old = _provider
        _config, _provider, _tracer = None, None, None
        if old is not None:
            old.shutdown()
        if config is None:
            return None
        _endpoint, protocol, service_name, resource_attributes = config
        if protocol != "http/protobuf":
            raise TelemetryError(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: the executor exports http/protobuf only "
                "(point it at the collector's OTLP/HTTP port, usually 4318)"
            )
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise TelemetryError(MISSING) from None
        from core.engine import egress

        defaults = {} if service_name or "service.name=" in resource_attributes else {"service.name": SERVICE_NAME}
        provider = TracerProvider(resource=Resource.create(defaults))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _provider, _tracer, _config = provider, provider.get_tracer(SCOPE), config
        egress.add_header_source(current_headers)
        return _tracer


def tracer() -> Any:
    """The tracer in force (None while tracing is off): no variable read."""
    return _tracer


def tracer_provider() -> Any:
    return _provider


def flush(timeout_ms: int = 10000) -> bool:
    """Export the finished spans now (``run`` before it exits, tests)."""
    provider = _provider
    return bool(provider.force_flush(timeout_ms)) if provider is not None else True


def shutdown() -> None:
    provider = _provider
    if provider is not None:
        provider.shutdown()


def current_headers() -> dict[str, str]:
    """The current trace context as W3C headers (empty when no span is current): the egress helper's source."""
    if _tracer is None:
        return {}
    from opentelemetry import propagate, trace

    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        propagate.inject(carrier)
    return carrier


def env_carrier(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``TRACEPARENT`` / ``TRACESTATE`` from the environment as a W3C carrier (``service-exec run``)."""
    env = os.environ if env is None else env
    carrier = {"traceparent": _env(env, "TRACEPARENT"), "tracestate": _env(env, "TRACESTATE")}
    return {k: v for k, v in carrier.items() if v}


def install_http(app: Any) -> None:
    """A ``SERVER`` span per request from the ecosystem's WSGI middleware, named by the Flask route (once)."""
    if _provider is None:
        return
    from flask import request
    from opentelemetry import trace
    from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware
    from opentelemetry.metrics import NoOpMeterProvider

    if isinstance(app.wsgi_app, OpenTelemetryMiddleware):
        return
    app.wsgi_app = OpenTelemetryMiddleware(app.wsgi_app, tracer_provider=_provider, meter_provider=NoOpMeterProvider())

    @app.before_request
    def _name_span() -> None:
        rule = request.url_rule
        span = trace.get_current_span()
        if rule is not None and span.is_recording():
            span.update_name(f"{request.method} {rule.rule}")
            span.set_attribute("http.route", rule.rule)


# --- the run span and its watch ---------------------------------------------------------------------------
class RunTrace:
    """The ``flow.execute`` span of one run (current in the run's thread until :meth:`end`); also the run's
    ``RunContext.watch``: a span per component and per model call."""

    __slots__ = ("span", "started", "token")

    def __init__(self, span: Any, token: object) -> None:
        self.span = span
        self.token = token
        self.started = time.perf_counter()

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        from opentelemetry import context, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        attributes = {"component.id": vertex_id, "component.type": component_type, "component.name": display_name}
        span = _tracer.start_span(display_name or component_type, kind=SpanKind.INTERNAL, attributes=attributes)
        token = context.attach(trace.set_span_in_context(span))

        def end(status: str, error: str | None) -> None:
            span.set_attribute("status", status)
            if status == "error":
                span.set_status(Status(StatusCode.ERROR, error or "error"))
            try:
                context.detach(token)
            finally:
                span.end()

        return end

    def model_call(self, call: ModelCall) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        content = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"
        attributes = call.genai_attributes(content)
        start_ns = int(call.started_at * 1e9)
        span = _tracer.start_span(
            f"chat {call.model}", kind=SpanKind.CLIENT, attributes=attributes, start_time=start_ns
        )
        if call.error:
            span.set_attribute("error.type", "provider_error")
            span.set_status(Status(StatusCode.ERROR, call.error))
        span.end(end_time=start_ns + int(call.duration_s * 1e9))

    def before_model_call(self, provider: str, model: str) -> None:
        return None  # no budgets in the executor

    def end(self, result: RunResult | None, failure: Callable[[RunResult], str] | None = None) -> None:
        """End the span with the run's status (``result`` None: the run raised)."""
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        span = self.span
        if result is None:
            status, error = "error", "Run failed unexpectedly"
        elif result.ok:
            status, error = "ok", None
        else:
            status = "cancelled" if result.status == "cancelled" else "error"
            error = failure(result) if failure is not None else result.status
        span.set_attribute("status", status)
        span.set_attribute("duration_ms", round((time.perf_counter() - self.started) * 1000, 3))
        if status == "error":
            span.set_status(Status(StatusCode.ERROR, error or "error"))
        elif status == "ok":
            span.set_status(Status(StatusCode.OK))
        try:
            context.detach(self.token)  # type: ignore[arg-type]
        finally:
            span.end()


def start_run(
    *,
    flow_id: str,
    flow_name: str,
    run_id: str,
    session_id: str | None,
    api: str,
    carrier: Mapping[str, str] | None = None,
) -> RunTrace | None:
    """Open the run's ``flow.execute`` span and make it current (None while tracing is off). Its parent is the
    current span (the request's server span, which continued the caller's ``traceparent``), else the
    ``carrier``'s W3C context (``TRACEPARENT`` for ``run``, the request's headers without the middleware)."""
    tracer = _tracer
    if tracer is None:
        return None
    from opentelemetry import context, propagate, trace
    from opentelemetry.trace import SpanKind

    inherited = trace.get_current_span().get_span_context().is_valid
    parent = propagate.extract(carrier) if carrier and carrier.get("traceparent") and not inherited else None
    attributes: dict[str, Any] = {
        "flow_id": flow_id,
        "flow_name": flow_name,
        "run_id": run_id,
        "protocol": "executor",
        "executor.api": api,
        "public": False,
    }
    if session_id:
        attributes["session_id"] = session_id
    span = tracer.start_span("flow.execute", context=parent, kind=SpanKind.INTERNAL, attributes=attributes)
    token = context.attach(trace.set_span_in_context(span, parent))
    return RunTrace(span, token)
