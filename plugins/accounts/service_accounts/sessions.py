"""Revocable sessions, checked cheaply on every authenticated request.

Every JWT carries its user's ``token_version`` (claim ``ver``) and a session id
(``sid``, shared by the access and refresh tokens of one sign-in and kept on
refresh). A token is refused when its ``ver`` is older than the user's (a
password change or deactivation bumps it) or its ``sid`` was revoked (logout).

The check must not cost a database query per request, so each process keeps a
:class:`SessionCache`: per user, the facts a request needs (name, flags,
version, revoked session ids), loaded with two small queries. Entries are
dropped

* in this process, at once, by whoever changes them (:meth:`SessionCache.changed`);
* in every other process of the machine (gunicorn workers, ``service worker``)
  through a stamp file in the config directory, mapped into memory by every
  process (``mmap``, shared): a change writes a new 64-bit value there (under
  ``flock``), and every lookup reads it (a memory read, no system call) and
  empties the cache when it moved;
* everywhere else (web processes on other hosts sharing the database) after
  ``SERVICE_SESSION_CACHE_SECONDS`` at the latest.

A shared mapped file is used rather than Redis or a database row because it costs
no system call and no round trip per request and needs no server: the embedded
default has neither Redis nor a shared table worth polling per request. (``os.stat``
of a stamp file was tried first: 10-15 µs per request on this loaded 2-core VM;
measured with ``python -m bench sessions``.)
"""

from __future__ import annotations

import datetime as dt
import fcntl
import mmap
import os
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.orm import Session

from service_accounts.models import RevokedSession, User

EXTENSION = "service.accounts.sessions"
STAMP_FILE = "sessions.stamp"
_U64 = struct.Struct("<Q")


def _choice(*values: str) -> dict[str, Any]:
    return {"choices": values}


@dataclass(frozen=True)
class AccountsConfig:
    """Settings of the accounts plugin (``SERVICE_<FIELD>``; read with ``appstate.settings_of(AccountsConfig)``)."""

    # --- sign-in mode and the superuser -------------------------------------------------------
    auto_login: bool = True
    skip_auth_auto_login: bool = False
    enable_superuser_cli: bool = True
    superuser: str = "service"
    superuser_password: str | None = field(default=None, repr=False)
    new_user_is_active: bool = False
    enable_signup: bool = True
    #: minimum length of a password set through the API or the CLI (create, update, reset)
    password_min_length: int = 8
    #: logins per minute per client address (``POST /api/v1/login``)
    rate_limit_per_minute: int = 5
    #: sign-ups per minute per client address (``POST /api/v1/users/`` by anyone but a superuser)
    signup_rate_limit_per_minute: int = 5

    # --- API keys -----------------------------------------------------------------------------
    api_key_source: str = field(default="db", metadata=_choice("db", "env"))
    api_key: str | None = field(default=None, repr=False)
    disable_track_apikey_usage: bool = False

    # --- tokens and cookies -------------------------------------------------------------------
    algorithm: str = field(default="HS256", metadata=_choice("HS256", "RS256", "RS512"))
    private_key: str | None = field(default=None, repr=False)
    public_key: str | None = None
    access_token_expire_seconds: int = 3600
    refresh_token_expire_seconds: int = 604800
    access_secure: bool = False
    access_httponly: bool = True
    access_same_site: str = field(default="lax", metadata=_choice("lax", "strict", "none"))
    refresh_secure: bool = False
    refresh_httponly: bool = True
    refresh_same_site: str = field(default="lax", metadata=_choice("lax", "strict", "none"))
    cookie_domain: str | None = None
    #: longest time a process trusts its cached copy of a user's session facts (other hosts)
    session_cache_seconds: float = 5.0
    #: how long a just-rotated refresh token still refreshes (to the same successor), for two tabs or
    #: retries refreshing at once; after it, presenting it again is a reuse that ends the sign-in
    refresh_reuse_grace_seconds: float = 10.0

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "rate_limit_per_minute": (1, None),
        "signup_rate_limit_per_minute": (1, None),
    }

    def summary(self) -> str:
        """The ``auth:`` line of the start-up summary."""
        if self.auto_login and not self.skip_auth_auto_login:
            auth = f"auto-login as {self.superuser!r} (set SERVICE_AUTO_LOGIN=false to require sign-in)"
        elif self.auto_login:
            auth = "auto-login, requests without credentials are let in"
        else:
            auth = "sign-in required"
        return f"auth: {auth}; API keys from {self.api_key_source}"


@dataclass(frozen=True)
class SessionUser:
    """What authentication needs of a user (an actor is built from it)."""

    id: uuid.UUID
    username: str
    is_superuser: bool
    is_active: bool
    token_version: int
    revoked: frozenset[str]
    loaded_at: float


class SessionCache:
    """Per-process cache of :class:`SessionUser` entries, invalidated across processes (see the module)."""

    def __init__(self, stamp: Path, max_age: float) -> None:
        self.stamp = stamp
        self.max_age = max_age
        self._entries: dict[uuid.UUID, SessionUser] = {}
        self._lock = threading.Lock()
        stamp.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(stamp, os.O_RDWR | os.O_CREAT, 0o600)
        with _locked(self._fd):
            if os.fstat(self._fd).st_size < _U64.size:
                os.pwrite(self._fd, bytes(_U64.size), 0)
        self._map = mmap.mmap(self._fd, _U64.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self._seen = self._read_stamp()

    def _read_stamp(self) -> int:
        value: int = _U64.unpack_from(self._map)[0]
        return value

    def get(self, s: Session, user_id: uuid.UUID) -> SessionUser | None:
        """The user's facts, from the cache when still valid; None when the user does not exist."""
        stamp = self._read_stamp()
        if stamp != self._seen:
            with self._lock:
                self._entries.clear()
                self._seen = stamp
        entry = self._entries.get(user_id)
        if entry is not None and time.monotonic() - entry.loaded_at < self.max_age:
            return entry
        return self.load(s, user_id)

    def load(self, s: Session, user_id: uuid.UUID) -> SessionUser | None:
        """Read the user's facts from the database (and cache them)."""
        u = User.__table__.c
        row = (
            s.connection()
            .execute(sa.select(u.username, u.is_superuser, u.is_active, u.token_version).where(u.id == user_id))
            .first()
        )
        if row is None:
            self._entries.pop(user_id, None)
            return None
        r = RevokedSession.__table__.c
        revoked = s.connection().execute(
            sa.select(r.sid).where(r.user_id == user_id, r.expires_at > dt.datetime.now(dt.UTC))
        )
        entry = SessionUser(
            id=user_id,
            username=row.username,
            is_superuser=bool(row.is_superuser),
            is_active=bool(row.is_active),
            token_version=int(row.token_version or 0),
            revoked=frozenset(sid for (sid,) in revoked),
            loaded_at=time.monotonic(),
        )
        self._entries[user_id] = entry
        return entry

    def changed(self, *user_ids: uuid.UUID) -> None:
        """Call after committing a change to these users' sessions: drop them here, tell the others."""
        for user_id in user_ids:
            self._entries.pop(user_id, None)
        with _locked(self._fd):
            new = max(time.time_ns(), self._read_stamp() + 1)  # strictly newer than any value before
            _U64.pack_into(self._map, 0, new)


class _locked:
    """``flock`` held for a ``with`` block (writers of the stamp take turns)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)


def init_app(app: Any, config: AccountsConfig, config_dir: Path) -> SessionCache:
    cache = SessionCache(config_dir / STAMP_FILE, config.session_cache_seconds)
    app.extensions[EXTENSION] = cache
    return cache


def cache() -> SessionCache:
    from flask import current_app

    return current_app.extensions[EXTENSION]  # type: ignore[no-any-return]


def revoke(s: Session, user_id: uuid.UUID, sid: str, lifetime_seconds: int) -> None:
    """Record a logged-out session until its longest-lived token would have expired."""
    now = dt.datetime.now(dt.UTC)
    s.execute(sa.delete(RevokedSession).where(RevokedSession.expires_at < now))  # forget expired ones
    if s.get(RevokedSession, sid) is None:
        s.add(RevokedSession(sid=sid, user_id=user_id, expires_at=now + dt.timedelta(seconds=lifetime_seconds)))
    s.flush()


def new_sid() -> str:
    return uuid.uuid4().hex
