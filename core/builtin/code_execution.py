"""The core's own ``check_run``: the code-execution switches, for every run surface.

``SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS=true`` refuses any flow that holds a
code-execution component (a registry class with ``executes_code``);
``SERVICE_ALLOW_CUSTOM_COMPONENTS=false`` does the same (the spec: it "blocks
user-authored component code and registered code-execution components").
The answer per graph is cached by the graph's node types, so a repeated run
costs a dictionary lookup.
"""

from __future__ import annotations

from typing import Any

from core.contracts import FlowRecord
from core.engine import Registry
from core.engine.host_access import Hardening
from core.engine.nodes import flow_node_types
from core.errors import ApiError

_HARDENING: dict[int, tuple[Any, Hardening]] = {}
_CACHE: dict[tuple[int, tuple[str, ...]], str | None] = {}
_CACHE_MAX = 4096


def hardening_of(settings: Any) -> Hardening:
    """The :class:`Hardening` of a settings object (built once per settings instance)."""
    hit = _HARDENING.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    made = Hardening.from_settings(settings)
    if len(_HARDENING) > 64:
        _HARDENING.clear()
    _HARDENING[id(settings)] = (settings, made)
    return made


def code_components(registry: Registry, types: tuple[str, ...]) -> list[str]:
    """The keys among ``types`` whose component executes code."""
    found: list[str] = []
    for kind in dict.fromkeys(types):
        klass = registry.get(kind)
        if klass is not None and getattr(klass, "executes_code", False):
            found.append(klass.key)
    return found


def check_code_execution(hardening: Hardening, registry: Registry, flow: FlowRecord) -> None:
    """Raise 403 naming the component when the flow holds a code-execution component that is switched off."""
    reason = hardening.code_execution_refusal()
    if reason is None:
        return
    types = flow_node_types(flow.data)
    key = (id(registry), types)
    if key in _CACHE:
        blocked = _CACHE[key]
    else:
        found = code_components(registry, types)
        blocked = found[0] if found else None
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = blocked
    if blocked is not None:
        raise ApiError(403, f"Component '{blocked}' cannot run: {reason}")


def require_custom_code(settings: Any, actor: Any) -> None:
    """Refuse user-authored component code unless the settings allow it for this caller (403 naming the setting)."""
    if not settings.allow_custom_components:
        raise ApiError(
            403, "Custom component code is disabled on this server (SERVICE_ALLOW_CUSTOM_COMPONENTS is false)"
        )
    if settings.custom_component_admin_only and not (actor is not None and getattr(actor, "is_superuser", False)):
        raise ApiError(
            403, "Only superusers may submit custom component code (SERVICE_CUSTOM_COMPONENT_ADMIN_ONLY is true)"
        )
