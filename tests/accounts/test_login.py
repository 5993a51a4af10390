"""/api/v1/login: the form, the refusals, the cookies and the per-IP rate limit."""

from __future__ import annotations

import uuid

import pytest

from tests.accounts.helpers import ADMIN_ONLY, STRONG, set_cookies
from tests.conftest import PASSWORD, make_user

LOGIN = "/api/v1/login"
TOO_MANY = {"detail": "Too many requests. Please try again later.", "retry_after": "60"}
REDIS_DB = 14  # a database no other suite of this repository uses


def _ip() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def post_login(client, username, password=PASSWORD, ip=None, **kwargs):
    environ = {"REMOTE_ADDR": ip} if ip else {}
    return client.post(LOGIN, data={"username": username, "password": password}, environ_base=environ, **kwargs)


def assert_too_many(response):
    assert response.status_code == 429
    assert response.get_json() == TOO_MANY
    assert response.headers["Retry-After"] == "60"
    assert "Set-Cookie" not in response.headers


# --- the form and its answers ------------------------------------------------------------------------
def test_login_returns_tokens_and_cookies(strict_client):
    response = post_login(strict_client, "admin", STRONG)
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"access_token", "refresh_token", "token_type"}
    assert body["token_type"] == "bearer"
    cookies = set_cookies(response)
    assert cookies["access_token_svc"]["value"] == body["access_token"]
    assert cookies["refresh_token_svc"]["value"] == body["refresh_token"]
    me = strict_client.get("/api/v1/users/whoami")  # the cookie jar now holds the access cookie
    assert me.status_code == 200 and me.get_json()["username"] == "admin"
    assert me.get_json()["last_login_at"] is not None


def test_login_accepts_the_oauth2_optional_fields(strict_client):
    response = strict_client.post(
        LOGIN,
        data={
            "username": "admin",
            "password": STRONG,
            "grant_type": "password",
            "scope": "",
            "client_id": "x",
            "client_secret": "y",
        },
    )
    assert response.status_code == 200


def test_login_needs_a_form_body(strict_client):
    as_json = strict_client.post(LOGIN, json={"username": "admin", "password": STRONG})
    assert as_json.status_code == 422
    locs = [item["loc"] for item in as_json.get_json()["detail"]]
    assert ["body", "username"] in locs and ["body", "password"] in locs
    missing = strict_client.post(LOGIN, data={"username": "admin"})
    assert missing.status_code == 422
    assert [item["loc"] for item in missing.get_json()["detail"]] == [["body", "password"]]


@pytest.mark.parametrize(
    "username,password", [("admin", "wrong"), ("nobody", STRONG), ("admin", ""), ("ADMIN", STRONG)]
)
def test_wrong_credentials_are_401(strict_client, username, password):
    response = post_login(strict_client, username, password)
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Incorrect username or password"}
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "Set-Cookie" not in response.headers


def test_never_activated_user_waits_for_approval(client, admin):
    make_user(client, admin, username="fresh", active=False)
    response = post_login(client, "fresh")
    assert response.status_code == 400
    assert response.get_json() == {"detail": "Waiting for approval"}
    # a wrong password still says only "incorrect": nothing about the account's state leaks
    wrong = post_login(client, "fresh", "nope")
    assert wrong.status_code == 401
    assert wrong.get_json() == {"detail": "Incorrect username or password"}


def test_deactivated_user_who_signed_in_before_is_inactive(client, admin, alice):
    client.patch(f"/api/v1/users/{alice.id}", json={"is_active": False}, headers=admin.bearer)
    response = post_login(client, "alice")
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Inactive user"}


def test_username_is_trimmed(strict_client):
    assert post_login(strict_client, "  admin ", STRONG).status_code == 200


# --- cookies -----------------------------------------------------------------------------------------------
def test_default_cookie_attributes(strict_client):
    cookies = set_cookies(post_login(strict_client, "admin", STRONG))
    access, refresh = cookies["access_token_svc"], cookies["refresh_token_svc"]
    assert access["max-age"] == "3600" and refresh["max-age"] == "604800"
    for cookie in (access, refresh):
        assert cookie["httponly"] is True
        assert cookie["samesite"] == "Lax"
        assert cookie["path"] == "/"
        assert "secure" not in cookie
        assert "domain" not in cookie  # host-only by default
        assert "expires" in cookie


def test_cookie_attributes_follow_each_cookies_own_settings(make_app):
    app = make_app(
        **ADMIN_ONLY,
        access_secure=True,
        access_httponly=False,
        access_same_site="strict",
        refresh_secure=False,
        refresh_httponly=True,
        refresh_same_site="none",
        cookie_domain="example.test",
        access_token_expire_seconds=120,
        refresh_token_expire_seconds=7200,
    )
    response = post_login(app.test_client(), "admin", STRONG)
    assert response.status_code == 200
    cookies = set_cookies(response)
    access, refresh = cookies["access_token_svc"], cookies["refresh_token_svc"]
    assert access["max-age"] == "120" and refresh["max-age"] == "7200"
    assert access.get("secure") is True and "httponly" not in access and access["samesite"] == "Strict"
    # SameSite=None is only honoured with Secure, so it implies the flag
    assert refresh.get("secure") is True and refresh["httponly"] is True and refresh["samesite"] == "None"
    assert access["domain"] == refresh["domain"] == "example.test"


def test_cookie_settings_accept_any_case(make_app):
    app = make_app(
        **ADMIN_ONLY,
        access_same_site="Strict",
        refresh_same_site="LAX",
    )
    cookies = set_cookies(post_login(app.test_client(), "admin", STRONG))
    assert cookies["access_token_svc"]["samesite"] == "Strict"
    assert cookies["refresh_token_svc"]["samesite"] == "Lax"


# --- rate limit ------------------------------------------------------------------------------------------------
def test_rate_limit_counts_successful_attempts_too(strict_client):
    ip = _ip()
    for _ in range(5):
        assert post_login(strict_client, "admin", STRONG, ip=ip).status_code == 200
    assert_too_many(post_login(strict_client, "admin", STRONG, ip=ip))
    # other addresses are unaffected
    assert post_login(strict_client, "admin", STRONG, ip=_ip()).status_code == 200


def test_rate_limit_counts_failures_and_mixed_attempts(strict_client):
    ip = _ip()
    assert post_login(strict_client, "nobody", "x", ip=ip).status_code == 401
    assert post_login(strict_client, "admin", "bad", ip=ip).status_code == 401
    for _ in range(3):
        assert post_login(strict_client, "admin", STRONG, ip=ip).status_code == 200
    assert_too_many(post_login(strict_client, "nobody", "x", ip=ip))
    assert_too_many(post_login(strict_client, "admin", STRONG, ip=ip))


def test_rate_limit_only_applies_to_login(strict_client):
    ip = _ip()
    for _ in range(6):
        post_login(strict_client, "nobody", "x", ip=ip)
    assert strict_client.get("/api/v1/auto_login", environ_base={"REMOTE_ADDR": ip}).status_code == 403
    assert strict_client.get("/api/v1/users/whoami", environ_base={"REMOTE_ADDR": ip}).status_code == 403


def test_rate_limit_per_minute_setting(make_app):
    client = make_app(
        auto_login=False, superuser="admin", superuser_password=STRONG, rate_limit_per_minute=2
    ).test_client()
    ip = _ip()
    assert post_login(client, "nobody", "x", ip=ip).status_code == 401
    assert post_login(client, "nobody", "x", ip=ip).status_code == 401
    assert_too_many(post_login(client, "admin", STRONG, ip=ip))


def test_rate_limit_disabled(make_app):
    client = make_app(
        auto_login=False, superuser="admin", superuser_password=STRONG, rate_limit_enabled=False
    ).test_client()
    for _ in range(12):
        assert post_login(client, "nobody", "x").status_code == 401
    assert post_login(client, "admin", STRONG).status_code == 200


def test_forwarded_for_is_ignored_without_a_trusted_proxy(strict_client):
    ip = _ip()
    for n in range(5):
        assert (
            post_login(strict_client, "nobody", "x", ip=ip, headers={"X-Forwarded-For": f"192.0.2.{n + 1}"}).status_code
            == 401
        )
    assert_too_many(post_login(strict_client, "nobody", "x", ip=ip, headers={"X-Forwarded-For": "192.0.2.99"}))


def test_trusted_proxy_uses_the_rightmost_forwarded_address(make_app):
    client = make_app(
        auto_login=False, superuser="admin", superuser_password=STRONG, rate_limit_trust_proxy=True
    ).test_client()
    proxy_ip, caller = _ip(), _ip()
    # the client controls the left part of the header; only the entry the proxy appended counts
    for n in range(5):
        spoofed = {"X-Forwarded-For": f"198.51.100.{n + 1}, {caller}"}
        assert post_login(client, "nobody", "x", ip=proxy_ip, headers=spoofed).status_code == 401
    assert_too_many(
        post_login(client, "nobody", "x", ip=proxy_ip, headers={"X-Forwarded-For": f"203.0.113.7, {caller}"})
    )
    assert_too_many(post_login(client, "nobody", "x", ip=_ip(), headers={"X-Forwarded-For": caller}))
    # another caller behind the same proxy has its own budget
    assert (
        post_login(client, "admin", STRONG, ip=proxy_ip, headers={"X-Forwarded-For": f"{caller}, {_ip()}"}).status_code
        == 200
    )
    # no header at all: the socket address is used
    for _ in range(5):
        assert post_login(client, "nobody", "x", ip=proxy_ip).status_code == 401
    assert_too_many(post_login(client, "nobody", "x", ip=proxy_ip))


class RedisCounters:
    """A Redis database for limiter counters; remembers the client IPs used so their keys can be removed."""

    def __init__(self, conn, uri):
        self.conn, self.uri, self.ips = conn, uri, []

    def ip(self) -> str:
        self.ips.append(_ip())
        return self.ips[-1]


@pytest.fixture
def redis_counters():
    redis = pytest.importorskip("redis")
    uri = f"redis://127.0.0.1:6379/{REDIS_DB}"
    conn = redis.Redis.from_url(uri)
    try:
        conn.ping()
    except redis.exceptions.ConnectionError:  # pragma: no cover - the machine runs Redis
        pytest.skip("no Redis on 127.0.0.1:6379")
    counters = RedisCounters(conn, uri)
    yield counters
    for ip in counters.ips:
        for key in conn.scan_iter(match=f"*{ip}*"):
            conn.delete(key)
    conn.close()


def test_redis_storage_shares_counters_between_apps(make_app, redis_counters):
    settings = {
        "auto_login": False,
        "superuser": "admin",
        "superuser_password": STRONG,
        "rate_limit_storage_uri": redis_counters.uri,
    }
    first, second = make_app(**settings).test_client(), make_app(**settings).test_client()
    ip = redis_counters.ip()
    for n in range(5):
        client = first if n % 2 else second
        assert post_login(client, "admin", STRONG, ip=ip).status_code == 200
    assert_too_many(post_login(first, "admin", STRONG, ip=ip))
    assert_too_many(post_login(second, "admin", STRONG, ip=ip))
    stored = list(redis_counters.conn.scan_iter(match=f"*{ip}*"))
    assert stored, "the counter lives in Redis"
    assert 0 < redis_counters.conn.ttl(stored[0]) <= 60
    assert post_login(second, "admin", STRONG, ip=redis_counters.ip()).status_code == 200


def test_default_storage_is_shared_by_the_apps_of_one_config_dir(make_app, tmp_path):
    """``memory://`` (the default) counts in the core's shared state: every worker process (here, two
    apps on one config directory) counts together, and a rebuilt app keeps the count."""
    settings = {"auto_login": False, "superuser": "admin", "superuser_password": STRONG}
    first, second = make_app(**settings).test_client(), make_app(**settings).test_client()
    ip = _ip()
    for n in range(5):
        assert post_login(first if n % 2 else second, "nobody", "x", ip=ip).status_code == 401
    assert_too_many(post_login(first, "nobody", "x", ip=ip))
    assert_too_many(post_login(second, "nobody", "x", ip=ip))
    # another server (another config directory) has its own counters
    elsewhere = make_app(config_dir=tmp_path / "other", **settings).test_client()
    assert post_login(elsewhere, "nobody", "x", ip=ip).status_code == 401


def test_malformed_bodies_are_rejected_before_the_counter(strict_client):
    ip = _ip()
    for _ in range(6):
        response = strict_client.post(LOGIN, json={"username": "admin"}, environ_base={"REMOTE_ADDR": ip})
        assert response.status_code == 422
    assert post_login(strict_client, "admin", STRONG, ip=ip).status_code == 200
