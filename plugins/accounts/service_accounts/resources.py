"""HTTP endpoints of the accounts plugin (paths and codes as the reference serves them).

* ``/api/v1/users/...``: create, list, whoami, update, reset-password, delete
* ``/api/v1/api_key/...``: list, create, delete
* ``/api/v1/login``, ``/auto_login``, ``/refresh``, ``/logout``, ``/session``
"""

from __future__ import annotations

import uuid

from flask import jsonify, make_response, request
from flask_smorest import Blueprint

from core import db, openapi
from core.auth import Actor, allowed, authenticated, current_actor, resolve_actor
from core.errors import ApiError
from core.limits import hit, rate_limited
from service_accounts import schemas, security, services, sessions

users_blp = Blueprint("users", __name__, url_prefix="/api/v1/users", description="User accounts")
api_keys_blp = Blueprint("api_keys", __name__, url_prefix="/api/v1/api_key", description="API keys")
login_blp = Blueprint("login", __name__, url_prefix="/api/v1", description="Sign-in and tokens")


def _user_id(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ApiError(404, "User not found") from None


# --- users ---------------------------------------------------------------------------------------
@users_blp.route("/", methods=["POST"])
@users_blp.arguments(schemas.UserCreateSchema)
@users_blp.response(201, schemas.UserSchema)
@authenticated("optional")
def create_user(body):
    """Register a user: public when sign-up is on and auto-login off; superusers always."""
    actor: Actor | None = current_actor_or_none()
    if not allowed(actor, "users.create"):
        raise ApiError(403, "Public user registration is disabled.")
    if actor is None or not actor.is_superuser:  # a sign-up: per address, like login
        hit(services.settings().signup_rate_limit_per_minute, "signup")
    with db.transaction() as s:
        user = services.create_user(s, body["username"], body["password"], optins=body.get("optins"))
    return user


@users_blp.route("/", methods=["GET"])
@users_blp.arguments(schemas.UserListQuerySchema, location="query")
@users_blp.response(200, schemas.UserListSchema)
@authenticated("superuser")
def list_users(query):
    """List users (superusers only)."""
    total, users = services.list_users(db.session(), query["skip"], query["limit"], query.get("search"))
    return {"total_count": total, "users": users}


@users_blp.route("/whoami", methods=["GET"])
@users_blp.response(200, schemas.UserSchema)
@authenticated("user")
def whoami():
    """The calling user."""
    user = services.get_user(db.session(), current_actor().id)
    if user is None:
        raise ApiError(401, "Invalid token")
    return user


@users_blp.route("/<user_id>", methods=["PATCH"])
@users_blp.arguments(schemas.UserUpdateSchema)
@users_blp.response(200, schemas.UserSchema)
@authenticated("user")
def update_user(body, user_id):
    """Update a user: superusers edit anyone; users edit only themselves and not their privileges."""
    with db.transaction() as s:
        user = services.update_user(s, current_actor(), _user_id(user_id), body)
    sessions.cache().changed(user.id)  # committed: every process drops its copy (flags, token version)
    return user


@users_blp.route("/<user_id>/reset-password", methods=["PATCH"])
@users_blp.arguments(schemas.PasswordResetSchema)
@users_blp.response(200, schemas.UserSchema)
@authenticated("user")
def reset_password(body, user_id):
    """Change one's own password; needs ``current_password``."""
    with db.transaction() as s:
        user = services.reset_password(
            s, current_actor(), _user_id(user_id), body.get("current_password"), body["password"]
        )
    sessions.cache().changed(user.id)  # every older token of the user is refused from now on
    return user


@users_blp.route("/<user_id>", methods=["DELETE"])
@users_blp.response(200, schemas.DetailSchema)
@authenticated("superuser")
def delete_user(user_id):
    """Delete a user and, through ``on_user_deleted``, everything they own (superusers only)."""
    with db.transaction() as s:
        services.delete_user(s, current_actor(), _user_id(user_id))
    sessions.cache().changed(_user_id(user_id))
    return {"detail": "User deleted"}


# --- API keys ----------------------------------------------------------------------------------------
def _key_out(key, raw: str | None = None) -> dict:
    return {
        "id": key.id,
        "name": key.name,
        "user_id": key.user_id,
        "total_uses": key.total_uses,
        "last_used_at": key.last_used_at,
        "is_active": key.is_active,
        "created_at": key.created_at,
        "expires_at": key.expires_at,
        "api_key": raw if raw else security.mask_api_key(key.key_prefix),
    }


@api_keys_blp.route("/", methods=["GET"])
@api_keys_blp.response(200, schemas.ApiKeyListSchema)
@authenticated("user")
def list_api_keys():
    """The caller's API keys, masked."""
    actor = current_actor()
    keys = services.list_api_keys(db.session(), actor.id)
    return {"total_count": len(keys), "user_id": actor.id, "api_keys": [_key_out(k) for k in keys]}


@api_keys_blp.route("/", methods=["POST"])
@api_keys_blp.arguments(schemas.ApiKeyCreateSchema)
@api_keys_blp.response(200, schemas.ApiKeySchema)
@authenticated("user")
def create_api_key(body):
    """Create a key; its value is in this response only (stored as a hash)."""
    with db.transaction() as s:
        key, raw = services.create_api_key(s, current_actor().id, body.get("name"))
    return _key_out(key, raw)


@api_keys_blp.route("/<key_id>", methods=["DELETE"])
@api_keys_blp.response(200, schemas.DetailSchema)
@authenticated("user")
def delete_api_key(key_id):
    """Delete one of the caller's keys; it stops working at once."""
    try:
        key = uuid.UUID(key_id)
    except ValueError:
        raise ApiError(404, "API Key not found") from None
    with db.transaction() as s:
        services.delete_api_key(s, current_actor().id, key)
    return {"detail": "API Key deleted"}


# --- sign-in -------------------------------------------------------------------------------------------
def _token_response(
    user_id: str, version: int, sid: str, *, session_access_cookie: bool = False, refresh_jti: str | None = None
):
    tokens = security.make_tokens(user_id, version, sid, refresh_jti)
    response = make_response(jsonify(tokens))
    security.set_auth_cookies(response, services.settings(), tokens, session_access_cookie=session_access_cookie)
    return response


@login_blp.route("/login", methods=["POST"])
@login_blp.arguments(schemas.LoginFormSchema, location="form")
@login_blp.response(200, schemas.TokenSchema)
@rate_limited(lambda _core: services.settings().rate_limit_per_minute, scope="login")
def login(form):
    """Sign in with a form body; returns tokens and sets the session cookies."""
    with db.transaction() as s:
        user = services.authenticate(s, form["username"], form["password"])
        user_id, version = str(user.id), user.token_version or 0
    return _token_response(user_id, version, sessions.new_sid())


@login_blp.route("/auto_login", methods=["GET"])
@login_blp.response(200, schemas.TokenSchema)
@login_blp.doc(
    responses={
        "400": openapi.response_name(400),
        "403": openapi.error_response("auto-login is off: `{detail: {message, auto_login: false}}`"),
    }
)
def auto_login():
    """Tokens for the configured superuser when auto-login is on."""
    cfg = services.settings()
    if not cfg.auto_login:
        raise ApiError(403, {"message": "Auto login is disabled.", "auto_login": False})
    user = services.superuser(db.session())
    if user is None or not user.is_active:
        raise ApiError(400, "The superuser is missing or inactive")
    return _token_response(str(user.id), user.token_version or 0, sessions.new_sid(), session_access_cookie=True)


@login_blp.route("/refresh", methods=["POST"])
@login_blp.response(200, schemas.TokenSchema)
@login_blp.doc(
    requestBody=openapi.no_body("the refresh token comes from the refresh_token_svc cookie"),
    responses={"401": openapi.response_name(401)},
)
def refresh():
    """New tokens from the ``refresh_token_svc`` cookie (a token in the body is ignored).

    Refresh tokens rotate: the presented one is exchanged for a new one of the same sign-in, once; a used
    one presented again (after ``SERVICE_REFRESH_REUSE_GRACE_SECONDS``) revokes the whole sign-in.
    """
    token = request.cookies.get(security.REFRESH_COOKIE)
    if not token:
        raise ApiError(401, "Invalid refresh token")
    try:
        claims = services.token_claims(token, "refresh")
        user = services.session_of(db.session(), claims, fresh=True)
        sid, jti = services.family_key(claims)
    except ApiError:
        raise ApiError(401, "Invalid refresh token") from None
    try:
        with db.transaction() as s:
            successor = services.rotate_refresh(s, user.id, sid, jti)
    except services.RefreshReused:
        with db.transaction() as s:
            services.end_family(s, user.id, sid)
        sessions.cache().changed(user.id)  # its access tokens are refused at once, in every process
        raise ApiError(401, "Invalid refresh token") from None
    return _token_response(str(user.id), user.token_version, sid, refresh_jti=successor)


@login_blp.route("/logout", methods=["POST"])
@login_blp.response(200, schemas.MessageSchema)
@login_blp.doc(requestBody=openapi.no_body("logging out deletes the session cookies"))
def logout():
    """End the presented session (its access and refresh tokens are refused from now on); delete the cookies."""
    presented = [(request.cookies.get(security.REFRESH_COOKIE) or "", "refresh")]
    kind, _, bearer = request.headers.get("Authorization", "").partition(" ")
    if kind.lower() == "bearer":
        presented.append((bearer.strip(), "access"))
    presented.append((request.cookies.get(security.ACCESS_COOKIE) or "", "access"))
    with db.transaction() as s:
        ended = services.logout(s, [(token, kind) for token, kind in presented if token])
    if ended:
        sessions.cache().changed(*ended)
    response = make_response(jsonify({"message": "Logout successful"}))
    security.delete_auth_cookies(response, services.settings())
    return response


@login_blp.route("/session", methods=["GET"])
@login_blp.response(200, schemas.SessionSchema)
@login_blp.doc(responses={"500": openapi.error_response("the user could not be read (database failure)")})
def session_info():
    """Whether the caller is signed in, and as whom."""
    try:
        actor = resolve_actor("optional")
    except ApiError:
        actor = None
    if actor is None:
        return {"authenticated": False, "user": None, "store_api_key": None}
    user = services.get_user(db.session(), actor.id)
    return {"authenticated": user is not None, "user": user, "store_api_key": None}


def current_actor_or_none() -> Actor | None:
    from flask import g

    return g.get("actor")
