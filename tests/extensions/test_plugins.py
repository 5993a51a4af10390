"""Plugins switched on and off at run time: routes, OpenAPI, tables kept, migrations first, CLI."""

from __future__ import annotations

import time

import sqlalchemy as sa
from werkzeug.test import Client

from core import plugin_state
from core.app import state
from core.holder import AppHolder
from tests.conftest import superuser


def settle(holder: AppHolder) -> None:
    """Let the holder's next request look at the shared generations."""
    time.sleep(holder.check_interval + 0.05)


def paths(client: Client) -> set[str]:
    return set(client.get("/openapi.json").get_json()["paths"])


def test_disable_and_enable_change_routes_and_openapi_in_every_process_and_keep_the_data(make_app):
    first = AppHolder(make_app, disabled_plugins=("variables",))
    second = AppHolder(make_app, disabled_plugins=("variables",))  # another web process of the deployment
    one, two = Client(first), Client(second)
    token = one.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert one.get("/api/v1/variables/", headers=bearer).status_code == 404
    assert "/api/v1/variables/" not in paths(one)

    response = one.post("/api/v1/extensions/plugins/variables/enable", headers=bearer)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["enabled"] is True
    engine = state(first.app).engine
    assert "variables_variable" in sa.inspect(engine).get_table_names()  # migrated before anyone serves it
    settle(first)
    for client in (one, two):
        assert client.get("/api/v1/variables/", headers=bearer).status_code == 200
        assert "/api/v1/variables/" in paths(client)
    created = two.post(
        "/api/v1/variables/",
        json={"name": "KEEP_ME", "value": "v", "type": "Generic", "default_fields": []},
        headers=bearer,
    )
    assert created.status_code == 201, created.get_json()

    listing = one.get("/api/v1/extensions/plugins", headers=bearer).get_json()
    row = next(p for p in listing["plugins"] if p["name"] == "variables")
    assert row["enabled"] is True and row["stored"] is True and row["loaded"] is True
    assert listing["process_generation"] == listing["generation"]

    assert two.post("/api/v1/extensions/plugins/variables/disable", headers=bearer).status_code == 200
    settle(first)
    for client in (one, two):
        assert client.get("/api/v1/variables/", headers=bearer).status_code == 404
        assert "/api/v1/variables/" not in paths(client)
    with engine.connect() as conn:  # switched off, not uninstalled: the table and its rows stay
        assert conn.execute(sa.text("SELECT count(*) FROM variables_variable")).scalar() == 1

    assert one.post("/api/v1/extensions/plugins/variables/enable", headers=bearer).status_code == 200
    settle(first)
    names = [v["name"] for v in two.get("/api/v1/variables/", headers=bearer).get_json()]
    assert "KEEP_ME" in names


def test_switching_is_for_superusers_and_known_plugins(make_app):
    from tests.conftest import make_user

    app = make_app(plugins=["accounts", "extensions", "standard"])
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    assert client.post("/api/v1/extensions/plugins/variables/disable", headers=alice.bearer).status_code == 403
    assert client.get("/api/v1/extensions/plugins", headers=alice.bearer).status_code == 403
    assert client.post("/api/v1/extensions/plugins/nope/disable", headers=admin.bearer).status_code == 404
    assert client.post("/api/v1/extensions/plugins/variables/explode", headers=admin.bearer).status_code == 404
    assert client.post("/api/v1/extensions/plugins/extensions/disable", headers=admin.bearer).status_code == 409
    assert plugin_state.overrides(state(app).engine) == {}


def test_the_cli_switches_and_lists_per_generation(make_app):
    app = make_app(plugins=["accounts", "extensions", "variables", "standard"])
    runner = app.test_cli_runner()
    out = runner.invoke(args=["plugins", "disable", "variables"])
    assert out.exit_code == 0, out.output
    assert "variables disabled" in out.output
    assert plugin_state.overrides(state(app).engine) == {"variables": False}
    listing = runner.invoke(args=["plugins", "list"])
    assert "plugin generation 1 (this process built for 0)" in listing.output
    assert any(line.split()[:2] == ["variables", "disabled"] for line in listing.output.splitlines())
    rebuilt = make_app(plugins=["accounts", "extensions", "variables", "standard"])
    assert "variables" not in {i.name for i in state(rebuilt).host.list()}
    bad = runner.invoke(args=["plugins", "enable", "no-such-plugin"])
    assert bad.exit_code != 0 and "No installed plugin" in bad.output


def test_flows_using_components_reads_nodes_not_text(app, client, admin):
    from tests.run.runkit import create_flow, flow_data, node

    create_flow(client, admin, flow_data([node("ChatInput", "ChatInput-1", input_value='say "ChatOutput"')], []))
    with app.app_context():
        from service_extensions import hookspecs

        from core.contracts import NodeRef

        hooks = state(app).host.hooks
        found = hooks.each(hookspecs.flows_using_components, component_keys=["ChatOutput", "ChatInput"])
        [[flow]] = found
        assert flow.nodes == (NodeRef(id="ChatInput-1", type="ChatInput"),)
        assert hooks.each(hookspecs.flows_using_components, component_keys=["ChatOutput"]) == [[]]
