"""Per-app runtime of the policies plugin: settings, the blocked-set snapshot, the usage cache."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app

from service_policies.config import PoliciesConfig, UsageConfig
from service_policies.services import Snapshot
from service_policies.usage import CountsCache

EXTENSION = "service.policies"


@dataclass
class Runtime:
    cfg: PoliciesConfig
    snapshot: Snapshot
    counts: CountsCache


def runtime(app: Flask | None = None) -> Runtime:
    from core.appstate import plugin_settings

    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    rt = app.extensions.get(EXTENSION)
    if rt is None:
        cfg: PoliciesConfig = plugin_settings("policies", app)
        usage: UsageConfig = plugin_settings("usage", app)
        rt = Runtime(cfg, Snapshot(cfg), CountsCache(usage.usage_scan_cache_ttl_seconds))
        app.extensions[EXTENSION] = rt
    return rt


def canonical() -> Any:
    """``key -> canonical registry key`` for the registry snapshot in force (unknown keys unchanged)."""
    from core.runs import registry

    reg = registry()

    def resolve(key: str) -> str:
        klass = reg.get(key)
        return klass.key if klass is not None else key

    return resolve
