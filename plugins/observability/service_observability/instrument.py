"""HTTP server and database spans and metrics from the OpenTelemetry ecosystem's instrumentations.

Installed only while OTLP export is on (an endpoint is set): ``opentelemetry-instrumentation-wsgi``'s
middleware wraps the app's WSGI callable (a ``SERVER`` span per request, continuing an inbound W3C
``traceparent``; the ``http.server.request.duration`` histogram and ``http.server.active_requests``), and
``opentelemetry-instrumentation-sqlalchemy``'s engine tracer listens on the service's engine (a ``CLIENT``
span per statement; ``db.client.connections.usage`` observed from the pool when metrics are collected, not
counted on every checkout as the instrumentation does). The stable HTTP and database semantic conventions
are chosen unless ``OTEL_SEMCONV_STABILITY_OPT_IN`` says otherwise.

Flask's URL rule names the request's span (``POST /api/v1/run/<flow_id_or_name>``) and becomes
``http.route`` on the span and on the duration histogram, as the Flask instrumentation does; a run started
by the request (its ``flow.execute`` span) is the server span's child.
"""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable
from typing import Any

import opentelemetry.trace as trace
from flask import Flask, has_request_context, request
from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware

log = logging.getLogger(__name__)

HTTP_ROUTE = "http.route"


class RoutedMiddleware(OpenTelemetryMiddleware):
    """The WSGI middleware, with Flask's URL rule added to the duration histogram's attributes."""

    @staticmethod
    def _create_start_response(  # type: ignore[override]
        span: trace.Span,
        start_response: Callable[..., Any],
        response_hook: Callable[..., None] | None,
        duration_attrs: dict[str, Any],
        sem_conv_opt_in_mode: Any,
    ) -> Callable[..., Any]:
        def routed(status: str, response_headers: list[tuple[str, str]], *args: Any, **kwargs: Any) -> Any:
            # Flask answers inside its request context: the matched rule is known by now
            if has_request_context() and request.url_rule is not None:
                duration_attrs[HTTP_ROUTE] = request.url_rule.rule
            return start_response(status, response_headers, *args, **kwargs)

        return OpenTelemetryMiddleware._create_start_response(
            span, routed, response_hook, duration_attrs, sem_conv_opt_in_mode
        )


def _name_span() -> None:
    """The request's span is named by its URL rule (a bounded name), with ``http.route``."""
    rule = request.url_rule
    if rule is None:
        return
    span = trace.get_current_span()
    if span.is_recording():
        span.update_name(f"{request.method} {rule.rule}")
        span.set_attribute(HTTP_ROUTE, rule.rule)


def install_http(app: Flask, tracer_provider: Any, meter_provider: Any) -> None:
    """Wrap the app's WSGI callable in the ecosystem's middleware (once per app)."""
    if isinstance(app.wsgi_app, OpenTelemetryMiddleware):
        return
    app.wsgi_app = RoutedMiddleware(  # type: ignore[method-assign]
        app.wsgi_app,
        tracer_provider=tracer_provider or trace.NoOpTracerProvider(),
        meter_provider=meter_provider or _no_meters(),
    )
    app.before_request(_name_span)


def install_database(engine: Any, tracer_provider: Any, meter_provider: Any) -> None:
    """Trace the engine's statements with the ecosystem's SQLAlchemy instrumentation, to these providers.

    Its listeners are registered once per engine; an engine traced before, for another app of this process
    (engines are shared per database URL, as in tests on PostgreSQL), is pointed at the new providers."""
    from opentelemetry.instrumentation.sqlalchemy import __version__
    from opentelemetry.metrics import CallbackOptions, Observation, get_meter
    from opentelemetry.semconv.metrics import MetricInstruments

    found = _traced.get(engine)
    if found is not None and found.providers == (tracer_provider, meter_provider):
        return
    name = "opentelemetry.instrumentation.sqlalchemy"
    tracer = trace.get_tracer(name, __version__, tracer_provider or trace.NoOpTracerProvider())
    meter = get_meter(name, __version__, meter_provider or _no_meters())
    if found is None:
        found = _statement_tracer()(tracer, engine, None)
        _traced[engine] = found
    else:
        found.tracer = tracer  # the instrumentation's own attribute: what its listeners start spans with
    found.providers = (tracer_provider, meter_provider)
    attributes = dict(found._engine_attrs)  # pool.name (or db.client.connection.pool.name), as it reports
    pool = weakref.ref(engine.pool)

    def usage(_options: CallbackOptions) -> list[Observation]:
        current = pool()
        if current is None or not hasattr(current, "checkedout"):
            return []
        return [
            Observation(current.checkedout(), {**attributes, "state": "used"}),
            Observation(current.checkedin(), {**attributes, "state": "idle"}),
        ]

    meter.create_observable_up_down_counter(
        name=MetricInstruments.DB_CLIENT_CONNECTIONS_USAGE,
        callbacks=[usage],
        unit="connections",
        description="The number of connections that are currently in state described by the state attribute.",
    )


def detach_database(engine: Any) -> None:
    """Nothing is exported: an engine traced for an earlier app of this process makes no span any more."""
    found = _traced.get(engine)
    if found is not None and found.providers != (None, None):
        found.tracer, found.providers = trace.NoOpTracer(), (None, None)


def tracing(engine: Any) -> bool:
    """Whether the engine's statements are traced to an exporting provider."""
    found = _traced.get(engine)
    return found is not None and found.providers != (None, None)


@functools.cache
def _statement_tracer() -> type:
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer

    class StatementTracer(EngineTracer):  # type: ignore[misc]
        """The instrumentation's statement spans, with two cuts (each measured: bench/NOTES.md).

        Its pool listeners are not registered: they add to the connection usage counter on every checkout
        and checkin (16 measurements per served run, a third of the export's per-run metric work in the
        profile); the same ``db.client.connections.usage`` is observed from the pool when the metrics are
        collected instead. And a statement makes a span only under a recording span (a request, run or
        job that is traced): the batched writers' statements (the group commit, in a thread of their own)
        were single-span traces of their own, and under a trace the sampler dropped the instrumentation
        still parsed the statement and the URL for a span nobody records.
        """

        providers: tuple[Any, Any] = (None, None)

        def _before_cur_exec(
            self, conn: Any, cursor: Any, statement: Any, params: Any, context: Any, executemany: bool
        ) -> Any:
            if not trace.get_current_span().is_recording():
                return statement, params
            return super()._before_cur_exec(conn, cursor, statement, params, context, executemany)

        @classmethod
        def _register_event_listener(cls, target: Any, identifier: str, func: Any, *args: Any, **kw: Any) -> None:
            if identifier not in _POOL_EVENTS:
                super()._register_event_listener(target, identifier, func, *args, **kw)

    return StatementTracer


#: the pool events the ecosystem's tracer listens to for its usage counter (observed at collection here)
_POOL_EVENTS = frozenset({"connect", "close", "checkin", "checkout"})

#: each traced engine's statement tracer in this process (an engine disposed of leaves)
_traced: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _no_meters() -> Any:
    from opentelemetry.metrics import NoOpMeterProvider

    return NoOpMeterProvider()
