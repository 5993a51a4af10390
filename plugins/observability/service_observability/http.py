"""Prometheus timing of HTTP requests (``service_http_server_request_duration_seconds``).

The OpenTelemetry side of a request (its ``SERVER`` span, an inbound ``traceparent``, the OTLP
``http.server.request.duration`` histogram) is the WSGI instrumentation's: see ``instrument.py``.
"""

from __future__ import annotations

import time

from flask import Flask, Response, g, request

from service_observability import metrics


def install(app: Flask) -> None:
    """Time each request into the Prometheus histogram (installed only while metrics are on)."""

    @app.before_request
    def _start() -> None:
        g._obs_t0 = time.perf_counter()

    @app.after_request
    def _observe(response: Response) -> Response:
        t0 = g.pop("_obs_t0", None)
        measured = metrics.current()
        if t0 is not None and measured is not None:
            route = request.url_rule.rule if request.url_rule is not None else "unmatched"
            measured.http_duration.labels(request.method, route, str(response.status_code)).observe(
                time.perf_counter() - t0
            )
        return response
