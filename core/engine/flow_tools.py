"""Another flow of the same user as an agent's tool (the runner runs it as a sub-flow of the run).

Apart from :mod:`core.engine.tools` because it runs flows: the runner imports the tools module, and
this one imports the runner.
"""

from __future__ import annotations

from typing import Any

from core.engine.errors import ComponentError
from core.engine.run_context import RunContext
from core.engine.runner import run_flow
from core.engine.tools import Tool, tool_name

__all__ = ["flow_tool"]


def flow_tool(context: RunContext, ident: str, *, name: str = "", description: str = "") -> Tool:
    """Another flow of the same user as a tool: its argument ``input_value`` is the flow's chat input."""
    if context.load_flow is None:
        raise ComponentError("Running flows as tools is not available here.")
    flow = context.load_flow(str(ident))
    if not flow:
        raise ComponentError(f"Flow '{ident}' not found.")
    flow_id = str(flow.get("id") or ident)
    flow_name = str(flow.get("name") or ident)
    if context.check_flow is not None:  # refused now, failing the run, rather than when the model calls it
        context.check_flow({"id": flow_id, "name": flow_name, "data": flow.get("data") or {}})

    def call(**arguments: Any) -> Any:
        if context.depth >= context.max_subflow_depth:
            raise ComponentError(f"Sub-flows are nested deeper than {context.max_subflow_depth} levels.")
        if flow_id in context.flow_stack or flow_id == str(context.flow_id):
            raise ComponentError(f"Flow '{flow_name}' calls itself.")
        child = context.child(flow_id=flow_id, flow_name=flow_name, session_id=None)
        result = run_flow(
            flow.get("data") or {},
            context.registry,
            child,
            input_value=str((arguments or {}).get("input_value") or ""),
            input_type="any",
        )
        if not result.ok:
            raise ComponentError(f"Flow '{flow_name}' failed: {(result.error or {}).get('message')}")
        return result.answer() or ""

    return Tool(
        name=tool_name(name or flow_name),
        description=description or f"Runs the flow '{flow_name}' with the given input and returns its answer.",
        parameters={
            "type": "object",
            "properties": {"input_value": {"type": "string", "description": "The input to send to the flow."}},
            "required": ["input_value"],
        },
        func=call,
        source=f"flow:{flow_id}",
    )
