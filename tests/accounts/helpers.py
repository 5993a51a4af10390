"""Helpers for the accounts plugin's tests: cookies, hand-made JWTs, direct table access."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import uuid
from typing import Any

import jwt
import sqlalchemy as sa

from core.app import state

#: a fixed HS256 secret long enough for PyJWT's key-length checks
SECRET = "test-secret-key-that-is-long-enough-for-hs256-0123456789"
STRONG = "Another-strong-passphrase-42"
#: settings of an app with auto-login off and a superuser ``admin`` (password :data:`STRONG`)
ADMIN_ONLY = {"auto_login": False, "superuser": "admin", "superuser_password": STRONG}


def set_cookies(response: Any) -> dict[str, dict[str, Any]]:
    """``Set-Cookie`` headers as ``{name: {"value": ..., "<attribute lowercased>": value or True}}``."""
    cookies: dict[str, dict[str, Any]] = {}
    for header in response.headers.getlist("Set-Cookie"):
        first, *attrs = [part.strip() for part in header.split(";")]
        name, _, value = first.partition("=")
        entry: dict[str, Any] = {"value": value}
        for attr in attrs:
            key, eq, val = attr.partition("=")
            entry[key.lower()] = val if eq else True
        cookies[name] = entry
    return cookies


def token_for(
    user_id: Any,
    *,
    secret: str = SECRET,
    algorithm: str = "HS256",
    kind: str = "access",
    lifetime: int = 3600,
    **claims: Any,
) -> str:
    """A JWT made outside the service, shaped as the service makes them."""
    now = dt.datetime.now(dt.UTC)
    payload = {
        "sub": str(user_id),
        "type": kind,
        "iat": now,
        "nbf": now,
        "exp": now + dt.timedelta(seconds=lifetime),
        "jti": str(uuid.uuid4()),
        **claims,
    }
    return jwt.encode(payload, secret, algorithm=algorithm)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def raw_token(header: dict[str, Any], payload: dict[str, Any], key: bytes | None) -> str:
    """A JWT assembled by hand (for ``alg: none`` and HS256-with-the-public-key forgeries)."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}"
    signature = _b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest()) if key else ""
    return f"{signing_input}.{signature}"


def rows(app: Any, sql: str, **params: Any) -> list[dict[str, Any]]:
    """Run ``sql`` on the app's database and return the rows as dicts."""
    with state(app).engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(sql), params)]


def insert_users(app: Any, count: int, prefix: str) -> None:
    """Insert ``count`` users directly (no password hashing: fast)."""
    from service_accounts.models import User

    with state(app).engine.begin() as conn:
        conn.execute(
            sa.insert(User),
            [
                {
                    "id": uuid.uuid4(),
                    "username": f"{prefix}{i:02d}",
                    "password_hash": "x",
                    "is_active": True,
                    "is_superuser": False,
                    "create_at": dt.datetime.now(dt.UTC),
                    "updated_at": dt.datetime.now(dt.UTC),
                    "optins": None,
                }
                for i in range(count)
            ],
        )


def app_secret(app: Any) -> str:
    """The HS256 signing secret of ``app`` (given, or generated and persisted in its config dir)."""
    from core.secrets import secret_key

    return secret_key(state(app).settings)
