"""The flow engine: typed values, the component API, the registry, graphs and runs.

Pure Python and free of web imports, so the HTTP run plugin, the build-job
plugin and tests all share it. Typical use::

    from core.engine import Registry, RunContext, run_flow, simplified_run_response

    registry = Registry.from_classes(classes)
    result = run_flow(flow["data"], registry, RunContext(flow_id=flow_id), input_value="hi")
    payload = simplified_run_response(result, input_value="hi")
"""

from core.engine.component import Component, Output, VertexInfo
from core.engine.egress import EgressBlocked, EgressError, EgressPolicy
from core.engine.errors import (
    ComponentError,
    EngineError,
    GraphValidationError,
    RegistryError,
    RunCancelled,
    RunTimeout,
    SuspendRun,
)
from core.engine.events import (
    BuildStarted,
    MessageAdded,
    RunEvent,
    RunFailed,
    RunFinished,
    StateChanged,
    Suspended,
    TokenChunk,
    ToolCall,
    VertexFinished,
    VertexStarted,
    VerticesSorted,
)
from core.engine.graph import Edge, Graph, Vertex, apply_tweaks
from core.engine.registry import Registry, RegistryHolder, load_bundle_components
from core.engine.results import (
    RunResult,
    VertexResult,
    end_vertex_payload,
    result_data,
    simplified_run_response,
)
from core.engine.run_context import RunContext
from core.engine.runner import run_flow, run_graph
from core.engine.types import JSON, AttachedText, Data, DataFrame, Message, Table

__all__ = [
    "JSON",
    "AttachedText",
    "BuildStarted",
    "Component",
    "ComponentError",
    "Data",
    "DataFrame",
    "Edge",
    "EgressBlocked",
    "EgressError",
    "EgressPolicy",
    "EngineError",
    "Graph",
    "GraphValidationError",
    "Message",
    "MessageAdded",
    "Output",
    "Registry",
    "RegistryError",
    "RegistryHolder",
    "RunCancelled",
    "RunContext",
    "RunEvent",
    "RunFailed",
    "RunFinished",
    "RunResult",
    "RunTimeout",
    "StateChanged",
    "SuspendRun",
    "Suspended",
    "Table",
    "TokenChunk",
    "ToolCall",
    "Vertex",
    "VertexFinished",
    "VertexInfo",
    "VertexResult",
    "VertexStarted",
    "VerticesSorted",
    "apply_tweaks",
    "end_vertex_payload",
    "load_bundle_components",
    "result_data",
    "run_flow",
    "run_graph",
    "simplified_run_response",
]
