"""The editor plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them). Read with ``settings()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.appstate import SettingsReader
from core.records import SettingsSection


def _choice(*values: str) -> dict[str, Any]:
    return {"choices": values}


@dataclass(frozen=True)
class EditorSettings:
    """What the editor reads from ``/api/v1/config`` (every field is a member of that response)."""

    auto_saving: bool = True
    auto_saving_interval: int = 1000
    event_delivery: str = field(default="streaming", metadata=_choice("streaming", "polling", "direct"))
    frontend_timeout: int = 0
    health_check_max_retries: int = 5
    serialization_max_items_length: int = 1000
    serialization_max_text_length: int = 6000
    hide_getting_started_progress: bool = False
    hide_logout_button: bool = False
    hide_new_flow_button: bool = False
    hide_new_project_button: bool = False
    hide_starter_projects: bool = False
    embedded_mode: bool = False
    voice_mode_available: bool = False
    agentic_experience: bool = False
    assistant_max_message_length: int = 2000
    substitute_outdated_component_code: bool = False

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "serialization_max_items_length": (1, None),
        "serialization_max_text_length": (1, None),
        "assistant_max_message_length": (1, None),
    }


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("editor", EditorSettings, "SERVICE_")
settings = SettingsReader(EditorSettings)
