"""A flow tool's input schema, built from the flow's inputs, and the arguments of a call mapped onto the
run request (as the reference's ``json_schema_from_flow``: the Chat Input / Text Input components' fields).

The schema always has ``input_value`` (the message, given to the flow's Chat Inputs, or its Text Inputs
when it has no Chat Input, exactly as the run API's ``input_value`` / ``input_type``) and ``session_id``.
Then each Chat Input / Text Input field a caller may set: those ``SERVICE_TWEAKS_POLICY`` allows as
tweaks, asked of the run service's own rule (:mod:`core.runs.tweaks`, which the run applies to the call
again), and of those the fields declared ``api_editable`` or shown and not advanced (the reference's
rule for what a tool offers). So ``permissive`` offers the shown, non-advanced fields and the declared
ones, ``declared`` only the declared ones, ``off`` none.

A field is named by its field name; when two components have one, the later gets ``<field>__<node id>``.
Its JSON type follows the template field's type (``str`` -> string, ``int`` -> integer, ``float`` ->
number, ``bool`` -> boolean, ``dict`` -> object, ``list: true`` -> an array of it; ``options`` -> ``enum``);
file, code, secret and handle fields are never arguments. ``required`` lists the fields the template marks
required. A call's arguments become tweaks ``{node id: {field: value}}`` of the run request: the run service
applies them (its tweak policy and graph validation too), nothing is looked up or applied here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from core.runs.tweaks import refused_tweaks

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

INPUT_KEYS = ("ChatInput", "TextInput")
_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "NestedDict": "object",
}
_NEVER = {"code", "file", "other", "prompt", "link", "table"}
DEFAULT_INPUT = "Message to send to the flow"
_PLAIN = ("input_value", "session_id")  # always in the schema, always strings
SESSION = "Session (conversation) id; the flow id when omitted"
_Node = tuple[str, str, Mapping[str, Any]]  # (node id, component type, template)


@dataclass(frozen=True)
class ToolInputs:
    """The JSON schema of a flow tool, and how each extra argument reaches the run (node id, field)."""

    schema: dict[str, Any]
    targets: dict[str, tuple[str, str]] = field(default_factory=dict)
    input_type: str = "chat"

    @cached_property
    def validator(self) -> Draft202012Validator:
        from jsonschema import Draft202012Validator  # on a tool's first call, not at start-up

        return Draft202012Validator(self.schema)

    def problems(self, arguments: Mapping[str, Any]) -> list[str]:
        """What is wrong with a call's arguments against the schema (types, enums, required)."""
        if all(k in _PLAIN and isinstance(v, str) for k, v in arguments.items()) and all(
            r in arguments for r in self.schema["required"]
        ):
            return []  # the common call (a message, maybe a session): nothing for the validator to find
        found = []
        for err in sorted(self.validator.iter_errors(dict(arguments)), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in err.path)
            found.append(f"{where}: {err.message}" if where else err.message)
        return found


def _input_nodes(data: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(node id, key, template)`` of the flow's Chat Inputs then Text Inputs, in the flow's order."""
    found: list[tuple[str, str, Mapping[str, Any]]] = []
    for node in data.get("nodes") or []:
        if not isinstance(node, Mapping) or not isinstance(node.get("data"), Mapping):
            continue
        nd = node["data"]
        key = nd.get("type")
        inner = nd.get("node")
        fnode: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
        found_template = fnode.get("template")
        template: Mapping[str, Any] = found_template if isinstance(found_template, Mapping) else {}
        if key in INPUT_KEYS:
            found.append((str(node.get("id") or nd.get("id") or ""), str(key), template))
    return sorted(found, key=lambda n: INPUT_KEYS.index(n[1]))


def _json_type(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = spec.get("type")
    if (
        not isinstance(kind, str)
        or kind in _NEVER
        or spec.get("password")
        or spec.get("_input_type")
        in (
            "SecretStrInput",
            "HandleInput",
            "FileInput",
        )
    ):
        return None
    base = _TYPES.get(kind)
    if base is None:
        return None
    out: dict[str, Any] = {"type": base}
    options = spec.get("options")
    if isinstance(options, list) and options and all(isinstance(o, (str, int, float)) for o in options):
        out["enum"] = list(options)
    if spec.get("list") or spec.get("is_list"):
        out = {"type": "array", "items": out}
    return out


def _refused(data: Mapping[str, Any], nodes: list[_Node], policy: str) -> set[tuple[str, str]]:
    """``(node id, field)`` of the input fields ``SERVICE_TWEAKS_POLICY`` refuses as tweaks: asked of the
    run service's rule (:func:`core.runs.tweaks.refused_tweaks`), the one the run applies to the call."""
    asked = {node_id: {name: None for name in template} for node_id, _, template in nodes}
    return {(r["component"], r["field"]) for r in refused_tweaks(data, asked, policy)}


def _offered(spec: Any, allowed: bool) -> bool:
    """Whether a field the policy allows is an argument: declared ``api_editable``, or shown and not advanced."""
    if not allowed or not isinstance(spec, Mapping):
        return False
    return spec.get("api_editable") is True or (bool(spec.get("show", True)) and not spec.get("advanced", False))


def _describe(spec: Mapping[str, Any], name: str) -> str:
    text = spec.get("info") or spec.get("display_name")
    return str(text) if text else f"Input for {name}"


def tool_inputs(data: Mapping[str, Any] | None, policy: str) -> ToolInputs:
    """The tool's input schema and argument targets for a flow's ``data`` under tweak ``policy``."""
    nodes = _input_nodes(data or {})
    input_type = "text" if nodes and all(n[1] == "TextInput" for n in nodes) else "chat"
    primary = "TextInput" if input_type == "text" else "ChatInput"
    first = next((t for _, k, t in nodes if k == primary), None)
    value_spec = first.get("input_value") if first is not None else None
    properties: dict[str, Any] = {
        "input_value": {
            "type": "string",
            "description": _describe(value_spec, "input_value") if isinstance(value_spec, Mapping) else DEFAULT_INPUT,
        },
        "session_id": {"type": "string", "description": SESSION},
    }
    required: list[str] = ["input_value"] if isinstance(value_spec, Mapping) and value_spec.get("required") else []
    targets: dict[str, tuple[str, str]] = {}
    refused = _refused(data or {}, nodes, policy)
    for node_id, key, template in nodes:
        for name, spec in template.items():
            if key == primary and name == "input_value":
                continue  # the message: ``input_value`` above, given to every input of the primary kind
            if not _offered(spec, (node_id, name) not in refused):
                continue
            typed = _json_type(spec)
            if typed is None:
                continue
            prop = name if name not in properties else f"{name}__{node_id}"
            if prop in properties:
                continue
            properties[prop] = {**typed, "description": _describe(spec, name)}
            targets[prop] = (node_id, name)
            if spec.get("required"):
                required.append(prop)
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolInputs(schema, targets, input_type)


def tweaks_for(inputs: ToolInputs, arguments: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The run's tweaks for a call's ``arguments`` and the names of arguments the tool does not take."""
    tweaks: dict[str, dict[str, Any]] = {}
    unknown: list[str] = []
    for name, value in arguments.items():
        if name in ("input_value", "session_id"):
            continue
        target = inputs.targets.get(name)
        if target is None:
            unknown.append(name)
            continue
        tweaks.setdefault(target[0], {})[target[1]] = value
    return tweaks, unknown
