"""Single sign-on against a real OpenID Connect provider (oidc-provider under Node, see conftest)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import sqlalchemy as sa

from tests.sso.conftest import AFTER_LOGOUT, STRONG, provider_callback, sign_in, sso_settings, visit


def _cookie(client, name, path="/"):
    found = client.get_cookie(name, path=path)
    return found.value if found is not None else None


def _error(response):
    assert response.status_code == 302, response.get_data(as_text=True)
    parts = urlsplit(response.location)
    return parts.path, parse_qs(parts.query).get("sso_error", [None])[0]


def _identities(app):
    from core import appstate

    with appstate.engine(app).connect() as conn:
        return {r.subject: r for r in conn.execute(sa.text("SELECT * FROM sso_identity"))}


def test_the_sign_in_page_lists_the_provider(sso_app):
    body = sso_app.test_client().get("/api/v1/sso/providers").get_json()
    assert body == {
        "providers": [{"slug": "oidc", "display_name": "Single sign-on", "login_url": "/api/v1/sso/oidc/login"}],
        "sso_only": False,
    }


def test_the_authorization_request_uses_pkce_state_and_nonce(sso_app, oidc_provider):
    started = sso_app.test_client().get("/api/v1/sso/oidc/login")
    assert started.status_code == 302
    assert started.location.startswith(f"{oidc_provider.issuer}/auth?")
    query = parse_qs(urlsplit(started.location).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert len(query["state"][0]) >= 32 and len(query["nonce"][0]) >= 32 and query["state"] != query["nonce"]
    assert query["redirect_uri"] == ["http://localhost/api/v1/sso/oidc/callback"]


def test_first_sign_in_creates_the_account_with_mapped_claims(sso_app, oidc_provider):
    client = sso_app.test_client()
    landed = visit(client, provider_callback(client, oidc_provider, "alice", next_path="/flows"))
    assert landed.status_code == 302 and landed.location == "/flows"
    assert _cookie(client, "access_token_svc") and _cookie(client, "refresh_token_svc")
    me = client.get("/api/v1/users/whoami").get_json()
    assert me["username"] == "alice" and me["is_active"] is True
    assert me["is_superuser"] is True  # member of the admin group svc-admins
    row = _identities(sso_app)["alice"]
    assert str(row.user_id).replace("-", "") == me["id"].replace("-", "")
    assert (row.email, row.name) == ("alice@example.com", "Alice Admin")
    assert "eng" in row.groups and "svc-admins" in row.groups


def test_each_sign_in_updates_the_account(make_app, oidc_provider):
    from service_sso import oidc

    oidc.CACHE.clear()
    first = make_app(**sso_settings(oidc_provider, sso_admin_group="support"))
    client = first.test_client()
    sign_in(client, oidc_provider, "bob")
    me = client.get("/api/v1/users/whoami").get_json()
    assert me["username"] == "bob" and me["is_superuser"] is True  # bob is in "support"
    second = make_app(**sso_settings(oidc_provider))  # the admin group is now svc-admins
    client = second.test_client()
    sign_in(client, oidc_provider, "bob")
    again = client.get("/api/v1/users/whoami").get_json()
    assert again["id"] == me["id"] and again["is_superuser"] is False
    assert len([s for s in _identities(second) if s == "bob"]) == 1


def test_a_carol_without_groups_is_a_plain_user(sso_app, oidc_provider):
    client = sso_app.test_client()
    sign_in(client, oidc_provider, "carol")
    assert client.get("/api/v1/users/whoami").get_json()["is_superuser"] is False
    assert client.get("/api/v1/users/").status_code == 403


def test_a_forged_state_is_refused(sso_app, oidc_provider):
    client = sso_app.test_client()
    url = provider_callback(client, oidc_provider, "carol")
    forged = url.replace("state=", "state=x")
    assert _error(visit(client, forged)) == ("/login", "invalid_state")
    assert _cookie(client, "access_token_svc") is None


def test_a_callback_from_another_browser_is_refused(sso_app, oidc_provider):
    url = provider_callback(sso_app.test_client(), oidc_provider, "carol")
    other = sso_app.test_client()  # has no state cookie: login CSRF / a stolen callback URL
    assert _error(visit(other, url)) == ("/login", "invalid_state")
    assert _cookie(other, "access_token_svc") is None


def test_a_state_works_once(sso_app, oidc_provider):
    client = sso_app.test_client()
    url = provider_callback(client, oidc_provider, "carol")
    state_cookie = _cookie(client, "sso_state_svc", path="/api/v1/sso/oidc/callback")
    assert visit(client, url).location == "/"
    client.set_cookie("sso_state_svc", state_cookie, path="/api/v1/sso/oidc/callback")
    client.delete_cookie("access_token_svc")
    assert _error(visit(client, url)) == ("/login", "invalid_state")


@pytest.mark.parametrize("mode", ["expired", "badsig", "nonce", "iss"])
def test_bad_id_tokens_are_refused(sso_app, oidc_provider, mode):
    client = sso_app.test_client()
    url = provider_callback(client, oidc_provider, "carol")
    oidc_provider.next_id_token(mode)
    assert _error(visit(client, url)) == ("/login", "invalid_id_token")
    assert _cookie(client, "access_token_svc") is None
    assert "carol" not in _identities(sso_app)


def test_an_existing_local_account_is_not_taken_over(sso_app, oidc_provider):
    client = sso_app.test_client()
    # the provider's "admin" claims the superuser's username: it must not become that account
    assert _error(sign_in(client, oidc_provider, "admin")) == ("/login", "account_refused")
    assert _cookie(client, "access_token_svc") is None


def test_api_keys_work_for_sso_users(sso_app, oidc_provider):
    client = sso_app.test_client()
    sign_in(client, oidc_provider, "carol")
    key = client.post("/api/v1/api_key/", json={"name": "ci"}).get_json()["api_key"]
    anonymous = sso_app.test_client()
    me = anonymous.get("/api/v1/users/whoami", headers={"x-api-key": key})
    assert me.status_code == 200 and me.get_json()["username"] == "carol"


def test_sign_out_ends_the_session_here_and_at_the_provider(sso_app, oidc_provider):
    client = sso_app.test_client()
    sign_in(client, oidc_provider, "carol")
    token = _cookie(client, "access_token_svc")
    out = client.get("/api/v1/sso/logout")
    assert out.status_code == 302
    end = urlsplit(out.location)
    assert f"{end.scheme}://{end.netloc}{end.path}" == f"{oidc_provider.issuer}/session/end"
    query = parse_qs(end.query)
    assert query["post_logout_redirect_uri"] == [AFTER_LOGOUT] and query["id_token_hint"]
    assert _cookie(client, "access_token_svc") is None
    refused = sso_app.test_client().get("/api/v1/users/whoami", headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    # the provider accepts the end-session request (its hint and redirect are valid there)
    confirm = requests.get(out.location, timeout=10)
    assert confirm.status_code == 200 and "logout" in confirm.text.lower()


def test_sso_only_mode_keeps_passwords_for_the_break_glass_superuser_only(make_app, oidc_provider):
    from service_sso import oidc

    oidc.CACHE.clear()
    app = make_app(**sso_settings(oidc_provider, sso_only=True, sso_break_glass_user="admin"))
    client = app.test_client()
    assert client.get("/api/v1/sso/providers").get_json()["sso_only"] is True
    admin = client.post("/api/v1/login", data={"username": "admin", "password": STRONG})
    assert admin.status_code == 200
    bearer = {"Authorization": f"Bearer {admin.get_json()['access_token']}"}
    local = client.post("/api/v1/users/", json={"username": "dave", "password": STRONG}, headers=bearer)
    assert local.status_code == 201  # a superuser may still create accounts
    client.patch(f"/api/v1/users/{local.get_json()['id']}", json={"is_active": True}, headers=bearer)
    refused = app.test_client().post("/api/v1/login", data={"username": "dave", "password": STRONG})
    assert refused.status_code == 403 and "single sign-on" in refused.get_json()["detail"]
    signup = app.test_client().post("/api/v1/users/", json={"username": "eve", "password": STRONG})
    assert signup.status_code == 403
    browser = app.test_client()
    sign_in(browser, oidc_provider, "carol")
    assert browser.get("/api/v1/users/whoami").get_json()["username"] == "carol"


def test_sso_off_serves_no_sign_in(make_app):
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG)
    client = app.test_client()
    assert client.get("/api/v1/sso/providers").get_json() == {"providers": [], "sso_only": False}
    assert client.get("/api/v1/sso/oidc/login").status_code == 404


def test_a_team_works_on_a_project_through_the_provider(sso_app, oidc_provider):
    """Three people sign in through the provider: alice creates a team project, bob (eng) edits its flow,
    dave (support) runs it but cannot change it, carol (no group) cannot even see it."""
    from tests.run.runkit import chat_echo

    root = sso_app.test_client()
    token = root.post("/api/v1/login", data={"username": "admin", "password": STRONG}).get_json()["access_token"]
    admin = {"Authorization": f"Bearer {token}"}
    teams = {}
    for slug, name in (("eng", "Engineering"), ("support", "Support")):
        made = root.post("/api/v1/authz/teams", json={"team_name": name, "adom_name": slug}, headers=admin)
        assert made.status_code == 201, made.get_json()
        teams[slug] = made.get_json()["id"]
    alice = sso_app.test_client()
    sign_in(alice, oidc_provider, "alice")
    project = alice.post("/api/v1/projects/", json={"name": "Team project"}).get_json()
    flow = alice.post("/api/v1/flows/", json={"name": "answer", "data": chat_echo(), "folder_id": project["id"]})
    assert flow.status_code == 201, flow.get_json()
    flow_id = flow.get_json()["id"]
    for slug, level in (("eng", "write"), ("support", "execute")):
        body = {"resource_type": "project", "resource_id": project["id"], "scope": "team", "target_id": teams[slug]}
        shared = alice.post("/api/v1/authz/shares", json={**body, "permission_level": level})
        assert shared.status_code == 201, shared.get_json()
    people = {}
    for name in ("bob", "dave", "carol"):
        people[name] = sso_app.test_client()
        sign_in(people[name], oidc_provider, name)
    bob, dave, carol = people["bob"], people["dave"], people["carol"]
    assert sorted(t["adom_name"] for t in bob.get("/api/v1/authz/teams").get_json()) == ["eng", "support"]
    members = bob.get(f"/api/v1/authz/teams/{teams['eng']}/members").get_json()
    assert {m["source"] for m in members} == {"sso"} and len(members) == 2  # alice and bob
    # bob edits, dave runs but cannot edit, carol sees nothing
    assert bob.patch(f"/api/v1/flows/{flow_id}", json={"description": "edited by bob"}).status_code == 200
    key = dave.post("/api/v1/api_key/", json={"name": "support"}).get_json()["api_key"]
    ran = sso_app.test_client().post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers={"x-api-key": key})
    assert ran.status_code == 200, ran.get_json()
    assert dave.get(f"/api/v1/flows/{flow_id}").get_json()["description"] == "edited by bob"
    assert dave.patch(f"/api/v1/flows/{flow_id}", json={"description": "no"}).status_code == 403
    assert [p["id"] for p in dave.get("/api/v1/projects/").get_json() if not p["is_owner"]] == [project["id"]]
    assert carol.get(f"/api/v1/flows/{flow_id}").status_code == 404
    assert carol.get(f"/api/v1/projects/{project['id']}").status_code == 404
    assert carol.get("/api/v1/authz/teams").get_json() == []
    assert [p for p in carol.get("/api/v1/projects/").get_json() if not p["is_owner"]] == []
