"""The flows plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.

Uploads of flows and projects (JSON or ZIP, :mod:`service_flows.transfer`), bounded before parsing:

* ``SERVICE_MAX_ZIP_ENTRIES`` (1000): entries a ZIP may hold (every entry of its central directory,
  not only the ``.json`` ones), and flows one upload may hold; more answers 413.
* ``SERVICE_MAX_ZIP_EXPANDED_MB`` (unset: twice ``SERVICE_MAX_FLOW_BODY_SIZE``, so 64 MB): what the
  documents of one upload may add up to once expanded (a plain JSON upload too), from the sizes the
  archive declares and, while decompressing, from what actually comes out; one entry may be at most
  ``SERVICE_MAX_FLOW_BODY_SIZE``. More answers 413.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class FlowsSettings:
    #: strip API keys from flows when they are saved or exported
    remove_api_keys: bool = False
    #: name of the project that holds a user's first flows
    default_folder_name: str = "Starter Project"
    #: seconds between sweeps of expired public (shared playground) data
    public_flow_cleanup_interval: int = 3600
    #: entries of an uploaded ZIP, and flows of one upload (issue 26)
    max_zip_entries: int = 1000
    #: MB an upload may expand to; None: twice ``SERVICE_MAX_FLOW_BODY_SIZE`` (issue 26)
    max_zip_expanded_mb: int | None = None

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "max_zip_entries": (1, None),
        "max_zip_expanded_mb": (1, None),
    }


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("flows", FlowsSettings, "SERVICE_")
settings = SettingsReader(FlowsSettings)
