"""Accounts logic: users, sign-in, API keys, caller resolution and start-up rules.

No request objects here except in :func:`actor_from_request`, which reads
credentials in the reference's order: bearer token, access cookie, then the
``x-api-key`` query parameter and header.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from flask import Request
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core import appstate, audit, db
from core.appstate import settings_of
from core.auth import NO_CREDENTIALS, Actor
from core.errors import ApiError, StartupError, validation_error
from core.settings import Settings
from service_accounts import security, sessions, usage
from service_accounts.models import ApiKey, RefreshFamily, User
from service_accounts.sessions import AccountsConfig, SessionUser

log = logging.getLogger(__name__)

LEGACY_PASSWORD = "service"  # noqa: S105  (the refused legacy default, not a credential)
DEFAULT_OPTINS = {"github_starred": False, "dialog_dismissed": False, "discord_clicked": False}
AUTO_LOGIN_KEY_REQUIRED = (
    "An API key must be passed as query or header. Since v1.5, running flows with auto-login "
    "requires a valid API key unless SERVICE_SKIP_AUTH_AUTO_LOGIN is true."
)


def settings() -> AccountsConfig:
    """The accounts plugin's settings (``SERVICE_AUTO_LOGIN``, tokens, cookies, API keys...)."""
    return settings_of(AccountsConfig)


def check_password_policy(password: str) -> None:
    """422 on ``body.password`` when the password is shorter than ``SERVICE_PASSWORD_MIN_LENGTH``."""
    minimum = settings().password_min_length
    if len(password) < minimum:
        raise validation_error(
            ["body", "password"], f"Password must be at least {minimum} characters long", "string_too_short"
        )


def actor_of(user: User | KeyOwner | SessionUser, via: str, api_key_id: uuid.UUID | None = None) -> Actor:
    return Actor(
        id=user.id,
        kind="user",
        username=user.username,
        is_superuser=user.is_superuser,
        is_active=user.is_active,
        via=via,
        api_key_id=api_key_id,
    )


# --- users -----------------------------------------------------------------------------------
def get_user(s: Session, user_id: uuid.UUID | str) -> User | None:
    try:
        key = user_id if isinstance(user_id, uuid.UUID) else uuid.UUID(str(user_id))
    except ValueError:
        return None
    return s.get(User, key)


def user_by_name(s: Session, username: str) -> User | None:
    """Names are stored trimmed, so look them up trimmed (``SERVICE_SUPERUSER=" admin"`` included)."""
    return s.scalar(sa.select(User).where(User.username == username.strip()))


def create_user(
    s: Session,
    username: str,
    password: str,
    *,
    is_superuser: bool = False,
    is_active: bool | None = None,
    optins: Mapping[str, Any] | None = None,
    enforce_policy: bool = True,
) -> User:
    """Insert a user; 400 when the name is taken, 422 when the password is too short."""
    if enforce_policy:
        check_password_policy(password)
    username = username.strip()
    if not username:  # the API's schema refuses it first; this guards the CLI and start-up
        raise ApiError(400, "Username must not be blank.")
    if user_by_name(s, username) is not None:
        raise ApiError(400, "This username is unavailable.")
    user = User(
        username=username,
        password_hash=security.hash_password(password),
        is_superuser=is_superuser,
        is_active=settings().new_user_is_active if is_active is None else is_active,
        optins={**DEFAULT_OPTINS, **(optins or {})},
    )
    s.add(user)
    try:
        s.flush()
    except IntegrityError:
        s.rollback()
        raise ApiError(400, "This username is unavailable.") from None
    audit.record("user:create", "user", user.id, name=user.username, user_id=user.id,
                 details={"is_superuser": user.is_superuser})  # fmt: skip
    return user


def list_users(s: Session, skip: int, limit: int, search: str | None) -> tuple[int, list[User]]:
    query = sa.select(User)
    if search:
        query = query.where(User.username.ilike(f"%{search}%"))
    total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
    users = list(s.scalars(query.order_by(User.create_at, User.username).offset(skip).limit(limit)))
    return total, users


def update_user(s: Session, actor: Actor, user_id: uuid.UUID, changes: Mapping[str, Any]) -> User:
    """Apply an update as ``actor``: superusers edit anyone; users only themselves, not privileges."""
    if not actor.is_superuser and actor.id != user_id:
        raise ApiError(403, "You don't have the permission to update this user")
    user = get_user(s, user_id)
    if user is None:
        raise ApiError(404, "User not found")
    if not actor.is_superuser:
        if "is_superuser" in changes and changes["is_superuser"] != user.is_superuser:
            raise ApiError(403, "You don't have the permission to change superuser status")
        if "is_active" in changes and changes["is_active"] != user.is_active:
            raise ApiError(403, "You don't have the permission to change the active status")
        if changes.get("password") is not None:
            raise ApiError(400, "You can't change your password here")
    if actor.id == user_id and changes.get("is_active") is False:
        raise ApiError(403, "You can't deactivate your own user account")
    if actor.id == user_id and changes.get("is_superuser") is False and user.is_superuser:
        raise ApiError(403, "You can't remove your own superuser status")
    if changes.get("is_active") is False and user.is_active:
        user.token_version = (user.token_version or 0) + 1  # deactivation ends every session
    for field in ("username", "profile_image", "is_active", "is_superuser", "last_login_at", "optins"):
        if field in changes and changes[field] is not None:
            value = changes[field]
            if field == "username":
                value = value.strip()
                other = user_by_name(s, value)
                if other is not None and other.id != user.id:
                    raise ApiError(400, "This username is unavailable.")
            setattr(user, field, value)
    if changes.get("password") is not None:
        if changes["password"] == LEGACY_PASSWORD:
            raise ApiError(400, "This password is not allowed")
        check_password_policy(changes["password"])
        user.password_hash = security.hash_password(changes["password"])
        user.token_version = (user.token_version or 0) + 1  # a new password ends every older session
    user.updated_at = db.utcnow()
    s.flush()
    # which fields changed, never a password
    written = [k for k in (*USER_FIELDS, "password") if changes.get(k) is not None and k != "last_login_at"]
    if written:
        audit.record("user:write", "user", user.id, name=user.username, user_id=user.id, details={"fields": written})
    return user


USER_FIELDS = ("username", "profile_image", "is_active", "is_superuser", "last_login_at", "optins")


def reset_password(s: Session, actor: Actor, user_id: uuid.UUID, current: str | None, new: str) -> User:
    """Self-service password change; another user's id is 404."""
    if actor.id != user_id:
        raise ApiError(404, "User not found")
    user = get_user(s, user_id)
    if user is None:
        raise ApiError(404, "User not found")
    if not current or not security.verify_password(user.password_hash, current):
        raise ApiError(400, "Current password is incorrect")
    if new == LEGACY_PASSWORD:
        raise ApiError(400, "This password is not allowed")
    check_password_policy(new)
    user.password_hash = security.hash_password(new)
    user.token_version = (user.token_version or 0) + 1  # a new password ends every older session
    user.updated_at = db.utcnow()
    s.flush()
    audit.record("user:write", "user", user.id, name=user.username, user_id=user.id, details={"fields": ["password"]})
    return user


def delete_user(s: Session, actor: Actor, user_id: uuid.UUID) -> None:
    if actor.id == user_id:
        raise ApiError(400, "You can't delete your own user account")
    user = get_user(s, user_id)
    if user is None:
        raise ApiError(404, "User not found")
    appstate.hooks().on_user_deleted(user_id=str(user.id))
    s.execute(sa.delete(ApiKey).where(ApiKey.user_id == user.id))
    s.delete(user)
    s.flush()
    audit.record("user:delete", "user", user.id, name=user.username, user_id=user.id)


# --- sign-in ---------------------------------------------------------------------------------
def authenticate(s: Session, username: str, password: str) -> User:
    """Check credentials; the reference's codes for each refusal."""
    user = user_by_name(s, username.strip())
    if user is None:
        security.verify_password(security.dummy_hash(), password)  # same cost: no user enumeration by timing
        raise ApiError(401, "Incorrect username or password", {"WWW-Authenticate": "Bearer"})
    if not security.verify_password(user.password_hash, password) or (
        user.is_superuser and password == LEGACY_PASSWORD
    ):
        raise ApiError(401, "Incorrect username or password", {"WWW-Authenticate": "Bearer"})
    if not password_login_allowed(user):
        raise ApiError(403, PASSWORDS_OFF)
    if not user.is_active:
        if user.last_login_at is None:
            raise ApiError(400, "Waiting for approval")
        raise ApiError(401, "Inactive user")
    user.last_login_at = db.utcnow()
    s.flush()
    return user


PASSWORDS_OFF = "Password sign-in is disabled: sign in with single sign-on"


def password_login_allowed(user: User) -> bool:
    """Ask the ``password_login_allowed`` hook (SSO-only mode); any False refuses."""
    from service_accounts import hookspecs

    answers = appstate.hooks().each(
        hookspecs.password_login_allowed, username=user.username, is_superuser=bool(user.is_superuser)
    )
    return all(answer is not False for answer in answers)


def superuser(s: Session) -> User | None:
    return user_by_name(s, settings().superuser)


INVALID_TOKEN = "Invalid token"  # noqa: S105  (messages, not credentials)
REVOKED_TOKEN = "Token has been revoked"  # noqa: S105


def token_claims(token: str, expected_type: str = "access") -> dict[str, Any]:
    """Decode a JWT of ``expected_type``; 401 when invalid, expired or without an expiry."""
    import jwt as pyjwt
    from flask_jwt_extended import decode_token
    from flask_jwt_extended.exceptions import JWTExtendedException

    try:
        claims: dict[str, Any] = decode_token(token)
    except pyjwt.ExpiredSignatureError:
        raise ApiError(401, "Token has expired", {"WWW-Authenticate": "Bearer"}) from None
    except (pyjwt.InvalidTokenError, JWTExtendedException, ValueError):
        raise ApiError(401, INVALID_TOKEN, {"WWW-Authenticate": "Bearer"}) from None
    if not isinstance(claims.get("exp"), int | float):  # a token without an expiry would be valid forever
        raise ApiError(401, INVALID_TOKEN, {"WWW-Authenticate": "Bearer"})
    if claims.get("type") != expected_type:
        raise ApiError(401, "Invalid token type", {"WWW-Authenticate": "Bearer"})
    return claims


def session_of(s: Session, claims: dict[str, Any], *, fresh: bool = False) -> SessionUser:
    """The token's user if its session is still valid (version, not logged out, active); 401 otherwise.

    ``fresh`` reads the database instead of the process cache (refresh, logout).
    """
    try:
        user_id = uuid.UUID(str(claims.get("sub", "")))
    except ValueError:
        raise ApiError(401, INVALID_TOKEN, {"WWW-Authenticate": "Bearer"}) from None
    cache = sessions.cache()
    user = cache.load(s, user_id) if fresh else cache.get(s, user_id)
    if user is None:
        raise ApiError(401, INVALID_TOKEN, {"WWW-Authenticate": "Bearer"})
    if not user.is_active:
        raise ApiError(401, "Inactive user")
    # tokens issued before versions existed carry none: version 0, ended by the first bump
    if claims.get("ver", 0) != user.token_version or claims.get("sid") in user.revoked:
        raise ApiError(401, REVOKED_TOKEN, {"WWW-Authenticate": "Bearer"})
    return user


def user_from_token(s: Session, token: str, expected_type: str = "access") -> SessionUser:
    """Decode a JWT and check its session (see :func:`session_of`); 401 otherwise."""
    return session_of(s, token_claims(token, expected_type), fresh=expected_type != "access")


# --- refresh-token rotation ------------------------------------------------------------------
class RefreshReused(Exception):
    """A refresh token that was already exchanged was presented again: its sign-in is revoked."""


def reuse_grace_seconds() -> float:
    return float(settings().refresh_reuse_grace_seconds)


def family_key(claims: Mapping[str, Any]) -> tuple[str, str]:
    """``(sid, jti)`` of a refresh token; a token from before session ids is its own family (``j<jti>``)."""
    jti = str(claims.get("jti") or "")[:64]
    if not jti:
        raise ApiError(401, INVALID_TOKEN)
    sid = claims.get("sid")
    return (sid if isinstance(sid, str) and sid else f"j{jti}")[:64], jti


def rotate_refresh(s: Session, user_id: uuid.UUID, sid: str, jti: str) -> str:
    """The id of the refresh token that replaces ``jti`` in the family ``sid``; :class:`RefreshReused` when
    ``jti`` was already exchanged (past the grace window).

    Hand-written: flask-jwt-extended leaves storage and rotation to the application. One conditional
    UPDATE (``current_jti = jti``) makes concurrent refreshes safe without locks: one wins and rotates;
    the others find ``jti`` as ``previous_jti`` and, within ``SERVICE_REFRESH_REUSE_GRACE_SECONDS``, get
    the same successor, so two tabs refreshing at once both stay signed in.
    """
    now = dt.datetime.now(dt.UTC)
    expires = now + dt.timedelta(seconds=settings().refresh_token_expire_seconds)
    successor = str(uuid.uuid4())
    table = cast(sa.Table, RefreshFamily.__table__)
    moved = s.execute(
        sa.update(table)
        .where(table.c.sid == sid, table.c.current_jti == jti, table.c.user_id == user_id)
        .values(current_jti=successor, previous_jti=jti, rotated_at=now, expires_at=expires)
    )
    if moved.rowcount == 1:  # type: ignore[attr-defined]
        return successor
    row = s.execute(sa.select(table).where(table.c.sid == sid)).first()
    if row is None:  # a token issued before rotation existed (or before its first refresh): adopted
        s.execute(sa.delete(table).where(table.c.expires_at < now))  # forget expired families
        try:
            with s.begin_nested():
                s.execute(
                    sa.insert(table).values(
                        sid=sid,
                        user_id=user_id,
                        current_jti=successor,
                        previous_jti=jti,
                        rotated_at=now,
                        expires_at=expires,
                    )
                )
            return successor
        except IntegrityError:  # a concurrent refresh of the same token adopted it first
            row = s.execute(sa.select(table).where(table.c.sid == sid)).first()
            assert row is not None
    rotated_at = row.rotated_at if row.rotated_at.tzinfo else row.rotated_at.replace(tzinfo=dt.UTC)
    if (
        row.user_id == user_id
        and row.previous_jti == jti
        and (now - rotated_at).total_seconds() <= reuse_grace_seconds()
    ):
        return str(row.current_jti)
    raise RefreshReused(sid)


def end_family(s: Session, user_id: uuid.UUID, sid: str) -> None:
    """Revoke every token of the sign-in ``sid`` (a refresh token was reused: it may have been stolen)."""
    lifetime = max(settings().refresh_token_expire_seconds, settings().access_token_expire_seconds)
    sessions.revoke(s, user_id, sid, lifetime)
    log.warning("a used refresh token was presented again: sign-in %s of user %s revoked", sid[:8], user_id)


def logout(s: Session, tokens: list[tuple[str, str]]) -> list[uuid.UUID]:
    """Revoke the sessions of the presented tokens (any that still decode); the users concerned."""
    users: list[uuid.UUID] = []
    lifetime = max(settings().refresh_token_expire_seconds, settings().access_token_expire_seconds)
    for token, kind in tokens:
        try:
            claims = token_claims(token, kind)
            user_id = uuid.UUID(str(claims.get("sub", "")))
        except (ApiError, ValueError):
            continue
        user = get_user(s, user_id)
        if user is None:
            continue
        sid = claims.get("sid")
        if isinstance(sid, str) and sid:
            sessions.revoke(s, user_id, sid, lifetime)
        else:  # a token from before session ids: end every session of the user
            user.token_version = (user.token_version or 0) + 1
            s.flush()
        users.append(user_id)
    return users


# --- API keys --------------------------------------------------------------------------------
def create_api_key(s: Session, user_id: uuid.UUID, name: str | None) -> tuple[ApiKey, str]:
    raw = security.new_api_key()
    key = ApiKey(name=name, key_hash=security.hash_api_key(raw), key_prefix=raw[:8], user_id=user_id)
    s.add(key)
    s.flush()
    audit.record("api_key:create", "api_key", key.id, name=name, user_id=user_id)  # the key's name, never the key
    return key, raw


def list_api_keys(s: Session, user_id: uuid.UUID) -> list[ApiKey]:
    usage.counter(appstate.engine()).flush(s)  # counts served by this process are written first
    return list(s.scalars(sa.select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at)))


def delete_api_key(s: Session, user_id: uuid.UUID, key_id: uuid.UUID) -> None:
    key = s.scalar(sa.select(ApiKey).where(ApiKey.id == key_id, ApiKey.user_id == user_id))
    if key is None:
        raise ApiError(404, "API Key not found")
    s.delete(key)
    s.flush()
    audit.record("api_key:delete", "api_key", key.id, name=key.name, user_id=user_id)


class KeyOwner(NamedTuple):
    """The owner of an API key as :func:`actor_of` needs it (a row, not an ORM object)."""

    id: uuid.UUID
    username: str
    is_superuser: bool
    is_active: bool


_key_lookup: Any = None


def _key_lookup_statement() -> db.Prepared:
    """``key id, active, expiry, owner...`` of a key hash: one Core join, built once, run on the driver.

    Every API-key request runs this; loading ``ApiKey`` and ``User`` as ORM objects cost
    about three times as much, and the Core select through the session ten times as much as
    the driver (:class:`core.db.Prepared`). Nothing is cached between requests: a revoked or
    deleted key, or a deactivated owner, is refused on the very next request.
    """
    global _key_lookup
    if _key_lookup is None:
        key, user = ApiKey.__table__.c, User.__table__.c
        _key_lookup = db.Prepared(
            sa.select(key.id, key.is_active, key.expires_at, user.id, user.username, user.is_superuser, user.is_active)
            .select_from(ApiKey.__table__.join(User.__table__, user.id == key.user_id))
            .where(key.key_hash == sa.bindparam("key_hash"))
        )
    return _key_lookup


def user_from_api_key(raw: str) -> tuple[User | KeyOwner, uuid.UUID | None] | None:
    """The active owner of ``raw`` (and the key id), or None when the key is unknown or revoked.

    A project key is checked on the driver (no session); only the environment key reads the superuser
    through the request's session.
    """
    cfg = settings()
    if cfg.api_key_source == "env":
        if cfg.api_key and security.same_secret(raw, cfg.api_key):
            user = superuser(db.session())
            return (user, None) if user is not None and user.is_active else None
        return None
    found = _key_lookup_statement().first({"key_hash": security.hash_api_key(raw)})
    if found is None:
        return None
    key_id, key_active, expires_at, user_id, username, is_superuser, user_active = found
    now = db.utcnow()
    if not key_active or not user_active or (expires_at is not None and _aware(expires_at) < now):
        return None
    if not cfg.disable_track_apikey_usage:
        usage.counter(appstate.engine()).record(key_id, now)
    return KeyOwner(user_id, username, bool(is_superuser), bool(user_active)), key_id


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


# --- who is calling ----------------------------------------------------------------------------
def actor_from_request(request: Request, scheme: str) -> Actor | None:
    """Resolve the caller for ``scheme`` (``user``, ``api_key`` or ``optional``).

    The session is opened only by the paths that read through it: a project API key (every run) is
    checked on the driver (:func:`user_from_api_key`) and needs none.
    """
    cfg = settings()
    if scheme in ("user", "optional"):
        auth = request.headers.get("Authorization", "")
        if auth:
            kind, _, token = auth.partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return actor_of(user_from_token(db.session(), token.strip()), "bearer")
            if scheme == "user" and not _api_key_in(request):
                raise ApiError(401, "Invalid token", {"WWW-Authenticate": "Bearer"})
        cookie = request.cookies.get(security.ACCESS_COOKIE)
        if cookie:
            return actor_of(user_from_token(db.session(), cookie), "cookie")
    raw = _api_key_in(request)
    if raw:
        found = user_from_api_key(raw)
        if found is None:
            raise ApiError(403, "Invalid API key" if scheme != "api_key" else "Invalid or missing API key")
        user, key_id = found
        return actor_of(user, "api_key" if key_id else "env_api_key", key_id)
    if cfg.auto_login and cfg.skip_auth_auto_login:
        admin = superuser(db.session())
        if admin is not None and admin.is_active:
            return actor_of(admin, "auto_login")
    if scheme == "optional":
        return None
    if scheme == "api_key":
        raise ApiError(
            403, AUTO_LOGIN_KEY_REQUIRED if cfg.auto_login else "An API key must be passed as query or header"
        )
    raise ApiError(403, NO_CREDENTIALS)


def _api_key_in(request: Request) -> str | None:
    return request.args.get("x-api-key") or request.headers.get("x-api-key") or None


# --- start-up ---------------------------------------------------------------------------------
def check_startup_rules(cfg: AccountsConfig) -> None:
    """The spec's start-up refusals; raise :class:`StartupError` with the variable to fix."""
    if cfg.superuser_password == LEGACY_PASSWORD:
        raise StartupError("SERVICE_SUPERUSER_PASSWORD: the legacy default password is refused; choose another one")
    if not cfg.auto_login and not cfg.superuser_password:
        raise StartupError(
            "SERVICE_SUPERUSER_PASSWORD is required when SERVICE_AUTO_LOGIN is false (no default credentials exist)"
        )
    if cfg.api_key_source == "env" and not cfg.api_key:
        raise StartupError("SERVICE_API_KEY is required when SERVICE_API_KEY_SOURCE is env")
    if not cfg.superuser.strip():
        raise StartupError("SERVICE_SUPERUSER must not be empty")
    # a zero lifetime would give tokens without an expiry (Flask-JWT-Extended treats 0 as "never expires")
    for name in ("access_token_expire_seconds", "refresh_token_expire_seconds"):
        if getattr(cfg, name) < 1:
            raise StartupError(f"{Settings.env_name(name)} must be at least 1 second")


def ensure_superuser(s: Session, cfg: AccountsConfig) -> User:
    """Create the configured superuser when missing (random password under auto-login if none given)."""
    user = user_by_name(s, cfg.superuser)
    if user is not None:
        if not user.is_superuser:
            # never promote an ordinary account that happens to carry the configured name (it may have been
            # registered by anyone after the original superuser was renamed or deleted)
            raise StartupError(
                f"SERVICE_SUPERUSER: the existing user {cfg.superuser!r} is not a superuser; "
                "choose another name or promote that account explicitly"
            )
        if not user.is_active:
            user.is_active = True
            s.commit()
        return user
    password = cfg.superuser_password or secrets.token_urlsafe(24)
    try:
        user = create_user(s, cfg.superuser, password, is_superuser=True, is_active=True, enforce_policy=False)
        s.commit()
    except (IntegrityError, ApiError):  # another process created it first
        s.rollback()
        user = user_by_name(s, cfg.superuser)
        if user is None:
            raise
    return user
