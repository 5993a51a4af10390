"""Secrets in flow data: template fields marked ``password``.

* :func:`blank_secrets` sets their values to None (``SERVICE_REMOVE_API_KEYS``
  before storing, and every export). A field with ``load_from_db`` true holds
  a variable *name*, not a secret, and is kept so the flow still resolves it.
* :func:`drop_secret_fields` removes those fields entirely (public read).

Both work on a deep copy, walk group nodes (``data.node.flow.data``) too, and
tolerate any shape: flow data is user input.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any


def iter_templates(data: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every node template of ``data`` (nested group flows included, depth-limited)."""
    if not isinstance(data, dict) or depth > 20:
        return
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        return
    for node in nodes:
        node_data = node.get("data") if isinstance(node, dict) else None
        inner = node_data.get("node") if isinstance(node_data, dict) else None
        if not isinstance(inner, dict):
            continue
        template = inner.get("template")
        if isinstance(template, dict):
            yield template
        group = inner.get("flow")
        if isinstance(group, dict):
            yield from iter_templates(group.get("data"), depth + 1)


def _is_secret(field: Any) -> bool:
    return isinstance(field, dict) and bool(field.get("password"))


def blank_secrets(data: Any) -> Any:
    """A copy of ``data`` with the value of every password field set to None (variable references kept)."""
    if not isinstance(data, dict):
        return data
    data = copy.deepcopy(data)
    for template in iter_templates(data):
        for field in template.values():
            if _is_secret(field) and not field.get("load_from_db") and "value" in field:
                field["value"] = None
    return data


def drop_secret_fields(data: Any) -> Any:
    """A copy of ``data`` without any template field marked password."""
    if not isinstance(data, dict):
        return data
    data = copy.deepcopy(data)
    for template in iter_templates(data):
        for key in [k for k, v in template.items() if _is_secret(v)]:
            del template[key]
    return data
