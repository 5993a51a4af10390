"""Issue 20, point 4: sessions can be ended, and passwords have a minimum length.

Logout revokes the presented session (access and refresh token, cookies
cleared); a password change or a deactivation revokes every older token of the
user; a token without ``exp`` is refused; revocation reaches other processes
(another app on the same config directory stands in for another worker).
"""

from __future__ import annotations

import pytest

from tests.accounts.helpers import SECRET, STRONG, token_for
from tests.conftest import PASSWORD, login, make_user

WHOAMI = "/api/v1/users/whoami"
USERS = "/api/v1/users/"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _session(client, username="admin", password=STRONG):
    response = login(client, username, password)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_logout_revokes_the_presented_session(strict_app, strict_client):
    tokens = _session(strict_client)
    other = _session(strict_app.test_client())  # the same user signed in elsewhere
    access, refresh = tokens["access_token"], tokens["refresh_token"]
    assert strict_client.get(WHOAMI, headers=bearer(access)).status_code == 200
    response = strict_client.post("/api/v1/logout", headers=bearer(access))
    assert response.status_code == 200
    # the old access token (header or cookie) and the refresh token are dead
    fresh = strict_app.test_client()
    assert fresh.get(WHOAMI, headers=bearer(access)).status_code == 401
    fresh.set_cookie("access_token_svc", access)
    assert fresh.get(WHOAMI).status_code == 401
    fresh.set_cookie("refresh_token_svc", refresh)
    assert fresh.post("/api/v1/refresh").status_code == 401
    # the other session of the same user lives on
    assert strict_client.get(WHOAMI, headers=bearer(other["access_token"])).status_code == 200


def test_logout_with_only_the_refresh_cookie_ends_that_session(strict_app, strict_client):
    tokens = _session(strict_client)  # cookies set on the client
    strict_client.delete_cookie("access_token_svc")
    assert strict_client.post("/api/v1/logout").status_code == 200
    fresh = strict_app.test_client()
    assert fresh.get(WHOAMI, headers=bearer(tokens["access_token"])).status_code == 401


def test_refreshed_tokens_belong_to_the_same_session(strict_app, strict_client):
    _session(strict_client)
    renewed = strict_client.post("/api/v1/refresh").get_json()
    assert strict_client.post("/api/v1/logout").status_code == 200
    assert strict_app.test_client().get(WHOAMI, headers=bearer(renewed["access_token"])).status_code == 401


def test_password_change_revokes_every_older_token(strict_app, strict_client):
    admin = _session(strict_client)
    alice = make_user(strict_client, _caller(admin), username="alice")
    old = _session(strict_app.test_client(), "alice", PASSWORD)
    changed = strict_client.patch(
        f"{USERS}{alice.id}/reset-password",
        json={"current_password": PASSWORD, "password": "a-brand-new-secret"},
        headers=bearer(old["access_token"]),
    )
    assert changed.status_code == 200, changed.get_json()
    probe = strict_app.test_client()
    assert probe.get(WHOAMI, headers=bearer(old["access_token"])).status_code == 401
    assert probe.get(WHOAMI, headers=bearer(alice.token)).status_code == 401
    probe.set_cookie("refresh_token_svc", old["refresh_token"])
    assert probe.post("/api/v1/refresh").status_code == 401
    new = _session(strict_app.test_client(), "alice", "a-brand-new-secret")
    assert probe.get(WHOAMI, headers=bearer(new["access_token"])).status_code == 200
    # a superuser setting the password revokes too
    strict_client.patch(
        f"{USERS}{alice.id}", json={"password": "set-by-the-admin"}, headers=bearer(admin["access_token"])
    )
    assert probe.get(WHOAMI, headers=bearer(new["access_token"])).status_code == 401


def test_deactivation_revokes_tokens_even_after_reactivation(strict_app, strict_client):
    admin = _session(strict_client)
    alice = make_user(strict_client, _caller(admin), username="alice")
    headers = bearer(admin["access_token"])
    assert strict_client.patch(f"{USERS}{alice.id}", json={"is_active": False}, headers=headers).status_code == 200
    assert strict_client.get(WHOAMI, headers=alice.bearer).status_code == 401
    assert strict_client.patch(f"{USERS}{alice.id}", json={"is_active": True}, headers=headers).status_code == 200
    assert strict_client.get(WHOAMI, headers=alice.bearer).status_code == 401  # still revoked


def test_revocation_reaches_another_process_at_once(make_app, strict_app, strict_client):
    # a second app on the same config dir and database stands in for another gunicorn worker
    from core.app import state

    settings = state(strict_app).settings
    other = make_app(
        auto_login=False,
        superuser="admin",
        superuser_password=STRONG,
        secret_key=SECRET,
        config_dir=settings.config_dir,
        database_url=settings.resolved_database_url,
    ).test_client()
    tokens = _session(strict_client)
    assert other.get(WHOAMI, headers=bearer(tokens["access_token"])).status_code == 200  # cached there now
    strict_client.post("/api/v1/logout", headers=bearer(tokens["access_token"]))
    assert other.get(WHOAMI, headers=bearer(tokens["access_token"])).status_code == 401


@pytest.mark.parametrize("kind", ["access", "refresh"])
def test_tokens_without_expiry_are_refused(strict_app, strict_client, kind):
    import jwt

    admin_id = _session(strict_client) and strict_client.get(WHOAMI).get_json()["id"]
    forever = jwt.encode({"sub": admin_id, "type": kind, "jti": "x"}, SECRET, algorithm="HS256")
    probe = strict_app.test_client()
    if kind == "access":
        response = probe.get(WHOAMI, headers=bearer(forever))
        assert response.status_code == 401 and response.get_json() == {"detail": "Invalid token"}
    else:
        probe.set_cookie("refresh_token_svc", forever)
        assert probe.post("/api/v1/refresh").status_code == 401
    # the same token with an expiry is fine (tokens made before this release carry no version: version 0)
    assert probe.get(WHOAMI, headers=bearer(token_for(admin_id))).status_code == 200


@pytest.mark.parametrize("password", ["", "x", "1234567"])
def test_short_passwords_are_422_on_create_update_and_reset(strict_app, strict_client, password):
    admin = _session(strict_client)
    headers = bearer(admin["access_token"])
    created = strict_client.post(USERS, json={"username": "shorty", "password": password}, headers=headers)
    assert created.status_code == 422
    assert created.get_json()["detail"][0]["loc"] == ["body", "password"]
    alice = make_user(strict_client, _caller(admin), username="alice")
    updated = strict_client.patch(f"{USERS}{alice.id}", json={"password": password}, headers=headers)
    assert updated.status_code == 422 and updated.get_json()["detail"][0]["loc"] == ["body", "password"]
    reset = strict_client.patch(
        f"{USERS}{alice.id}/reset-password",
        json={"current_password": PASSWORD, "password": password},
        headers=alice.bearer,
    )
    assert reset.status_code == 422 and reset.get_json()["detail"][0]["loc"] == ["body", "password"]
    if password:  # the empty one is refused by the schema's own length rule first
        assert "at least 8" in reset.get_json()["detail"][0]["msg"]


def test_password_length_is_a_setting(make_app):
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG, password_min_length=12)
    client = app.test_client()
    admin = _session(client)
    response = client.post(
        USERS, json={"username": "u", "password": "elevenchars"}, headers=bearer(admin["access_token"])
    )
    assert response.status_code == 422 and "at least 12" in response.get_json()["detail"][0]["msg"]


def _caller(tokens):
    from tests.conftest import Caller

    return Caller(id="", username="admin", token=tokens["access_token"], api_key="")
