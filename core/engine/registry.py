"""Component registry: an immutable snapshot ``key -> class`` and a holder that swaps snapshots.

Bundle reload is a rebuild: a new :class:`Registry` is built from the bundles'
classes and swapped into the :class:`RegistryHolder` under a lock; runs that
already hold the old snapshot keep using it.

Legacy node types: flows saved by the reference name a node by whatever its
release called the component. Besides each class's explicit ``aliases`` (the
reference's legacy table: ``parser``, ``Prompt``...), a snapshot derives the
names the reference derives: the display name, the key without a
``Component`` suffix, and an extension key's bare class name. A derived name
never shadows a key or an explicit alias, and one that two components would
share resolves to neither (no guessing between components).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from core.engine.component import Component
from core.engine.errors import RegistryError

__all__ = ["Registry", "RegistryHolder", "load_bundle_components"]


class Registry:
    """Immutable mapping of component keys (and legacy aliases) to component classes."""

    __slots__ = ("_aliases", "_classes")

    def __init__(self, classes: Mapping[str, type[Component]], aliases: Mapping[str, str] | None = None):
        self._classes = MappingProxyType(dict(classes))
        self._aliases = MappingProxyType(dict(aliases or {}))

    @classmethod
    def from_classes(cls, classes: Iterable[type[Component]], aliases: Mapping[str, str] | None = None) -> Registry:
        """Build a snapshot; duplicate keys (or an alias clashing with a key) raise :class:`RegistryError`."""
        found: dict[str, type[Component]] = {}
        alias_map: dict[str, str] = {}
        for klass in classes:
            if not isinstance(klass, type) or not issubclass(klass, Component):
                raise RegistryError(f"{klass!r} is not a Component subclass")
            key = klass.key
            if not key:
                raise RegistryError(f"Component class {klass.__module__}.{klass.__qualname__} has no key")
            if key in found:
                other = found[key]
                raise RegistryError(
                    f"Duplicate component key '{key}': {other.__module__}.{other.__qualname__} "
                    f"and {klass.__module__}.{klass.__qualname__}"
                )
            found[key] = klass
            for alias in klass.aliases:
                alias_map[alias] = key
        for alias, target in (aliases or {}).items():
            alias_map[alias] = target
        for alias, target in alias_map.items():
            if alias in found:
                raise RegistryError(
                    f"Alias '{alias}' clashes with the component key '{alias}' ({found[alias].__qualname__})"
                )
            if target not in found:
                raise RegistryError(f"Alias '{alias}' points to unknown component '{target}'")
        return cls(found, {**_derived_aliases(found, alias_map), **alias_map})

    def get(self, key: str) -> type[Component] | None:
        klass = self._classes.get(key)
        if klass is None and key in self._aliases:
            klass = self._classes.get(self._aliases[key])
        return klass

    def __getitem__(self, key: str) -> type[Component]:
        klass = self.get(key)
        if klass is None:
            raise KeyError(key)
        return klass

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __len__(self) -> int:
        return len(self._classes)

    def keys(self) -> list[str]:
        return list(self._classes)

    @property
    def aliases(self) -> Mapping[str, str]:
        return self._aliases

    def classes(self) -> list[type[Component]]:
        return list(self._classes.values())

    def catalog(self, locale: str | None = "en") -> dict[str, dict[str, Any]]:
        """``{category: {key: frontend node}}`` as ``GET /api/v1/all`` serves it (without extra members)."""
        out: dict[str, dict[str, Any]] = {}
        for key, klass in sorted(self._classes.items(), key=lambda kv: (kv[1].category, kv[0])):
            out.setdefault(klass.category, {})[key] = klass.to_frontend_node(locale)
        return out

    def display_names(self, locale: str | None = "en") -> dict[str, str]:
        return {key: klass.localized_name(locale) for key, klass in self._classes.items()}


_EXT_KEY = re.compile(r"^ext:[^:]+:(?P<name>[^@]+)@.+$")


def _derived_names(key: str, klass: type[Component]) -> list[str]:
    """The names the reference derives for a component besides its key (see the module docstring)."""
    names: list[str] = []
    ext = _EXT_KEY.match(key)
    bare = ext.group("name") if ext else key
    names.append(bare)
    if bare.endswith("Component") and len(bare) > len("Component"):
        names.append(bare.removesuffix("Component"))
    if klass.display_name:
        names.append(klass.display_name)
    return [name for name in dict.fromkeys(names) if name and name != key]


def _derived_aliases(found: Mapping[str, type[Component]], explicit: Mapping[str, str]) -> dict[str, str]:
    """``{derived name: key}`` for the names exactly one component derives and no key or explicit alias takes."""
    claims: dict[str, set[str]] = {}
    for key, klass in found.items():
        for name in _derived_names(key, klass):
            claims.setdefault(name, set()).add(key)
    return {
        name: next(iter(keys))
        for name, keys in claims.items()
        if len(keys) == 1 and name not in found and name not in explicit
    }


class RegistryHolder:
    """Holds the current :class:`Registry`; :meth:`swap` replaces it atomically."""

    def __init__(self, registry: Registry | None = None):
        self._lock = threading.Lock()
        self._registry = registry or Registry({})

    @property
    def current(self) -> Registry:
        return self._registry

    def swap(self, registry: Registry) -> Registry:
        """Install ``registry``; returns the previous snapshot."""
        with self._lock:
            old, self._registry = self._registry, registry
        return old

    def rebuild(self, classes: Iterable[type[Component]], aliases: Mapping[str, str] | None = None) -> Registry:
        """Build a snapshot from ``classes`` (validated before anything changes) and swap it in."""
        new = Registry.from_classes(classes, aliases)
        self.swap(new)
        return new


def load_bundle_components(plugin_manager: Any) -> list[type[Component]]:
    """Collect component classes from every ``register_components`` hook implementation."""
    classes: list[type[Component]] = []
    for result in plugin_manager.hook.register_components():
        if result:
            classes.extend(result)
    return classes
