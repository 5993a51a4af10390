"""JWTs (bearer and cookie), algorithms and keys, refresh, logout, auto-login and /session."""

from __future__ import annotations

import datetime as dt
import functools
import os
import stat
import time
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.accounts.helpers import ADMIN_ONLY, SECRET, STRONG, app_secret, raw_token, set_cookies, token_for
from tests.conftest import login, superuser

WHOAMI = "/api/v1/users/whoami"
INVALID = {"detail": "Invalid token"}
EXPIRED = {"detail": "Token has expired"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_401(response, body=INVALID):
    assert response.status_code == 401, response.get_json()
    assert response.get_json() == body
    if body != {"detail": "Inactive user"}:
        assert response.headers["WWW-Authenticate"] == "Bearer"


@functools.cache
def rsa_pem() -> tuple[str, str]:
    """One 2048-bit key pair per test process (generating one is slow)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


# --- bearer and cookie ---------------------------------------------------------------------------------
def test_access_cookie_authenticates(client, alice):
    client.set_cookie("access_token_svc", alice.token)
    response = client.get(WHOAMI)
    assert response.status_code == 200 and response.get_json()["id"] == alice.id


@pytest.mark.parametrize("header", ["Bearer not-a-jwt", "Bearer a.b.c", "Basic dXNlcjpwYXNz", "Token abc"])
def test_malformed_authorization_is_401(client, header):
    assert_401(client.get(WHOAMI, headers={"Authorization": header}))


def test_bad_cookie_is_401(client):
    client.set_cookie("access_token_svc", "garbage")
    assert_401(client.get(WHOAMI))


def test_expired_token_is_401(strict_app, strict_client):
    user_id = admin_id_strict(strict_client)
    expired = token_for(user_id, lifetime=-5)
    assert_401(strict_client.get(WHOAMI, headers=bearer(expired)), EXPIRED)
    strict_client.set_cookie("access_token_svc", expired)
    assert_401(strict_client.get(WHOAMI), EXPIRED)
    fresh = token_for(user_id)
    assert strict_client.get(WHOAMI, headers=bearer(fresh)).status_code == 200


def admin_id_strict(client) -> str:
    response = login(client, "admin", STRONG)
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    return jwt.decode(response.get_json()["access_token"], options={"verify_signature": False})["sub"]


def test_issued_tokens_carry_the_configured_lifetimes(make_app):
    app = make_app(
        **ADMIN_ONLY,
        secret_key=SECRET,
        access_token_expire_seconds=90,
        refresh_token_expire_seconds=900,
    )
    body = login(app.test_client(), "admin", STRONG).get_json()
    access = jwt.decode(body["access_token"], SECRET, algorithms=["HS256"])
    refresh = jwt.decode(body["refresh_token"], SECRET, algorithms=["HS256"])
    assert access["exp"] - access["iat"] == 90 and access["type"] == "access"
    assert refresh["exp"] - refresh["iat"] == 900 and refresh["type"] == "refresh"
    assert access["sub"] == refresh["sub"]
    uuid.UUID(access["sub"])


def test_issued_tokens_really_expire(make_app):
    app = make_app(
        **ADMIN_ONLY,
        access_token_expire_seconds=1,
        refresh_token_expire_seconds=1,
    )
    client = app.test_client()
    token = login(client, "admin", STRONG).get_json()["access_token"]
    assert client.get(WHOAMI, headers=bearer(token)).status_code == 200
    time.sleep(2.1)  # exp has whole-second resolution
    assert_401(client.get(WHOAMI, headers=bearer(token)), EXPIRED)
    assert_401(client.get(WHOAMI), EXPIRED)  # the cookie holds the same token
    refreshed = client.post("/api/v1/refresh")
    assert refreshed.status_code == 401 and refreshed.get_json() == {"detail": "Invalid refresh token"}


def test_refresh_token_is_not_an_access_token(client, admin):
    response = client.get("/api/v1/auto_login")
    refresh = response.get_json()["refresh_token"]
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    assert_401(client.get(WHOAMI, headers=bearer(refresh)), {"detail": "Invalid token type"})
    client.set_cookie("access_token_svc", refresh)
    assert_401(client.get(WHOAMI), {"detail": "Invalid token type"})


def test_wrong_signature_is_401(strict_client):
    user_id = admin_id_strict(strict_client)
    forged = token_for(user_id, secret="some-other-secret-that-is-long-enough-for-hs256-xyz")
    assert_401(strict_client.get(WHOAMI, headers=bearer(forged)))
    good = token_for(user_id)
    head, payload, signature = good.split(".")
    tampered_sig = f"{head}.{payload}.{signature[:-4]}AAAA"
    assert_401(strict_client.get(WHOAMI, headers=bearer(tampered_sig)))


def test_unsigned_token_is_401(strict_client):
    user_id = admin_id_strict(strict_client)
    now = int(dt.datetime.now(dt.UTC).timestamp())
    unsigned = raw_token({"alg": "none", "typ": "JWT"}, {"sub": user_id, "type": "access", "exp": now + 600}, None)
    assert_401(strict_client.get(WHOAMI, headers=bearer(unsigned)))


@pytest.mark.parametrize("claims", [{"sub": str(uuid.uuid4())}, {"sub": "not-a-uuid"}, {"sub": None}])
def test_token_for_unknown_subject_is_401(strict_client, claims):
    token = token_for("placeholder")
    payload = jwt.decode(token, SECRET, algorithms=["HS256"])
    payload.update(claims)
    if claims["sub"] is None:
        del payload["sub"]
    assert_401(strict_client.get(WHOAMI, headers=bearer(jwt.encode(payload, SECRET, algorithm="HS256"))))


def test_hs256_secret_is_generated_persisted_and_shared(make_app, tmp_path):
    first = make_app()
    token = superuser(first.test_client()).token
    path = tmp_path / "config" / "secret_key"
    assert path.is_file() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert jwt.decode(token, path.read_text().strip(), algorithms=["HS256"])["type"] == "access"
    assert app_secret(first) == path.read_text().strip()
    # a second process on the same config dir accepts the token; another secret does not
    assert make_app().test_client().get(WHOAMI, headers=bearer(token)).status_code == 200
    assert_401(make_app(secret_key=SECRET).test_client().get(WHOAMI, headers=bearer(token)))


# --- algorithms ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["HS256", "RS256", "RS512"])
def test_each_algorithm_signs_and_verifies(make_app, tmp_path, algorithm):
    app = make_app(algorithm=algorithm)
    client = app.test_client()
    admin = superuser(client)
    assert jwt.get_unverified_header(admin.token)["alg"] == algorithm
    assert client.get(WHOAMI, headers=admin.bearer).get_json()["username"] == "service"
    key_file = tmp_path / "config" / "private_key.pem"
    if algorithm == "HS256":
        assert not key_file.exists()
        return
    pem = key_file.read_bytes()
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    private = serialization.load_pem_private_key(pem, password=None)
    assert private.key_size == 2048
    claims = jwt.decode(admin.token, private.public_key(), algorithms=[algorithm])
    assert claims["sub"] == admin.id and claims["type"] == "access"
    # a token signed with another RSA key is refused
    other, _ = rsa_pem()
    forged = token_for(admin.id, secret=other, algorithm=algorithm)
    assert_401(client.get(WHOAMI, headers=bearer(forged)))
    # the persisted key survives a rebuild: a second app accepts the first app's token
    again = make_app(algorithm=algorithm)
    assert key_file.read_bytes() == pem
    assert again.test_client().get(WHOAMI, headers=admin.bearer).status_code == 200


def test_other_algorithms_are_refused_by_an_rs256_app(make_app, tmp_path):
    client = make_app(algorithm="RS256").test_client()
    admin = superuser(client)
    public_pem = (
        serialization.load_pem_private_key((tmp_path / "config" / "private_key.pem").read_bytes(), password=None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    now = int(dt.datetime.now(dt.UTC).timestamp())
    # the classic confusion attack: HS256 "signed" with the public key
    confused = raw_token(
        {"alg": "HS256", "typ": "JWT"}, {"sub": admin.id, "type": "access", "exp": now + 600}, public_pem
    )
    assert_401(client.get(WHOAMI, headers=bearer(confused)))
    # RS512 tokens with the right key are still not RS256
    private = (tmp_path / "config" / "private_key.pem").read_text()
    assert_401(client.get(WHOAMI, headers=bearer(token_for(admin.id, secret=private, algorithm="RS512"))))
    assert_401(client.get(WHOAMI, headers=bearer(token_for(admin.id, secret=SECRET))))


def test_explicit_private_key_is_used_and_nothing_is_generated(make_app, tmp_path):
    private, public = rsa_pem()
    client = make_app(algorithm="RS512", private_key=private).test_client()
    admin = superuser(client)
    assert not (tmp_path / "config" / "private_key.pem").exists()
    assert jwt.decode(admin.token, public, algorithms=["RS512"])["sub"] == admin.id
    own = token_for(admin.id, secret=private, algorithm="RS512")
    assert client.get(WHOAMI, headers=bearer(own)).get_json()["id"] == admin.id


def test_explicit_key_pair(make_app, tmp_path):
    private, public = rsa_pem()
    client = make_app(algorithm="RS256", private_key=private, public_key=public).test_client()
    admin = superuser(client)
    assert jwt.decode(admin.token, public, algorithms=["RS256"])["sub"] == admin.id
    assert client.get(WHOAMI, headers=admin.bearer).status_code == 200


def test_unknown_algorithm_stops_start_up(make_app):
    from core.settings import SettingsError

    with pytest.raises(SettingsError, match="SERVICE_ALGORITHM"):
        make_app(algorithm="HS512")


# --- refresh -------------------------------------------------------------------------------------------
def test_refresh_from_cookie_returns_new_tokens_and_cookies(strict_client):
    first = login(strict_client, "admin", STRONG).get_json()
    response = strict_client.post("/api/v1/refresh")
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"access_token", "refresh_token", "token_type"} and body["token_type"] == "bearer"
    assert body["access_token"] != first["access_token"] and body["refresh_token"] != first["refresh_token"]
    cookies = set_cookies(response)
    assert cookies["access_token_svc"]["value"] == body["access_token"]
    assert cookies["refresh_token_svc"]["value"] == body["refresh_token"]
    assert cookies["access_token_svc"]["max-age"] == "3600"
    assert cookies["refresh_token_svc"]["max-age"] == "604800"
    assert strict_client.get(WHOAMI, headers=bearer(body["access_token"])).status_code == 200


def test_refresh_ignores_a_token_in_the_body_or_header(strict_client):
    tokens = login(strict_client, "admin", STRONG).get_json()
    strict_client.delete_cookie("refresh_token_svc")
    strict_client.delete_cookie("access_token_svc")
    for kwargs in (
        {"json": {"refresh_token": tokens["refresh_token"]}},
        {"data": {"refresh_token": tokens["refresh_token"]}},
        {"headers": bearer(tokens["refresh_token"])},
        {"query_string": {"refresh_token": tokens["refresh_token"]}},
    ):
        response = strict_client.post("/api/v1/refresh", **kwargs)
        assert response.status_code == 401, kwargs
        assert response.get_json() == {"detail": "Invalid refresh token"}
        assert "Set-Cookie" not in response.headers


@pytest.mark.parametrize("kind", ["access", "expired", "garbage", "foreign"])
def test_refresh_rejects_bad_refresh_cookies(strict_client, kind):
    user_id = admin_id_strict(strict_client)
    value = {
        "access": token_for(user_id),
        "expired": token_for(user_id, kind="refresh", lifetime=-5),
        "garbage": "x.y.z",
        "foreign": token_for(user_id, kind="refresh", secret="not-the-service-secret-but-long-enough-0000"),
    }[kind]
    strict_client.set_cookie("refresh_token_svc", value)
    response = strict_client.post("/api/v1/refresh")
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Invalid refresh token"}


def test_refresh_for_deactivated_or_deleted_user_is_401(client, admin, alice):
    from tests.conftest import PASSWORD

    login(client, "alice", PASSWORD)
    client.patch(f"/api/v1/users/{alice.id}", json={"is_active": False}, headers=admin.bearer)
    response = client.post("/api/v1/refresh")
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Invalid refresh token"}
    client.delete(f"/api/v1/users/{alice.id}", headers=admin.bearer)
    assert client.post("/api/v1/refresh").status_code == 401


# --- logout --------------------------------------------------------------------------------------------
def _assert_deleted(cookie, *, domain=None, secure=False, httponly=True, samesite="Lax"):
    assert cookie["value"] in ("", '""')
    assert cookie["max-age"] == "0"
    assert "1970" in cookie["expires"]
    assert cookie["path"] == "/"
    assert cookie.get("domain") == domain
    assert bool(cookie.get("secure")) is secure
    assert bool(cookie.get("httponly")) is httponly
    assert cookie["samesite"] == samesite


def test_logout_deletes_the_cookies(strict_client):
    login(strict_client, "admin", STRONG)
    assert strict_client.get(WHOAMI).status_code == 200
    response = strict_client.post("/api/v1/logout")
    assert response.status_code == 200
    assert response.get_json() == {"message": "Logout successful"}
    cookies = set_cookies(response)
    assert set(cookies) == {"access_token_svc", "refresh_token_svc", "apikey_tkn_svc"}
    for cookie in cookies.values():
        _assert_deleted(cookie)
    assert strict_client.get(WHOAMI).status_code == 403
    assert strict_client.post("/api/v1/refresh").status_code == 401


def test_logout_deletes_cookies_with_the_attributes_they_were_set_with(make_app):
    app = make_app(
        **ADMIN_ONLY,
        access_secure=True,
        access_httponly=False,
        access_same_site="strict",
        refresh_same_site="none",
        cookie_domain="example.test",
    )
    client = app.test_client()
    set_with = set_cookies(login(client, "admin", STRONG))
    deleted = set_cookies(client.post("/api/v1/logout"))
    for name in ("access_token_svc", "refresh_token_svc"):
        for attr in ("domain", "secure", "httponly", "samesite", "path"):
            assert deleted[name].get(attr) == set_with[name].get(attr), (name, attr)
    _assert_deleted(deleted["access_token_svc"], domain="example.test", secure=True, httponly=False, samesite="Strict")
    _assert_deleted(deleted["refresh_token_svc"], domain="example.test", secure=True, httponly=True, samesite="None")


def test_logout_without_a_session_still_answers(strict_client):
    response = strict_client.post("/api/v1/logout")
    assert response.status_code == 200 and response.get_json() == {"message": "Logout successful"}


# --- auto-login ------------------------------------------------------------------------------------------
def test_auto_login_hands_out_superuser_tokens_with_a_session_access_cookie(client):
    response = client.get("/api/v1/auto_login")
    assert response.status_code == 200
    body = response.get_json()
    assert body["token_type"] == "bearer"
    cookies = set_cookies(response)
    access, refresh = cookies["access_token_svc"], cookies["refresh_token_svc"]
    assert access["value"] == body["access_token"] and refresh["value"] == body["refresh_token"]
    assert "max-age" not in access and "expires" not in access  # a session cookie
    assert refresh["max-age"] == "604800"
    assert access["httponly"] is True and access["samesite"] == "Lax"
    me = client.get(WHOAMI, headers=bearer(body["access_token"])).get_json()
    assert me["username"] == "service" and me["is_superuser"] is True
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 3600  # normal lifetime


def test_auto_login_follows_the_configured_superuser_name(make_app):
    client = make_app(superuser="root").test_client()
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    assert client.get(WHOAMI, headers=bearer(token)).get_json()["username"] == "root"


def test_auto_login_with_an_inactive_superuser(client, admin):
    other = client.post("/api/v1/users/", json={"username": "boss", "password": STRONG}, headers=admin.bearer)
    boss_id = other.get_json()["id"]
    client.patch(f"/api/v1/users/{boss_id}", json={"is_superuser": True, "is_active": True}, headers=admin.bearer)
    boss = login(client, "boss", STRONG).get_json()["access_token"]
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    assert client.patch(f"/api/v1/users/{admin.id}", json={"is_active": False}, headers=bearer(boss)).status_code == 200
    response = client.get("/api/v1/auto_login")
    assert response.status_code == 400
    assert response.get_json() == {"detail": "The superuser is missing or inactive"}
    assert "Set-Cookie" not in response.headers


def test_auto_login_disabled(strict_client):
    response = strict_client.get("/api/v1/auto_login")
    assert response.status_code == 403
    assert response.get_json() == {"detail": {"message": "Auto login is disabled.", "auto_login": False}}
    assert "Set-Cookie" not in response.headers


# --- /session ------------------------------------------------------------------------------------------------
def test_session_anonymous(client):
    response = client.get("/api/v1/session")
    assert response.status_code == 200
    assert response.get_json() == {"authenticated": False, "user": None, "store_api_key": None}


def test_session_with_each_credential(client, alice):
    for kwargs in ({"headers": alice.bearer}, {"headers": alice.key}, {"query_string": {"x-api-key": alice.api_key}}):
        body = client.get("/api/v1/session", **kwargs).get_json()
        assert body["authenticated"] is True and body["store_api_key"] is None
        assert body["user"]["id"] == alice.id and body["user"]["username"] == "alice"
    client.set_cookie("access_token_svc", alice.token)
    assert client.get("/api/v1/session").get_json()["user"]["id"] == alice.id


def test_session_with_bad_credentials_is_anonymous(client):
    for headers in (bearer("junk"), {"x-api-key": "sk-unknown"}):
        response = client.get("/api/v1/session", headers=headers)
        assert response.status_code == 200
        assert response.get_json() == {"authenticated": False, "user": None, "store_api_key": None}


# --- credential order ----------------------------------------------------------------------------------------
def test_bearer_wins_over_cookie_and_keys(client, alice, bob):
    client.set_cookie("access_token_svc", bob.token)
    response = client.get(WHOAMI, headers={**alice.bearer, **bob.key}, query_string={"x-api-key": bob.api_key})
    assert response.get_json()["id"] == alice.id


def test_cookie_wins_over_keys(client, alice, bob):
    client.set_cookie("access_token_svc", bob.token)
    response = client.get(WHOAMI, headers=alice.key, query_string={"x-api-key": alice.api_key})
    assert response.get_json()["id"] == bob.id


def test_query_key_wins_over_header_key(client, alice, bob):
    response = client.get(WHOAMI, headers=bob.key, query_string={"x-api-key": alice.api_key})
    assert response.get_json()["id"] == alice.id


def test_a_bad_token_is_not_rescued_by_a_good_key(client, alice):
    assert_401(client.get(WHOAMI, headers={**bearer("junk"), **alice.key}))
    client.set_cookie("access_token_svc", "junk")
    assert_401(client.get(WHOAMI, headers=alice.key))


def test_non_bearer_authorization_falls_through_to_a_key(client, alice):
    response = client.get(WHOAMI, headers={"Authorization": "Basic dXNlcjpwYXNz", **alice.key})
    assert response.status_code == 200 and response.get_json()["id"] == alice.id


def test_unusable_rsa_keys_stop_start_up(make_app):
    from cryptography.hazmat.primitives.asymmetric import ec

    from core.errors import StartupError

    private, _ = rsa_pem()
    other = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()  # noqa: S505 (fast, unused)
    other_pem = other.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    ec_pem = (
        ec.generate_private_key(ec.SECP256R1())
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )
    with pytest.raises(StartupError, match="SERVICE_PRIVATE_KEY"):
        make_app(algorithm="RS256", private_key="not a key")
    with pytest.raises(StartupError, match="SERVICE_PRIVATE_KEY"):
        make_app(algorithm="RS256", private_key=ec_pem)
    with pytest.raises(StartupError, match="SERVICE_PUBLIC_KEY"):
        make_app(algorithm="RS256", private_key=private, public_key="garbage")
    with pytest.raises(StartupError, match="SERVICE_PUBLIC_KEY"):
        make_app(algorithm="RS256", private_key=private, public_key=other_pem.decode())


def test_pem_with_escaped_newlines_from_an_env_file(make_app):
    private, public = rsa_pem()
    client = make_app(
        algorithm="RS256", private_key=private.replace("\n", "\\n"), public_key=public.replace("\n", "\\n")
    ).test_client()
    admin = superuser(client)
    assert jwt.decode(admin.token, public, algorithms=["RS256"])["sub"] == admin.id
