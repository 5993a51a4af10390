"""The application state, typed: what the core keeps for one app, and the accessors plugins use.

A leaf of the core: at run time it imports only :mod:`core.appctx` (which reads Flask's context
variable), so any module of the core, the run service, the job layer or a plugin may import it
without reaching back into the app factory (:mod:`core.app`, which builds this state). The
services are typed by the :class:`typing.Protocol` of what their users call (ports, in the
vocabulary of ports and adapters): :class:`core.jobs.JobQueue` itself (the abstract class every
backend implements; a type-only import, so no second copy of its interface),
:class:`SharedStatePort` (:mod:`core.shared`), :class:`RegistryHolderPort`
(:class:`core.engine.RegistryHolder`), :class:`PluginHostPort` (:class:`core.plugins.PluginHost`)
and :class:`ComponentSourcesPort` (:class:`core.reload.ComponentSources`). The core settings
are the :class:`core.settings.Settings` dataclass itself: already typed, and a leaf too.

The accessors read the state of the current app (or of ``app``)::

    from core import appstate

    info = appstate.jobs().info_for(job_id, owner)
    cipher = secrets.fernet(appstate.settings())
    appstate.hooks().notify(hookspecs.on_flow_changed, flow_id=flow_id, user_id=user_id, flow=record)
    config = appstate.settings_of(FilesConfig, app)

Records named only in annotations (:class:`core.jobs.JobInfo`, :class:`core.engine.Registry`, ...)
are imported for the type checker alone, so they never run and cannot close an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from core import appctx

if TYPE_CHECKING:
    import threading

    import sqlalchemy as sa
    from flask import Flask
    from pluggy import HookRelay

    from core.engine.component import Component
    from core.engine.registry import Registry
    from core.hookcalls import Hooks
    from core.jobs import JobQueue
    from core.records import HealthCheck, Job, PluginInfo
    from core.settings import Settings

T = TypeVar("T")

__all__ = [
    "ComponentSourcesPort",
    "PluginHostPort",
    "RegistryHolderPort",
    "ServiceState",
    "SharedStatePort",
    "components",
    "engine",
    "hooks",
    "host",
    "jobs",
    "plugin_settings",
    "registry",
    "settings",
    "settings_of",
    "shared",
    "state",
    "state_or_none",
]


# --- ports: what the users of each service call ---------------------------------------------------
class SharedStatePort(Protocol):
    """The deployment's shared state (:mod:`core.shared`: memory, files, or Redis in scale-out)."""

    def get(self, key: str) -> str | None: ...

    def get_many(self, keys: list[str]) -> list[str | None]: ...

    def put(self, key: str, value: str, ttl: float | None = None, *, only_if_exists: bool = False) -> bool: ...

    def cas(self, key: str, old: str | None, new: str, ttl: float | None = None) -> bool: ...

    def incr(self, key: str, amount: int = 1, ttl: float | None = None) -> int: ...

    def ttl(self, key: str) -> float | None: ...

    def delete(self, key: str) -> bool: ...

    def scan(self, prefix: str, limit: int = 1000) -> dict[str, str]: ...

    def clear(self) -> None: ...


class RegistryHolderPort(Protocol):
    """The holder of the component registry snapshot (:class:`core.engine.RegistryHolder`)."""

    @property
    def current(self) -> Registry: ...

    def swap(self, registry: Registry) -> Registry: ...


class ComponentSourcesPort(Protocol):
    """Who contributed which component classes (:class:`core.reload.ComponentSources`)."""

    sources: dict[str, list[type[Component]]]
    generation: int
    lock: threading.Lock

    def registry(self, replace: Mapping[str, list[type[Component]] | None] | None = None) -> Registry: ...

    def apply(self, replace: Mapping[str, list[type[Component]] | None]) -> None: ...


class PluginHostPort(Protocol):
    """The app's plugin host (:class:`core.plugins.PluginHost`): hooks, contributions, what is loaded."""

    infos: dict[str, PluginInfo]
    failures: dict[str, str]

    @property
    def hook(self) -> HookRelay: ...

    @property
    def hooks(self) -> Hooks: ...

    def collect(self, hook_name: str, key: Callable[[T], str] | None = None, **kwargs: Any) -> list[T]: ...

    def list(self) -> Iterable[PluginInfo]: ...


# --- the state ----------------------------------------------------------------------------------------
@dataclass
class ServiceState:
    """Everything the core keeps for one app, at ``app.extensions["service"]`` (built by ``create_app``)."""

    settings: Settings
    host: PluginHostPort
    engine: sa.Engine
    jobs: JobQueue
    components: RegistryHolderPort  # the registry snapshot of the installed bundles, swapped on reload
    shared: SharedStatePort  # the deployment's shared state (files, or Redis in scale-out)
    component_sources: ComponentSourcesPort  # who contributed which components
    plugin_settings: dict[str, Any] = field(default_factory=dict)  # the plugins' settings sections, by name
    settings_by_schema: dict[type, Any] = field(default_factory=dict)  # the same sections, by schema class
    components_checked: float = 0.0  # monotonic time of the last look at the component generation
    plugins_generation: int = 0  # the shared plugin generation this app was built for
    health_checks: list[HealthCheck] = field(default_factory=list)
    job_registry: dict[str, Job] = field(default_factory=dict)


# --- accessors ----------------------------------------------------------------------------------------
def state(app: Flask | None = None) -> ServiceState:
    """The :class:`ServiceState` of ``app`` (default: the current app)."""
    return (app or appctx.current()).extensions["service"]  # type: ignore[no-any-return]


def state_or_none(app: Flask) -> ServiceState | None:
    """The state of ``app``, or None for an app ``create_app`` did not build (a test's bare Flask app)."""
    found = app.extensions.get("service")
    return found if isinstance(found, ServiceState) else None


def settings(app: Flask | None = None) -> Settings:
    """The core settings (``SERVICE_*``)."""
    return state(app).settings


def settings_of(schema: type[T], app: Flask | None = None) -> T:
    """The parsed settings section whose schema is ``schema``, typed (``settings_of(AccountsConfig).auto_login``).

    Raises ``LookupError`` when no loaded plugin declared that section.
    """
    try:
        return state(app).settings_by_schema[schema]  # type: ignore[no-any-return]
    except KeyError:
        raise LookupError(f"no settings section {schema.__qualname__} is loaded") from None


class SettingsReader(Generic[T]):
    """``settings = SettingsReader(MySettings)`` in a plugin's config module: ``settings()`` is the parsed
    section in force (typed; ``settings(app)`` outside an app context)."""

    __slots__ = ("schema",)

    def __init__(self, schema: type[T]) -> None:
        self.schema = schema

    def __call__(self, app: Flask | None = None) -> T:
        return settings_of(self.schema, app)


def plugin_settings(name: str, app: Flask | None = None) -> Any:
    """The parsed settings section ``name`` (see ``register_settings``); :func:`settings_of` is typed."""
    return state(app).plugin_settings[name]


def engine(app: Flask | None = None) -> sa.Engine:
    """The database engine of the app (sessions come from :mod:`core.db`)."""
    return state(app).engine


def jobs(app: Flask | None = None) -> JobQueue:
    """The job queue."""
    return state(app).jobs


def shared(app: Flask | None = None) -> SharedStatePort:
    """The deployment's shared state."""
    return state(app).shared


def registry(app: Flask | None = None) -> Registry:
    """The current component registry snapshot (a run keeps the snapshot it started with)."""
    return state(app).components.current


def components(app: Flask | None = None) -> RegistryHolderPort:
    """The holder of the registry snapshot (to swap it on a bundle reload)."""
    return state(app).components


def hooks(app: Flask | None = None) -> Hooks:
    """The typed hook facade of the app's plugin host (:class:`core.hookcalls.Hooks`).

    A core hook is a method with the spec's keyword arguments and records
    (``hooks().find_flow(user_id=..., flow_id_or_name=..., public=False)`` is a ``FlowRecord | None``);
    a hook a plugin publishes is called with ``first``, ``each`` or ``notify`` keyed on its spec
    (``hooks().first(hookspecs.find_project, user_id=..., project_id=...)``). pluggy's untyped relay
    stays at ``host().hook`` for the host itself and tests.
    """
    return state(app).host.hooks


def host(app: Flask | None = None) -> PluginHostPort:
    """The app's plugin host: ``collect`` a ``register_*`` hook's contributions, ``list`` what is loaded."""
    return state(app).host
