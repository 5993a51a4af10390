"""``SERVICE_TWEAKS_POLICY`` for the web service: the engine's rule (:mod:`core.engine.tweaks`) answered as
an :class:`~core.errors.ApiError`.

The rule itself (which fields tweaks may set, the input/tweak conflict) lives in the engine so the
executor enforces it too; these functions keep their names and signatures for the surfaces that call
them, and raise what a view answers: 422 ``{"detail": {"code": "TWEAKS_REFUSED", ...}}``, 400 for a
conflict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.engine import tweaks as rule
from core.engine.errors import RunRefused
from core.engine.tweaks import INPUT_CONFLICT, POLICIES, TWEAKS_REFUSED, refused_tweaks
from core.errors import ApiError

__all__ = [
    "INPUT_CONFLICT",
    "POLICIES",
    "TWEAKS_REFUSED",
    "api_error",
    "check_input_conflict",
    "check_tweaks",
    "refused_tweaks",
]


def api_error(exc: RunRefused) -> ApiError:
    """The web answer of an engine refusal: its status, ``{"detail": exc.detail}``."""
    return ApiError(exc.status, exc.detail)


def check_tweaks(flow_data: Mapping[str, Any], tweaks: Mapping[str, Any] | None, policy: str) -> None:
    """Raise the 422 ``TWEAKS_REFUSED`` error when ``policy`` refuses any tweak."""
    try:
        rule.check_tweaks(flow_data, tweaks, policy)
    except RunRefused as exc:
        raise api_error(exc) from None


def check_input_conflict(
    flow_data: Mapping[str, Any], tweaks: Mapping[str, Any] | None, input_value: str | None, input_type: str
) -> None:
    """400 when the body's ``input_value`` and a tweak of the same input component both set ``input_value``."""
    try:
        rule.check_input_conflict(flow_data, tweaks, input_value, input_type)
    except RunRefused as exc:
        raise api_error(exc) from None
