"""Top-k search over a knowledge base's vectors.

The vectors are rows of ``knowledge_chunk`` (float32 bytes) in the service
database. Each process keeps one matrix per knowledge base, tagged with the
base's ``revision``; a write bumps the revision (in the same transaction as
the chunks), so any process sees a finished ingestion at its next query and
never a half-written one.

Search is exact: one matrix-vector product (cosine on unit vectors) over the
base's vectors and an ``argpartition``. It reads the whole float32 matrix
(150 MB at 100,000 chunks), so it is bound by memory bandwidth; a binary
prefilter (sign bits, then exact rescoring) was measured and dropped: on
generated vectors it was no faster at a usable recall (``docs/plugins/knowledge.md``).
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from service_knowledge.models import Chunk, KnowledgeBase

MAX_CACHED_BASES = 8


def _as_uuid(raw: Any) -> uuid.UUID:
    return raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw))


@dataclass
class Index:
    revision: int
    ids: list[Any]  # the driver's raw chunk ids (hex strings on SQLite, UUIDs on PostgreSQL): see as_uuid
    matrix: np.ndarray  # (n, dimensions) float32, unit rows
    kb_id: uuid.UUID
    _meta: list[dict[str, Any]] | None = None
    _positions: dict[uuid.UUID, int] | None = None

    def chunk_id(self, i: int) -> uuid.UUID:
        return _as_uuid(self.ids[i])

    def position(self, chunk_id: uuid.UUID) -> int:
        """The row of ``chunk_id`` in the matrix (built on first use: include_embeddings only)."""
        if self._positions is None:
            self._positions = {_as_uuid(raw): i for i, raw in enumerate(self.ids)}
        return self._positions[chunk_id]

    def meta(self, s: Session) -> list[dict[str, Any]]:
        """Chunk metadata in index order, loaded on the first filtered query only."""
        if self._meta is None:
            rows = s.execute(sa.select(Chunk.id, Chunk.meta).where(Chunk.kb_id == self.kb_id)).all()
            found: dict[Any, Any] = {row[0]: row[1] for row in rows}
            self._meta = [found.get(_as_uuid(i)) or {} for i in self.ids]
        return self._meta


_cache: OrderedDict[tuple[str, uuid.UUID], Index] = OrderedDict()
_lock = threading.Lock()
LOAD_BATCH = 4096


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _load(s: Session, kb: KnowledgeBase) -> Index:
    """Read the base's vectors straight into one preallocated matrix.

    No ORM rows and no per-row type processing (ids stay as the driver returns them; only hits become
    UUIDs), streamed in batches so the raw bytes of all rows never coexist with the matrix: at 100,000
    chunks this took the first query from 18 s to about a third of that on a loaded machine (bench).
    """
    dims = kb.dimensions or 1
    expected = int(s.scalar(sa.select(sa.func.count()).select_from(Chunk).where(Chunk.kb_id == kb.id)) or 0)
    matrix = np.empty((expected, dims), dtype=np.float32)
    ids: list[Any] = []
    for batch in _batches(s, kb.id):
        start = len(ids)
        ids.extend(r[0] for r in batch)
        block = np.frombuffer(b"".join(r[1] for r in batch), dtype=np.float32).reshape(len(batch), dims)
        if len(ids) > len(matrix):  # rows committed after the count (read committed): grow
            matrix = np.concatenate([matrix, np.empty((len(ids) - len(matrix), dims), dtype=np.float32)])
        matrix[start : len(ids)] = block
    return Index(kb.revision, ids, matrix[: len(ids)], kb.id)


def _batches(s: Session, kb_id: uuid.UUID) -> Iterator[Sequence[Any]]:
    """``(raw id, vector bytes)`` rows of a base, in batches."""
    bind = s.connection()
    if bind.dialect.name == "postgresql" and bind.dialect.driver == "psycopg":
        # psycopg's binary protocol: bytea arrives as bytes, not as hex text to decode (about half the time)
        raw = bind.connection.driver_connection
        with raw.cursor(binary=True) as cur:  # type: ignore[union-attr]
            cur.execute("SELECT id, embedding FROM knowledge_chunk WHERE kb_id = %s", (kb_id,))
            while batch := cur.fetchmany(LOAD_BATCH):
                yield batch
        return
    query = sa.select(sa.type_coerce(Chunk.id, sa.String()), sa.type_coerce(Chunk.embedding, _RawBytes()))
    result = bind.execute(query.where(Chunk.kb_id == kb_id).execution_options(stream_results=True))
    yield from result.partitions(LOAD_BATCH)


class _RawBytes(sa.types.TypeDecorator[bytes]):
    """The driver's bytes as they come (no LargeBinary result processing per row)."""

    impl = sa.LargeBinary
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> None:
        return None


def index_for(s: Session, kb: KnowledgeBase) -> Index:
    key = (str(s.get_bind().engine.url), kb.id)
    with _lock:
        found = _cache.get(key)
        if found is not None and found.revision == kb.revision:
            _cache.move_to_end(key)
            return found
    built = _load(s, kb)
    with _lock:
        _cache[key] = built
        _cache.move_to_end(key)
        while len(_cache) > MAX_CACHED_BASES:
            _cache.popitem(last=False)
    return built


def _matches(meta: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(str(meta.get(k)) == str(v) if not isinstance(v, list) else meta.get(k) in v for k, v in wanted.items())


def search(
    s: Session,
    kb: KnowledgeBase,
    query: np.ndarray,
    *,
    top_k: int = 5,
    threshold: float | None = None,
    metadata_filter: dict[str, Any] | None = None,
) -> list[tuple[uuid.UUID, float]]:
    """``(chunk id, cosine score)`` of the best ``top_k`` chunks, best first."""
    index = index_for(s, kb)
    if not index.ids or top_k < 1:
        return []
    q = np.asarray(query, dtype=np.float32)
    candidates: np.ndarray | None = None
    if metadata_filter:
        meta = index.meta(s)
        candidates = np.flatnonzero([_matches(m, metadata_filter) for m in meta])
        if len(candidates) == 0:
            return []
        scores = index.matrix[candidates] @ q
    else:
        scores = index.matrix @ q  # the whole cost of a query: one pass over the matrix (memory-bound)
    k = min(top_k, len(scores))
    best = np.argpartition(scores, len(scores) - k)[len(scores) - k :] if k < len(scores) else np.arange(k)
    best = best[np.argsort(-scores[best])]
    out = []
    for j in best:
        i = int(j) if candidates is None else int(candidates[j])
        score = float(scores[j])
        if threshold is not None and score < threshold:
            continue
        out.append((index.chunk_id(i), score))
    return out


def forget(kb_id: uuid.UUID) -> None:
    with _lock:
        for key in [k for k in _cache if k[1] == kb_id]:
            _cache.pop(key, None)
