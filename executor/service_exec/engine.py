"""Flows from files and runs on the engine: what both ``run`` and ``serve`` use.

Everything here is the engine's (:mod:`core.engine`) plus the standard library: no web
framework is imported until ``serve`` needs one.

The catalog policy, as the full service names it: ``SERVICE_POLICIES_BLOCKED_COMPONENTS`` (a
comma-separated list of component keys or aliases) and/or ``SERVICE_POLICIES_FILE`` (a JSON file
with ``"blocked_components": [...]``; both are merged). A flow using a blocked component is refused
before it runs (:class:`Refused`: 403 from ``serve``, exit 2 from ``run``), and so is every sub-flow
the engine loads while a run goes (Run Flow, Sub Flow, flows as tools, at any depth:
``RunContext.check_flow``), which fails the run naming the component.

The tweak policy, as the full service reads it: ``SERVICE_TWEAKS_POLICY`` (``permissive``, the default,
``declared`` or ``off``; :mod:`core.engine.tweaks`). A refused tweak is
:class:`~core.engine.errors.RunRefused` (422 ``TWEAKS_REFUSED`` from ``serve``, exit 2 from ``run``), as is
an ``input_value`` given twice (400).

The run itself is the engine's run path (:mod:`core.engine.execution`) over :class:`FilePorts`: the
flows this executor serves and the environment's variables; no message store, files or records.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine import (
    EgressPolicy,
    Graph,
    GraphValidationError,
    Registry,
    RunEvent,
    RunResult,
    execution,
)
from core.engine.errors import PolicyRefused
from core.engine.execution import failure_text
from core.engine.nodes import node_types
from core.engine.ports import RunPorts
from core.engine.tweaks import parse_policy
from service_exec import telemetry

log = logging.getLogger(__name__)

BUNDLE_GROUP = "service.bundles"
TRUE = {"1", "true", "yes", "on"}
#: flow ids of files without one are derived from their path in this namespace
FLOW_NAMESPACE = uuid.UUID("6f1c7c8e-2b6e-4d3e-9b1a-5f0e7e3c2a10")


__all__ = [
    "Executor",
    "FilePorts",
    "Flow",
    "FlowError",
    "InvalidRun",
    "Refused",
    "Settings",
    "failure_text",
    "load_registry",
    "read_flow",
]


class FlowError(ValueError):
    """A flow file cannot be used (unreadable, not a flow)."""


class Refused(ValueError):
    """A flow the policy refuses (a blocked component): answered 403."""


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
    #: component keys (or aliases) no flow may use, sub-flows included
    blocked_components: tuple[str, ...] = ()
    #: ``SERVICE_TWEAKS_POLICY``: which fields a run's tweaks may set
    tweaks_policy: str = "permissive"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        limit = env.get("SERVICE_RUN_TIME_LIMIT_SECONDS")
        return cls(
            ssrf_protection_enabled=env.get("SERVICE_SSRF_PROTECTION_ENABLED", "true").lower() in TRUE,
            ssrf_allowed_hosts=env.get("SERVICE_SSRF_ALLOWED_HOSTS", ""),
            run_time_limit_seconds=float(limit) if limit else None,
            api_key=env.get("SERVICE_EXEC_API_KEY") or None,
            blocked_components=_blocked_from_env(env),
            tweaks_policy=_tweaks_policy_from_env(env),
        )


def _tweaks_policy_from_env(env: Mapping[str, str]) -> str:
    """``SERVICE_TWEAKS_POLICY`` read as the full service reads it (:class:`FlowError` if bad)."""
    try:
        return parse_policy(env.get("SERVICE_TWEAKS_POLICY"))
    except ValueError as exc:
        raise FlowError(str(exc)) from None


def _blocked_from_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """``SERVICE_POLICIES_BLOCKED_COMPONENTS`` plus the file's ``blocked_components`` (:class:`FlowError` if bad)."""
    keys = [k.strip() for k in env.get("SERVICE_POLICIES_BLOCKED_COMPONENTS", "").split(",") if k.strip()]
    path = env.get("SERVICE_POLICIES_FILE")
    if path:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FlowError(f"SERVICE_POLICIES_FILE: cannot read {path}: {exc}") from None
        items = doc.get("blocked_components", []) if isinstance(doc, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise FlowError("SERVICE_POLICIES_FILE: 'blocked_components' must be a list of strings")
        keys.extend(items)
    return tuple(dict.fromkeys(keys))


def blocked_keys(blocked: tuple[str, ...], registry: Registry) -> frozenset[str]:
    """Every key that means a blocked component: the keys as given, their canonical keys and their aliases."""
    out = set(blocked)
    canonical = {klass.key for klass in map(registry.get, blocked) if klass is not None}
    out |= canonical
    out |= {alias for alias, target in registry.aliases.items() if target in canonical}
    return frozenset(out)


@dataclass
class Executor:
    """The flows being served and the registry they run on (built once; every run is independent)."""

    registry: Registry
    settings: Settings
    flows: dict[str, Flow] = field(default_factory=dict)
    by_name: dict[str, Flow] = field(default_factory=dict)
    blocked: frozenset[str] = frozenset()
    #: the engine's run ports over this executor's files (the settings do not change)
    ports: RunPorts = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.blocked = blocked_keys(self.settings.blocked_components, self.registry)
        s = self.settings
        files = FilePorts(self)
        self.ports = RunPorts(
            flows=files,
            variables=files,
            time_limit=s.run_time_limit_seconds,
            egress=EgressPolicy.from_settings(s.ssrf_protection_enabled, s.ssrf_allowed_hosts),
        )

    def check(self, data: Mapping[str, Any], name: str) -> None:
        """:class:`Refused` naming the blocked components ``data`` uses (nested group flows included)."""
        if not self.blocked:
            return
        found = sorted(t for t in node_types(data) if t in self.blocked)
        if found:
            names = ", ".join(f"'{k}'" for k in found)
            noun = "Component" if len(found) == 1 else "Components"
            raise Refused(f"{noun} {names} of flow '{name}' blocked by the catalog policy: this flow cannot run")

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

    def build(
        self,
        flow: Flow,
        tweaks: Mapping[str, Any] | None = None,
        inputs: list[tuple[str | None, str]] | None = None,
    ) -> Graph:
        """The flow's graph with ``tweaks`` applied: :class:`Refused` when it uses a blocked component,
        :class:`~core.engine.errors.RunRefused` when the tweak policy refuses a tweak (or a tweak sets an input
        of ``inputs``, ``(input value, input type)``, too), :class:`InvalidRun` when they do not fit."""
        self.check(flow.data, flow.name)
        execution.check_tweaks(flow.data, tweaks, self.settings.tweaks_policy, inputs or [])
        try:
            return execution.build_graph(flow.data, self.registry, tweaks=tweaks)
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
        api: str = "run",
        carrier: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run the flow (built with ``tweaks`` unless ``graph`` is given); never raises for component errors.

        With tracing on (:mod:`service_exec.telemetry`) the run is a ``flow.execute`` span labelled with ``api``
        (the surface that asked: ``run``, ``workflows``, ``cli``), a child of the current span or of the W3C
        ``carrier``'s context."""
        if graph is None:
            graph = self.build(flow, tweaks, [(input_value, input_type)])
        else:
            self.check(flow.data, flow.name)
        ctx = execution.context_for(
            self.ports,
            flow_id=flow.id,
            flow_name=flow.name,
            session_id=session_id or flow.id,
            emit=emit,
            cancelled=cancelled,
            request_vars=request_vars,
            registry=self.registry,
        )
        traced = (
            telemetry.start_run(
                flow_id=flow.id,
                flow_name=flow.name,
                run_id=ctx.run_id,
                session_id=ctx.session_id,
                api=api,
                carrier=carrier,
            )
            if telemetry.tracer() is not None
            else None
        )
        if traced is None:
            return execution.execute(
                graph, ctx, self.ports, input_value=input_value, input_type=input_type or "chat", registry=self.registry
            )
        ctx.watch = traced
        result: RunResult | None = None
        try:
            result = execution.execute(
                graph, ctx, self.ports, input_value=input_value, input_type=input_type or "chat", registry=self.registry
            )
            return result
        finally:
            traced.end(result, failure_text)

    def stream(
        self, flow: Flow, input_value: str | None, *, keep: frozenset[str], **options: Any
    ) -> Iterator[RunEvent | RunResult | Exception]:
        """:meth:`run` on the engine's stream thread: the events named in ``keep``, then the result (or the
        exception); a consumer that stops iterating cancels the run at its next vertex."""

        def work(emit: Callable[[RunEvent], None], cancelled: Callable[[], bool]) -> RunResult:
            return self.run(flow, input_value, emit=emit, cancelled=cancelled, **options)

        return execution.stream(work, keep=lambda event: event.name in keep, label=f"run of {flow.id}")


class FilePorts:
    """The engine's run ports over what the executor has: the flow files it serves (sub-flows are those only,
    under the catalog policy) and the environment (component API keys, as a variable named like the field asks).
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def load_flow(self, id_or_name: str) -> dict[str, Any] | None:
        flow = self.executor.find(id_or_name)
        return None if flow is None else {"id": flow.id, "name": flow.name, "data": flow.data}

    def check_flow(self, found: Mapping[str, Any]) -> None:
        """``RunContext.check_flow``: every graph the engine runs, sub-flows at any depth."""
        try:
            self.executor.check(found.get("data") or {}, str(found.get("name") or found.get("id") or "sub-flow"))
        except Refused as exc:
            raise PolicyRefused(f"Sub-flow refused: {exc}") from None

    def variable(self, name: str, field: str) -> str | None:
        return os.environ.get(name)
