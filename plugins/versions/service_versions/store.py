"""Flow versions: recorded on every save, compact, pruned; read, listed, published.

Every write of a flow's graph reaches :func:`record_save` through the flows plugin's
``on_flow_changed`` hook, inside the writing transaction. The graph is serialised canonically
(sorted keys), hashed, and compressed with zlib: an unchanged graph (a rename) adds nothing, and a
save by the same author within ``flow_version_coalesce_seconds`` of the newest automatic version
replaces that version (autosaves coalesce) unless it is published. An explicit snapshot
(``POST .../versions/``) is never coalesced into. Past ``max_flow_version_entries_per_flow`` the oldest
versions are pruned, never the published one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
import uuid
import zlib
from collections.abc import Mapping
from typing import Any, cast

import orjson
import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import db
from core.contracts import FlowRecord, PublishedVersion
from core.errors import ApiError
from service_versions.config import settings
from service_versions.models import FlowVersion, Publication

VERSION_NOT_FOUND = "Version entry not found"


def _uuid(value: Any) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError):
        return None


def _aware(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


def canonical(data: Any) -> bytes:
    """The graph's canonical JSON: sorted keys, no spaces (what is hashed and compressed)."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def pack(data: Any) -> tuple[bytes, str, int]:
    """``(compressed, sha256, size)`` of a graph."""
    text = canonical(data)
    return zlib.compress(text, 6), hashlib.sha256(text).hexdigest(), len(text)


def unpack(blob: bytes) -> Any:
    return orjson.loads(zlib.decompress(blob))


# --- recording --------------------------------------------------------------------------------------
_TABLE = cast("sa.Table", FlowVersion.__table__)
_HEAD_COLUMNS = ("id", "version_number", "digest", "auto", "author_id", "created_at", "user_id")


def _head(s: Session, flow_id: uuid.UUID) -> Any:
    """The newest version's small columns (never its graph) and the flow's published version id, or None."""
    c = FlowVersion.__table__.c
    published = sa.select(Publication.version_id).where(Publication.flow_id == flow_id).scalar_subquery()
    query = (
        sa.select(*(c[name] for name in _HEAD_COLUMNS), published.label("published_id"))
        .where(c.flow_id == flow_id)
        .order_by(c.version_number.desc())
        .limit(1)
    )
    return s.execute(query).first()


def _published_id(s: Session, flow_id: uuid.UUID) -> uuid.UUID | None:
    return s.scalar(sa.select(Publication.version_id).where(Publication.flow_id == flow_id))


def record_save(s: Session, flow: FlowRecord, author_id: str | None, *, autosave: bool = True) -> None:
    """Record the saved graph of ``flow`` as a version, or coalesce it into the newest automatic one.

    Core statements on the request's session (the flow's own write is in the same transaction): the
    newest version's small columns, then one UPDATE or one INSERT, and a DELETE past the retention.
    """
    flow_id = _uuid(flow.id)
    if flow_id is None or flow.data is None:
        return
    blob, digest, size = pack(flow.data)
    head = _head(s, flow_id)
    owner = _uuid(flow.user_id)
    if head is not None and owner is not None and head.user_id != owner:
        follow_owner(s, flow_id, owner)
    if head is not None and head.digest == digest:
        return
    now = db.utcnow()
    saved_at = dt.datetime.fromisoformat(flow.updated_at) if flow.updated_at else now
    author = _uuid(author_id)
    window = settings().flow_version_coalesce_seconds
    if (
        autosave
        and head is not None
        and head.auto
        and window > 0
        and head.author_id == author
        and (now - _aware(head.created_at)).total_seconds() < window
        and head.published_id != head.id
    ):
        c = FlowVersion.__table__.c
        s.execute(
            sa.update(_TABLE).where(c.id == head.id).values(data_z=blob, digest=digest, size=size, saved_at=saved_at)
        )
        return
    # a flow's first version (as created or imported) is kept as it is: later autosaves start a second one
    auto = autosave and head is not None
    _insert(s, flow_id, _uuid(flow.user_id), author, blob, digest, size, saved_at, head, auto=auto)


def follow_owner(s: Session, flow_id: uuid.UUID, owner: uuid.UUID) -> None:
    """The flow changed owner (moved into a project shared with its former owner): its history and its
    publication are the new owner's, listed and restored as theirs."""
    s.execute(sa.update(_TABLE).where(_TABLE.c.flow_id == flow_id).values(user_id=owner))
    s.execute(sa.update(Publication).where(Publication.flow_id == flow_id).values(user_id=owner))


def _insert(
    s: Session,
    flow_id: uuid.UUID,
    user_id: uuid.UUID | None,
    author: uuid.UUID | None,
    blob: bytes,
    digest: str,
    size: int,
    saved_at: dt.datetime,
    head: Any,
    *,
    auto: bool,
    description: str | None = None,
) -> uuid.UUID:
    number = (head.version_number + 1) if head is not None else 1
    new_id = db.new_id()
    s.execute(
        sa.insert(_TABLE).values(
            id=new_id,
            flow_id=flow_id,
            user_id=user_id,
            author_id=author,
            version_number=number,
            description=description,
            data_z=blob,
            digest=digest,
            size=size,
            auto=auto,
            created_at=db.utcnow(),
            saved_at=saved_at,
        )
    )
    prune(s, flow_id, number)
    return new_id


def snapshot(
    s: Session, flow: FlowRecord, author_id: str, description: str | None, data: Mapping[str, Any] | None
) -> FlowVersion:
    """An explicit version (``POST .../versions/``): of ``data`` when given, else of the stored graph.

    When the stored graph is already the newest version, that version is kept (named, no longer
    automatic) instead of a duplicate being added.
    """
    flow_id = _uuid(flow.id)
    assert flow_id is not None
    graph = data if data is not None else (flow.data or {})
    blob, digest, size = pack(graph)
    head = _head(s, flow_id)
    if head is not None and head.digest == digest and data is None:
        entry = s.get(FlowVersion, head.id)
        assert entry is not None
        entry.auto = False
        if description:
            entry.description = description
        s.flush()
        return entry
    saved_at = dt.datetime.fromisoformat(flow.updated_at) if flow.updated_at and data is None else db.utcnow()
    new_id = _insert(
        s, flow_id, _uuid(flow.user_id), _uuid(author_id), blob, digest, size, saved_at, head,
        auto=False, description=description,
    )  # fmt: skip
    entry = s.get(FlowVersion, new_id)
    assert entry is not None
    return entry


def prune(s: Session, flow_id: uuid.UUID, newest: int) -> None:
    """Keep the versions numbered within ``max_flow_version_entries_per_flow`` of the newest (and the published one).

    Nothing to do (no statement) until a flow has more versions than that; then one DELETE.
    """
    keep = settings().max_flow_version_entries_per_flow
    if newest <= keep:
        return
    c = FlowVersion.__table__.c
    published = sa.select(Publication.version_id).where(Publication.flow_id == flow_id).scalar_subquery()
    s.execute(
        sa.delete(_TABLE).where(
            c.flow_id == flow_id,
            c.version_number <= newest - keep,
            sa.or_(published.is_(None), c.id != published),
        )
    )


def forget_flow(s: Session, flow_id: str) -> None:
    """A deleted flow's versions and publication go with it."""
    key = _uuid(flow_id)
    if key is not None:
        s.execute(sa.delete(FlowVersion).where(FlowVersion.flow_id == key))
        s.execute(sa.delete(Publication).where(Publication.flow_id == key))
        publications().invalidate()


def delete_user_rows(s: Session, user_id: str) -> None:
    key = _uuid(user_id)
    if key is not None:
        s.execute(sa.delete(FlowVersion).where(FlowVersion.user_id == key))
        s.execute(sa.delete(Publication).where(Publication.user_id == key))


# --- reading ----------------------------------------------------------------------------------------
def list_versions(s: Session, user_id: uuid.UUID, flow_id: uuid.UUID, limit: int, offset: int) -> list[FlowVersion]:
    query = (
        sa.select(FlowVersion)
        .where(FlowVersion.flow_id == flow_id, FlowVersion.user_id == user_id)
        .order_by(FlowVersion.version_number.desc())
        .limit(limit)
        .offset(offset)
    )
    return list(s.scalars(query))


def get_version(s: Session, user_id: uuid.UUID, flow_id: uuid.UUID, version_id: Any) -> FlowVersion:
    key = _uuid(version_id)
    found = (
        s.scalar(
            sa.select(FlowVersion).where(
                FlowVersion.id == key, FlowVersion.flow_id == flow_id, FlowVersion.user_id == user_id
            )
        )
        if key is not None
        else None
    )
    if found is None:
        raise ApiError(404, VERSION_NOT_FOUND)
    return found


def previous_version(s: Session, entry: FlowVersion) -> FlowVersion | None:
    query = sa.select(FlowVersion).where(
        FlowVersion.flow_id == entry.flow_id, FlowVersion.version_number < entry.version_number
    )
    return s.scalar(query.order_by(FlowVersion.version_number.desc()).limit(1))


def delete_version(s: Session, entry: FlowVersion) -> None:
    if _published_id(s, entry.flow_id) == entry.id:
        raise ApiError(409, "Cannot delete the published version: unpublish it or publish another first")
    s.delete(entry)
    s.flush()


# --- publishing -------------------------------------------------------------------------------------
def publication(s: Session, flow_id: uuid.UUID) -> tuple[Publication, FlowVersion] | None:
    pub = s.get(Publication, flow_id)
    if pub is None:
        return None
    entry = s.get(FlowVersion, pub.version_id)
    return None if entry is None else (pub, entry)


def publish(s: Session, entry: FlowVersion, by: uuid.UUID | None) -> Publication:
    """Make ``entry`` the version API callers run (publish, or roll back to an older one)."""
    pub = s.get(Publication, entry.flow_id)
    if pub is None:
        pub = Publication(flow_id=entry.flow_id, user_id=entry.user_id)
        s.add(pub)
    pub.version_id, pub.published_by, pub.published_at = entry.id, by, db.utcnow()
    entry.auto = False  # a published version is never coalesced into
    s.flush()
    publications().invalidate()
    return pub


def unpublish(s: Session, flow_id: uuid.UUID) -> bool:
    result = s.execute(sa.delete(Publication).where(Publication.flow_id == flow_id))
    publications().invalidate()
    return bool(getattr(result, "rowcount", 0))


#: decoded graphs of published versions by version id (immutable once published), bounded
_decoded: dict[uuid.UUID, Any] = {}
_decoded_lock = threading.Lock()
DECODED_MAX = 512
_blob: db.Prepared | None = None


class Publications:
    """Every published flow's ``(version id, number, saved_at)`` in this process, re-read at most every
    ``SERVICE_FLOW_PUBLICATION_REFRESH_SECONDS`` (as the policies plugin's snapshot): a run of a flow
    reads no row to learn whether it is published. A publish, rollback or unpublish in this process is
    seen at once (:meth:`invalidate`); other processes see it within the refresh interval, and at once for a
    flow whose draft was saved after their last read (``changed_at``): a publish is committed before any
    later save of the draft begins, so a snapshot read before that save may miss it, and is read again.
    """

    def __init__(self) -> None:
        self._value: dict[uuid.UUID, tuple[uuid.UUID, int, str]] = {}
        self._checked = 0.0
        #: wall-clock time (epoch seconds) the last read began: what it saw was committed before then
        self._read_from = 0.0
        self._lock = threading.Lock()

    def _stale(self, every: float, changed_at: float | None) -> bool:
        return (
            not self._checked
            or time.monotonic() - self._checked >= every
            or (changed_at is not None and changed_at >= self._read_from)
        )

    def get(self, flow_id: uuid.UUID, changed_at: float | None = None) -> tuple[uuid.UUID, int, str] | None:
        """The flow's published pointer; ``changed_at``: when its draft was last saved (epoch seconds)."""
        every = settings().flow_publication_refresh_seconds
        if self._stale(every, changed_at):
            with self._lock:
                if self._stale(every, changed_at):
                    started = time.time()
                    self._refresh()
                    self._checked, self._read_from = time.monotonic(), started
        return self._value.get(flow_id)

    def invalidate(self) -> None:
        self._checked = 0.0

    def _refresh(self) -> None:
        p, v = Publication.__table__.c, FlowVersion.__table__.c
        query = sa.select(p.flow_id, v.id, v.version_number, v.saved_at).select_from(
            Publication.__table__.join(FlowVersion.__table__, v.id == p.version_id)
        )
        s = db.session()  # the caller's session: SQLite runs one pooled connection per process
        began = not s.in_transaction()
        try:
            rows = s.execute(query).all()
        finally:
            if began:  # a read transaction opened only for this: give the connection back
                s.rollback()
        self._value = {r[0]: (r[1], int(r[2]), _aware(r[3]).isoformat()) for r in rows}


_publications: dict[int, Publications] = {}


def publications() -> Publications:
    """This process's publication snapshot for the current app's database."""
    from core import appstate

    key = id(appstate.engine())
    found = _publications.get(key)
    if found is None:
        found = _publications[key] = Publications()
    return found


def _epoch(stamp: str | None) -> float | None:
    """An ISO 8601 time (naive: UTC) as epoch seconds, None when absent or unreadable."""
    if not stamp:
        return None
    try:
        return _aware(dt.datetime.fromisoformat(stamp)).timestamp()
    except (TypeError, ValueError):
        return None


def published_version(flow_id: str, changed_at: str | None = None) -> PublishedVersion | None:
    """The ``published_version`` hook: the snapshot's pointer (no read, unless the draft was saved since the
    snapshot was read), the graph decoded once per version."""
    global _blob
    key = _uuid(flow_id)
    if key is None:
        return None
    pointer = publications().get(key, _epoch(changed_at))
    if pointer is None:
        return None
    vid, number, saved_at = pointer
    data = _decoded.get(vid)
    if data is None:
        if _blob is None:
            _blob = db.Prepared(
                sa.select(FlowVersion.__table__.c.data_z).where(FlowVersion.__table__.c.id == sa.bindparam("vid"))
            )
        found = _blob.first_mapping({"vid": vid})
        if found is None:
            return None
        data = unpack(found["data_z"])
        with _decoded_lock:
            if len(_decoded) >= DECODED_MAX:
                _decoded.pop(next(iter(_decoded)))
            _decoded[vid] = data
    return PublishedVersion(flow_id=str(key), version_id=str(vid), version_number=number, data=data, saved_at=saved_at)
