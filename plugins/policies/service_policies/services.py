"""Policies: read and replace (atomically, with a change-log entry), and the per-process snapshot.

Every replacement bumps the policy row's ``revision`` inside the same
transaction as the change-log entry. Readers of the model-provider policy go to
the database each time (one primary-key read), so every process sees a
replacement at once. The blocked-component and blocked-template sets are needed
on every run and catalog read, so each process keeps a snapshot and re-checks
the stored revisions at most every ``SERVICE_POLICIES_REFRESH_SECONDS`` (the
writing process refreshes immediately).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import audit
from core.auth import Actor
from core.db import utcnow
from core.errors import ApiError, validation_error
from service_policies.config import PoliciesConfig, external_items
from service_policies.models import Policy, PolicyChange

KINDS = ("components", "templates", "providers")
MAX_ITEMS = 1000
MAX_LENGTH = 255
PROVIDER_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


# --- normalisation and validation -----------------------------------------------------------
def normalise_provider_id(raw: str) -> str:
    """Slug-normalise as the reference does: ``"OpenAI"`` -> ``openai``, ``"Bad Id!"`` -> ``bad-id``."""
    text = raw.strip().lower()
    text = re.sub(r"[^a-z0-9._-]+", "-", text)
    text = re.sub(r"-{2,}", "-", text)
    return text.strip("-._")


def clean_items(kind: str, items: list[str]) -> list[str]:
    """Validated, de-duplicated, sorted items of a policy (422 naming the item otherwise)."""
    if len(items) > MAX_ITEMS:
        raise validation_error(["body", _field(kind)], f"List should have at most {MAX_ITEMS} items", "too_long")
    out: set[str] = set()
    for i, item in enumerate(items):
        loc: list[str | int] = ["body", _field(kind), i]
        if kind == "providers":
            if len(item) > MAX_LENGTH:
                raise validation_error(loc, f"String should have at most {MAX_LENGTH} characters", "string_too_long")
            slug = normalise_provider_id(item)
            if not slug or not PROVIDER_ID.match(slug):
                raise validation_error(loc, f"'{item}' cannot be normalised to a provider id", "value_error")
            out.add(slug)
        else:
            if not 1 <= len(item) <= MAX_LENGTH:
                raise validation_error(
                    loc, f"String should have between 1 and {MAX_LENGTH} characters", "string_length"
                )
            out.add(item)
    return sorted(out)


def _field(kind: str) -> str:
    return "approved_provider_ids" if kind == "providers" else "blocked"


# --- reading and replacing ----------------------------------------------------------------------
@dataclass(frozen=True)
class PolicyState:
    items: list[str]
    managed_externally: bool
    source: str | None
    revision: int


def read(s: Session, cfg: PoliciesConfig, kind: str) -> PolicyState:
    external = external_items(cfg, kind)
    if external is not None:
        items, source = external
        if kind == "providers":
            items = sorted({normalise_provider_id(i) for i in items} - {""})
        return PolicyState(sorted(set(items)), True, source, 0)
    row = s.get(Policy, kind)
    if row is None:
        return PolicyState([], False, None, 0)
    return PolicyState(list(row.items or []), False, None, row.revision)


def replace(s: Session, cfg: PoliciesConfig, kind: str, items: list[str], actor: Actor) -> PolicyState:
    """Replace the complete set (one transaction: row, revision, change-log entry)."""
    external = external_items(cfg, kind)
    if external is not None:
        raise ApiError(409, f"The {_label(kind)} policy is managed externally by {external[1]}; change it there")
    cleaned = clean_items(kind, items)
    row = s.execute(sa.select(Policy).where(Policy.kind == kind).with_for_update()).scalar_one_or_none()
    if row is None:
        row = Policy(kind=kind, items=[], revision=0)
        s.add(row)
    before = list(row.items or [])
    row.items = cleaned
    row.revision = (row.revision or 0) + 1
    row.updated_by = actor.id
    row.updated_at = utcnow()
    s.add(
        PolicyChange(
            kind=kind,
            actor_id=actor.id,
            actor_name=actor.username or None,
            before=before,
            after=cleaned,
            revision=row.revision,
        )
    )
    s.flush()
    audit.record(f"policy:{kind}:write", "policy", kind, name=_label(kind), user_id=actor.id, operation="replace",
                 details={"revision": row.revision, "added": sorted(set(cleaned) - set(before)),
                          "removed": sorted(set(before) - set(cleaned))})  # fmt: skip
    return PolicyState(cleaned, False, None, row.revision)


def _label(kind: str) -> str:
    return {"components": "component", "templates": "template", "providers": "model provider"}[kind]


def changes(s: Session, kind: str | None, limit: int, before: uuid.UUID | None = None) -> list[dict[str, Any]]:
    """The change log, newest first."""
    query = sa.select(PolicyChange).order_by(PolicyChange.at.desc(), PolicyChange.id.desc()).limit(limit)
    if kind:
        query = query.where(PolicyChange.kind == kind)
    return [
        {
            "id": str(c.id),
            "policy": c.kind,
            "actor_id": str(c.actor_id) if c.actor_id else None,
            "actor": c.actor_name,
            "at": c.at.isoformat(),
            "before": list(c.before or []),
            "after": list(c.after or []),
            "added": sorted(set(c.after or []) - set(c.before or [])),
            "removed": sorted(set(c.before or []) - set(c.after or [])),
            "revision": c.revision,
        }
        for c in s.execute(query).scalars()
    ]


# --- the per-process snapshot of blocked sets --------------------------------------------------
@dataclass(frozen=True)
class Blocked:
    components: frozenset[str]
    templates: frozenset[str]
    revisions: tuple[int, int]


EMPTY = Blocked(frozenset(), frozenset(), (0, 0))


class Snapshot:
    """Blocked components and templates of this process, refreshed by revision (see the module doc)."""

    def __init__(self, cfg: PoliciesConfig):
        self.cfg = cfg
        self._value = EMPTY
        self._checked = 0.0
        self._lock = threading.Lock()
        self._external = {k: external_items(cfg, k) for k in ("components", "templates")}

    def get(self) -> Blocked:
        now = time.monotonic()
        if now - self._checked < self.cfg.refresh_seconds and self._checked:
            return self._value
        with self._lock:
            if now - self._checked >= self.cfg.refresh_seconds or not self._checked:
                self._refresh()
                self._checked = time.monotonic()
        return self._value

    def invalidate(self) -> None:
        self._checked = 0.0

    def _refresh(self) -> None:
        # the caller's session, not a second connection: SQLite runs one pooled connection per process
        from core import db

        session = db.session()
        began = not session.in_transaction()
        try:
            rows = {
                r.kind: (r.revision, r.items)
                for r in session.execute(
                    sa.select(Policy.kind, Policy.revision, Policy.items).where(
                        Policy.kind.in_(("components", "templates"))
                    )
                )
            }
        finally:
            if began:  # a read transaction opened only for this: give the connection back
                session.rollback()
        revisions = (rows.get("components", (0, []))[0], rows.get("templates", (0, []))[0])
        if revisions == self._value.revisions and self._checked:
            return
        sets = []
        for kind in ("components", "templates"):
            ext = self._external[kind]
            sets.append(frozenset(ext[0]) if ext is not None else frozenset(rows.get(kind, (0, []))[1] or []))
        self._value = Blocked(sets[0], sets[1], revisions)
