"""Signed webhook triggers, as the reference's 1.13 trigger ingress does its generic ``webhook`` provider.

``POST /api/v1/triggers/ingress/webhook/{public_id}`` takes a delivery signed with the trigger's own secret:
``X-Service-Timestamp: <unix seconds>`` and ``X-Service-Signature: v1=<hex>``, the HMAC-SHA256 of
``v1:{timestamp}:{raw body}``. The timestamp must be within ``SERVICE_TRIGGERS_SIGNATURE_TOLERANCE_S``
of the server's clock, either way. Every refusal (unknown or disabled id, body too large, signature
missing, wrong or stale, the flow gone) answers the same ``404 {"detail": "Not found"}``: a prober learns
nothing; the reason goes to the log. A delivery is deduplicated by its ``Idempotency-Key`` (or
``X-Service-Event-Id``) header, else by the digest of its timestamp and body (a retried delivery of the
same bytes is the same event). ``202`` is answered once the execution row is committed, with the run id
and a status URL; a duplicate answers ``202`` with the first delivery's execution and ``duplicate: true``.

Each trigger takes at most ``SERVICE_TRIGGERS_INGRESS_PER_MINUTE`` deliveries a minute (a fixed window in the
rate limiter's shared storage: every process counts together); past it ``429`` with ``Retry-After`` (the
seconds left in the window). Only deliveries whose signature verified are counted: a sender without the
secret can neither spend a trigger's allowance nor tell a limited trigger from an unknown one (it gets 404).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import secrets as pysecrets
import time
import uuid
from typing import Any

import sqlalchemy as sa
from flask import Flask

from core import appstate
from core.errors import ApiError
from core.secrets import fernet
from service_triggers import executions
from service_triggers.config import settings
from service_triggers.dbx import tx
from service_triggers.models import Execution, Webhook

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"
EVENT_ID_HEADERS = ("Idempotency-Key", "X-Service-Event-Id")
VERSION = "v1"
PUBLIC_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
NOT_FOUND = {"detail": "Not found"}

_W: sa.Table = Webhook.__table__  # type: ignore[assignment]
_T: sa.Table = Execution.__table__  # type: ignore[assignment]


class Limited(Exception):
    """A verified delivery over its trigger's allowance: 429, ``Retry-After: retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


#: the rate limiter's namespace of the per-trigger counts
LIMIT_SCOPE = "triggers-ingress"


def check_allowance(app: Flask, public_id: str, now: float | None = None) -> None:
    """Count one verified delivery of trigger ``public_id``; :class:`Limited` past its allowance."""
    per_minute = settings(app).ingress_per_minute
    limiter = app.extensions.get("service.limiter")
    if per_minute <= 0 or limiter is None or not limiter.enabled:
        return
    from limits import RateLimitItemPerMinute

    item = RateLimitItemPerMinute(per_minute)
    if limiter.limiter.hit(item, "service", LIMIT_SCOPE, public_id):
        return
    reset = limiter.limiter.get_window_stats(item, "service", LIMIT_SCOPE, public_id).reset_time
    raise Limited(max(1, math.ceil(reset - (time.time() if now is None else now))))


class Refused(Exception):
    """A delivery refused (always answered with the same 404); ``reason`` is for the log only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The ``X-Service-Signature`` value of ``body`` sent at ``timestamp`` (what a sender computes)."""
    mac = hmac.new(secret.encode(), f"{VERSION}:{timestamp}:".encode() + body, hashlib.sha256)
    return f"{VERSION}={mac.hexdigest()}"


def verify(secret: str, headers: Any, body: bytes, tolerance_s: int, now: float | None = None) -> int:
    """Check a delivery's signature and timestamp; its timestamp, or :class:`Refused`."""
    supplied = headers.get(SIGNATURE_HEADER)
    raw = headers.get(TIMESTAMP_HEADER)
    if not supplied or not raw:
        raise Refused("missing_signature")
    if not raw.isascii() or not raw.strip().isdigit():
        raise Refused("stale_timestamp")
    timestamp = int(raw.strip())
    if abs((time.time() if now is None else now) - timestamp) > tolerance_s:
        raise Refused("stale_timestamp")
    expected = sign(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode(), supplied.encode("utf-8", "replace")):
        raise Refused("bad_signature")
    return timestamp


def dedupe_key(webhook_id: str, headers: Any, timestamp: int, body: bytes) -> str:
    for name in EVENT_ID_HEADERS:
        value = headers.get(name)
        if value:
            event = value if len(value) <= 64 and value.isascii() else hashlib.sha256(value.encode()).hexdigest()
            return f"webhook:{webhook_id}:id:{event}"
    return f"webhook:{webhook_id}:body:{hashlib.sha256(f'{timestamp}:'.encode() + body).hexdigest()[:32]}"


# --- management (owner-scoped) ----------------------------------------------------------------------
def out(row: Any, secret: str | None = None) -> dict[str, Any]:
    m = row._mapping if hasattr(row, "_mapping") else row
    result = {
        "id": m["id"],
        "public_id": m["public_id"],
        "flow_id": m["flow_id"],
        "name": m["name"],
        "enabled": m["enabled"],
        "tolerance_s": m["tolerance_s"],
        "ingress_url": f"/api/v1/triggers/ingress/webhook/{m['public_id']}",
        "signature_header": SIGNATURE_HEADER,
        "timestamp_header": TIMESTAMP_HEADER,
    }
    if secret is not None:
        result["signing_secret"] = secret  # shown once: at creation and rotation
    return result


def create(app: Flask, user_id: str, body: dict[str, Any]) -> dict[str, Any]:
    flow = appstate.hooks(app).find_flow(user_id=user_id, flow_id_or_name=str(body["flow_id"]), public=False)
    if flow is None:
        raise ApiError(404, f"Flow identifier {body['flow_id']} not found")
    secret = "whsec_" + pysecrets.token_urlsafe(32)
    values = {
        "id": str(uuid.uuid4()),
        "public_id": pysecrets.token_urlsafe(18),
        "user_id": user_id,
        "flow_id": flow.id,
        "name": body.get("name") or f"Webhook of {flow.name or flow.id}",
        "secret": fernet(appstate.settings(app)).encrypt(secret.encode()).decode(),
        "enabled": bool(body.get("enabled", True)),
        "tolerance_s": int(body.get("tolerance_s") or settings(app).signature_tolerance_s),
        "created_at": time.time(),
    }
    with tx() as conn:
        conn.execute(_W.insert().values(**values))
    return out(values, secret)


def read(app: Flask, user_id: str | None, webhook_id: str) -> Any:
    """The row ``webhook_id`` of ``user_id`` (None: of any user; the caller checks access to its flow)."""
    with tx() as conn:
        query = sa.select(_W).where(_W.c.id == webhook_id)
        if user_id is not None:
            query = query.where(_W.c.user_id == user_id)
        row = conn.execute(query).first()
    if row is None:
        raise ApiError(404, "Trigger not found")
    return row


def list_for(app: Flask, user_id: str | None, flow_id: str | None = None) -> list[dict[str, Any]]:
    """``user_id``'s rows, or (None) every user's of ``flow_id`` (the caller may read that flow)."""
    query = sa.select(_W) if user_id is None else sa.select(_W).where(_W.c.user_id == user_id)
    if flow_id:
        query = query.where(_W.c.flow_id == flow_id)
    with tx() as conn:
        return [out(r) for r in conn.execute(query.order_by(_W.c.created_at))]


def update(app: Flask, user_id: str, webhook_id: str, body: dict[str, Any]) -> dict[str, Any]:
    read(app, user_id, webhook_id)
    values = {k: body[k] for k in ("name", "enabled", "tolerance_s") if k in body}
    with tx() as conn:
        if values:
            conn.execute(_W.update().where(_W.c.id == webhook_id).values(**values))
    return out(read(app, user_id, webhook_id))


def rotate(app: Flask, user_id: str, webhook_id: str) -> dict[str, Any]:
    read(app, user_id, webhook_id)
    secret = "whsec_" + pysecrets.token_urlsafe(32)
    token = fernet(appstate.settings(app)).encrypt(secret.encode()).decode()
    with tx() as conn:
        conn.execute(_W.update().where(_W.c.id == webhook_id).values(secret=token))
    return out(read(app, user_id, webhook_id), secret)


def delete(app: Flask, user_id: str, webhook_id: str) -> None:
    read(app, user_id, webhook_id)
    with tx() as conn:
        conn.execute(_W.delete().where(_W.c.id == webhook_id))


# --- the ingress ------------------------------------------------------------------------------------
def receive(app: Flask, public_id: str, headers: Any, body: bytes | None) -> dict[str, Any]:
    """Verify, record and start one delivery; its answer, or :class:`Refused`."""
    if not PUBLIC_ID.match(public_id or ""):
        raise Refused("unknown_trigger")
    if body is None:
        raise Refused("body_too_large")
    with tx() as conn:
        hook = conn.execute(sa.select(_W).where(_W.c.public_id == public_id)).first()
    if hook is None or not hook.enabled:
        raise Refused("unknown_trigger")
    secret = fernet(appstate.settings(app)).decrypt(hook.secret.encode()).decode()
    timestamp = verify(secret, headers, body, int(hook.tolerance_s))
    check_allowance(app, public_id)
    try:
        payload = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("bad_payload") from None
    if "\x00" in payload:
        raise Refused("bad_payload")
    flow = appstate.hooks(app).find_flow(user_id=hook.user_id, flow_id_or_name=hook.flow_id, public=False)
    if flow is None:
        raise Refused("flow_gone")
    key = dedupe_key(hook.id, headers, timestamp, body)
    row = executions.new_row(
        user_id=hook.user_id,
        flow_id=flow.id,
        flow_name=flow.name,
        trigger="trigger",
        request=executions.request_for(flow.id, hook.user_id, value="", payload=payload),
        source_id=hook.id,
        dedupe_key=key,
    )
    try:
        with tx() as conn:
            conn.execute(_T.insert(), [row])
    except sa.exc.IntegrityError:
        with tx() as conn:
            first = conn.execute(sa.select(_T.c.id, _T.c.status).where(_T.c.dedupe_key == key)).first()
        if first is None:
            raise
        return answer(first.id, first.status, duplicate=True)
    executions.start(app, row)
    return answer(row["id"], "queued")


def answer(execution_id: str, status: str, *, duplicate: bool = False) -> dict[str, Any]:
    return {
        "run_id": execution_id,
        "execution_id": execution_id,
        "status": status,
        "status_url": f"/api/v1/executions/{execution_id}",
        "duplicate": duplicate,
    }
