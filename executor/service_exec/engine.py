"""Flows from files and runs on the engine: what both ``run`` and ``serve`` use.

Everything here is the engine's (:mod:`core.engine`) plus the standard library: no web
framework is imported until ``serve`` needs one.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine import (
    EgressPolicy,
    Graph,
    GraphValidationError,
    Registry,
    RunContext,
    RunEvent,
    RunResult,
    run_graph,
)

log = logging.getLogger(__name__)

BUNDLE_GROUP = "service.bundles"
TRUE = {"1", "true", "yes", "on"}
#: flow ids of files without one are derived from their path in this namespace
FLOW_NAMESPACE = uuid.UUID("6f1c7c8e-2b6e-4d3e-9b1a-5f0e7e3c2a10")


class FlowError(ValueError):
    """A flow file cannot be used (unreadable, not a flow)."""


class InvalidRun(ValueError):
    """A run request the flow cannot take: ``items`` are ``{loc, msg, type}`` (answered 422)."""

    def __init__(self, items: list[dict[str, Any]]):
        super().__init__("; ".join(str(i.get("msg")) for i in items))
        self.items = items


def load_registry() -> Registry:
    """Every installed bundle's components (entry point group ``service.bundles``)."""
    classes: list[type] = []
    for ep in sorted(importlib.metadata.entry_points(group=BUNDLE_GROUP), key=lambda e: e.name):
        bundle = ep.load()
        classes.extend(bundle.register_components() or [])
    return Registry.from_classes(classes)


@dataclass
class Flow:
    id: str
    name: str
    endpoint_name: str | None
    data: dict[str, Any]
    path: str


def read_flow(path: str | Path) -> Flow:
    """An exported flow (``{id, name, data, ...}``) or a bare graph (``{nodes, edges}``) from a file."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FlowError(f"{p}: {exc}") from None
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), Mapping):
        data = dict(doc["data"])
    elif isinstance(doc, Mapping) and "nodes" in doc:
        data, doc = dict(doc), {}
    else:
        raise FlowError(f"{p}: not a flow (no data.nodes)")
    if not isinstance(data.get("nodes"), list):
        raise FlowError(f"{p}: not a flow (no data.nodes)")
    flow_id = str(doc.get("id") or uuid.uuid5(FLOW_NAMESPACE, str(p.resolve())))
    return Flow(flow_id, str(doc.get("name") or p.stem), doc.get("endpoint_name") or None, data, str(p))


@dataclass
class Settings:
    """The few settings a stateless run has, from the environment (the full service's names)."""

    ssrf_protection_enabled: bool = True
    ssrf_allowed_hosts: str = ""
    run_time_limit_seconds: float | None = None
    api_key: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        limit = env.get("SERVICE_RUN_TIME_LIMIT_SECONDS")
        return cls(
            ssrf_protection_enabled=env.get("SERVICE_SSRF_PROTECTION_ENABLED", "true").lower() in TRUE,
            ssrf_allowed_hosts=env.get("SERVICE_SSRF_ALLOWED_HOSTS", ""),
            run_time_limit_seconds=float(limit) if limit else None,
            api_key=env.get("SERVICE_EXEC_API_KEY") or None,
        )


@dataclass
class Executor:
    """The flows being served and the registry they run on (built once; every run is independent)."""

    registry: Registry
    settings: Settings
    flows: dict[str, Flow] = field(default_factory=dict)
    by_name: dict[str, Flow] = field(default_factory=dict)

    @classmethod
    def from_files(cls, paths: list[str], settings: Settings | None = None) -> Executor:
        ex = cls(load_registry(), settings or Settings.from_env())
        for path in paths:
            ex.add(read_flow(path))
        return ex

    def add(self, flow: Flow) -> None:
        """Serve ``flow``; its graph is checked now, so a broken file fails at start."""
        try:
            Graph.build(flow.data, self.registry)
        except GraphValidationError as exc:
            raise FlowError(f"{flow.path}: {'; '.join(e.get('msg', '') for e in exc.errors)}") from None
        self.flows[flow.id] = flow
        for name in filter(None, (flow.endpoint_name, flow.name)):
            self.by_name.setdefault(name, flow)

    def find(self, flow_id_or_name: str) -> Flow | None:
        return self.flows.get(flow_id_or_name) or self.by_name.get(flow_id_or_name)

    def build(self, flow: Flow, tweaks: Mapping[str, Any] | None = None) -> Graph:
        """The flow's graph with ``tweaks`` applied (:class:`InvalidRun` when they do not fit)."""
        try:
            return Graph.build(flow.data, self.registry, tweaks=dict(tweaks) if tweaks else None)
        except GraphValidationError as exc:
            raise InvalidRun(list(exc.errors)) from None

    def run(
        self,
        flow: Flow,
        input_value: str | None,
        *,
        graph: Graph | None = None,
        input_type: str = "chat",
        tweaks: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        request_vars: Mapping[str, str] | None = None,
        emit: Callable[[RunEvent], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> RunResult:
        """Run the flow (built with ``tweaks`` unless ``graph`` is given); never raises for component errors."""
        if graph is None:
            graph = self.build(flow, tweaks)
        s = self.settings
        ctx = RunContext(
            flow_id=flow.id,
            flow_name=flow.name,
            session_id=session_id or flow.id,
            # component API keys come from the environment, as a variable named like the field asks
            resolve_variable=lambda name, _field: os.environ.get(name),
            request_variables=dict(request_vars or {}),
            load_flow=self._load_flow,
            emit=emit,
            cancelled=cancelled,
            time_limit=s.run_time_limit_seconds,
            egress=EgressPolicy.from_settings(s.ssrf_protection_enabled, s.ssrf_allowed_hosts),
            registry=self.registry,
        )
        return run_graph(graph, ctx, input_value=input_value, input_type=input_type or "chat", registry=self.registry)

    def _load_flow(self, id_or_name: str) -> dict[str, Any] | None:
        """Sub-flows: only the flows this executor serves."""
        flow = self.find(id_or_name)
        return None if flow is None else {"id": flow.id, "name": flow.name, "data": flow.data}


def failure_text(result: RunResult) -> str:
    """What a failed run reports (the run service's wording): the failing component and its error."""
    error = result.error or {}
    if result.status == "timed_out":
        return "Run time limit exceeded"
    if result.status == "cancelled":
        return "Run cancelled"
    name = error.get("display_name") or "component"
    vid = error.get("vertex_id")
    where = f"{name} ({vid})" if vid else name
    return f"Error running component {where}: {error.get('message') or 'failed'}"
