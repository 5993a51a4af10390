"""``service flows export --dir`` / ``service flows import --dir [--dry-run]``: dev -> Git -> prod."""

from __future__ import annotations

import json

from tests.conftest import make_user, superuser
from tests.versions.vkit import create, graph


def _instance(make_app, tmp_path, name):
    app = make_app(plugins=["accounts", "flows", "versions"], database_url=f"sqlite:///{tmp_path}/{name}.db")
    client = app.test_client()
    return app, client, make_user(client, superuser(client), username=f"team-{name}")


def _text(flow):
    return flow["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"]


def test_export_edit_dry_run_import_round_trip(make_app, tmp_path):
    dev, dev_client, dev_user = _instance(make_app, tmp_path, "dev")
    prod, prod_client, prod_user = _instance(make_app, tmp_path, "prod")
    project = dev_client.post("/api/v1/projects/", json={"name": "Support"}, headers=dev_user.bearer).get_json()
    data = graph("hello")
    data["nodes"][0]["selected"] = True
    flow = create(dev_client, dev_user, data, name="Support bot", folder_id=project["id"])
    repo = tmp_path / "repo"

    exported = dev.test_cli_runner().invoke(args=["flows", "export", "--dir", str(repo), "--user-id", dev_user.id])
    assert exported.exit_code == 0, exported.output
    path = repo / f"{flow['id']}.json"
    text = path.read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"  # stable form
    assert doc["project"] == "Support" and doc["name"] == "Support bot"
    for volatile in ("updated_at", "version_token", "user_id", "folder_id", "workspace_id"):
        assert volatile not in doc
    assert "selected" not in doc["data"]["nodes"][0]
    assert "sk-secret" not in text  # secret values blanked
    again = dev.test_cli_runner().invoke(args=["flows", "export", "--dir", str(repo), "--user-id", dev_user.id])
    assert again.exit_code == 0 and path.read_text() == text  # nothing volatile: a second export is identical

    # first promotion: a dry run writes nothing, then the import creates the flow with its id
    args = ["flows", "import", "--dir", str(repo), "--user-id", prod_user.id]
    dry = prod.test_cli_runner().invoke(args=[*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert f"would create Support bot ({flow['id']})" in dry.output
    assert prod_client.get(f"/api/v1/flows/{flow['id']}", headers=prod_user.bearer).status_code == 404
    done = prod.test_cli_runner().invoke(args=args)
    assert done.exit_code == 0 and "1 create" in done.output, done.output
    landed = prod_client.get(f"/api/v1/flows/{flow['id']}", headers=prod_user.bearer).get_json()
    assert _text(landed) == "hello"
    projects = prod_client.get("/api/v1/projects/", headers=prod_user.bearer).get_json()
    assert landed["folder_id"] in {p["id"] for p in projects if p["name"] == "Support"}
    # prod sets its own credential
    landed["data"]["nodes"][0]["data"]["node"]["template"]["api_key"]["value"] = "sk-prod-credential"
    prod_client.patch(f"/api/v1/flows/{flow['id']}", json={"data": landed["data"]}, headers=prod_user.bearer)

    # a reviewed change in Git
    doc["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] = "hello, reviewed"
    path.write_text(json.dumps(doc, sort_keys=True, indent=2) + "\n")
    dry = prod.test_cli_runner().invoke(args=[*args, "--dry-run"])
    assert f"would update Support bot ({flow['id']}): data" in dry.output, dry.output
    assert _text(prod_client.get(f"/api/v1/flows/{flow['id']}", headers=prod_user.bearer).get_json()) == "hello"
    done = prod.test_cli_runner().invoke(args=args)
    assert done.exit_code == 0 and "1 update" in done.output, done.output
    updated = prod_client.get(f"/api/v1/flows/{flow['id']}", headers=prod_user.bearer).get_json()
    assert _text(updated) == "hello, reviewed"
    template = updated["data"]["nodes"][0]["data"]["node"]["template"]
    assert template["api_key"]["value"] == "sk-prod-credential"  # the target's secret survives promotion
    # the import is a version in the target's history, and a second import changes nothing
    entries = prod_client.get(f"/api/v1/flows/{flow['id']}/versions/", headers=prod_user.bearer).get_json()["entries"]
    assert len(entries) >= 2
    same = prod.test_cli_runner().invoke(args=[*args, "--dry-run"])
    assert f"unchanged Support bot ({flow['id']})" in same.output and "0 update" in same.output


def test_import_refuses_files_that_are_not_flows(make_app, tmp_path):
    app, _client, user = _instance(make_app, tmp_path, "one")
    repo = tmp_path / "bad"
    repo.mkdir()
    (repo / "x.json").write_text('{"id": "nope", "name": "x"}')
    result = app.test_cli_runner().invoke(args=["flows", "import", "--dir", str(repo), "--user-id", user.id])
    assert result.exit_code != 0 and "x.json: not a flow file" in result.output
