"""Render a component's entry of docs/components.md from its class (the docs test compares them)."""

from __future__ import annotations

from typing import Any


def _flags(field: dict[str, Any]) -> str:
    flags = []
    if field.get("required"):
        flags.append("req")
    if field.get("advanced"):
        flags.append("adv")
    if not field.get("show", True):
        flags.append("hid")
    if field.get("list"):
        flags.append("list")
    if field.get("load_from_db") and field.get("password"):
        flags.append("db")
    return " " + ",".join(flags) if flags else ""


def render(klass: type) -> str:
    node = klass.to_frontend_node()
    marks = [m for m, on in (("legacy", node["legacy"]), ("beta", node["beta"])) if on]
    head = f"### `{klass.key}` — {node['display_name']}" + (f" ({', '.join(marks)})" if marks else "")
    parts = []
    for name in node["field_order"]:
        field = node["template"][name]
        text = f"`{name}`: {field['type']}"
        if field.get("input_types"):
            text += f" {field['input_types']}"
        value = field.get("value")
        if value not in ("", None, [], {}) and not field.get("password"):
            text += f" = `{value!r}`"
        parts.append(text + _flags(field))
    outputs = [f"`{o['name']}` -> {'/'.join(o['types'])} ({o['method']})" for o in node["outputs"]]
    lines = [head, "", node["description"], "", f"- inputs: {'; '.join(parts) if parts else 'none'}"]
    lines.append(f"- outputs: {'; '.join(outputs)}")
    return "\n".join(lines)
