"""Typed records that plugins return from ``register_*`` hooks.

A record is a small frozen dataclass, so the host can validate it, reject
duplicates by name and list what each plugin contributed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Migrations:
    """An Alembic version directory owned by one plugin.

    ``branch`` is the Alembic branch label every revision in ``path`` carries
    (by convention the plugin name). ``depends_on`` lists other branches whose
    heads must be applied first (rarely needed: plugins do not share tables).
    """

    branch: str
    path: Path
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class SettingsSection:
    """A plugin's settings: a frozen dataclass parsed from ``<prefix><FIELD>`` variables.

    ``schema`` fields use the same types as :class:`core.settings.Settings`
    (bool, int, float, str, Path, tuple of str, choices via
    ``field(metadata={"choices": (...)})``, ``BOUNDS``); the parsed instance is
    ``core.app.settings_of(schema)`` (typed) or ``core.app.plugin_settings(name)``. Keep the
    spec's variable names: prefix ``SERVICE_`` with the spec's field names, or a plugin prefix.
    """

    name: str
    schema: type
    prefix: str


@dataclass(frozen=True)
class Job:
    """A background job callable by name.

    ``func(ctx, **kwargs)`` receives a :class:`core.jobs.JobContext` and the
    keyword arguments given at enqueue time (plain JSON values: ids, never ORM
    or request objects). It may return a JSON-serialisable result.
    """

    name: str
    func: Callable[..., Any]
    description: str = ""


@dataclass(frozen=True)
class HealthCheck:
    """A named probe reported by ``GET /health_check``.

    ``func(app)`` returns None when healthy (reported ``"ok"``), a short status
    such as ``"not configured"``, or raises when unhealthy (reported ``"error"``).
    """

    name: str
    func: Callable[[Any], str | None]


@dataclass(frozen=True)
class Permission:
    """A verdict from ``permission_allowed``: ``allow`` True or False, with a reason."""

    allow: bool
    reason: str = ""


@dataclass(frozen=True)
class PluginInfo:
    """What the host knows about one loaded plugin (for ``service plugins list``)."""

    name: str
    version: str
    distribution: str | None
    hooks: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "plugin"  # "core", "plugin" or "bundle"


@dataclass(frozen=True)
class ModelProvider:
    """A model provider a plugin or bundle offers (``register_model_providers``).

    ``provider_id`` is the slug the model-provider policy approves,
    ``display_name`` what people read, ``provider`` the provider family
    (for example ``"openai"`` for any OpenAI-style endpoint).
    """

    provider_id: str
    display_name: str
    provider: str
