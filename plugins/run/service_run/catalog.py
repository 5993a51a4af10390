"""``GET /api/v1/all``: the component catalog, serialised once per registry snapshot and locale.

The body is ``{<category>: {<key>: <frontend node>}, ..., "component_display_names": {key: name}}``.
Both the JSON and its gzip encoding are cached for the registry snapshot in
force (a bundle reload swaps the snapshot and so invalidates the cache).
"""

from __future__ import annotations

import gzip
import json
import threading
from typing import Any

from core.engine import Registry

DEFAULT_LOCALE = "en"
_lock = threading.Lock()
_cache: dict[tuple[int, str], tuple[Registry, bytes, bytes]] = {}


def locales(reg: Registry) -> list[str]:
    """Locales the installed components are translated into (English first)."""
    found = {DEFAULT_LOCALE}
    for klass in reg.classes():
        found.update(getattr(klass, "display_names", {}) or {})
    return [DEFAULT_LOCALE, *sorted(found - {DEFAULT_LOCALE})]


def payload(reg: Registry, locale: str) -> dict[str, Any]:
    body: dict[str, Any] = dict(reg.catalog(locale))
    body["component_display_names"] = reg.display_names(locale)
    return body


def encoded(reg: Registry, locale: str) -> tuple[bytes, bytes]:
    """``(json bytes, gzip bytes)`` of the catalog for ``locale``, cached per registry snapshot."""
    key = (id(reg), locale)
    hit = _cache.get(key)
    if hit is not None and hit[0] is reg:
        return hit[1], hit[2]
    raw = json.dumps(payload(reg, locale), ensure_ascii=False, separators=(",", ":")).encode()
    packed = gzip.compress(raw, compresslevel=6)
    with _lock:
        for stale in [k for k, v in _cache.items() if v[0] is not reg]:
            del _cache[stale]
        _cache[key] = (reg, raw, packed)
    return raw, packed
