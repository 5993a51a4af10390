"""HTTP server spans: an inbound ``traceparent`` is honoured, and the request's span is current while it runs.

A run started by the request (a sync run, a streamed run's thread, a queued job's payload) is a child of it.
"""

from __future__ import annotations

import logging
import time

import opentelemetry.context as otel_context
import opentelemetry.trace as trace
from flask import Flask, Response, g, request
from opentelemetry.trace import SpanKind, Status, StatusCode

from service_observability import metrics, otel

log = logging.getLogger(__name__)


def install(app: Flask) -> None:
    """Open a SERVER span per request when tracing is on, time it when metrics are on (else nothing)."""

    @app.before_request
    def _open_span() -> None:
        if metrics.current() is not None:
            g._obs_t0 = time.perf_counter()
        tracer = otel.tracer()
        if tracer is None:
            return
        inbound = {k: request.headers[k] for k in ("traceparent", "tracestate") if k in request.headers}
        parent = otel.extract(inbound) if inbound else None
        route = request.url_rule.rule if request.url_rule is not None else request.path
        span = tracer.start_span(
            f"{request.method} {route}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": request.method, "http.route": route, "url.path": request.path},
        )
        g._otel_span = span
        g._otel_token = otel_context.attach(trace.set_span_in_context(span, parent))

    @app.after_request
    def _status(response: Response) -> Response:
        t0 = g.pop("_obs_t0", None)
        measured = metrics.current()
        if t0 is not None and measured is not None:
            route = request.url_rule.rule if request.url_rule is not None else "unmatched"
            measured.http_duration.labels(request.method, route, str(response.status_code)).observe(
                time.perf_counter() - t0
            )
        span = g.get("_otel_span")
        if span is not None:
            span.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 500:
                span.set_status(Status(StatusCode.ERROR))
        return response

    @app.teardown_request
    def _close_span(exc: BaseException | None) -> None:
        span = g.pop("_otel_span", None)
        if span is None:
            return
        token = g.pop("_otel_token", None)
        if exc is not None:
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        try:
            if token is not None:
                otel_context.detach(token)
        except Exception:  # a context switched under us: the span still ends
            log.debug("request span context not detached", exc_info=True)
        span.end()
