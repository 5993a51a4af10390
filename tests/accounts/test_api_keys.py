"""/api/v1/api_key: create, list (masked), delete; key use, tracking, env keys, and key-only routes."""

from __future__ import annotations

import hashlib
import re
import uuid

import pytest
from flask import Blueprint, jsonify

from core import hookimpl
from core.auth import authenticated, current_actor
from tests.accounts.helpers import rows
from tests.conftest import superuser

KEYS = "/api/v1/api_key/"
WHOAMI = "/api/v1/users/whoami"
KEY_FIELDS = {"id", "name", "api_key", "user_id", "total_uses", "last_used_at", "is_active", "created_at", "expires_at"}
INVALID_KEY = {"detail": "Invalid API key"}
NO_CREDENTIALS = {"detail": "No authentication credentials provided"}


def _hex(value) -> str:
    return str(value).replace("-", "")


# --- create, list, delete ---------------------------------------------------------------------------------
def test_create_key_returns_200_and_the_value_once(client, alice):
    response = client.post(KEYS, json={"name": "ci"}, headers=alice.bearer)
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == KEY_FIELDS
    assert re.fullmatch(r"sk-[A-Za-z0-9_-]{43}", body["api_key"])
    assert body["name"] == "ci" and body["user_id"] == alice.id
    assert body["total_uses"] == 0 and body["last_used_at"] is None and body["is_active"] is True
    uuid.UUID(body["id"])
    assert client.get(WHOAMI, headers={"x-api-key": body["api_key"]}).get_json()["id"] == alice.id


def test_create_key_without_a_name(client, alice):
    response = client.post(KEYS, json={}, headers=alice.bearer)
    assert response.status_code == 200 and response.get_json()["name"] is None


def test_each_key_is_unique(client, alice):
    values = {client.post(KEYS, json={"name": str(n)}, headers=alice.bearer).get_json()["api_key"] for n in range(5)}
    assert len(values) == 5


def test_list_is_masked_and_scoped_to_the_caller(client, alice, bob):
    raw = client.post(KEYS, json={"name": "second"}, headers=alice.bearer).get_json()["api_key"]
    response = client.get(KEYS, headers=alice.bearer)
    assert response.status_code == 200
    body = response.get_json()
    assert body["user_id"] == alice.id and body["total_count"] == 2 == len(body["api_keys"])
    assert {k["name"] for k in body["api_keys"]} == {"test", "second"}
    text = response.get_data(as_text=True)
    assert raw not in text and alice.api_key not in text and bob.api_key not in text
    for key in body["api_keys"]:
        assert set(key) == KEY_FIELDS and key["user_id"] == alice.id
        assert re.fullmatch(r"sk-[A-Za-z0-9_-]{5}\*{8}", key["api_key"])
    masked = {k["name"]: k["api_key"] for k in body["api_keys"]}
    assert masked["second"] == raw[:8] + "*" * 8
    bobs = client.get(KEYS, headers=bob.bearer).get_json()
    assert bobs["user_id"] == bob.id and bobs["total_count"] == 1


def test_only_a_hash_is_stored(app, client, alice):
    raw = client.post(KEYS, json={"name": "stored"}, headers=alice.bearer).get_json()["api_key"]
    (row,) = rows(app, "SELECT * FROM accounts_api_key WHERE name = :n", n="stored")
    assert raw not in " ".join(str(v) for v in row.values())
    assert row["key_hash"] == hashlib.sha256(raw.encode()).hexdigest()
    assert row["key_prefix"] == raw[:8]
    assert _hex(row["user_id"]) == _hex(alice.id)


def test_delete_key_revokes_it_at_once(client, alice):
    created = client.post(KEYS, json={"name": "short-lived"}, headers=alice.bearer).get_json()
    headers = {"x-api-key": created["api_key"]}
    assert client.get(WHOAMI, headers=headers).status_code == 200
    response = client.delete(f"{KEYS}{created['id']}", headers=alice.bearer)
    assert response.status_code == 200
    assert response.get_json() == {"detail": "API Key deleted"}
    for kwargs in ({"headers": headers}, {"query_string": {"x-api-key": created["api_key"]}}):
        revoked = client.get(WHOAMI, **kwargs)
        assert revoked.status_code == 403
        assert revoked.get_json() == INVALID_KEY
    assert created["id"] not in {k["id"] for k in client.get(KEYS, headers=alice.bearer).get_json()["api_keys"]}
    again = client.delete(f"{KEYS}{created['id']}", headers=alice.bearer)
    assert again.status_code == 404 and again.get_json() == {"detail": "API Key not found"}


def test_a_key_can_delete_itself(client, alice):
    own = client.get(KEYS, headers=alice.key).get_json()["api_keys"][0]["id"]
    assert client.delete(f"{KEYS}{own}", headers=alice.key).status_code == 200
    assert client.get(WHOAMI, headers=alice.key).status_code == 403


def test_cannot_delete_another_users_key(client, admin, alice, bob):
    bobs_key = client.get(KEYS, headers=bob.bearer).get_json()["api_keys"][0]["id"]
    for caller in (alice, admin):  # not even a superuser: keys are owner-scoped
        response = client.delete(f"{KEYS}{bobs_key}", headers=caller.bearer)
        assert response.status_code == 404
        assert response.get_json() == {"detail": "API Key not found"}
    assert client.get(WHOAMI, headers=bob.key).status_code == 200


@pytest.mark.parametrize("key_id", ["0f2b7a52-3c8e-4d5c-9a41-6c1f0e2d9b77", "not-a-uuid"])
def test_delete_unknown_key_is_404(client, alice, key_id):
    response = client.delete(f"{KEYS}{key_id}", headers=alice.bearer)
    assert response.status_code == 404 and response.get_json() == {"detail": "API Key not found"}


def test_key_endpoints_need_credentials(client):
    for method, path in (("get", KEYS), ("post", KEYS), ("delete", f"{KEYS}{uuid.uuid4()}")):
        response = getattr(client, method)(path)
        assert response.status_code == 403, path
        assert response.get_json() == NO_CREDENTIALS


# --- using keys -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["sk-unknown", "sk-" + "A" * 43, "x", " "])
def test_unknown_key_is_403(client, value):
    for kwargs in ({"headers": {"x-api-key": value}}, {"query_string": {"x-api-key": value}}):
        response = client.get(WHOAMI, **kwargs)
        if value.strip():
            assert response.status_code == 403
            assert response.get_json() == INVALID_KEY
        else:
            assert response.status_code == 403  # blank is no credential at all


def test_missing_credentials_is_403(client):
    response = client.get(WHOAMI)
    assert response.status_code == 403 and response.get_json() == NO_CREDENTIALS
    assert "WWW-Authenticate" not in response.headers


def test_key_has_its_owners_privileges(client, admin, alice):
    assert client.get("/api/v1/users/", headers=admin.key).status_code == 200
    refused = client.get("/api/v1/users/", headers=alice.key)
    assert refused.status_code == 403
    assert refused.get_json() == {"detail": "The user doesn't have enough privileges"}


def test_usage_is_tracked(app, client, alice):
    created = client.post(KEYS, json={"name": "tracked"}, headers=alice.bearer).get_json()
    for _ in range(2):
        assert client.get(WHOAMI, headers={"x-api-key": created["api_key"]}).status_code == 200
    assert client.get(WHOAMI, query_string={"x-api-key": created["api_key"]}).status_code == 200
    listed = {k["id"]: k for k in client.get(KEYS, headers=alice.bearer).get_json()["api_keys"]}
    assert listed[created["id"]]["total_uses"] == 3
    assert listed[created["id"]]["last_used_at"] is not None
    (row,) = rows(app, "SELECT total_uses, last_used_at FROM accounts_api_key WHERE name = 'tracked'")
    assert row["total_uses"] == 3 and row["last_used_at"] is not None
    # a failed use of another key, or a bearer call, does not count
    client.get(WHOAMI, headers={"x-api-key": "sk-nope"})
    client.get(WHOAMI, headers=alice.bearer)
    assert rows(app, "SELECT total_uses FROM accounts_api_key WHERE name = 'tracked'")[0]["total_uses"] == 3


def test_usage_tracking_can_be_disabled(make_app):
    app = make_app(disable_track_apikey_usage=True)
    client = app.test_client()
    admin = superuser(client)
    for _ in range(3):
        assert client.get(WHOAMI, headers=admin.key).status_code == 200
    (key,) = client.get(KEYS, headers=admin.bearer).get_json()["api_keys"]
    assert key["total_uses"] == 0 and key["last_used_at"] is None


# --- SERVICE_API_KEY_SOURCE=env -----------------------------------------------------------------------------
ENV_KEY = "sk-the-single-deployment-key-0123456789abcdef"


def test_env_key_acts_as_the_superuser(make_app):
    app = make_app(
        auto_login=False,
        superuser="admin",
        superuser_password="Strong-Env-Password-1",
        api_key_source="env",
        api_key=ENV_KEY,
    )
    client = app.test_client()
    for kwargs in ({"headers": {"x-api-key": ENV_KEY}}, {"query_string": {"x-api-key": ENV_KEY}}):
        me = client.get(WHOAMI, **kwargs)
        assert me.status_code == 200
        assert me.get_json()["username"] == "admin" and me.get_json()["is_superuser"] is True
    assert client.get("/api/v1/users/", headers={"x-api-key": ENV_KEY}).status_code == 200
    # database keys are not valid in env mode, nor is any other value
    token = client.post("/api/v1/login", data={"username": "admin", "password": "Strong-Env-Password-1"}).get_json()
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    db_key = client.post(KEYS, json={"name": "db"}, headers={"Authorization": f"Bearer {token['access_token']}"})
    assert db_key.status_code == 200
    for value in (db_key.get_json()["api_key"], ENV_KEY + "x", ENV_KEY[:-1]):
        refused = client.get(WHOAMI, headers={"x-api-key": value})
        assert refused.status_code == 403 and refused.get_json() == INVALID_KEY


def test_env_source_without_a_key_refuses_to_start(make_app):
    from core.errors import StartupError

    with pytest.raises(StartupError, match="SERVICE_API_KEY"):
        make_app(api_key_source="env")


# --- SERVICE_SKIP_AUTH_AUTO_LOGIN and key-only routes ----------------------------------------------------------
class Probe:
    """A plugin with one key-only (scheme ``api_key``) route, as run endpoints are."""

    @hookimpl
    def register_blueprints(self):
        blueprint = Blueprint("probe", __name__)

        @blueprint.route("/api/v1/probe")
        @authenticated("api_key")
        def probe():
            actor = current_actor()
            return jsonify({"username": actor.username, "via": actor.via})

        return [blueprint]


@pytest.fixture
def probe_app(make_app):
    def build(**settings):
        return make_app(plugins=["accounts", ("probe", Probe())], **settings)

    return build


def test_key_only_route_ignores_bearer_tokens(probe_app):
    client = probe_app().test_client()
    admin = superuser(client)
    response = client.get("/api/v1/probe", headers=admin.bearer)
    assert response.status_code == 403
    assert "requires a valid API key" in response.get_json()["detail"]
    assert "SERVICE_SKIP_AUTH_AUTO_LOGIN" in response.get_json()["detail"]
    ok = client.get("/api/v1/probe", headers=admin.key)
    assert ok.get_json() == {"username": "service", "via": "api_key"}
    bad = client.get("/api/v1/probe", headers={"x-api-key": "sk-bad"})
    assert bad.status_code == 403 and bad.get_json() == {"detail": "Invalid or missing API key"}


def test_key_only_route_without_auto_login(probe_app):
    client = probe_app(
        auto_login=False, superuser="admin", superuser_password="Strong-Probe-Password-1", skip_auth_auto_login=True
    ).test_client()
    response = client.get("/api/v1/probe")
    assert response.status_code == 403
    assert response.get_json() == {"detail": "An API key must be passed as query or header"}


def test_skip_auth_auto_login_acts_as_the_superuser_without_credentials(probe_app):
    client = probe_app(skip_auth_auto_login=True).test_client()
    me = client.get(WHOAMI)
    assert me.status_code == 200 and me.get_json()["username"] == "service"
    assert client.get("/api/v1/probe").get_json() == {"username": "service", "via": "auto_login"}
    assert client.get("/api/v1/session").get_json()["authenticated"] is True
    # a credential that is given is still checked
    bad = client.get(WHOAMI, headers={"x-api-key": "sk-bad"})
    assert bad.status_code == 403 and bad.get_json() == INVALID_KEY
    assert client.get(WHOAMI, headers={"Authorization": "Bearer junk"}).status_code == 401


def test_skip_auth_has_no_effect_without_auto_login(probe_app):
    client = probe_app(
        auto_login=False, superuser="admin", superuser_password="Strong-Probe-Password-1", skip_auth_auto_login=True
    ).test_client()
    response = client.get(WHOAMI)
    assert response.status_code == 403 and response.get_json() == NO_CREDENTIALS
    assert client.get("/api/v1/session").get_json()["authenticated"] is False


def test_auto_login_without_skip_still_needs_credentials(client):
    response = client.get(WHOAMI)
    assert response.status_code == 403 and response.get_json() == NO_CREDENTIALS
