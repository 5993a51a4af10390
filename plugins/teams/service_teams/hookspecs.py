"""Hooks the teams plugin publishes (docs/hooks.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import ResourceRef

__all__ = ["resource_ref"]


@hookspec(firstresult=True)
def resource_ref(kind: str, resource_id: str) -> ResourceRef | None:
    """The owner and project of a stored resource of ``kind`` (``flow``, ``project``...), any owner's,
    or None when no such resource (or not yours to answer). Asked when a share is created and by
    ``POST /api/v1/authz/me/permissions``; the flows plugin answers for flows and projects."""
