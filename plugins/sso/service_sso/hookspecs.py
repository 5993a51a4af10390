"""Hooks the SSO plugin publishes (docs/hooks.md).

The SSO plugin calls them after it checked an ID token; the accounts plugin answers the sign-in and
sign-out with ``@hookimpl(optionalhook=True)``, a teams plugin may follow the groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from flask import Request

    from core.contracts import SessionCookie, SignedIn, SsoIdentity

__all__ = ["on_sso_signed_in", "sso_sign_in", "sso_sign_out"]


@hookspec(firstresult=True)
def sso_sign_in(identity: SsoIdentity) -> SignedIn | None:
    """Create (first sign-in) or update the account of ``identity`` and open a session for it.

    Called inside the callback's transaction (``core.db.session()``): write in that session, do not
    commit. ``identity.user_id`` is the account already linked to the provider's subject, or None.
    Raise ``ApiError`` to refuse (an inactive account, a username held by an account not linked to
    this identity). Return the account and the session's tokens and cookies.
    """


@hookspec
def on_sso_signed_in(user_id: str, identity: SsoIdentity) -> None:
    """After an SSO sign-in, in the same transaction: follow ``identity.groups`` (team memberships)."""


@hookspec(firstresult=True)
def sso_sign_out(request: Request) -> tuple[SessionCookie, ...] | None:
    """End the local session the request presents (its cookies or bearer token), in a transaction of
    your own; return the session cookies to delete (empty value, ``max_age`` 0)."""
