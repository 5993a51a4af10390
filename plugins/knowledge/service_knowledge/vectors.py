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
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from service_knowledge.models import Chunk, KnowledgeBase

MAX_CACHED_BASES = 8


@dataclass
class Index:
    revision: int
    ids: list[uuid.UUID]
    matrix: np.ndarray  # (n, dimensions) float32, unit rows
    kb_id: uuid.UUID
    _meta: list[dict[str, Any]] | None = None

    def meta(self, s: Session) -> list[dict[str, Any]]:
        """Chunk metadata in index order, loaded on the first filtered query only."""
        if self._meta is None:
            found = dict(s.execute(sa.select(Chunk.id, Chunk.meta).where(Chunk.kb_id == self.kb_id)).all())
            self._meta = [found.get(i) or {} for i in self.ids]
        return self._meta


_cache: OrderedDict[tuple[str, uuid.UUID], Index] = OrderedDict()
_lock = threading.Lock()


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _load(s: Session, kb: KnowledgeBase) -> Index:
    rows = s.execute(sa.select(Chunk.id, Chunk.embedding).where(Chunk.kb_id == kb.id)).all()
    dims = kb.dimensions or 1
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dims)
    return Index(kb.revision, [r[0] for r in rows], matrix, kb.id)


def index_for(s: Session, kb: KnowledgeBase) -> Index:
    key = (str(s.get_bind().url), kb.id)
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
    k = min(top_k, len(index.ids))
    if metadata_filter:
        meta = index.meta(s)
        allowed = np.flatnonzero([_matches(m, metadata_filter) for m in meta])
        candidates, scores = allowed, index.matrix[allowed] @ q
    else:
        candidates, scores = np.arange(len(index.ids)), index.matrix @ q
    if len(candidates) == 0:
        return []
    k = min(k, len(candidates))
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best])]
    out = []
    for j in best:
        i = candidates[j]
        score = float(scores[j])
        if score == -np.inf or (threshold is not None and score < threshold):
            continue
        out.append((index.ids[i], score))
    return out


def forget(kb_id: uuid.UUID) -> None:
    with _lock:
        for key in [k for k in _cache if k[1] == kb_id]:
            _cache.pop(key, None)
