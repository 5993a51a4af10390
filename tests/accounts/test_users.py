"""/api/v1/users: sign-up rules, listing, whoami, updates, password reset and deletion."""

from __future__ import annotations

import uuid

from tests.accounts.helpers import STRONG, insert_users, rows
from tests.conftest import PASSWORD, login, make_user

USERS = "/api/v1/users/"
USER_FIELDS = {
    "id",
    "username",
    "profile_image",
    "store_api_key",
    "is_active",
    "is_superuser",
    "create_at",
    "updated_at",
    "last_login_at",
    "optins",
}
NO_PUBLIC_SIGNUP = {"detail": "Public user registration is disabled."}


def admin_login(client):
    response = login(client, "admin", STRONG)
    assert response.status_code == 200, response.get_json()
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    return {"Authorization": f"Bearer {response.get_json()['access_token']}"}


# --- create --------------------------------------------------------------------------------------------
def test_superuser_creates_inactive_user_with_reference_shape(client, admin):
    response = client.post(USERS, json={"username": "  carol ", "password": PASSWORD}, headers=admin.bearer)
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == USER_FIELDS
    assert body["username"] == "carol"
    assert body["is_active"] is False and body["is_superuser"] is False
    assert body["last_login_at"] is None and body["profile_image"] is None
    assert body["optins"] == {"github_starred": False, "dialog_dismissed": False, "discord_clicked": False}
    assert "password" not in body and "password_hash" not in body
    uuid.UUID(body["id"])


def test_duplicate_username_is_400(client, admin, alice):
    response = client.post(USERS, json={"username": "alice", "password": "x-long-enough"}, headers=admin.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "This username is unavailable."}


def test_missing_password_is_422_with_validation_shape(client, admin):
    response = client.post(USERS, json={"username": "nopw"}, headers=admin.bearer)
    assert response.status_code == 422
    items = response.get_json()["detail"]
    assert any(item["loc"] == ["body", "password"] for item in items)
    assert all({"loc", "msg", "type"} <= set(item) for item in items)


def test_anonymous_signup_refused_under_auto_login(client):
    response = client.post(USERS, json={"username": "anon", "password": PASSWORD})
    assert response.status_code == 403
    assert response.get_json() == NO_PUBLIC_SIGNUP


def test_anonymous_signup_refused_when_signup_disabled(make_app):
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG, enable_signup=False)
    client = app.test_client()
    response = client.post(USERS, json={"username": "anon", "password": PASSWORD})
    assert response.status_code == 403
    assert response.get_json() == NO_PUBLIC_SIGNUP
    # superusers create accounts regardless of SERVICE_ENABLE_SIGNUP
    created = client.post(USERS, json={"username": "made", "password": PASSWORD}, headers=admin_login(client))
    assert created.status_code == 201
    assert created.get_json()["username"] == "made"


def test_public_signup_creates_inactive_user_waiting_for_approval(strict_client):
    body = {"username": "newbie", "password": PASSWORD, "is_superuser": True, "is_active": True}
    response = strict_client.post(USERS, json=body)
    assert response.status_code == 201
    created = response.get_json()
    # privileges in the body are ignored on sign-up
    assert created["is_active"] is False and created["is_superuser"] is False
    refused = login(strict_client, "newbie")
    assert refused.status_code == 400
    assert refused.get_json() == {"detail": "Waiting for approval"}
    assert "Set-Cookie" not in refused.headers


def test_new_user_is_active_setting(make_app):
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG, new_user_is_active=True)
    client = app.test_client()
    created = client.post(USERS, json={"username": "eager", "password": PASSWORD})
    assert created.status_code == 201
    assert created.get_json()["is_active"] is True
    signed_in = login(client, "eager")
    assert signed_in.status_code == 200
    me = client.get(USERS + "whoami", headers={"Authorization": f"Bearer {signed_in.get_json()['access_token']}"})
    assert me.get_json()["username"] == "eager" and me.get_json()["last_login_at"] is not None


def test_passwords_are_stored_hashed(app, client, admin):
    client.post(USERS, json={"username": "hashme", "password": PASSWORD}, headers=admin.bearer)
    (row,) = rows(app, "SELECT password_hash FROM accounts_user WHERE username = :u", u="hashme")
    assert PASSWORD not in row["password_hash"]
    assert row["password_hash"].startswith("$argon2id$")


def test_production_hasher_uses_argon2id_with_default_cost(_cheap_password_hashing):
    production = _cheap_password_hashing  # the plugin's own hasher (swapped for a cheap one in these tests)
    assert production.time_cost >= 2 and production.memory_cost >= 19 * 1024
    hashed = production.hash("x")
    assert hashed.startswith("$argon2id$") and production.verify(hashed, "x")


# --- list ----------------------------------------------------------------------------------------------
def test_list_users_pages_with_skip_and_limit(app, client, admin):
    insert_users(app, 12, "page")
    first = client.get(USERS, headers=admin.bearer)
    assert first.status_code == 200
    body = first.get_json()
    assert body["total_count"] == 13  # 12 + the superuser
    assert len(body["users"]) == 10  # default limit
    assert set(body["users"][0]) == USER_FIELDS
    rest = client.get(USERS + "?skip=10&limit=10", headers=admin.bearer).get_json()
    assert rest["total_count"] == 13 and len(rest["users"]) == 3
    seen = {u["username"] for u in body["users"]} | {u["username"] for u in rest["users"]}
    assert len(seen) == 13
    two = client.get(USERS + "?skip=1&limit=2", headers=admin.bearer).get_json()
    assert [u["username"] for u in two["users"]] == [u["username"] for u in body["users"][1:3]]
    found = client.get(USERS + "?search=page0", headers=admin.bearer).get_json()
    assert found["total_count"] == 10
    assert all(u["username"].startswith("page0") for u in found["users"])


def test_list_users_rejects_bad_paging(client, admin):
    for query in ("limit=0", "limit=1001", "skip=-1", "limit=abc", "skip=99999999999999999999", "skip=2147483648"):
        response = client.get(USERS + "?" + query, headers=admin.bearer)
        assert response.status_code == 422, query
        assert response.get_json()["detail"][0]["loc"][0] == "query"


def test_list_users_is_superuser_only(client, alice):
    for headers in (alice.bearer, alice.key):
        response = client.get(USERS, headers=headers)
        assert response.status_code == 403
        assert response.get_json() == {"detail": "The user doesn't have enough privileges"}
    anonymous = client.get(USERS)
    assert anonymous.status_code == 403
    assert anonymous.get_json() == {"detail": "No authentication credentials provided"}


# --- whoami --------------------------------------------------------------------------------------------
def test_whoami_with_each_credential(client, alice):
    for headers, query in ((alice.bearer, ""), (alice.key, ""), ({}, "?x-api-key=" + alice.api_key)):
        response = client.get(USERS + "whoami" + query, headers=headers)
        assert response.status_code == 200
        assert response.get_json()["id"] == alice.id
        assert response.get_json()["username"] == "alice"
        assert response.get_json()["is_active"] is True


def test_whoami_without_credentials_is_403(client):
    response = client.get(USERS + "whoami")
    assert response.status_code == 403
    assert response.get_json() == {"detail": "No authentication credentials provided"}


# --- update --------------------------------------------------------------------------------------------
def test_superuser_updates_another_user_including_password(client, admin, alice):
    response = client.patch(
        f"{USERS}{alice.id}",
        json={
            "username": "alice2",
            "profile_image": "Space/046-rocket.svg",
            "password": "brand-new-password",
            "optins": {"dialog_dismissed": True},
        },
        headers=admin.bearer,
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body["username"] == "alice2" and body["profile_image"] == "Space/046-rocket.svg"
    assert body["optins"] == {"dialog_dismissed": True}
    assert login(client, "alice2", PASSWORD).status_code == 401
    assert login(client, "alice2", "brand-new-password").status_code == 200


def test_superuser_grants_and_revokes_privileges(client, admin, alice):
    up = client.patch(f"{USERS}{alice.id}", json={"is_superuser": True}, headers=admin.bearer)
    assert up.status_code == 200 and up.get_json()["is_superuser"] is True
    assert client.get(USERS, headers=alice.bearer).status_code == 200
    down = client.patch(f"{USERS}{alice.id}", json={"is_superuser": False}, headers=admin.bearer)
    assert down.get_json()["is_superuser"] is False
    assert client.get(USERS, headers=alice.bearer).status_code == 403


def test_user_updates_own_profile(client, alice):
    response = client.patch(
        f"{USERS}{alice.id}", json={"profile_image": "People/a.svg", "username": "alicia"}, headers=alice.bearer
    )
    assert response.status_code == 200
    assert response.get_json()["username"] == "alicia"
    assert response.get_json()["profile_image"] == "People/a.svg"
    # restating the current privileges is not a change
    same = client.patch(f"{USERS}{alice.id}", json={"is_superuser": False, "is_active": True}, headers=alice.bearer)
    assert same.status_code == 200


def test_user_cannot_update_another_user(client, alice, bob):
    response = client.patch(f"{USERS}{bob.id}", json={"username": "hacked"}, headers=alice.bearer)
    assert response.status_code == 403
    assert response.get_json() == {"detail": "You don't have the permission to update this user"}
    assert client.get(USERS + "whoami", headers=bob.bearer).get_json()["username"] == "bob"


def test_user_cannot_grant_self_privileges(client, alice):
    response = client.patch(f"{USERS}{alice.id}", json={"is_superuser": True}, headers=alice.bearer)
    assert response.status_code == 403
    assert response.get_json() == {"detail": "You don't have the permission to change superuser status"}
    assert client.get(USERS + "whoami", headers=alice.bearer).get_json()["is_superuser"] is False


def test_user_cannot_change_own_active_flag(client, alice):
    response = client.patch(f"{USERS}{alice.id}", json={"is_active": False}, headers=alice.bearer)
    assert response.status_code == 403
    assert response.get_json() == {"detail": "You don't have the permission to change the active status"}


def test_user_cannot_change_password_through_update(client, alice):
    response = client.patch(f"{USERS}{alice.id}", json={"password": "sneaky-new-one"}, headers=alice.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "You can't change your password here"}
    assert login(client, "alice", PASSWORD).status_code == 200


def test_superuser_cannot_deactivate_or_demote_self(client, admin):
    response = client.patch(f"{USERS}{admin.id}", json={"is_active": False}, headers=admin.bearer)
    assert response.status_code == 403
    assert response.get_json() == {"detail": "You can't deactivate your own user account"}
    demote = client.patch(f"{USERS}{admin.id}", json={"is_superuser": False}, headers=admin.bearer)
    assert demote.status_code == 403
    assert demote.get_json() == {"detail": "You can't remove your own superuser status"}


def test_update_unknown_or_malformed_user_is_404(client, admin):
    for user_id in (uuid.uuid4(), "not-a-uuid"):
        response = client.patch(f"{USERS}{user_id}", json={"profile_image": "x"}, headers=admin.bearer)
        assert response.status_code == 404
        assert response.get_json() == {"detail": "User not found"}


def test_rename_to_taken_username_is_400(client, alice, bob):
    response = client.patch(f"{USERS}{alice.id}", json={"username": "bob"}, headers=alice.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "This username is unavailable."}


def test_deactivated_user_loses_access_and_gets_inactive_on_login(client, admin, alice):
    response = client.patch(f"{USERS}{alice.id}", json={"is_active": False}, headers=admin.bearer)
    assert response.status_code == 200 and response.get_json()["is_active"] is False
    token = client.get(USERS + "whoami", headers=alice.bearer)
    assert token.status_code == 401
    assert token.get_json() == {"detail": "Inactive user"}
    key = client.get(USERS + "whoami", headers=alice.key)
    assert key.status_code == 403
    assert key.get_json() == {"detail": "Invalid API key"}
    relogin = login(client, "alice")
    assert relogin.status_code == 401
    assert relogin.get_json() == {"detail": "Inactive user"}
    # reactivation restores the API keys and signing in; the tokens issued before stay revoked (issue 20)
    client.patch(f"{USERS}{alice.id}", json={"is_active": True}, headers=admin.bearer)
    assert client.get(USERS + "whoami", headers=alice.bearer).status_code == 401
    assert client.get(USERS + "whoami", headers=alice.key).status_code == 200
    fresh = login(client, "alice").get_json()["access_token"]
    assert client.get(USERS + "whoami", headers={"Authorization": f"Bearer {fresh}"}).status_code == 200


# --- reset password --------------------------------------------------------------------------------------
def test_reset_own_password(client, alice):
    response = client.patch(
        f"{USERS}{alice.id}/reset-password",
        json={"current_password": PASSWORD, "password": "a-fresh-password"},
        headers=alice.bearer,
    )
    assert response.status_code == 200
    assert response.get_json()["id"] == alice.id
    assert login(client, "alice", PASSWORD).status_code == 401
    assert login(client, "alice", "a-fresh-password").status_code == 200


def test_reset_password_ignores_privilege_fields(client, alice):
    response = client.patch(
        f"{USERS}{alice.id}/reset-password",
        json={"current_password": PASSWORD, "password": "next-password-1", "is_superuser": True, "is_active": False},
        headers=alice.bearer,
    )
    assert response.status_code == 200
    assert response.get_json()["is_superuser"] is False and response.get_json()["is_active"] is True


def test_reset_password_needs_the_correct_current_password(client, alice):
    for body in (
        {"current_password": "wrong", "password": "x-new"},
        {"password": "x-new"},
        {"current_password": None, "password": "x-new"},
    ):
        response = client.patch(f"{USERS}{alice.id}/reset-password", json=body, headers=alice.bearer)
        assert response.status_code == 400, body
        assert response.get_json() == {"detail": "Current password is incorrect"}
    assert login(client, "alice", PASSWORD).status_code == 200


def test_reset_password_refuses_the_legacy_password(client, alice):
    response = client.patch(
        f"{USERS}{alice.id}/reset-password",
        json={"current_password": PASSWORD, "password": "service"},
        headers=alice.bearer,
    )
    assert response.status_code == 400
    assert response.get_json() == {"detail": "This password is not allowed"}


def test_reset_password_of_someone_else_is_404_even_for_superusers(client, admin, alice):
    for caller, target in ((alice, admin), (admin, alice)):
        response = client.patch(
            f"{USERS}{target.id}/reset-password",
            json={"current_password": PASSWORD, "password": "taken-over"},
            headers=caller.bearer,
        )
        assert response.status_code == 404
        assert response.get_json() == {"detail": "User not found"}
    assert login(client, "alice", PASSWORD).status_code == 200


def test_reset_password_requires_new_password(client, alice):
    response = client.patch(
        f"{USERS}{alice.id}/reset-password", json={"current_password": PASSWORD}, headers=alice.bearer
    )
    assert response.status_code == 422
    assert ["body", "password"] in [item["loc"] for item in response.get_json()["detail"]]


# --- delete ------------------------------------------------------------------------------------------------
def test_superuser_deletes_user_and_their_credentials_stop_working(app, client, admin, alice):
    response = client.delete(f"{USERS}{alice.id}", headers=admin.bearer)
    assert response.status_code == 200
    assert response.get_json() == {"detail": "User deleted"}
    token = client.get(USERS + "whoami", headers=alice.bearer)
    assert token.status_code == 401
    assert token.get_json() == {"detail": "Invalid token"}
    assert token.headers["WWW-Authenticate"] == "Bearer"
    key = client.get(USERS + "whoami", headers=alice.key)
    assert key.status_code == 403
    assert key.get_json() == {"detail": "Invalid API key"}
    owners = {str(r["user_id"]).replace("-", "") for r in rows(app, "SELECT user_id FROM accounts_api_key")}
    assert alice.id.replace("-", "") not in owners
    assert login(client, "alice").status_code == 401
    listed = client.get(USERS, headers=admin.bearer).get_json()
    assert "alice" not in {u["username"] for u in listed["users"]}


def test_superuser_cannot_delete_self(client, admin):
    response = client.delete(f"{USERS}{admin.id}", headers=admin.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "You can't delete your own user account"}


def test_non_superuser_cannot_delete(client, alice, bob):
    response = client.delete(f"{USERS}{bob.id}", headers=alice.bearer)
    assert response.status_code == 403
    assert response.get_json() == {"detail": "The user doesn't have enough privileges"}
    assert client.get(USERS + "whoami", headers=bob.bearer).status_code == 200


def test_delete_unknown_user_is_404(client, admin):
    for user_id in (uuid.uuid4(), "nope"):
        response = client.delete(f"{USERS}{user_id}", headers=admin.bearer)
        assert response.status_code == 404
        assert response.get_json() == {"detail": "User not found"}


def test_inactive_user_made_by_helper_cannot_sign_in(client, admin):
    pending = make_user(client, admin, username="pending", active=False)
    response = login(client, pending.username)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "Waiting for approval"}


def test_blank_usernames_are_422(client, admin, alice):
    created = client.post(USERS, json={"username": "   ", "password": PASSWORD}, headers=admin.bearer)
    assert created.status_code == 422
    assert created.get_json()["detail"][0]["loc"] == ["body", "username"]
    renamed = client.patch(f"{USERS}{alice.id}", json={"username": " \t "}, headers=alice.bearer)
    assert renamed.status_code == 422
    assert renamed.get_json()["detail"][0]["loc"] == ["body", "username"]
    assert client.get(USERS + "whoami", headers=alice.bearer).get_json()["username"] == "alice"


def test_superuser_cannot_set_the_legacy_password_for_anyone(client, admin, alice):
    response = client.patch(f"{USERS}{alice.id}", json={"password": "service"}, headers=admin.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "This password is not allowed"}
    assert login(client, "alice", PASSWORD).status_code == 200


def test_overlong_fields_are_422_not_database_errors(client, alice):
    image = client.patch(f"{USERS}{alice.id}", json={"profile_image": "x" * 513}, headers=alice.bearer)
    assert image.status_code == 422
    assert image.get_json()["detail"][0]["loc"] == ["body", "profile_image"]
    name = client.patch(f"{USERS}{alice.id}", json={"username": "n" * 256}, headers=alice.bearer)
    assert name.status_code == 422
    key = client.post("/api/v1/api_key/", json={"name": "k" * 256}, headers=alice.bearer)
    assert key.status_code == 422
    fits = client.patch(f"{USERS}{alice.id}", json={"profile_image": "x" * 512}, headers=alice.bearer)
    assert fits.status_code == 200
