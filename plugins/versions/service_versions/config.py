"""The versions plugin's settings (``SERVICE_<FIELD>``), parsed by the core like its own.

* ``SERVICE_MAX_FLOW_VERSION_ENTRIES_PER_FLOW`` (50): versions kept per flow; older ones are pruned on
  save (the published version is never pruned).
* ``SERVICE_FLOW_VERSION_COALESCE_SECONDS`` (60): saves by one author within this many seconds of the
  newest automatic version replace it instead of adding one (the editor's autosave); 0 keeps every save.
* ``SERVICE_FLOW_PUBLICATION_REFRESH_SECONDS`` (1.0): how soon another process sees a publish, rollback
  or unpublish (the process that made it sees it at once, and every process once the flow's draft is saved
  again); runs read no row to learn what is published.
* ``SERVICE_AUDIT_RETENTION_DAYS`` (0: forever): audit entries older than this are removed by the
  writer; the log is otherwise append-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "versions"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class VersionsSettings:
    #: versions kept per flow (the published one is always kept)
    max_flow_version_entries_per_flow: int = 50
    #: seconds in which one author's saves coalesce into the newest automatic version (0: never)
    flow_version_coalesce_seconds: int = 60
    #: days audit entries are kept (0: forever)
    audit_retention_days: int = 0
    #: seconds a process trusts its list of published flows (0: read it for every run)
    flow_publication_refresh_seconds: float = 1.0

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "max_flow_version_entries_per_flow": (1, 10_000),
        "flow_version_coalesce_seconds": (0, 86_400),
        "audit_retention_days": (0, None),
    }


def settings(app: Flask | None = None) -> VersionsSettings:
    """The versions settings in force (typed)."""
    from core.appstate import settings_of

    return settings_of(VersionsSettings, app)
