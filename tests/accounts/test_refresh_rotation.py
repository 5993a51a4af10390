"""Refresh tokens rotate: each refresh issues a new one, and a used one presented again ends the session.

Issue 26 (low): ``POST /api/v1/refresh`` handed out new tokens for the same refresh token as often as it
was presented, so a stolen refresh token stayed good for its whole lifetime. Now every refresh token of
one sign-in (one ``sid``: its family) is single-use; presenting a used one (outside a short grace window
for two tabs refreshing at once) revokes the whole family, access tokens included.
"""

from __future__ import annotations

import threading

import jwt
import pytest

from tests.accounts.helpers import SECRET, STRONG, rows, token_for
from tests.conftest import login

REFRESH = "/api/v1/refresh"
WHOAMI = "/api/v1/users/whoami"
INVALID = {"detail": "Invalid refresh token"}


def _refresh(client, token: str):
    client.set_cookie("refresh_token_svc", token)
    return client.post(REFRESH)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _claims(token: str) -> dict:
    return jwt.decode(token, SECRET, algorithms=["HS256"])


@pytest.fixture
def signed_in(strict_client):
    body = login(strict_client, "admin", STRONG).get_json()
    strict_client.delete_cookie("access_token_svc")
    return body


def test_refresh_rotates_and_a_reused_token_revokes_the_family(strict_client, signed_in, monkeypatch):
    from service_accounts import services

    monkeypatch.setattr(services, "reuse_grace_seconds", lambda: 0.0)  # no grace: reuse is at once
    first = _refresh(strict_client, signed_in["refresh_token"])
    assert first.status_code == 200
    rotated = first.get_json()
    assert rotated["refresh_token"] != signed_in["refresh_token"]
    old, new = _claims(signed_in["refresh_token"]), _claims(rotated["refresh_token"])
    assert old["sid"] == new["sid"] and old["jti"] != new["jti"]
    # the attacker replays the used token: 401, and every token of the sign-in is dead
    replay = _refresh(strict_client, signed_in["refresh_token"])
    assert replay.status_code == 401 and replay.get_json() == INVALID
    assert _refresh(strict_client, rotated["refresh_token"]).status_code == 401
    assert strict_client.get(WHOAMI, headers=_bearer(rotated["access_token"])).status_code == 401
    assert strict_client.get(WHOAMI, headers=_bearer(signed_in["access_token"])).status_code == 401
    # other sign-ins of the user go on
    other = login(strict_client, "admin", STRONG).get_json()
    assert _refresh(strict_client, other["refresh_token"]).status_code == 200


def test_a_chain_of_refreshes_works_and_each_token_is_single_use(strict_client, signed_in, monkeypatch):
    from service_accounts import services

    monkeypatch.setattr(services, "reuse_grace_seconds", lambda: 0.0)
    token = signed_in["refresh_token"]
    for _ in range(3):
        response = _refresh(strict_client, token)
        assert response.status_code == 200
        token = response.get_json()["refresh_token"]
    assert strict_client.get(WHOAMI, headers=_bearer(response.get_json()["access_token"])).status_code == 200
    assert _refresh(strict_client, signed_in["refresh_token"]).status_code == 401  # the first, long used
    assert _refresh(strict_client, token).status_code == 401  # the family is revoked


def test_two_tabs_refreshing_at_once_stay_signed_in(strict_app, signed_in):
    """Within the grace window (SERVICE_REFRESH_REUSE_GRACE_SECONDS, 10 s) the used token yields the same successor."""
    count = 4
    results: list = [None] * count
    barrier = threading.Barrier(count)

    def tab(i: int) -> None:
        client = strict_app.test_client()
        barrier.wait()
        results[i] = _refresh(client, signed_in["refresh_token"])

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(r.status_code == 200 for r in results), [r.get_json() for r in results]
    successors = {_claims(r.get_json()["refresh_token"])["jti"] for r in results}
    assert len(successors) == 1, "every tab got the same successor"
    client = strict_app.test_client()
    for r in results:
        assert client.get(WHOAMI, headers=_bearer(r.get_json()["access_token"])).status_code == 200
    # the successor still rotates normally
    assert _refresh(client, results[0].get_json()["refresh_token"]).status_code == 200


def test_a_token_issued_before_rotation_is_adopted_once(strict_app, strict_client):
    """Existing deployments: a refresh token from before the upgrade (no family row) works once."""
    [admin] = rows(strict_app, "SELECT id FROM accounts_user WHERE username = 'admin'")
    legacy = token_for(admin["id"], kind="refresh", sid="legacy-session", ver=0)
    first = _refresh(strict_client, legacy)
    assert first.status_code == 200, first.get_json()
    assert _claims(first.get_json()["refresh_token"])["sid"] == "legacy-session"
    from service_accounts import services

    services_grace = services.reuse_grace_seconds
    try:
        services.reuse_grace_seconds = lambda: 0.0  # type: ignore[assignment]
        assert _refresh(strict_client, legacy).status_code == 401
    finally:
        services.reuse_grace_seconds = services_grace  # type: ignore[assignment]
    assert _refresh(strict_client, first.get_json()["refresh_token"]).status_code == 401


def test_the_grace_window_is_a_setting(make_app):
    app = make_app(
        auto_login=False, superuser="admin", superuser_password=STRONG, secret_key=SECRET, refresh_reuse_grace_seconds=0
    )
    client = app.test_client()
    body = login(client, "admin", STRONG).get_json()
    assert _refresh(client, body["refresh_token"]).status_code == 200
    assert _refresh(client, body["refresh_token"]).status_code == 401
