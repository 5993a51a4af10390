"""The example host-allowlist authorization plugin, tested where it lives (pytest collects ``plugins/*/tests``).

The app under test has exactly the plugins named below (``make_app`` comes with the core's pytest plugin);
``tests.conftest`` holds the repository's user helpers.
"""

from __future__ import annotations

from typing import Any

from service_authz_hosts.plugin import HostsConfig, tenant_for, tenants

from tests.conftest import make_user, superuser

#: the plugin, what it authorizes (the flows plugin's public reads), and the callers' accounts
PLUGINS = ["accounts", "flows", "authz_hosts"]


def _flow(client: Any, caller: Any) -> str:
    body = {"name": "flow", "data": {"nodes": [], "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}}
    response = client.post("/api/v1/flows/", json=body, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["id"])


def _share(client: Any, caller: Any, flow_id: str) -> Any:
    return client.post(f"/api/v1/flows/{flow_id}/shares", json={}, headers=caller.bearer)


def test_authz_hosts_example_plugin(make_app):
    app = make_app(
        plugins=PLUGINS,
        authz_enabled=True,
        authz_hosts_allowlist="flows.example.com=acme,demo.example.org=demo",
    )
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    flow_id = _flow(client, alice)
    _share(client, alice, flow_id)
    url = f"/api/v1/flows/public_flow/{flow_id}"
    assert client.get(url, headers={"Host": "flows.example.com"}).status_code == 200
    assert client.get(url, headers={"Host": "FLOWS.example.com:8443"}).status_code == 200
    assert client.get(url, headers={"Host": "evil.example.net"}).status_code == 403
    assert client.get(url, headers={"Host": "acme"}).status_code == 403  # a tenant name is not a host
    assert client.get(url).status_code == 403  # localhost is not listed


def test_the_allowlist_maps_hosts_to_tenants():
    config = HostsConfig(("Flows.Example.com=acme", " demo.example.org = demo ", "no-tenant=", "=orphan", "junk"))
    assert tenants(config) == {"flows.example.com": "acme", "demo.example.org": "demo"}
    assert tenant_for("flows.example.com:8443", config) == "acme"
    assert tenant_for("DEMO.example.org", config) == "demo"
    assert tenant_for("no-tenant", config) is None
    assert tenant_for("", config) is None and tenant_for(None, config) is None
    v6 = HostsConfig(("[::1]=loop",))
    assert tenant_for("[::1]:7860", v6) == "loop" and tenant_for("[::1]", v6) == "loop"
