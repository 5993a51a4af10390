"""Public read, secret stripping (SERVICE_REMOVE_API_KEYS and exports), example flows, notes, hooks."""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from importlib import resources

import sqlalchemy as sa

from core.app import state
from tests.conftest import make_user, superuser
from tests.flows.conftest import nested_template, secret_flow, template_of

URL = "/api/v1/flows/"
ALLOWED_COMPONENTS = {
    "ChatInput",
    "ChatOutput",
    "TextInput",
    "TextOutput",
    "Operations",
    "ParserComponent",
    "TypeConverterComponent",
    "Prompt",
    "Prompt Template",
    "Webhook",
    "note",
    # the starters of tests/flows/starter_flows.py (their nodes are checked against the catalog there)
    "LanguageModelComponent",
    "Memory",
    "File",
    "Agent",
    "CalculatorComponent",
    "APIRequest",
    "MCPTools",
}


def stored_data(app, flow_id):
    with state(app).engine.connect() as conn:
        raw = conn.execute(
            sa.text("SELECT data FROM flows_flow WHERE id = :i"),
            {"i": uuid.UUID(flow_id).hex if app_is_sqlite(app) else flow_id},
        ).scalar()
    return json.loads(raw) if isinstance(raw, str) else raw


def app_is_sqlite(app):
    return state(app).engine.dialect.name == "sqlite"


def test_public_read_strips_password_fields(client, alice):
    flow = client.post(URL, json=secret_flow(access_type="PUBLIC"), headers=alice.bearer).get_json()
    response = client.get(f"{URL}public_flow/{flow['id']}")  # no credentials at all
    assert response.status_code == 200
    body = response.get_json()
    assert body["public_access"] == {"can_read": True, "can_execute": True}
    template = template_of(body)
    assert "api_key" not in template and "var_key" not in template
    assert template["model"]["value"] == "gpt-x"
    assert "token" not in nested_template(body)
    text = response.get_data(as_text=True)
    assert "sk-live-123" not in text and "nested-secret" not in text
    assert body["user_id"] is None and body["folder_id"] is None
    # the owner still reads the full flow
    assert (
        template_of(client.get(URL + flow["id"], headers=alice.bearer).get_json())["api_key"]["value"] == "sk-live-123"
    )


def test_public_read_is_404_for_private_or_missing(client, alice):
    flow = client.post(URL, json=secret_flow(), headers=alice.bearer).get_json()
    assert client.get(f"{URL}public_flow/{flow['id']}").status_code == 404
    assert client.get(f"{URL}public_flow/{uuid.uuid4()}").status_code == 404
    assert client.get(f"{URL}public_flow/nope").status_code == 404
    client.patch(URL + flow["id"], json={"access_type": "PUBLIC"}, headers=alice.bearer)
    assert client.get(f"{URL}public_flow/{flow['id']}").status_code == 200
    client.patch(URL + flow["id"], json={"access_type": "PRIVATE"}, headers=alice.bearer)
    assert client.get(f"{URL}public_flow/{flow['id']}").status_code == 404


def test_exports_blank_secrets_but_keep_variable_references(client, alice):
    flow = client.post(URL, json=secret_flow(), headers=alice.bearer).get_json()
    exported = client.post(URL + "download/", json=[flow["id"]], headers=alice.bearer).get_json()
    template = template_of(exported)
    assert template["api_key"]["value"] is None
    assert template["var_key"]["value"] == "MY_VAR"
    assert template["model"]["value"] == "gpt-x"
    assert nested_template(exported)["token"]["value"] is None
    assert "sk-live-123" not in json.dumps(exported)
    second = client.post(URL, json=secret_flow("two"), headers=alice.bearer).get_json()
    archive = zipfile.ZipFile(
        io.BytesIO(client.post(URL + "download/", json=[flow["id"], second["id"]], headers=alice.bearer).get_data())
    )
    assert all(b"sk-live-123" not in archive.read(n) for n in archive.namelist())
    project_zip = client.get("/api/v1/projects/download/" + flow["folder_id"], headers=alice.bearer).get_data()
    archive = zipfile.ZipFile(io.BytesIO(project_zip))
    assert len(archive.namelist()) == 2
    assert all(b"sk-live-123" not in archive.read(n) for n in archive.namelist())


def test_remove_api_keys_strips_secrets_before_storing(make_app):
    app = make_app(plugins=["accounts", "flows"], remove_api_keys=True)
    client = app.test_client()
    admin = superuser(client)
    created = client.post(URL, json=secret_flow(), headers=admin.bearer)
    assert created.status_code == 201
    body = created.get_json()
    assert template_of(body)["api_key"]["value"] is None
    assert template_of(body)["var_key"]["value"] == "MY_VAR"
    assert nested_template(body)["token"]["value"] is None
    assert "sk-live-123" not in json.dumps(stored_data(app, body["id"]))
    assert "nested-secret" not in json.dumps(stored_data(app, body["id"]))
    client.patch(URL + body["id"], json={"data": secret_flow()["data"]}, headers=admin.bearer)
    assert "sk-live-123" not in json.dumps(stored_data(app, body["id"]))
    put = client.put(URL + str(uuid.uuid4()), json=secret_flow("put"), headers=admin.bearer).get_json()
    assert "sk-live-123" not in json.dumps(stored_data(app, put["id"]))
    upload = client.post(
        URL + "upload/",
        data={"file": (io.BytesIO(json.dumps(secret_flow("up")).encode()), "f.json")},
        headers=admin.bearer,
        content_type="multipart/form-data",
    ).get_json()
    assert "sk-live-123" not in json.dumps(stored_data(app, upload[0]["id"]))


def test_without_remove_api_keys_the_owner_keeps_secrets(app, client, alice):
    body = client.post(URL, json=secret_flow(), headers=alice.bearer).get_json()
    assert "sk-live-123" in json.dumps(stored_data(app, body["id"]))


def test_examples_are_readable_by_everyone_and_owned_by_nobody(client, alice, bob):
    anonymous = client.get(URL + "basic_examples/")
    assert anonymous.status_code == 200
    examples = anonymous.get_json()
    assert len(examples) >= 3
    assert all(e["user_id"] is None for e in examples)
    example = examples[0]
    for caller in (alice, bob):
        assert client.get(URL + example["id"], headers=caller.bearer).get_json()["data"] == example["data"]
    # not the user's: cannot be changed or deleted, never in a page or a count, never in projects
    assert client.patch(URL + example["id"], json={"name": "mine"}, headers=alice.bearer).status_code == 404
    assert client.delete(URL + example["id"], headers=alice.bearer).status_code == 404
    assert client.put(URL + example["id"], json={"name": "mine"}, headers=alice.bearer).status_code == 404
    assert client.delete(URL, json=[example["id"]], headers=alice.bearer).get_json() == {"deleted": 0}
    assert client.get(URL + "?get_all=false", headers=alice.bearer).get_json()["total"] == 0
    assert client.get(URL + "?remove_example_flows=true", headers=alice.bearer).get_json() == []
    projects = client.get("/api/v1/projects/", headers=alice.bearer).get_json()
    assert example["folder_id"] not in [p["id"] for p in projects]
    # duplicating an example gives the user an own copy
    copy = client.post(URL, json={"name": example["name"], "data": example["data"]}, headers=alice.bearer)
    assert copy.status_code == 201 and copy.get_json()["user_id"] == alice.id
    assert client.get(URL + example["id"], headers=alice.bearer).get_json()["user_id"] is None
    assert client.get(URL + "basic_examples/?include_blocked=true", headers=alice.bearer).status_code == 403


def test_starter_projects(client, alice):
    response = client.get("/api/v1/starter-projects/", headers=alice.bearer)
    assert response.status_code == 200
    projects = response.get_json()
    assert len(projects) >= 3
    assert all(set(p) == {"data", "is_component", "name", "name_key", "description", "endpoint_name"} for p in projects)
    assert client.get("/api/v1/starter-projects/").status_code == 403


def test_examples_use_only_components_this_service_has():
    folder = resources.files("service_flows") / "examples"
    files = [f for f in folder.iterdir() if f.name.endswith(".json")]
    assert len(files) >= 3
    for entry in files:
        data = json.loads(entry.read_text(encoding="utf-8"))["data"]
        node_ids = {n["id"] for n in data["nodes"]}
        for node in data["nodes"]:
            assert node["data"]["type"] in ALLOWED_COMPONENTS, (entry.name, node["data"]["type"])
        for edge in data["edges"]:
            assert edge["source"] in node_ids and edge["target"] in node_ids
            assert edge["data"]["sourceHandle"]["id"] == edge["source"]
            assert edge["data"]["targetHandle"]["id"] == edge["target"]


def test_note_translations(client, alice):
    examples = client.get(URL + "basic_examples/").get_json()
    echo = next(e for e in examples if e["name"] == "Basic Chat Echo")
    french = client.get(
        f"{URL}{echo['id']}/note_translations", headers={**alice.bearer, "Accept-Language": "fr-CA,fr;q=0.9"}
    )
    assert french.status_code == 200
    assert list(french.get_json()) == ["note-EchoN"]
    assert french.get_json()["note-EchoN"].startswith("## Écho")
    assert (
        client.get(f"{URL}{echo['id']}/note_translations", headers={**alice.bearer, "Accept-Language": "ja"}).get_json()
        == {}
    )
    plain = client.post(URL, json={"name": "n", "data": {"nodes": [], "edges": []}}, headers=alice.bearer).get_json()
    assert client.get(f"{URL}{plain['id']}/note_translations", headers=alice.bearer).get_json() == {}
    assert client.get(f"{URL}{uuid.uuid4()}/note_translations", headers=alice.bearer).status_code == 404


def test_find_flow_hook_is_owner_scoped(app, client, alice, bob):
    mine = client.post(URL, json={"name": "mine", "endpoint_name": "shared-name"}, headers=alice.bearer).get_json()
    theirs = client.post(
        URL, json={"name": "theirs", "endpoint_name": "shared-name", "access_type": "PUBLIC"}, headers=bob.bearer
    ).get_json()
    hook = state(app).host.hooks
    with app.app_context():
        assert hook.find_flow(user_id=alice.id, flow_id_or_name=mine["id"], public=False).name == "mine"
        assert hook.find_flow(user_id=alice.id, flow_id_or_name="shared-name", public=False).id == mine["id"]
        assert hook.find_flow(user_id=bob.id, flow_id_or_name="shared-name", public=False).id == theirs["id"]
        assert hook.find_flow(user_id=alice.id, flow_id_or_name=theirs["id"], public=False) is None
        assert hook.find_flow(user_id=alice.id, flow_id_or_name="nope", public=False) is None
        found = hook.find_flow(user_id=None, flow_id_or_name=theirs["id"], public=True)
        assert found is not None and found.id == theirs["id"] and found.access_type == "PUBLIC"
        assert set(found.as_dict()) >= {
            "id",
            "name",
            "user_id",
            "folder_id",
            "endpoint_name",
            "access_type",
            "webhook",
            "data",
        }
        assert hook.find_flow(user_id=None, flow_id_or_name=mine["id"], public=True) is None
        assert hook.find_flow(user_id=None, flow_id_or_name="shared-name", public=True) is None


def test_deleting_a_user_deletes_their_flows_and_projects(app, client, admin):
    carol = make_user(client, admin, username="carol")
    client.post("/api/v1/projects/", json={"name": "C"}, headers=carol.bearer)
    client.post(URL, json={"name": "c-flow"}, headers=carol.bearer)
    kept = client.post(URL, json={"name": "admin-flow"}, headers=admin.bearer).get_json()
    assert client.delete(f"/api/v1/users/{carol.id}", headers=admin.bearer).status_code == 200
    with state(app).engine.connect() as conn:
        flows = conn.execute(sa.text("SELECT name FROM flows_flow")).scalars().all()
        folders = conn.execute(sa.text("SELECT name FROM flows_folder")).scalars().all()
    assert flows == [kept["name"]]
    assert "C" not in folders and folders == ["Starter Project"]
