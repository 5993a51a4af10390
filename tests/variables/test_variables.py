"""Variables: create, list, update, delete, validation, owner scoping, encryption at rest, the lookup hook."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from core.app import state
from tests.conftest import make_user

URL = "/api/v1/variables/"


def create(client, caller, name="OPENAI_API_KEY", value="sk-very-secret", type_="Credential", **extra):
    body = {"name": name, "value": value, "type": type_, "default_fields": [], **extra}
    return client.post(URL, json=body, headers=caller.bearer)


def stored_rows(app):
    with state(app).engine.connect() as conn:
        return conn.execute(sa.text("SELECT id, user_id, name, value, type FROM variables_variable")).all()


def test_create_returns_201_without_the_credential_value(client, alice):
    response = create(client, alice)
    assert response.status_code == 201
    body = response.get_json()
    assert body["name"] == "OPENAI_API_KEY"
    assert body["type"] == "Credential"
    assert body["value"] is None
    assert body["has_value"] is True
    assert body["default_fields"] == []
    assert body["is_owner"] is True and body["is_valid"] is True
    assert "sk-very-secret" not in response.get_data(as_text=True)


def test_credential_is_never_returned_and_stored_as_ciphertext(app, client, alice):
    created = create(client, alice, value="sk-top-secret-123").get_json()
    listed = client.get(URL, headers=alice.bearer)
    assert listed.status_code == 200
    assert "sk-top-secret-123" not in listed.get_data(as_text=True)
    assert [v["value"] for v in listed.get_json()] == [None]
    patched = client.patch(
        URL + created["id"], json={"id": created["id"], "default_fields": ["api_key"]}, headers=alice.bearer
    )
    assert patched.status_code == 200
    assert patched.get_json()["value"] is None
    assert "sk-top-secret-123" not in patched.get_data(as_text=True)
    (row,) = stored_rows(app)
    assert row.value != "sk-top-secret-123"
    assert "sk-top-secret-123" not in row.value
    assert row.value.startswith("gAAAA")  # a Fernet token


def test_generic_value_is_shown_to_its_owner_but_encrypted_at_rest(app, client, alice):
    body = create(client, alice, name="REGION", value="eu-west-1", type_="Generic").get_json()
    assert body["value"] == "eu-west-1"
    assert client.get(URL, headers=alice.bearer).get_json()[0]["value"] == "eu-west-1"
    (row,) = stored_rows(app)
    assert "eu-west-1" not in row.value


def test_type_defaults_to_credential_and_unknown_type_is_422(client, alice):
    body = client.post(URL, json={"name": "A", "value": "v", "default_fields": None}, headers=alice.bearer)
    assert body.status_code == 201
    assert body.get_json()["type"] == "Credential" and body.get_json()["value"] is None
    bad = create(client, alice, name="B", type_="Secretish")
    assert bad.status_code == 422
    assert bad.get_json()["detail"][0]["loc"] == ["body", "type"]


def test_empty_name_or_value_is_422_with_a_clear_message(client, alice):
    for body, field, message in (
        ({"name": "", "value": "v"}, "name", "Variable name cannot be empty"),
        ({"name": "   ", "value": "v"}, "name", "Variable name cannot be empty"),
        ({"name": "X", "value": ""}, "value", "Variable value cannot be empty"),
    ):
        response = client.post(URL, json={**body, "default_fields": []}, headers=alice.bearer)
        assert response.status_code == 422, body
        detail = response.get_json()["detail"]
        assert {"loc": ["body", field], "msg": message, "type": "value_error"} in detail
    missing = client.post(URL, json={"name": "X"}, headers=alice.bearer)
    assert missing.status_code == 422
    assert {tuple(d["loc"]) for d in missing.get_json()["detail"]} == {("body", "value"), ("body", "default_fields")}
    assert client.get(URL, headers=alice.bearer).get_json() == []


def test_names_are_unique_per_user(client, alice, bob):
    assert create(client, alice, name="TOKEN").status_code == 201
    duplicate = create(client, alice, name="TOKEN")
    assert duplicate.status_code == 400
    assert duplicate.get_json()["detail"] == "Variable name already exists"
    assert create(client, bob, name="TOKEN").status_code == 201  # another user may use the same name
    other = create(client, alice, name="OTHER").get_json()
    clash = client.patch(URL + other["id"], json={"id": other["id"], "name": "TOKEN"}, headers=alice.bearer)
    assert clash.status_code == 400


def test_update_changes_name_value_and_default_fields(app, client, alice):
    created = create(client, alice, name="K", value="one", type_="Generic").get_json()
    before = stored_rows(app)[0].value
    response = client.patch(
        URL + created["id"],
        json={"id": created["id"], "name": "K2", "value": "two", "default_fields": ["a", "b"]},
        headers=alice.bearer,
    )
    assert response.status_code == 200
    body = response.get_json()
    assert (body["name"], body["value"], body["default_fields"]) == ("K2", "two", ["a", "b"])
    assert stored_rows(app)[0].value != before
    with app.app_context():
        assert state(app).host.hook.get_variable(user_id=alice.id, name="K2") == "two"


def test_update_validation(client, alice):
    created = create(client, alice).get_json()
    no_id = client.patch(URL + created["id"], json={"name": "N"}, headers=alice.bearer)
    assert no_id.status_code == 422 and no_id.get_json()["detail"][0]["loc"] == ["body", "id"]
    other_id = client.patch(URL + created["id"], json={"id": str(uuid.uuid4()), "name": "N"}, headers=alice.bearer)
    assert other_id.status_code == 422
    empty = client.patch(URL + created["id"], json={"id": created["id"], "value": ""}, headers=alice.bearer)
    assert empty.status_code == 422
    assert empty.get_json()["detail"][0]["msg"] == "Variable value cannot be empty"


def test_delete_returns_204_and_removes_it(client, alice):
    created = create(client, alice).get_json()
    response = client.delete(URL + created["id"], headers=alice.bearer)
    assert response.status_code == 204
    assert response.get_data() == b""
    assert client.get(URL, headers=alice.bearer).get_json() == []
    assert client.delete(URL + created["id"], headers=alice.bearer).status_code == 404


def test_another_users_variable_is_404_and_never_listed(client, alice, bob):
    mine = create(client, alice, name="ALICE_ONLY", value="alice-secret", type_="Generic").get_json()
    assert client.get(URL, headers=bob.bearer).get_json() == []
    patched = client.patch(URL + mine["id"], json={"id": mine["id"], "value": "hacked"}, headers=bob.bearer)
    assert patched.status_code == 404
    assert client.delete(URL + mine["id"], headers=bob.bearer).status_code == 404
    assert client.patch(URL + "not-a-uuid", json={"id": mine["id"]}, headers=bob.bearer).status_code in (404, 422)
    assert client.get(URL, headers=alice.bearer).get_json()[0]["value"] == "alice-secret"


def test_api_key_works_and_no_credentials_is_403(client, alice):
    assert client.get(URL, headers=alice.key).status_code == 200
    assert client.get(URL).status_code == 403


def test_get_variable_hook_is_owner_scoped(app, client, alice, bob):
    create(client, alice, name="SHARED_NAME", value="alice-value")
    create(client, bob, name="SHARED_NAME", value="bob-value")
    hook = state(app).host.hook
    with app.app_context():
        assert hook.get_variable(user_id=alice.id, name="SHARED_NAME") == "alice-value"
        assert hook.get_variable(user_id=bob.id, name="SHARED_NAME") == "bob-value"
        assert hook.get_variable(user_id=alice.id, name="MISSING") is None
        assert hook.get_variable(user_id=str(uuid.uuid4()), name="SHARED_NAME") is None
        assert hook.get_variable(user_id="nonsense", name="SHARED_NAME") is None


def test_deleting_a_user_deletes_their_variables(app, client, admin):
    carol = make_user(client, admin, username="carol")
    create(client, carol, name="C1")
    create(client, admin, name="ADMIN_VAR")
    assert client.delete(f"/api/v1/users/{carol.id}", headers=admin.bearer).status_code == 200
    rows = stored_rows(app)
    assert [r.name for r in rows] == ["ADMIN_VAR"]


def test_a_different_secret_key_cannot_read_values(make_app, app, client, alice):
    create(client, alice, name="K", value="secret-value")
    other = make_app(plugins=["accounts", "variables"], secret_key="a-completely-different-key-0123456789abcdef")
    with other.app_context():
        assert state(other).host.hook.get_variable(user_id=alice.id, name="K") is None
