"""Allow anonymous public access only on hosts of a deployment-owned allowlist, resolving a tenant.

``SERVICE_AUTHZ_HOSTS_ALLOWLIST`` maps hosts to tenants: ``flows.example.com=acme,demo.example.org=demo``.
A request whose host is not in it is denied; a listed host is allowed and its tenant is the
*mapped* value, so the raw ``Host`` header is only ever a lookup key, never a tenant identity.
The tenant is kept on ``flask.g.public_tenant`` for the rest of the request. Ports are ignored
(``flows.example.com:8443`` matches ``flows.example.com``); matching is case-insensitive.

Use it instead of the default ``authz`` plugin: ``SERVICE_AUTHZ_ENABLED=true``,
``SERVICE_DISABLED_PLUGINS=authz``, and this plugin installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import hookimpl
from core.records import Permission, SettingsSection

PUBLIC_ACTION = "flows.public_access"


@dataclass(frozen=True)
class HostsConfig:
    #: ``host=tenant`` pairs, comma-separated
    allowlist: tuple[str, ...] = ()


def tenants(config: HostsConfig) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in config.allowlist:
        host, sep, tenant = entry.partition("=")
        if sep and host.strip() and tenant.strip():
            out[host.strip().lower()] = tenant.strip()
    return out


def tenant_for(host: str | None, config: HostsConfig) -> str | None:
    if not host:
        return None
    name = host.strip().lower()
    if name.startswith("["):  # [v6]:port
        name = name.split("]")[0] + "]"
    elif name.count(":") == 1:
        name = name.split(":")[0]
    return tenants(config).get(name)


@hookimpl
def register_settings():
    return [SettingsSection("authz_hosts", HostsConfig, "SERVICE_AUTHZ_HOSTS_")]


@hookimpl
def permission_allowed(actor: Any, action: str, resource: Any) -> Permission | None:
    if action != PUBLIC_ACTION or actor is not None:
        return None
    from core.appstate import plugin_settings

    config: HostsConfig = plugin_settings("authz_hosts")
    host = resource.get("host") if isinstance(resource, dict) else None
    tenant = tenant_for(host, config)
    if tenant is None:
        return Permission(False, "host not in the deployment allowlist")
    from flask import g, has_request_context

    if has_request_context():
        g.public_tenant = tenant
    return Permission(True, f"tenant {tenant}")
