"""Extensions at run time: bundles reloaded and plugins switched on or off in every process.

A change is made once, by one process, and published as a *generation* in the deployment's
shared state (:mod:`core.shared`: files under ``flock``, or Redis in scale-out):

* ``core:gen:components``: bumped by a bundle reload; ``core:gen:components:<n>`` names the
  bundle reloaded at generation ``n``;
* ``core:gen:apps``: bumped when the enabled plugin set changes (:mod:`core.plugin_state`).

Every process checks the counters cheaply (at most every :data:`CHECK_INTERVAL` seconds per
process on the web side, through :class:`core.holder.AppHolder`; before every job on an RQ
worker) and catches up: it imports the reloaded bundles afresh and swaps its registry snapshot,
or rebuilds its Flask app. A run holds the registry snapshot it started with
(``PreparedRun.registry``), so a swap never changes a run in flight.

Bundles are imported *in a fresh module namespace*: the bundle's top-level package and its
submodules leave ``sys.modules`` and are imported again after
``importlib.invalidate_caches()``, so code installed with pip while the service runs is what
loads; a failed import puts the previous modules back.

Hand-written: reloading pluggy plugins across processes is not something pluggy or any
maintained library offers; the pieces are the standard library's ``importlib`` and the core's
shared state.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from flask import Flask

from core import appstate
from core.engine import Component, Registry, RegistryError
from core.plugins import BUNDLE_GROUP

log = logging.getLogger(__name__)

COMPONENTS_GEN = "core:gen:components"
APPS_GEN = "core:gen:apps"
RELOAD_LOCK = "core:reload:lock"
#: how long a reload may hold the lock before another may take it (a crashed reloader)
RELOAD_LOCK_TTL = 120.0
#: how often (seconds) a web process looks at the generation counters
CHECK_INTERVAL = 0.2
#: per-generation records live this long; a process further behind re-imports every reloaded bundle
RECORD_TTL = 86400.0

__all__ = [
    "APPS_GEN",
    "COMPONENTS_GEN",
    "RELOAD_LOCK",
    "BundleError",
    "BundleLoad",
    "ComponentSources",
    "bundle_entry_points",
    "component_diff",
    "generation",
    "import_bundle",
    "publish_reload",
    "sync_components",
]


class BundleError(Exception):
    """A bundle cannot be (re)loaded; ``code`` is the typed error's code."""

    def __init__(self, code: str, message: str, *, location: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.location = location
        self.hint = hint


@dataclass
class BundleLoad:
    """A bundle imported afresh: its entry point, distribution and component classes."""

    name: str
    distribution: str | None
    version: str | None
    module: str
    classes: list[type[Component]]
    warnings: list[str] = field(default_factory=list)


@dataclass
class ComponentSources:
    """Which plugin or bundle contributed which component classes (registration order), per app."""

    sources: dict[str, list[type[Component]]]
    generation: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def registry(self, replace: Mapping[str, list[type[Component]] | None] | None = None) -> Registry:
        """A snapshot of every source, with ``replace`` (name -> classes, or None: gone) applied."""
        merged = dict(self.sources)
        for name, classes in (replace or {}).items():
            if classes is None:
                merged.pop(name, None)
            else:
                merged[name] = classes
        return Registry.from_classes([k for classes in merged.values() for k in classes])

    def apply(self, replace: Mapping[str, list[type[Component]] | None]) -> None:
        for name, classes in replace.items():
            if classes is None:
                self.sources.pop(name, None)
            else:
                self.sources[name] = classes


def component_sources(host: appstate.PluginHostPort) -> ComponentSources:
    """The ``register_components`` contributions of an app's host, by plugin name."""
    sources: dict[str, list[type[Component]]] = {}
    for impl in host.hook.register_components.get_hookimpls():
        classes = cast("list[type[Component]] | None", impl.function())
        sources.setdefault(impl.plugin_name, []).extend(classes or [])
    return ComponentSources(sources)


# --- finding and importing bundles ------------------------------------------------------------------
def bundle_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed ``service.bundles`` entry points, read again from disk (new installs show up)."""
    importlib.invalidate_caches()
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=BUNDLE_GROUP)}


def _canonical(name: str | None) -> str:
    return (name or "").lower().replace("_", "-").replace(".", "-")


def import_bundle(name: str, extension_id: str | None = None) -> BundleLoad:
    """Import bundle ``name`` afresh and return its classes; raise :class:`BundleError` when it cannot load.

    ``extension_id`` (the distribution the caller means) must match the bundle's distribution.
    Codes: ``extension-not-found``, ``extension-name-mismatch``, ``extension-source-missing``,
    ``extension-import-failed``, ``extension-invalid-bundle``.
    """
    ep = bundle_entry_points().get(name)
    if ep is None:
        raise BundleError(
            "extension-not-found",
            f"No installed bundle is named '{name}'",
            location=f"entry point group {BUNDLE_GROUP}",
            hint="Install the bundle's distribution with pip, then reload.",
        )
    dist = ep.dist.name if ep.dist is not None else None
    version = ep.dist.version if ep.dist is not None else None
    if extension_id is not None and _canonical(extension_id) not in {_canonical(dist), _canonical(name)}:
        raise BundleError(
            "extension-name-mismatch",
            f"Bundle '{name}' belongs to distribution '{dist}', not '{extension_id}'",
            location=f"{BUNDLE_GROUP}:{name}",
            hint=f"Use the extension id '{dist}'.",
        )
    top = ep.module.split(".")[0]
    saved = {k: m for k, m in sys.modules.items() if k == top or k.startswith(top + ".")}
    for key in saved:
        del sys.modules[key]
    importlib.invalidate_caches()
    try:
        plugin = ep.load()
    except ModuleNotFoundError as exc:
        _restore(top, saved)
        missing = exc.name or ""
        if missing and (ep.module == missing or ep.module.startswith(missing + ".")):
            raise BundleError(
                "extension-source-missing",
                f"The source of bundle '{name}' is missing: module '{missing}' is not installed",
                location=ep.value,
                hint="Reinstall the distribution; its files are gone.",
            ) from None
        raise BundleError(
            "extension-import-failed",
            f"Bundle '{name}' failed to import: {exc}",
            location=ep.value,
            hint="Install the bundle's dependencies.",
        ) from None
    except Exception as exc:  # any error of the bundle's own code: report it, keep the old modules
        _restore(top, saved)
        raise BundleError(
            "extension-import-failed",
            f"Bundle '{name}' failed to import: {type(exc).__name__}: {exc}",
            location=ep.value,
            hint="Fix the bundle's code and reload.",
        ) from None
    declared = getattr(plugin, "BUNDLE_NAME", None) or getattr(plugin, "PLUGIN_NAME", None)
    if declared and declared != name:
        _restore(top, saved)
        raise BundleError(
            "extension-name-mismatch",
            f"Bundle module {ep.module} declares the name '{declared}' but is installed as '{name}'",
            location=ep.value,
            hint="The entry point name and BUNDLE_NAME must be the same.",
        )
    try:
        hook = plugin.register_components
        classes = list(hook() or [])
        Registry.from_classes(classes)  # duplicates inside the bundle, non-components
    except RegistryError as exc:
        _restore(top, saved)
        raise BundleError(
            "extension-duplicate-component" if "Duplicate" in str(exc) else "extension-invalid-bundle",
            str(exc),
            location=ep.value,
            hint="Every component key must be unique across the installed bundles.",
        ) from None
    except Exception as exc:
        _restore(top, saved)
        raise BundleError(
            "extension-invalid-bundle",
            f"Bundle '{name}' does not list its components: {type(exc).__name__}: {exc}",
            location=ep.value,
            hint="A bundle implements register_components() returning Component classes.",
        ) from None
    warnings = [] if classes else [f"Bundle '{name}' contributes no components"]
    return BundleLoad(name, dist, version, ep.module, classes, warnings)


def _restore(top: str, saved: Mapping[str, Any]) -> None:
    for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
        del sys.modules[key]
    sys.modules.update(saved)


# --- comparing snapshots ------------------------------------------------------------------------------
def _shape(klass: type[Component]) -> str:
    try:
        return json.dumps(klass.to_frontend_node(None), sort_keys=True, default=str)
    except Exception:  # a component whose node cannot be drawn still compares by identity of its name
        return f"{klass.__module__}.{klass.__qualname__}"


def component_diff(old: Iterable[type[Component]], new: Iterable[type[Component]]) -> dict[str, list[str]]:
    """``{added, removed, changed}`` component keys between two class lists (changed: its node differs)."""
    before = {k.key: k for k in old}
    after = {k.key: k for k in new}
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(k for k in set(before) & set(after) if _shape(before[k]) != _shape(after[k])),
    }


# --- generations ----------------------------------------------------------------------------------
def generation(shared: appstate.SharedStatePort, key: str) -> int:
    value = shared.get(key)
    return int(value) if value else 0


def publish_reload(shared: appstate.SharedStatePort, bundle: str) -> int:
    """Bump the component generation after a reload of ``bundle``; return the new generation."""
    gen = int(shared.incr(COMPONENTS_GEN))
    shared.put(f"{COMPONENTS_GEN}:{gen}", bundle, ttl=RECORD_TTL)
    return gen


def sync_components(app: Flask, *, force: bool = False, current: int | None = None) -> bool:
    """Catch up with reloads other processes published; True when the registry changed here.

    ``current``: the component generation the caller has just read (a worker reads it with the
    plugin generation in one round trip)."""
    svc = appstate.state_or_none(app)
    if svc is None:
        return False
    sources = svc.component_sources
    now = time.monotonic()
    if not force and now - svc.components_checked < CHECK_INTERVAL:
        return False
    svc.components_checked = now
    gen = generation(svc.shared, COMPONENTS_GEN) if current is None else current
    if gen <= sources.generation:
        return False
    with sources.lock:
        if gen <= sources.generation:
            return False
        names: set[str] = set()
        for n in range(sources.generation + 1, gen + 1):
            name = svc.shared.get(f"{COMPONENTS_GEN}:{n}")
            if name is None:  # too far behind: reload every bundle this app has
                names |= {i.name for i in svc.host.list() if i.kind == "bundle"}
            else:
                names.add(name)
        replace: dict[str, list[type[Component]] | None] = {}
        for name in sorted(names):
            try:
                replace[name] = import_bundle(name).classes
            except BundleError as exc:
                if exc.code in ("extension-not-found", "extension-source-missing"):
                    replace[name] = None  # uninstalled: its components go
                else:
                    log.warning("bundle %s did not reload in this process: %s", name, exc.message)
        try:
            svc.components.swap(sources.registry(replace))
            sources.apply(replace)
        except RegistryError as exc:
            log.warning("component registry not rebuilt in this process: %s", exc)
        sources.generation = gen
    log.info("component registry at generation %s (%s)", gen, ", ".join(sorted(names)))
    return True
