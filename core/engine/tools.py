"""The engine's tool interface: the ``Tool`` value agents call, whoever provides it.

A :class:`Tool` is a named, described callable with a JSON schema of its arguments
(``parameters``); ``run(arguments)`` / ``call(arguments)`` calls it with the arguments the
model chose. The callable runs native code only: nothing from the flow JSON is executed.
Providers:

* tool components put one on their ``Tool`` outputs (``api_build_tool``, ``result_tool``;
  :func:`string_tool` builds a one-string tool), e.g. Calculator, Flow as Tool;
* a component in tool mode (output ``component_as_tool``, method ``to_toolkit``):
  :func:`component_toolkit` makes one tool per output, its ``tool_mode`` inputs
  become the JSON schema, and its ``tools_metadata`` rows (the reference's
  "Actions") rename, describe, disable (``status: false``) or put under human
  approval (``approval_actions``) each action;
* a flow (:func:`core.engine.flow_tools.flow_tool`): runs another flow of the same user with the
  argument ``input_value``;
* MCP servers and others: build :class:`Tool` records the same way.

``call`` runs in a worker thread (an agent runs several calls at once); it
raises on failure, and the agent reports the error text to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.engine.errors import ComponentError
from core.engine.types import Data, DataFrame, Message, jsonable, to_text

if TYPE_CHECKING:  # pragma: no cover
    from core.engine.component import Component, VertexInfo
    from core.engine.run_context import RunContext

__all__ = ["TOOL_OUTPUT", "Tool", "component_toolkit", "string_tool", "tool_name", "tool_result_text"]

#: the output a component in tool mode exposes (type ``Tool``)
TOOL_OUTPUT = "component_as_tool"
_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


@dataclass
class Tool:
    name: str
    description: str
    func: Callable[..., Any] = field(repr=False)
    #: JSON schema of the arguments (``{"type": "object", "properties": {...}, "required": [...]}``)
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    return_direct: bool = False
    tags: list[str] = field(default_factory=list)
    #: the decisions a human may take before the call runs (``["approve", "reject"]``); empty = no approval
    approval_actions: tuple[str, ...] = ()
    #: where it comes from (vertex id, ``flow:<id>``, ``mcp:<server>``), for events and logs
    source: str = ""

    type_name = "Tool"

    def run(self, arguments: dict[str, Any] | str | None = None) -> Any:
        """Call the tool; a plain string is passed as the first (or only) declared argument."""
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            names = list(self.parameters.get("properties") or {})
            arguments = {names[0] if names else "input": arguments}
        unknown = set(arguments) - set(self.parameters.get("properties") or {})
        if unknown and self.parameters.get("properties"):
            raise ValueError(f"Tool '{self.name}' got unknown arguments: {', '.join(sorted(unknown))}")
        return self.func(**arguments)

    def call(self, arguments: dict[str, Any]) -> Any:
        """:meth:`run` with the arguments a model sent (a JSON object)."""
        return self.run(arguments)

    def spec(self) -> dict[str, Any]:
        """The chat-completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "return_direct": self.return_direct,
            "tags": list(self.tags),
        }

    def __str__(self) -> str:
        return f"Tool({self.name})"


def string_tool(name: str, description: str, func: Callable[[str], Any], arg: str = "input", **kw: Any) -> Tool:
    """A tool taking one string argument ``arg``."""
    return Tool(
        name=name,
        description=description,
        func=func,
        parameters={
            "type": "object",
            "properties": {arg: {"type": "string", "description": description}},
            "required": [arg],
        },
        **kw,
    )


def tool_name(text: str) -> str:
    """A function name providers accept (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return (_NAME.sub("_", text).strip("_") or "tool")[:64]


def tool_result_text(value: Any) -> str:
    """A tool's result as the text the model reads."""
    import json

    if isinstance(value, Message):
        return to_text(value)
    if isinstance(value, (Data, DataFrame)):
        value = value.to_dict() if isinstance(value, Data) else value.to_records()
    if isinstance(value, str):
        return value
    return json.dumps(jsonable(value), ensure_ascii=False, default=str)


_JSON_TYPES = {"int": "integer", "float": "number", "slider": "number", "bool": "boolean", "dict": "object"}


def _arg_schema(inp: Any, row_arg: Mapping[str, Any] | None) -> dict[str, Any]:
    kind = _JSON_TYPES.get(inp.field_type, "string")
    schema: dict[str, Any] = {"type": kind, "title": inp.display_name, "description": inp.info or inp.display_name}
    if inp.options:
        schema["enum"] = list(inp.options)
    if inp.is_list:
        schema = {
            "type": "array",
            "items": {"type": kind},
            "title": inp.display_name,
            "description": schema["description"],
        }
    if row_arg:
        for key in ("title", "description"):
            if row_arg.get(key):
                schema[key] = row_arg[key]
    return schema


def _rows(metadata: Any) -> list[Mapping[str, Any]]:
    if isinstance(metadata, Mapping):
        metadata = metadata.get("value")
    return [r for r in metadata or [] if isinstance(r, Mapping)]


def component_toolkit(
    cls: type[Component],
    params: dict[str, Any],
    *,
    context: RunContext,
    vertex: VertexInfo,
    extra: dict[str, Any] | None = None,
    metadata: Any = None,
    fields: tuple[str, ...] = (),
) -> list[Tool]:
    """The tools of a component in tool mode: one per output (named after its method), filtered by ``metadata``.

    The arguments are the inputs declared ``tool_mode`` plus the node's template fields flagged ``tool_mode``
    (``fields``).
    """
    tool_inputs = [i for i in cls.inputs if i.tool_mode or i.name in fields]
    allowed = frozenset(i.name for i in tool_inputs)
    rows = _rows(metadata)
    tools: list[Tool] = []
    for out in cls.outputs:
        if not out.tool_mode:
            continue
        default = tool_name(out.method)
        row = next((r for r in rows if r.get("name") == default or default in (r.get("tags") or [])), None)
        if row is not None and row.get("status") is False:
            continue
        row_args = dict((row or {}).get("args") or {})
        properties = {i.name: _arg_schema(i, row_args.get(i.name)) for i in tool_inputs}
        required = [i.name for i in tool_inputs if i.required]
        description = str((row or {}).get("description") or cls.description or out.display_name)
        approval = tuple(str(a) for a in (row or {}).get("approval_actions") or ())
        tools.append(
            Tool(
                name=tool_name(str((row or {}).get("name") or default)),
                description=description,
                parameters={"type": "object", "properties": properties, "required": required},
                func=_component_call(cls, params, out.method, context, vertex, extra or {}, allowed),
                approval_actions=approval,
                source=vertex.id,
            )
        )
    return tools


def _component_call(
    cls: type[Component],
    params: dict[str, Any],
    method: str,
    context: RunContext,
    vertex: VertexInfo,
    extra: dict[str, Any],
    allowed: frozenset[str],
) -> Callable[..., Any]:
    def call(**arguments: Any) -> Any:
        merged = dict(params)
        inputs = cls.input_map()
        for name, value in (arguments or {}).items():
            inp = inputs.get(name)
            if inp is None or name not in allowed:
                raise ComponentError(f"Unknown argument '{name}'")
            merged[name] = inp.coerce(value)
        comp = cls(merged, context=context, vertex=vertex, extra_params=dict(extra))
        return getattr(comp, method)()

    return call
