"""``GET /metrics``: the Prometheus exposition, for superusers or a scrape token (404 while metrics are off)."""

from __future__ import annotations

import hmac

from flask import Blueprint, Response, request

from core import appstate
from core.auth import NO_CREDENTIALS, NOT_ENOUGH_PRIVILEGES, allowed, resolve_actor
from core.errors import ApiError
from service_observability import metrics
from service_observability.config import settings

metrics_blp = Blueprint("observability_metrics", __name__)


@metrics_blp.get("/metrics")
def scrape() -> Response:
    conf = settings()
    if not conf.metrics_enabled:
        raise ApiError(404, "Not Found")
    supplied = request.headers.get("Authorization", "")
    token_ok = bool(conf.metrics_token) and hmac.compare_digest(
        supplied.encode(), f"Bearer {conf.metrics_token}".encode()
    )
    if not token_ok:
        actor = resolve_actor("user")
        if actor is None:
            raise ApiError(403, NO_CREDENTIALS)
        if not allowed(actor, "admin"):
            raise ApiError(403, NOT_ENOUGH_PRIVILEGES)
    body, content_type = metrics.exposition(appstate.jobs())
    return Response(body, content_type=content_type)
