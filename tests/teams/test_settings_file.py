"""``service settings export/diff/apply``: users, teams, roles and policies as one reviewable file."""

from __future__ import annotations

import json

from core import hookimpl
from core.settings_file import settings_group
from tests.conftest import make_user, superuser

PLUGINS = ["accounts", "flows", "policies", "teams"]


def _run(app, *args):
    return app.test_cli_runner().invoke(settings_group, list(args))


def test_export_diff_apply_round_trip(make_app, tmp_path):
    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    root = superuser(client)
    alice, bob = make_user(client, root, username="alice"), make_user(client, root, username="bob")
    body = {"team_name": "Support", "adom_name": "support"}
    team = client.post("/api/v1/authz/teams", json=body, headers=root.bearer)
    client.post(f"/api/v1/authz/teams/{team.get_json()['id']}/members", json={"user_id": alice.id}, headers=root.bearer)

    exported = _run(app, "export")
    assert exported.exit_code == 0, exported.output
    data = json.loads(exported.output)
    assert list(data) == sorted(data) and data["format"] == 1
    assert {"users", "teams", "roles", "role_assignments", "policies"} <= set(data)
    assert "password" not in exported.output and "hash" not in exported.output
    assert data["teams"] == [
        {"adom_name": "support", "team_name": "Support", "description": None, "is_active": True, "members": [alice.id]}
    ]
    assert [u["username"] for u in data["users"]] == sorted(u["username"] for u in data["users"])

    # the reviewed change: bob joins support, a custom role given to bob, carol added, alice made superuser,
    # a component blocked
    data["teams"][0]["members"] = sorted([alice.id, bob.id])
    data["roles"] = [{"name": "flow-runner", "description": None, "permissions": ["flow:execute", "flow:read"]}]
    data["role_assignments"] = [{"user_id": bob.id, "role": "flow-runner", "domain_type": "global", "domain_id": None}]
    data["users"].append({"username": "carol", "is_active": True, "is_superuser": False})
    next(u for u in data["users"] if u["username"] == "alice")["is_superuser"] = True
    data["policies"]["components"] = ["PythonREPLComponent"]
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data))

    diff = _run(app, "diff", str(path))
    assert diff.exit_code == 1, diff.output
    assert diff.output.splitlines() == sorted(
        [
            "policies: components +['PythonREPLComponent'] -[]",
            f"role_assignments: give flow-runner to {bob.id} (global)",
            "roles: add flow-runner ['flow:execute', 'flow:read']",
            f"teams: add member {bob.id} to support",
            "users: add carol (is_active)",
            "users: change alice (is_superuser True)",
        ]
    )
    assert json.loads(_run(app, "export").output)["teams"][0]["members"] == [alice.id]  # a diff changes nothing

    applied = _run(app, "apply", str(path))
    assert applied.exit_code == 0, applied.output
    assert "6 change(s) applied" in applied.output
    again = _run(app, "diff", str(path))
    assert again.exit_code == 0 and again.output.strip() == "no changes", again.output
    after = json.loads(_run(app, "export").output)
    assert after["teams"][0]["members"] == sorted([alice.id, bob.id])
    assert after["policies"]["components"] == ["PythonREPLComponent"]
    assert client.get("/api/v1/authz/teams", headers=bob.bearer).get_json()[0]["adom_name"] == "support"


def test_a_bad_file_is_refused_with_a_clear_message(make_app, tmp_path):
    app = make_app(plugins=PLUGINS)
    path = tmp_path / "s.json"
    for text, message in [
        ("not json", "is not JSON"),
        ('{"teams": []}', "is not a settings file"),
        ('{"format": 1, "groups": []}', "unknown sections"),
        ('{"format": 1, "teams": [{"team_name": "x"}]}', "each with a 'adom_name' string"),
        ('{"format": 1, "role_assignments": [{"user_id": "x", "role": "nope"}]}', "no role 'nope'"),
    ]:
        path.write_text(text)
        result = _run(app, "apply", str(path))
        assert result.exit_code != 0 and message in result.output, (text, result.output)


class ExtraSection:
    """A plugin owning one more section: exported with the others and told only of the file's sections."""

    def __init__(self) -> None:
        self.told: list[tuple[dict, bool]] = []

    @hookimpl
    def settings_export(self):
        return {"extra": {"b": 2, "a": 1}}

    @hookimpl
    def settings_apply(self, sections, dry_run):
        self.told.append((dict(sections), dry_run))
        return ["extra: changed"] if sections.get("extra") != {"a": 1, "b": 2} else []


def test_a_plugins_section_is_exported_and_applied(make_app, tmp_path):
    extra = ExtraSection()
    app = make_app(plugins=["accounts", ("extra", extra)])
    data = json.loads(_run(app, "export").output)
    assert list(data) == ["extra", "format", "users"] and data["extra"] == {"a": 1, "b": 2}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": 1, "extra": {"a": 3}}))
    diff = _run(app, "diff", str(path))
    assert diff.exit_code == 1 and diff.output.splitlines() == ["extra: changed"]
    assert extra.told[-1] == ({"extra": {"a": 3}}, True)
    assert _run(app, "apply", str(path)).output.splitlines() == ["extra: changed", "1 change(s) applied"]
    assert extra.told[-1] == ({"extra": {"a": 3}}, False)
