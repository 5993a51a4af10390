"""``GET /api/v1/all``: the component catalog, serialised once per registry snapshot and locale.

The body is ``{<category>: {<key>: <frontend node>}, ..., "component_display_names": {key: name}}``.
Both the JSON and its gzip encoding are cached for the registry snapshot in
force (a bundle reload swaps the snapshot and so invalidates the cache) and
the set of hidden keys: components an admin blocked (the ``blocked_components``
hook) are left out unless a superuser asks for ``include_blocked``.
"""

from __future__ import annotations

import gzip
import json
import threading
from typing import Any

from core.engine import Registry

DEFAULT_LOCALE = "en"
_lock = threading.Lock()
_cache: dict[tuple[int, str, frozenset[str]], tuple[Registry, bytes, bytes]] = {}


_locales: dict[int, tuple[Registry, list[str]]] = {}


def locales(reg: Registry) -> list[str]:
    """Locales the installed components are translated into (English first), computed once per snapshot."""
    hit = _locales.get(id(reg))
    if hit is not None and hit[0] is reg:
        return hit[1]
    found = {DEFAULT_LOCALE}
    for klass in reg.classes():
        found.update(getattr(klass, "display_names", {}) or {})
    out = [DEFAULT_LOCALE, *sorted(found - {DEFAULT_LOCALE})]
    with _lock:
        _locales.clear()
        _locales[id(reg)] = (reg, out)
    return out


def payload(reg: Registry, locale: str, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for category, nodes in reg.catalog(locale).items():
        kept = {k: v for k, v in nodes.items() if k not in hidden}
        if kept or not hidden:
            body[category] = kept
    body["component_display_names"] = {k: v for k, v in reg.display_names(locale).items() if k not in hidden}
    return body


def encoded(reg: Registry, locale: str, hidden: frozenset[str] = frozenset()) -> tuple[bytes, bytes]:
    """``(json bytes, gzip bytes)`` of the catalog for ``locale`` without ``hidden`` keys, cached."""
    key = (id(reg), locale, hidden)
    hit = _cache.get(key)
    if hit is not None and hit[0] is reg:
        return hit[1], hit[2]
    raw = json.dumps(payload(reg, locale, hidden), ensure_ascii=False, separators=(",", ":")).encode()
    packed = gzip.compress(raw, compresslevel=6)
    with _lock:
        for stale in [k for k, v in _cache.items() if v[0] is not reg]:
            del _cache[stale]
        if len(_cache) > 64:  # many policy revisions: keep the cache bounded
            _cache.clear()
        _cache[key] = (reg, raw, packed)
    return raw, packed
