"""Hooks the accounts plugin publishes (docs/hooks.md)."""

from __future__ import annotations

from core import hookspec

__all__ = ["password_login_allowed"]


@hookspec
def password_login_allowed(username: str, is_superuser: bool) -> bool | None:
    """May this account sign in with its password (``POST /api/v1/login``)? False refuses (any False
    wins), None is no opinion. The SSO plugin answers False in SSO-only mode except for the break-glass
    superuser. Asked after the password was checked, so nothing is learnt about other accounts."""
