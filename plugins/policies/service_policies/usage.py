"""Component usage: an index kept current by flow writes, counted with ``GROUP BY``.

Counting rules (as the reference): keys are canonical registry keys (an alias
such as a legacy key counts under its current key; unknown types, ``note``
nodes included, count under their own type); a flow counts at most once per
component; example flows count too (they are indexed with the stored flows).

The index (``policies_flow`` + ``policies_flow_component``) is updated inside
the transaction of each flow write (``on_flow_changed``). When the plugin is
added to a server that already has flows, the first usage read (or ``service
policies reindex``) backfills it through the ``stored_flows`` hook, page by
page. Counts are cached per process for ``SERVICE_USAGE_SCAN_CACHE_TTL_SECONDS``;
a flow write in this process clears the cache.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.contracts import FlowRecord
from core.engine.nodes import node_types
from service_policies.models import FlowComponent, FlowEntry, Meta

INDEX_KEY = "usage_index"
INDEX_VERSION = 1
PAGE = 500

Canonical = Callable[[str], str]


def components_of(data: Any, canonical: Canonical) -> set[str]:
    return {canonical(t)[:255] for t in node_types(data)}


def _uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def index_flow(s: Session, flow: FlowRecord, canonical: Canonical) -> None:
    """(Re)index one flow in the caller's transaction (Core statements: no ORM flush per flow)."""
    flow_id = _uuid(flow.id)
    user_id = flow.user_id
    s.execute(sa.delete(FlowComponent).where(FlowComponent.flow_id == flow_id))
    s.execute(sa.delete(FlowEntry).where(FlowEntry.flow_id == flow_id))
    s.execute(
        sa.insert(FlowEntry).values(
            flow_id=flow_id, user_id=_uuid(user_id) if user_id else None, name=str(flow.name or "")[:255]
        )
    )
    keys = components_of(flow.data, canonical)
    if keys:
        s.execute(sa.insert(FlowComponent), [{"flow_id": flow_id, "component": k} for k in sorted(keys)])


def unindex_flow(s: Session, flow_id: Any) -> None:
    fid = _uuid(flow_id)
    s.execute(sa.delete(FlowComponent).where(FlowComponent.flow_id == fid))
    s.execute(sa.delete(FlowEntry).where(FlowEntry.flow_id == fid))


def index_complete(s: Session) -> bool:
    row = s.get(Meta, INDEX_KEY)
    return row is not None and row.value == INDEX_VERSION


def rebuild(s: Session, pages: Callable[[str | None, int], list[FlowRecord] | None], canonical: Canonical) -> int:
    """Re-index every flow ``pages(after_id, limit)`` yields; mark the index complete. Returns the count."""
    s.execute(sa.delete(FlowComponent))
    s.execute(sa.delete(FlowEntry))
    after: str | None = None
    total = 0
    while True:
        page = pages(after, PAGE) or []
        if not page:
            break
        entries: list[dict[str, Any]] = []
        comps: list[dict[str, Any]] = []
        for flow in page:
            fid = _uuid(flow.id)
            uid = flow.user_id
            entries.append({"flow_id": fid, "user_id": _uuid(uid) if uid else None, "name": str(flow.name or "")[:255]})
            comps.extend({"flow_id": fid, "component": k} for k in sorted(components_of(flow.data, canonical)))
        s.execute(sa.insert(FlowEntry), entries)
        if comps:
            s.execute(sa.insert(FlowComponent), comps)
        total += len(page)
        after = page[-1].id
        if len(page) < PAGE:
            break
    meta = s.get(Meta, INDEX_KEY)
    if meta is None:
        s.add(Meta(key=INDEX_KEY, value=INDEX_VERSION))
    else:
        meta.value = INDEX_VERSION
    s.flush()
    return total


def counts(s: Session) -> dict[str, Any]:
    rows = s.execute(sa.select(FlowComponent.component, sa.func.count()).group_by(FlowComponent.component)).all()
    scanned = s.execute(sa.select(sa.func.count()).select_from(FlowEntry)).scalar_one()
    return {"components": {k: int(n) for k, n in sorted(rows)}, "flows_scanned": int(scanned)}


def flows_using(s: Session, component: str, limit: int) -> dict[str, Any]:
    """Flows using ``component``, sorted by name then id in code-point order on every database."""
    where = FlowComponent.component == component
    total = s.execute(sa.select(sa.func.count()).select_from(FlowComponent).where(where)).scalar_one()
    name: Any = FlowEntry.name
    if s.get_bind().dialect.name == "postgresql":  # its default collation is not code-point order
        name = sa.collate(FlowEntry.name, "C")
    rows = s.execute(
        sa.select(FlowEntry.flow_id, FlowEntry.name)
        .join(FlowComponent, FlowComponent.flow_id == FlowEntry.flow_id)
        .where(where)
        .order_by(name, FlowEntry.flow_id)
        .limit(limit)
    ).all()
    return {"component": component, "total": int(total), "flows": [{"id": str(i), "name": n} for i, n in rows]}


class CountsCache:
    """The usage counts of this process, kept for a TTL; cleared by flow writes here."""

    def __init__(self, ttl: float):
        self.ttl = ttl
        self._value: tuple[float, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def get(self, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        hit = self._value
        if hit is not None and time.monotonic() - hit[0] < self.ttl:
            return hit[1]
        with self._lock:
            hit = self._value
            if hit is not None and time.monotonic() - hit[0] < self.ttl:
                return hit[1]
            value = compute()
            self._value = (time.monotonic(), value)
            return value

    def clear(self) -> None:
        self._value = None
