"""HTTP endpoints of the SSO plugin.

* ``GET /api/v1/sso/providers``: what the sign-in page shows (public)
* ``GET /api/v1/sso/oidc/login?next=/path``: start a sign-in (302 to the provider)
* ``GET /api/v1/sso/oidc/callback``: the provider's answer (302 into the editor, signed in)
* ``GET|POST /api/v1/sso/logout``: end the local session, then the provider's (end-session URL)

Browser-facing steps answer with redirects: a refused sign-in lands on the sign-in page with
``?sso_error=<code>`` (``invalid_state``, ``invalid_id_token``, ``provider_error``, ``provider_unreachable``,
``provider_denied``, ``account_refused``) and sets no session cookie.
"""

from __future__ import annotations

import datetime as dt
import hmac
import logging
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
from flask import Blueprint as BrowserBlueprint
from flask import jsonify, redirect, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields
from werkzeug.wrappers import Response

from core import appstate, db, openapi
from core.appstate import settings_of
from core.contracts import SessionCookie, SignedIn, SsoIdentity
from core.errors import ApiError
from service_sso import hookspecs, oidc
from service_sso.config import SsoConfig
from service_sso.models import SsoIdentity as IdentityRow
from service_sso.models import SsoPending

log = logging.getLogger(__name__)

sso_blp = Blueprint("sso", __name__, url_prefix="/api/v1/sso", description="Single sign-on (OpenID Connect)")
#: the browser's steps (redirects, not an API): served, but not in the OpenAPI document
browser_blp = BrowserBlueprint("sso_browser", __name__, url_prefix="/api/v1/sso")


class SsoProviderSchema(Schema):
    slug = fields.String()
    display_name = fields.String()
    login_url = fields.String()


class SsoProvidersSchema(Schema):
    providers = fields.List(fields.Nested(SsoProviderSchema))
    sso_only = fields.Boolean()


class SsoLogoutSchema(Schema):
    message = fields.String()
    end_session_url = fields.String(allow_none=True)


PROVIDER = "oidc"
STATE_COOKIE = "sso_state_svc"
ID_TOKEN_COOKIE = "sso_id_token_svc"  # noqa: S105  (a cookie name: the end-session hint is kept there)
CALLBACK_PATH = "/api/v1/sso/oidc/callback"


def config() -> SsoConfig:
    return settings_of(SsoConfig)


def _enabled() -> SsoConfig:
    cfg = config()
    if not cfg.enabled:
        raise ApiError(404, "Single sign-on is not enabled")
    return cfg


def redirect_uri(cfg: SsoConfig) -> str:
    return cfg.redirect_uri or request.url_root.rstrip("/") + CALLBACK_PATH


def _safe_next(value: str | None, cfg: SsoConfig) -> str:
    """A same-site path to land on after signing in (never another site: no open redirect)."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value[:512]
    return cfg.home_path


def _refused(cfg: SsoConfig, code: str) -> Response:
    response = redirect(f"{cfg.login_path}?{urlencode({'sso_error': code})}", code=302)
    response.delete_cookie(STATE_COOKIE, path=CALLBACK_PATH)
    return response


def _set(response: Response, cookie: SessionCookie) -> None:
    response.set_cookie(
        cookie.name,
        cookie.value,
        max_age=cookie.max_age,
        secure=cookie.secure,
        httponly=cookie.httponly,
        samesite=cookie.samesite,
        domain=cookie.domain,
        path=cookie.path,
    )


@sso_blp.route("/providers", methods=["GET"])
@sso_blp.doc(responses={"200": openapi.json_response("the sign-in page's providers", SsoProvidersSchema)})
def providers() -> Any:
    """The sign-in page's provider buttons, and whether passwords are off (SSO-only mode)."""
    cfg = config()
    if not cfg.enabled:
        return jsonify({"providers": [], "sso_only": False})
    login = f"/api/v1/sso/{PROVIDER}/login"
    return jsonify(
        {"providers": [{"slug": PROVIDER, "display_name": cfg.display_name, "login_url": login}], "sso_only": cfg.only}
    )


@browser_blp.route(f"/{PROVIDER}/login", methods=["GET"])
def login() -> Any:
    """Start the authorization code flow: remember state, nonce and PKCE verifier; send the browser away."""
    cfg = _enabled()
    state, nonce, verifier = oidc.new_secret(), oidc.new_secret(), oidc.new_secret()
    try:
        target = oidc.authorization_url(cfg, redirect_uri(cfg), state, nonce, verifier)
    except oidc.SsoError as exc:
        log.warning("single sign-on could not start: %s", exc)
        return _refused(cfg, exc.code)
    now = db.utcnow()
    with db.transaction() as s:
        s.execute(sa.delete(SsoPending).where(SsoPending.expires_at < now))  # forget abandoned sign-ins
        s.add(
            SsoPending(
                state=state,
                nonce=nonce,
                code_verifier=verifier,
                next_path=_safe_next(request.args.get("next"), cfg),
                expires_at=now + dt.timedelta(seconds=cfg.pending_seconds),
            )
        )
    response = redirect(target, code=302)
    # binds the sign-in to this browser: a callback carrying another browser's state is refused
    response.set_cookie(
        STATE_COOKIE,
        state,
        max_age=cfg.pending_seconds,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure,
        path=CALLBACK_PATH,
    )
    return response


def _pending(state: str | None) -> SsoPending | None:
    """The started sign-in this callback answers (consumed: a state works once), if the browser's own."""
    cookie = request.cookies.get(STATE_COOKIE)
    if not state or not cookie or not hmac.compare_digest(state.encode(), cookie.encode()):
        return None
    with db.transaction() as s:
        pending = s.get(SsoPending, state)
        if pending is None:
            return None
        found = SsoPending(
            state=pending.state,
            nonce=pending.nonce,
            code_verifier=pending.code_verifier,
            next_path=pending.next_path,
            expires_at=pending.expires_at,
        )
        s.expunge(pending)
        # single use, committed before the code is traded; of two concurrent callbacks one deletes the row
        if s.execute(sa.delete(SsoPending).where(SsoPending.state == state)).rowcount != 1:  # type: ignore[attr-defined]
            return None
    expires = found.expires_at if found.expires_at.tzinfo else found.expires_at.replace(tzinfo=dt.UTC)
    return found if expires >= db.utcnow() else None


def _groups(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list | tuple):
        return ()
    return tuple(sorted({str(g).strip() for g in value if str(g).strip()}))


def map_identity(cfg: SsoConfig, claims: dict[str, Any], user_id: str | None) -> SsoIdentity:
    """The claim mapping: username, email, display name, groups, and the admin group's superuser flag."""
    subject = str(claims["sub"])
    email = claims.get(cfg.email_claim)
    username = claims.get(cfg.username_claim) or email or subject
    groups = _groups(claims.get(cfg.groups_claim))
    return SsoIdentity(
        provider=PROVIDER,
        subject=subject,
        username=str(username).strip()[:255],
        email=str(email) if email else None,
        name=str(claims[cfg.name_claim]) if claims.get(cfg.name_claim) else None,
        groups=groups,
        is_superuser=(cfg.admin_group in groups) if cfg.admin_group else None,
        user_id=user_id,
    )


def _link(s: Any, identity: SsoIdentity, signed: SignedIn) -> None:
    row = s.scalar(
        sa.select(IdentityRow).where(IdentityRow.provider == identity.provider, IdentityRow.subject == identity.subject)
    )
    if row is None:
        row = IdentityRow(provider=identity.provider, subject=identity.subject, user_id=_uuid(signed.user_id))
        s.add(row)
    row.user_id = _uuid(signed.user_id)
    row.email, row.name, row.groups = identity.email, identity.name, list(identity.groups)
    row.last_login_at = db.utcnow()
    s.flush()


def _uuid(value: str) -> Any:
    import uuid

    return uuid.UUID(value)


@browser_blp.route(f"/{PROVIDER}/callback", methods=["GET"])
def callback() -> Any:
    """The provider's redirect: check state, trade the code, check the ID token, sign the person in."""
    cfg = _enabled()
    pending = _pending(request.args.get("state"))
    if pending is None:
        return _refused(cfg, "invalid_state")
    if request.args.get("error") or not request.args.get("code"):
        return _refused(cfg, "provider_denied")
    try:
        tokens = oidc.exchange(cfg, request.args["code"], redirect_uri(cfg), pending.code_verifier)
        access = tokens.get("access_token") if isinstance(tokens.get("access_token"), str) else None
        claims = oidc.validate_id_token(cfg, tokens["id_token"], pending.nonce, access)
        info = oidc.userinfo(cfg, access) if access else {}
    except oidc.SsoError as exc:
        log.warning("single sign-on refused: %s (%s)", exc.code, exc)
        return _refused(cfg, exc.code)
    if info and str(info.get("sub")) != str(claims["sub"]):  # OpenID Connect Core 5.3.2
        return _refused(cfg, "invalid_id_token")
    merged = {**info, **claims}
    hooks = appstate.hooks()
    try:
        with db.transaction() as s:
            link = s.scalar(
                sa.select(IdentityRow.user_id).where(
                    IdentityRow.provider == PROVIDER, IdentityRow.subject == str(claims["sub"])
                )
            )
            identity = map_identity(cfg, merged, str(link) if link else None)
            signed = hooks.first(hookspecs.sso_sign_in, identity=identity)
            if signed is None:
                raise ApiError(503, "No plugin signs SSO users in")
            _link(s, identity, signed)
            hooks.notify(hookspecs.on_sso_signed_in, user_id=signed.user_id, identity=identity)
    except ApiError as exc:
        log.warning("single sign-on of %s refused: %s", claims.get("sub"), exc.detail)
        return _refused(cfg, "account_refused")
    response = redirect(pending.next_path or cfg.home_path, code=302)
    for cookie in signed.cookies:
        _set(response, cookie)
    response.set_cookie(
        ID_TOKEN_COOKIE, tokens["id_token"], httponly=True, samesite="Lax", secure=request.is_secure, path="/api/v1/sso"
    )
    response.delete_cookie(STATE_COOKIE, path=CALLBACK_PATH)
    return response


@browser_blp.route("/logout", methods=["GET"])
def logout_redirect() -> Any:
    """Sign out here, then 302 to the provider's end-session URL (or the sign-in page)."""
    return _logout()


@sso_blp.route("/logout", methods=["POST"])
@sso_blp.doc(
    requestBody=openapi.no_body("the session comes from the cookies or the bearer token"),
    responses={
        "200": openapi.json_response("signed out here; the provider's sign-out URL, if any", SsoLogoutSchema),
        "500": openapi.error_response("the session could not be ended (database failure)"),
    },
)
def logout() -> Any:
    """Sign out here (the session's tokens are refused from now on); ``end_session_url`` is the provider's
    sign-out for a browser signed in through it (None otherwise)."""
    return _logout()


def _logout() -> Any:
    cfg = config()
    hint = request.cookies.get(ID_TOKEN_COOKIE)
    cleared = appstate.hooks().first(hookspecs.sso_sign_out, request=request) or ()
    end = oidc.end_session_url(cfg, hint) if cfg.enabled and hint else None  # only for SSO sign-ins
    response: Response
    if request.method == "POST":
        response = jsonify({"message": "Logout successful", "end_session_url": end})
    else:
        response = redirect(end or cfg.login_path, code=302)
    for cookie in cleared:
        _set(response, cookie)
    response.delete_cookie(ID_TOKEN_COOKIE, path="/api/v1/sso")
    return response
