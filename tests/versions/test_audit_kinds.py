"""Every kind of change the issue lists has its audit entry (issue 31): flows, versions and publishing,
projects, variables (names only), API keys, shares, policies, users and plugins. One table: each row does
one action through the API and names the entry it must leave (action, resource type, resource id); the
test finds each in the audit API, and no secret value anywhere in the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import make_user, superuser
from tests.versions.vkit import create, graph, save

PLUGINS = ["accounts", "flows", "variables", "versions", "policies", "extensions"]
SECRETS = ("sk-created-secret", "sk-rotated-secret", "S3cret-Passw0rd!", "New-Passw0rd-42")


class Ctx:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.admin = superuser(client)
        self.alice = make_user(client, self.admin, username="alice")
        self.ids: dict[str, str] = {}

    def call(self, method: str, path: str, status: int, body: Any = None, who: Any = None) -> Any:
        response = self.client.open(path, method=method, json=body, headers=(who or self.alice).bearer)
        body = response.get_json() if response.get_data() else None
        assert response.status_code == status, (path, body)
        return body

    def version(self, number: int) -> str:
        listed = self.call("GET", f"/api/v1/flows/{self.ids['flow']}/versions/", 200)["entries"]
        return next(v["id"] for v in listed if v["version_number"] == number)


def _flow_create(c: Ctx) -> str:
    c.ids["flow"] = create(c.client, c.alice, graph("a"), name="audited")["id"]
    return c.ids["flow"]


def _flow_write(c: Ctx) -> str:
    assert save(c.client, c.alice, c.ids["flow"], graph("b")).status_code == 200
    return c.ids["flow"]


def _version_create(c: Ctx) -> str:
    c.call("POST", f"/api/v1/flows/{c.ids['flow']}/versions/", 201, {"description": "named"})
    return c.ids["flow"]


def _publish(c: Ctx) -> str:
    c.call("POST", f"/api/v1/flows/{c.ids['flow']}/publish", 200, {})
    return c.ids["flow"]


def _rollback(c: Ctx) -> str:
    save(c.client, c.alice, c.ids["flow"], graph("c"))
    c.call("POST", f"/api/v1/flows/{c.ids['flow']}/publish", 200, {})
    c.call("POST", f"/api/v1/flows/{c.ids['flow']}/publish", 200, {"version_id": c.version(1)})
    return c.ids["flow"]


def _restore(c: Ctx) -> str:
    c.call("POST", f"/api/v1/flows/{c.ids['flow']}/versions/{c.version(1)}/activate", 200)
    return c.ids["flow"]


def _unpublish(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/flows/{c.ids['flow']}/publish", 200)
    return c.ids["flow"]


def _version_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/flows/{c.ids['flow']}/versions/{c.version(2)}", 204)
    return c.ids["flow"]


def _share_create(c: Ctx) -> str:
    share = c.call("POST", f"/api/v1/flows/{c.ids['flow']}/shares", 201, {})
    c.ids["share"] = str(share["id"])
    return c.ids["share"]


def _share_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/flows/{c.ids['flow']}/shares/{c.ids['share']}", 204)
    return c.ids["share"]


def _flow_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/flows/{c.ids['flow']}", 200)
    return c.ids["flow"]


def _project_create(c: Ctx) -> str:
    c.ids["project"] = c.call("POST", "/api/v1/projects/", 201, {"name": "proj"})["id"]
    return c.ids["project"]


def _project_write(c: Ctx) -> str:
    c.call("PATCH", f"/api/v1/projects/{c.ids['project']}", 200, {"name": "proj 2"})
    return c.ids["project"]


def _project_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/projects/{c.ids['project']}", 204)
    return c.ids["project"]


def _variable_create(c: Ctx) -> str:
    body = {"name": "OPENAI_KEY", "value": SECRETS[0], "type": "Credential", "default_fields": []}
    c.ids["variable"] = c.call("POST", "/api/v1/variables/", 201, body)["id"]
    return c.ids["variable"]


def _variable_write(c: Ctx) -> str:
    body = {"id": c.ids["variable"], "value": SECRETS[1]}
    c.call("PATCH", f"/api/v1/variables/{c.ids['variable']}", 200, body)
    return c.ids["variable"]


def _variable_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/variables/{c.ids['variable']}", 204)
    return c.ids["variable"]


def _api_key_create(c: Ctx) -> str:
    made = c.call("POST", "/api/v1/api_key/", 200, {"name": "ci"})
    c.ids["key"], c.ids["key_value"] = str(made["id"]), made["api_key"]
    return c.ids["key"]


def _api_key_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/api_key/{c.ids['key']}", 200)
    return c.ids["key"]


def _policy_write(c: Ctx) -> str:
    c.call("PUT", "/api/v1/catalog-policy/components", 200, {"blocked": ["ChatOutput"]}, who=c.admin)
    return "components"


def _user_create(c: Ctx) -> str:
    made = c.call("POST", "/api/v1/users/", 201, {"username": "carol", "password": SECRETS[2]}, who=c.admin)
    c.ids["user"] = made["id"]
    return c.ids["user"]


def _user_write(c: Ctx) -> str:
    c.call("PATCH", f"/api/v1/users/{c.ids['user']}", 200, {"is_active": True, "password": SECRETS[3]}, who=c.admin)
    return c.ids["user"]


def _user_delete(c: Ctx) -> str:
    c.call("DELETE", f"/api/v1/users/{c.ids['user']}", 200, who=c.admin)
    return c.ids["user"]


def _plugin_disable(c: Ctx) -> str:
    c.call("POST", "/api/v1/extensions/plugins/policies/disable", 200, who=c.admin)
    return "policies"


def _plugin_enable(c: Ctx) -> str:
    c.call("POST", "/api/v1/extensions/plugins/policies/enable", 200, who=c.admin)
    return "policies"


def _plugin_cli(c: Ctx) -> str:
    runner = c.client.application.test_cli_runner()
    for action in ("disable", "enable"):
        done = runner.invoke(args=["plugins", action, "variables"])
        assert done.exit_code == 0, done.output
    return "variables"


#: (what is done, the entry's action, its resource type)
KINDS: list[tuple[Callable[[Ctx], str], str, str]] = [
    (_flow_create, "flow:create", "flow"),
    (_flow_write, "flow:write", "flow"),
    (_version_create, "flow:version_create", "flow"),
    (_publish, "flow:publish", "flow"),
    (_rollback, "flow:rollback", "flow"),
    (_restore, "flow:restore", "flow"),
    (_unpublish, "flow:unpublish", "flow"),
    (_version_delete, "flow:version_delete", "flow"),
    (_share_create, "share:create", "share"),
    (_share_delete, "share:delete", "share"),
    (_flow_delete, "flow:delete", "flow"),
    (_project_create, "project:create", "project"),
    (_project_write, "project:write", "project"),
    (_project_delete, "project:delete", "project"),
    (_variable_create, "variable:create", "variable"),
    (_variable_write, "variable:write", "variable"),
    (_variable_delete, "variable:delete", "variable"),
    (_api_key_create, "api_key:create", "api_key"),
    (_api_key_delete, "api_key:delete", "api_key"),
    (_policy_write, "policy:components:write", "policy"),
    (_user_create, "user:create", "user"),
    (_user_write, "user:write", "user"),
    (_user_delete, "user:delete", "user"),
    (_plugin_disable, "plugin:disable", "plugin"),
    (_plugin_enable, "plugin:enable", "plugin"),
    (_plugin_cli, "plugin:disable", "plugin"),  # `service plugins disable variables`
]


@pytest.fixture
def ctx(make_app):
    return Ctx(make_app(plugins=PLUGINS).test_client())


def test_every_kind_of_change_leaves_its_entry(ctx):
    expected = [(action, rtype, do(ctx)) for do, action, rtype in KINDS]
    response = ctx.client.get("/api/v1/audits/", query_string={"limit": 200}, headers=ctx.admin.bearer)
    assert response.status_code == 200, response.get_json()
    items = response.get_json()["items"]
    found = {(i["action"], i["resource_type"], str(i["resource_id"])) for i in items}
    missing = [row for row in expected if row not in found]
    assert not missing, missing
    dumped = json.dumps(items)
    for secret in (*SECRETS, ctx.ids["key_value"], ctx.alice.api_key):
        assert secret not in dumped
    by_cli = [i for i in items if i["resource_id"] == "variables" and i["action"].startswith("plugin:")]
    assert {i["action"] for i in by_cli} == {"plugin:disable", "plugin:enable"}
    assert all(i["details"] == {"via": "cli"} and i["actor"]["type"] == "system" for i in by_cli)
    variable = next(i for i in items if i["action"] == "variable:write")
    assert variable["resource_name"] == "OPENAI_KEY"
    # alice sees her own entries, not the superuser's user and policy changes
    mine = ctx.client.get("/api/v1/audits/", query_string={"limit": 200}, headers=ctx.alice.bearer).get_json()["items"]
    actions = {i["action"] for i in mine}
    assert "flow:create" in actions and "variable:delete" in actions
    assert not actions & {"policy:components:write", "plugin:disable"}
    assert ctx.ids["user"] not in {str(i["resource_id"]) for i in mine}  # carol's account is not hers
