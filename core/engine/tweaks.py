"""``SERVICE_TWEAKS_POLICY`` and the tweak/input checks run before a flow is built.

The engine's, so every run path enforces the same rule: the web service (:mod:`core.runs`, which
answers :class:`RunRefused` as ``{"detail": ...}`` with its status) and the executor (``service_exec``)
alike. Nothing here imports a web framework.

Policies:

* ``permissive`` (default, as the reference): any tweak is applied.
* ``declared``: a tweak is applied only to template fields the flow's author
  declared editable by API, i.e. whose stored template field carries
  ``"api_editable": true``. A component-scoped tweak (``{"<node id or display
  name>": {"<field>": value}}``) must name an existing component and a field
  that is declared on every component it matches; a top-level tweak
  (``{"<field>": value}``, applied to every component having that field) must
  be declared on every component that has the field, and on at least one.
* ``off``: no tweak at all is accepted (an empty ``tweaks`` object is fine).

A refused tweak answers 422 ``{"detail": {"code": "TWEAKS_REFUSED", "message",
"policy", "refused": [{"component", "field", "reason"}]}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.engine.errors import RunRefused

__all__ = [
    "INPUT_CONFLICT",
    "POLICIES",
    "TWEAKS_REFUSED",
    "InputConflict",
    "TweaksRefused",
    "check_input_conflict",
    "check_tweaks",
    "parse_policy",
    "refused_tweaks",
]

#: the values of ``SERVICE_TWEAKS_POLICY`` (the first is the default)
POLICIES = ("permissive", "declared", "off")
POLICY_VARIABLE = "SERVICE_TWEAKS_POLICY"
TWEAKS_REFUSED = "TWEAKS_REFUSED"
INPUT_CONFLICT = {
    "chat": "If you pass an input_value to the chat input, you cannot pass a tweak with the same name.",
    "text": "If you pass an input_value to the text input, you cannot pass a tweak with the same name.",
}
_INPUT_KEYS = {"chat": ("ChatInput", "Chat Input"), "text": ("TextInput", "Text Input")}


class TweaksRefused(RunRefused):
    """422 ``{"code": "TWEAKS_REFUSED", "message", "policy", "refused": [{"component", "field", "reason"}]}``."""

    def __init__(self, policy: str, refused: list[dict[str, str]]) -> None:
        names = ", ".join(f"{r['component']}.{r['field']}" if r["component"] else r["field"] for r in refused)
        message = f"Tweaks refused by {POLICY_VARIABLE}={policy}: {names}"
        super().__init__(422, {"code": TWEAKS_REFUSED, "message": message, "policy": policy, "refused": refused})


class InputConflict(RunRefused):
    """400: the body's ``input_value`` and a tweak of the same input component both set ``input_value``."""

    def __init__(self, kind: str) -> None:
        super().__init__(400, INPUT_CONFLICT[kind])


def parse_policy(raw: str | None, variable: str = POLICY_VARIABLE) -> str:
    """``SERVICE_TWEAKS_POLICY`` as :mod:`core.settings` reads it: trimmed, any case, unset is ``permissive``.

    Raises ``ValueError`` naming the variable for any other value (what ``SettingsError`` says).
    """
    if raw is None:
        return POLICIES[0]
    text = raw.strip()
    for choice in POLICIES:
        if text.lower() == choice:
            return choice
    raise ValueError(f"{variable}: must be one of {', '.join(POLICIES)}, got {raw!r}")


def _nodes(flow_data: Mapping[str, Any]) -> list[tuple[str, str, str, Mapping[str, Any]]]:
    """``(id, type, display name, template)`` of every component node (notes skipped)."""
    out: list[tuple[str, str, str, Mapping[str, Any]]] = []
    for node in flow_data.get("nodes") or []:
        if not isinstance(node, Mapping) or node.get("type") == "noteNode":
            continue
        data: Mapping[str, Any] = node["data"] if isinstance(node.get("data"), Mapping) else {}
        fnode: Mapping[str, Any] = data["node"] if isinstance(data.get("node"), Mapping) else {}
        template: Mapping[str, Any] = fnode["template"] if isinstance(fnode.get("template"), Mapping) else {}
        node_id = str(node.get("id") or data.get("id") or "")
        display = str(fnode.get("display_name") or data.get("display_name") or "")
        out.append((node_id, str(data.get("type") or ""), display, template))
    return out


def _matching(nodes: list[tuple[str, str, str, Mapping[str, Any]]], key: str) -> list[tuple[str, str, str, Any]]:
    by_id = [n for n in nodes if n[0] == key]
    return by_id or [n for n in nodes if n[2] == key]


def _declared(template: Mapping[str, Any], field: str) -> bool:
    entry = template.get(field)
    return isinstance(entry, Mapping) and entry.get("api_editable") is True


def refused_tweaks(flow_data: Mapping[str, Any], tweaks: Mapping[str, Any] | None, policy: str) -> list[dict[str, str]]:
    """The tweaks ``policy`` refuses (empty list: all accepted)."""
    if not tweaks or policy == "permissive":
        return []
    refused: list[dict[str, str]] = []
    if policy == "off":
        for key, value in tweaks.items():
            if isinstance(value, Mapping):
                refused.extend({"component": key, "field": f, "reason": "tweaks are disabled"} for f in value)
                if not value:
                    refused.append({"component": key, "field": "", "reason": "tweaks are disabled"})
            else:
                refused.append({"component": "", "field": key, "reason": "tweaks are disabled"})
        return refused
    nodes = _nodes(flow_data)
    for key, value in tweaks.items():
        if isinstance(value, Mapping):
            matched = _matching(nodes, key)
            if not matched:
                refused.extend({"component": key, "field": f, "reason": "no such component"} for f in value)
                continue
            for field in value:
                if not all(_declared(n[3], field) for n in matched):
                    refused.append({"component": key, "field": field, "reason": "field is not declared api_editable"})
        else:
            having = [n for n in nodes if key in n[3]]
            if not having or not all(_declared(n[3], key) for n in having):
                refused.append({"component": "", "field": key, "reason": "field is not declared api_editable"})
    return refused


def check_tweaks(flow_data: Mapping[str, Any], tweaks: Mapping[str, Any] | None, policy: str) -> None:
    """Raise :class:`TweaksRefused` (422 ``TWEAKS_REFUSED``) when ``policy`` refuses any tweak."""
    refused = refused_tweaks(flow_data, tweaks, policy)
    if refused:
        raise TweaksRefused(policy, refused)


def check_input_conflict(
    flow_data: Mapping[str, Any], tweaks: Mapping[str, Any] | None, input_value: str | None, input_type: str
) -> None:
    """:class:`InputConflict` (400) when the body's ``input_value`` and a tweak of the same input component
    both set ``input_value``."""
    if input_value is None or not tweaks:
        return
    kinds = ("chat", "text") if input_type == "any" else (input_type,)
    nodes = None
    for key, value in tweaks.items():
        if not isinstance(value, Mapping) or value.get("input_value") is None:
            continue
        for kind in kinds:
            if kind not in _INPUT_KEYS:
                continue
            hit = any(word in key for word in _INPUT_KEYS[kind])
            if not hit:
                nodes = nodes if nodes is not None else _nodes(flow_data)
                hit = any(n[1] == _INPUT_KEYS[kind][0] for n in _matching(nodes, key))
            if hit:
                raise InputConflict(kind)
