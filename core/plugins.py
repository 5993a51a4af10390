"""The plugin host: one pluggy manager per app, discovery, filtering, introspection.

Discovery reads the entry point groups ``service.plugins`` and
``service.bundles`` itself (pluggy's ``load_setuptools_entrypoints`` stops at
the first plugin that fails to import); each plugin is loaded and checked on
its own, so a broken third-party one is reported by name and skipped while
the others load; a first-party plugin (a ``service-*`` distribution of this
project) that implements an unknown hook fails start-up naming the hook.
``SERVICE_PLUGINS`` loads only the named plugins, ``SERVICE_DISABLED_PLUGINS``
skips the named ones. The core's own features register through the same
:meth:`PluginHost.register` as any plugin.

A plugin may publish hooks of its own (as devpi's web plugin does): its plugin
module names a module of ``@hookspec`` functions in ``HOOKSPECS``; the host adds
every loaded plugin's specs before it registers any plugin, so plugins
implement each other's hooks whatever their order. An implementation of a hook
whose publisher may be absent is marked ``@hookimpl(optionalhook=True)``. The plugin
that calls a hook publishes it; call sites call hooks through the typed facade
``host.hooks`` (:class:`core.hookcalls.Hooks`), never pluggy's untyped ``host.hook``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, ClassVar, NamedTuple, TypeVar

import pluggy

from core import PROJECT_NAME, __version__, hookspecs
from core.hookcalls import Hooks
from core.records import PluginInfo

log = logging.getLogger(__name__)

PLUGIN_GROUP = "service.plugins"
BUNDLE_GROUP = "service.bundles"
CORE_PLUGINS = ("core.builtin.plugin",)
#: distributions of this project: their mistakes fail start-up instead of being skipped
FIRST_PARTY_PREFIX = "service-"

T = TypeVar("T")


class InstalledEntryPoint(NamedTuple):
    """One installed entry point of :data:`PLUGIN_GROUP` or :data:`BUNDLE_GROUP`, with its distribution's
    name and version read once (``EntryPoint.dist.version`` reads the METADATA file on every access)."""

    ep: importlib.metadata.EntryPoint
    distribution: str | None
    version: str | None


#: (the search path's directories and their mtimes, the entries found there by group)
_installed: tuple[tuple[tuple[str, int], ...], dict[str, tuple[InstalledEntryPoint, ...]]] | None = None
_installed_lock = threading.Lock()


def installed_entry_points(group: str) -> tuple[InstalledEntryPoint, ...]:
    """The installed entry points of ``group``, by name.

    Kept while no directory of ``sys.path`` changes: installing, upgrading or removing a distribution adds
    or replaces its ``.dist-info`` directory, which changes its directory's mtime, so a run-time install is
    seen by the next app built. Reading every distribution's entry points took 20 ms per group, twice per
    app (about 80 ms of each test's app: bench/NOTES.md); importlib.metadata caches the listings only.
    """
    global _installed
    signature = tuple((path, _mtime(path)) for path in sys.path)
    with _installed_lock:
        if _installed is None or _installed[0] != signature:
            every = importlib.metadata.entry_points()  # one pass over the distributions for both groups
            found = {
                group: tuple(
                    InstalledEntryPoint(ep, ep.dist.name if ep.dist else None, ep.dist.version if ep.dist else None)
                    for ep in sorted(every.select(group=group), key=lambda e: e.name)
                )
                for group in (PLUGIN_GROUP, BUNDLE_GROUP)
            }
            _installed = (signature, found)
        return _installed[1].get(group, ())


def _mtime(path: str) -> int:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return -1


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, remembering which attributes of a plugin module are hook implementations.

    ``register`` asks ``parse_hookimpl_opts`` about every attribute of a plugin (``dir(plugin)``), which reads
    each one with ``inspect.getattr_static``: about 30 ms of each app with every plugin's 64 modules, and
    the same modules are registered again by every app a process builds (a reload, every test). The answer
    is kept per module and attribute while the attribute is the same object (a monkeypatched or reloaded
    one is read again); hand-written because pluggy offers this override and no cache."""

    _parsed: ClassVar[weakref.WeakKeyDictionary[ModuleType, dict[str, tuple[object, Any]]]] = (
        weakref.WeakKeyDictionary()
    )

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if not isinstance(plugin, ModuleType):
            return super().parse_hookimpl_opts(plugin, name)
        value = plugin.__dict__.get(name, _MISSING)
        known = self._parsed.setdefault(plugin, {})
        seen = known.get(name)
        if seen is None or seen[0] is not value:
            seen = known[name] = (value, super().parse_hookimpl_opts(plugin, name))
        return None if seen[1] is None else dict(seen[1])  # pluggy completes the options it gets in place


_MISSING = object()


class PluginError(RuntimeError):
    """A plugin cannot be registered (duplicate name, unknown hook, bad contribution)."""


class PluginHost:
    """A typed facade over ``pluggy.PluginManager`` for one app."""

    def __init__(self) -> None:
        self.pm = _PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        #: name -> reason, for plugins that were found but could not be loaded
        self.failures: dict[str, str] = {}
        self._spec_modules: list[ModuleType] = []  # published hook spec modules already added
        #: the typed call facade (:class:`core.hookcalls.Hooks`): how call sites call hooks
        self.hooks = Hooks(self.pm)

    @property
    def hook(self) -> Any:
        """pluggy's untyped relay (for the host itself and tests): call sites use :attr:`hooks`."""
        return self.pm.hook

    def published(self) -> list[ModuleType]:
        """The hook spec modules the loaded plugins publish (their ``HOOKSPECS``), in the order added."""
        return list(self._spec_modules)

    # --- registration ------------------------------------------------------------
    def register(
        self,
        plugin: object,
        name: str,
        *,
        kind: str = "plugin",
        distribution: str | None = None,
        version: str | None = None,
    ) -> None:
        """Register ``plugin`` under ``name``; raise :class:`PluginError` if it is unusable."""
        if name in self.infos or self.pm.has_plugin(name):
            raise PluginError(f"plugin {name!r} is already registered")
        try:
            self.pm.register(plugin, name=name)
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginError(f"plugin {name!r}: {exc}") from exc
        callers = self.pm.get_hookcallers(plugin) or []
        unknown = [
            hc.name
            for hc in callers
            if not hc.has_spec() and not all(i.optionalhook for i in hc.get_hookimpls() if i.plugin is plugin)
        ]
        if unknown:
            self.pm.unregister(plugin)
            raise PluginError(f"plugin {name!r} implements unknown hooks: {', '.join(sorted(unknown))}")
        self.infos[name] = PluginInfo(
            name=name,
            version=version or getattr(plugin, "__version__", "") or "",
            distribution=distribution,
            hooks=tuple(sorted(hc.name for hc in callers)),
            kind=kind,
        )

    def add_specs(self, plugin: object, name: str) -> None:
        """Add the hook specifications a plugin publishes (its ``HOOKSPECS`` module or module path)."""
        specs = getattr(plugin, "HOOKSPECS", None)
        if specs is None:
            return
        module = importlib.import_module(specs) if isinstance(specs, str) else specs
        if module in self._spec_modules:
            return  # the same plugin named twice: register() reports the duplicate by name
        self._spec_modules.append(module)
        clashes = [n for n in getattr(module, "__all__", ()) if hasattr(hookspecs, n)]
        if clashes:
            raise PluginError(f"plugin {name!r} publishes hooks the core already has: {', '.join(clashes)}")
        self.pm.add_hookspecs(module)

    def load_entry_points(self, allow: Iterable[str] | None, deny: Iterable[str]) -> None:
        """Discover, filter and register installed plugins and bundles, each on its own."""
        allowed = set(allow) if allow is not None else None
        denied = set(deny)
        loaded: list[tuple[Any, object, str]] = []
        for group, kind in ((PLUGIN_GROUP, "plugin"), (BUNDLE_GROUP, "bundle")):
            for entry in installed_entry_points(group):
                ep = entry.ep
                if ep.name in denied or (allowed is not None and ep.name not in allowed):
                    continue
                try:
                    loaded.append((entry, ep.load(), kind))
                except Exception as exc:
                    self._failed(entry, exc)
        ready = []
        for entry, plugin, kind in loaded:  # every published spec first, then every implementation
            try:
                self.add_specs(plugin, entry.ep.name)
                ready.append((entry, plugin, kind))
            except Exception as exc:
                self._failed(entry, exc)
        for entry, plugin, kind in ready:
            try:
                self.register(plugin, entry.ep.name, kind=kind, distribution=entry.distribution, version=entry.version)
            except Exception as exc:
                self._failed(entry, exc)
        if allowed:
            missing = allowed - set(self.infos) - set(self.failures)
            for name in sorted(missing):
                self.failures[name] = "not installed"
                log.warning("SERVICE_PLUGINS names %s, which is not installed", name)

    def _failed(self, entry: InstalledEntryPoint, exc: Exception) -> None:
        """A plugin could not load: fail start-up for our own distributions, skip a third party's."""
        ep, dist = entry.ep, entry.distribution or ""
        reason = f"{type(exc).__name__}: {exc}"
        if dist.startswith(FIRST_PARTY_PREFIX):
            raise PluginError(f"first-party plugin {ep.name!r} ({dist}) cannot load: {reason}") from exc
        self.failures[ep.name] = reason  # a broken third-party plugin must not stop the others
        log.warning("skipping plugin %s (%s): %s", ep.name, ep.group, reason)

    def check_pending(self) -> None:
        """Fail fast on hook implementations without a specification (typos)."""
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(str(exc)) from exc

    # --- collecting contributions ------------------------------------------------------
    def collect(self, hook_name: str, key: Callable[[T], str] | None = None, **kwargs: Any) -> list[T]:
        """Flatten the lists returned by a ``register_*`` hook; reject duplicate keys."""
        caller = getattr(self.pm.hook, hook_name, None)
        if caller is None:  # a published hook whose publisher is not loaded: nothing to collect
            return []
        items: list[T] = []
        seen: dict[str, str] = {}
        for impl in caller.get_hookimpls():  # registration order
            result = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            for item in result or []:
                if key is not None:
                    k = key(item)
                    if k in seen:
                        raise PluginError(
                            f"{hook_name}: {k!r} is contributed by both {seen[k]!r} and {impl.plugin_name!r}"
                        )
                    seen[k] = impl.plugin_name
                items.append(item)
        return items

    def list(self) -> list[PluginInfo]:
        return sorted(self.infos.values(), key=lambda i: (i.kind != "core", i.kind, i.name))


def plugin_name(module: ModuleType) -> str:
    """``PLUGIN_NAME`` of a module, else its package without ``service_`` (``service_flows.plugin`` -> ``flows``)."""
    explicit = getattr(module, "PLUGIN_NAME", None)
    if explicit:
        return str(explicit)
    parts = module.__name__.split(".")
    head = parts[0] if parts[-1] in ("plugin", "bundle") and len(parts) > 1 else parts[-1]
    return head.removeprefix("service_bundle_").removeprefix("service_")


def build_host(
    plugins: Iterable[str | ModuleType | tuple[str, object]] | None, allow: Iterable[str] | None, deny: Iterable[str]
) -> PluginHost:
    """The host for one app: the core's own plugins, then the given or discovered ones.

    ``plugins`` may name entry points (``"accounts"``), import paths
    (``"service_accounts.plugin"``), modules, or ``(name, object)`` pairs.
    ``None`` means discover installed entry points.
    """
    host = PluginHost()
    for path in CORE_PLUGINS:
        host.register(importlib.import_module(path), "core", kind="core", version=__version__)
    if plugins is None:
        host.load_entry_points(allow, deny)
    else:
        by_name = {
            entry.ep.name: entry for group in (PLUGIN_GROUP, BUNDLE_GROUP) for entry in installed_entry_points(group)
        }
        chosen: list[tuple[str, object, dict[str, Any]]] = []  # (name, plugin, register() keywords)
        for item in plugins:
            if isinstance(item, tuple):
                chosen.append((item[0], item[1], {}))
            elif isinstance(item, ModuleType):
                chosen.append((plugin_name(item), item, {}))
            elif item in by_name:
                entry = by_name[item]
                extra = {
                    "kind": "bundle" if entry.ep.group == BUNDLE_GROUP else "plugin",
                    "distribution": entry.distribution,
                    "version": entry.version,
                }
                chosen.append((item, entry.ep.load(), extra))
            else:
                module = importlib.import_module(item)
                chosen.append((plugin_name(module), module, {}))
        for name, plugin, _extra in chosen:
            host.add_specs(plugin, name)
        for name, plugin, extra in chosen:
            host.register(plugin, name, **extra)  # type: ignore[arg-type]
    host.check_pending()
    return host
