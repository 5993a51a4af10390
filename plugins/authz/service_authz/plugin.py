"""Deny public principals (``flows.public_access``). Replace this plugin to allow them.

The flows plugin asks ``permission_allowed(actor=None, action="flows.public_access",
resource={"flow_id", "grant", "host"})`` before an anonymous read or run, and only when
``SERVICE_AUTHZ_ENABLED=true``. Any deny wins, so a deployment that wants anonymous access
disables this plugin (``SERVICE_DISABLED_PLUGINS=authz``) and installs its own, such as the
example ``authz_hosts`` (docs/plugins/authz.md).
"""

from __future__ import annotations

from typing import Any

from core import hookimpl
from core.records import Permission

PUBLIC_ACTION = "flows.public_access"


@hookimpl
def permission_allowed(actor: Any, action: str, resource: Any) -> Permission | None:
    if action == PUBLIC_ACTION and actor is None:
        return Permission(False, "the default authorization plugin denies public principals")
    return None
