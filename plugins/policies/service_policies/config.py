"""Settings of the policies plugin.

``SERVICE_POLICIES_*`` (section ``policies``):

* ``BLOCKED_COMPONENTS``, ``BLOCKED_TEMPLATES``, ``APPROVED_PROVIDERS``:
  comma-separated lists. When one is set, that policy is *managed externally*:
  it is read from here, ``managed_externally`` is true, and replacing it
  through the API is refused (409 naming the variable).
* ``FILE``: a JSON file ``{"blocked_components": [...], "blocked_templates":
  [...], "approved_provider_ids": [...]}``; a member present there manages
  that policy externally too (the variables win over the file).
* ``REFRESH_SECONDS``: how often a process re-checks the stored policy
  revision for its in-process snapshot of blocked components (used on every
  run and catalog read). 0 checks on every use.

``SERVICE_USAGE_SCAN_CACHE_TTL_SECONDS`` (section ``usage``, the spec's name):
how long component-usage counts are cached (flow writes invalidate the cache
of the process that wrote; other processes may lag by up to this TTL).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.settings import SettingsError

POLICIES_PREFIX = "SERVICE_POLICIES_"
KINDS = {"components": "blocked_components", "templates": "blocked_templates", "providers": "approved_providers"}


@dataclass(frozen=True)
class PoliciesConfig:
    blocked_components: tuple[str, ...] | None = None
    blocked_templates: tuple[str, ...] | None = None
    approved_providers: tuple[str, ...] | None = None
    file: Path | None = None
    refresh_seconds: float = 1.0


@dataclass(frozen=True)
class UsageConfig:
    usage_scan_cache_ttl_seconds: float = 30.0


def external_items(cfg: PoliciesConfig, kind: str) -> tuple[list[str], str] | None:
    """``(items, source)`` when ``kind`` is managed externally (variable or file), else None."""
    field_name = KINDS[kind]
    value = getattr(cfg, field_name)
    if value is not None:
        return [v for v in value if v], POLICIES_PREFIX + field_name.upper()
    if cfg.file is not None:
        member = {"providers": "approved_provider_ids"}.get(kind, field_name)
        doc = _read_file(cfg.file)
        if member in doc:
            items = doc[member]
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise SettingsError(f"{POLICIES_PREFIX}FILE: '{member}' must be a list of strings")
            return list(items), f"{POLICIES_PREFIX}FILE ({cfg.file})"
    return None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{POLICIES_PREFIX}FILE: cannot read {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise SettingsError(f"{POLICIES_PREFIX}FILE: {path} must hold a JSON object")
    return doc
