"""The accounts side of single sign-on: the SSO plugin's ``sso_sign_in`` / ``sso_sign_out`` hooks.

The SSO plugin checks the provider's ID token and maps its claims; here the account is found (by the
link the SSO plugin keeps) or created on the first sign-in, updated on every one, and given a session
exactly like a password sign-in's (tokens with ``ver`` and ``sid``, the ``*_svc`` cookies). An SSO
account gets a random password nobody knows: it signs in through the provider, and its API keys work
like anyone's.
"""

from __future__ import annotations

import secrets
import uuid

from flask import Request, Response

from core import db
from core.contracts import SessionCookie, SignedIn, SsoIdentity
from core.errors import ApiError
from service_accounts import security, services, sessions
from service_accounts.models import User


def _cookies(response: Response) -> tuple[SessionCookie, ...]:
    """The cookies a response would set, as records (the SSO plugin sets them on its redirect)."""
    from http.cookies import SimpleCookie

    found: list[SessionCookie] = []
    for header in response.headers.getlist("Set-Cookie"):
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        for name, morsel in jar.items():
            age = morsel["max-age"]
            found.append(
                SessionCookie(
                    name=name,
                    value=morsel.value,
                    max_age=int(age) if age else None,
                    secure=bool(morsel["secure"]),
                    httponly=bool(morsel["httponly"]),
                    samesite=morsel["samesite"] or "Lax",
                    domain=morsel["domain"] or None,
                    path=morsel["path"] or "/",
                )
            )
    return tuple(found)


def sign_in(identity: SsoIdentity) -> SignedIn:
    s = db.session()
    user: User | None = services.get_user(s, identity.user_id) if identity.user_id else None
    created = False
    if user is None:
        if not identity.username:
            raise ApiError(400, "The identity provider named no username")
        if services.user_by_name(s, identity.username) is not None:
            # never take over an existing account that this identity was not linked to
            raise ApiError(400, "This username is unavailable.")
        user = services.create_user(
            s,
            identity.username,
            secrets.token_urlsafe(32),
            is_superuser=bool(identity.is_superuser),
            is_active=True,
            enforce_policy=False,
        )
        created = True
    else:
        if not user.is_active:
            raise ApiError(401, "Inactive user")
        if (
            identity.username
            and identity.username != user.username
            and services.user_by_name(s, identity.username) is None
        ):
            user.username = identity.username
        if identity.is_superuser is not None and identity.is_superuser != user.is_superuser:
            user.is_superuser = identity.is_superuser  # every request reads the flag afresh (sessions)
    user.last_login_at = db.utcnow()
    s.flush()
    sessions.cache().changed(user.id)  # the flags and name may have changed
    tokens = security.make_tokens(str(user.id), user.token_version or 0, sessions.new_sid())
    response = Response()
    security.set_auth_cookies(response, services.settings(), tokens)
    return SignedIn(
        user_id=str(user.id),
        username=user.username,
        is_superuser=bool(user.is_superuser),
        created=created,
        access_token=tokens["access_token"],
        refresh_token=tokens["refresh_token"],
        cookies=_cookies(response),
    )


def sign_out(request: Request) -> tuple[SessionCookie, ...]:
    presented = [(request.cookies.get(security.REFRESH_COOKIE) or "", "refresh")]
    kind, _, bearer = request.headers.get("Authorization", "").partition(" ")
    if kind.lower() == "bearer":
        presented.append((bearer.strip(), "access"))
    presented.append((request.cookies.get(security.ACCESS_COOKIE) or "", "access"))
    with db.transaction() as s:
        ended: list[uuid.UUID] = services.logout(s, [(token, kind) for token, kind in presented if token])
    if ended:
        sessions.cache().changed(*ended)
    response = Response()
    security.delete_auth_cookies(response, services.settings())
    return _cookies(response)
