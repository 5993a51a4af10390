"""Knowledge-base logic (no request objects): owner-scoped CRUD, ingestion, search.

Ingestion computes every chunk and embedding first and writes them in one
transaction (old chunks of the same sources deleted, new ones inserted,
statistics and revision updated), so a base is never half-written: a failure
before the commit leaves the previous content and records ``failed`` with
the reason.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.auth import Actor, can, check_access, shared_rows
from core.contracts import ResourceRef
from core.db import utcnow
from core.engine.documents import extract_text
from core.engine.lazy import lazy_import
from core.errors import ApiError, validation_error
from service_knowledge import chunking
from service_knowledge.models import Chunk, KnowledgeBase, Pending

if TYPE_CHECKING:
    from service_knowledge import embeddings, vectors
else:  # NumPy (about 35 ms) on the first ingestion or search, not at start-up
    embeddings = lazy_import("service_knowledge.embeddings")
    vectors = lazy_import("service_knowledge.vectors")

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$")
EMPTY, INGESTING, READY, FAILED = "empty", "ingesting", "ready", "failed"
LOST_AFTER_SECONDS = 30


def not_found(name: str) -> ApiError:
    return ApiError(404, f"Knowledge base '{name}' not found")


def _aware(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


def stats(s: Session, kb_id: uuid.UUID) -> dict[str, Any]:
    row = s.execute(
        sa.select(
            sa.func.count(Chunk.id),
            sa.func.coalesce(sa.func.sum(Chunk.characters), 0),
            sa.func.coalesce(sa.func.sum(Chunk.words), 0),
            sa.func.coalesce(sa.func.sum(Chunk.size), 0),
        ).where(Chunk.kb_id == kb_id)
    ).one()
    types = sorted(set(s.scalars(sa.select(Chunk.source_type).where(Chunk.kb_id == kb_id).distinct())))
    chunks, characters, words, size = (int(v) for v in row)
    return {
        "chunks": chunks,
        "characters": characters,
        "words": words,
        "size": size,
        "avg_chunk_size": round(characters / chunks, 2) if chunks else 0.0,
        "source_types": types,
    }


def kb_out(s: Session, kb: KnowledgeBase) -> dict[str, Any]:
    """The reference's item: ``{id, dir_name, name, embedding_provider, embedding_model, size, words, ...}``."""
    return {
        "id": str(kb.id),
        "dir_name": kb.name,
        "name": kb.name,
        "embedding_provider": kb.embedding_provider,
        "embedding_model": kb.embedding_model,
        **stats(s, kb.id),
        "chunk_size": kb.chunk_size,
        "chunk_overlap": kb.chunk_overlap,
        "separator": kb.separator,
        "status": kb.status,
        "failure_reason": kb.failure_reason,
        "last_job_id": kb.last_job_id,
        "column_config": kb.column_config,
        "backend_type": "database",
        "backend_config": {},
        "created_at": _aware(kb.created_at).isoformat(),
        "updated_at": _aware(kb.updated_at).isoformat(),
    }


def _mine(user_id: uuid.UUID) -> sa.Select[KnowledgeBase]:
    return sa.select(KnowledgeBase).where(KnowledgeBase.user_id == user_id)


def list_bases(s: Session, user_id: uuid.UUID) -> list[KnowledgeBase]:
    return list(s.scalars(_mine(user_id).order_by(KnowledgeBase.name)))


def find(s: Session, user_id: uuid.UUID, name: str) -> KnowledgeBase | None:
    return s.scalar(_mine(user_id).where(KnowledgeBase.name == name))


def get(s: Session, user_id: uuid.UUID, name: str) -> KnowledgeBase:
    kb = find(s, user_id, name)
    if kb is None:
        raise not_found(name)
    return kb


def get_by_id(s: Session, kb_id: str) -> KnowledgeBase:
    kb = s.get(KnowledgeBase, uuid.UUID(kb_id))
    if kb is None:
        raise not_found(kb_id)
    return kb


def kb_ref(kb: KnowledgeBase) -> ResourceRef:
    """The :class:`ResourceRef` a share names (``resource_type: knowledge_base``, the base's id)."""
    return ResourceRef("knowledge_base", str(kb.id), str(kb.user_id), None)


def reach(s: Session, actor: Actor, key: str, verb: str) -> KnowledgeBase:
    """The caller's base named ``key``, or another user's base whose id is ``key``, shared with the caller
    so that they may ``verb`` it (``core.auth.check_access``: 404 when they may not see it, 403 when they may
    see but not ``verb`` it). A name of the caller's own wins over an id."""
    kb = find(s, actor.id, key)
    if kb is not None:
        return kb
    try:
        other = s.get(KnowledgeBase, uuid.UUID(key))
    except ValueError:
        other = None
    if other is None:
        raise not_found(key)
    check_access(actor, verb, kb_ref(other), not_found=f"Knowledge base '{key}' not found")
    return other


def shared_bases(s: Session, actor: Actor) -> list[tuple[KnowledgeBase, str]]:
    """Other users' bases shared with the caller, by name, each with the caller's role (``shared_role``)."""
    return shared_rows(s, actor, KnowledgeBase, "knowledge_base", kb_ref)


def find_usable(s: Session, user_id: uuid.UUID, key: str, verb: str = "read") -> KnowledgeBase | None:
    """For a run's components: the run user's base named ``key``, else one shared with them by that name or
    id that lets them ``verb`` it (a team flow's retrieval reads its team's base)."""
    kb = find(s, user_id, key)
    if kb is not None:
        return kb
    actor = Actor(id=user_id)
    for other, _role in shared_bases(s, actor):
        if (other.name == key or str(other.id) == key) and can(actor, verb, kb_ref(other)):
            return other
    return None


def create(s: Session, user_id: uuid.UUID, body: dict[str, Any], *, context: Any = None) -> KnowledgeBase:
    name = str(body["name"]).strip()
    if not NAME_RE.match(name):
        raise validation_error(
            ["body", "name"], "1 to 100 letters, digits, spaces, '_', '-' or '.', starting with a letter or digit"
        )
    if find(s, user_id, name) is not None:
        raise ApiError(409, f"Knowledge base '{name}' already exists")
    provider = body.get("embedding_provider") or embeddings.LOCAL_PROVIDER
    model = body.get("embedding_model") or embeddings.LOCAL_MODEL
    try:
        embedder = embeddings.get(provider, model, user_id=str(user_id), context=context)
        dimensions = embedder.dimensions
        if not dimensions:  # a provider's model: one call checks it is usable and tells its dimensions
            dimensions = int(embedder.embed(["dimensions"]).shape[1])
    except (embeddings.EmbeddingUnavailable, ValueError) as exc:
        raise validation_error(["body", "embedding_model"], str(exc)) from None
    except Exception as exc:  # the provider failed or cannot be reached
        raise ApiError(502, f"{provider} ({model}): {exc}") from None
    size, overlap = int(body.get("chunk_size", 1000)), int(body.get("chunk_overlap", 200))
    if overlap >= size:
        raise validation_error(["body", "chunk_overlap"], "must be smaller than chunk_size")
    kb = KnowledgeBase(
        user_id=user_id,
        name=name,
        embedding_provider=embedder.provider,
        embedding_model=embedder.model,
        dimensions=dimensions,
        chunk_size=size,
        chunk_overlap=overlap,
        separator=body.get("separator", "\n"),
        status=EMPTY,
        revision=0,
        column_config=body.get("column_config"),
    )
    s.add(kb)
    s.flush()
    return kb


def delete(s: Session, kb: KnowledgeBase) -> None:
    s.execute(sa.delete(Chunk).where(Chunk.kb_id == kb.id))
    s.execute(sa.delete(Pending).where(Pending.kb_id == kb.id))
    s.delete(kb)
    vectors.forget(kb.id)


def reconcile(s: Session, kb: KnowledgeBase, job_state: Callable[[str], tuple[str, str | None] | None]) -> None:
    """An ``ingesting`` base whose job ended without finishing (worker killed, time limit) becomes ``failed``."""
    if kb.status != INGESTING or not kb.last_job_id:
        return
    found = job_state(kb.last_job_id)
    if found is None:
        if utcnow() - _aware(kb.updated_at) < dt.timedelta(seconds=LOST_AFTER_SECONDS):
            return  # committed a moment ago, its job is being enqueued
        reason = "The ingestion job was lost"
    else:
        state, error = found
        if state in ("queued", "running", "finished"):
            return
        reason = f"The ingestion job ended: {error or state}"
    kb.status, kb.failure_reason, kb.updated_at = FAILED, reason, utcnow()
    s.execute(sa.delete(Pending).where(Pending.kb_id == kb.id))


# --- ingestion ----------------------------------------------------------------------
@dataclass
class Source:
    key: str  # "file:<file id or path>" or "text:<name>"
    kind: str  # "file" or "text"
    text: str
    meta: dict[str, Any]


def add_pending(s: Session, kb: KnowledgeBase, *, files: list[str], texts: list[tuple[str, str]]) -> list[uuid.UUID]:
    rows = [Pending(kb_id=kb.id, source=f"file:{ref}", source_type="file", file_ref=ref) for ref in files]
    rows += [Pending(kb_id=kb.id, source=f"text:{name}", source_type="text", text=text) for name, text in texts]
    s.add_all(rows)
    s.flush()
    return [r.id for r in rows]


def load_sources(
    s: Session, kb: KnowledgeBase, pending_ids: list[str], read_file: Callable[[str], bytes | None]
) -> list[Source]:
    rows = list(
        s.scalars(sa.select(Pending).where(Pending.kb_id == kb.id, Pending.id.in_(map(uuid.UUID, pending_ids))))
    )
    sources = []
    for row in rows:
        if row.source_type == "file":
            content = read_file(row.file_ref or "")
            if content is None:
                raise ValueError(f"File not found: {row.file_ref}")
            name = row.file_ref or ""
            sources.append(Source(row.source, "file", extract_text(name, content), {"source": name}))
        else:
            sources.append(Source(row.source, "text", row.text or "", {"source": row.source.removeprefix("text:")}))
    return sources


@dataclass
class Prepared:
    source: Source
    texts: list[str]
    vectors: Any


def prepare(
    kb: KnowledgeBase,
    sources: list[Source],
    *,
    progress: Callable[[int, int], None] | None = None,
    check: Callable[[], None] | None = None,
    batch: int = 32,
    context: Any = None,
) -> list[Prepared]:
    """Chunk and embed every source (nothing is written); a provider's model is called for ``context``
    (a run context), else for the base's owner."""
    import numpy as np

    embedder = _embedder(kb, context)
    split = [
        (src, chunking.split(src.text, size=kb.chunk_size, overlap=kb.chunk_overlap, separator=kb.separator))
        for src in sources
    ]
    texts = [text for _, chunks in split for text in chunks]
    total = len(texts)
    if isinstance(embedder, embeddings.LocalMiniLM):
        # every chunk of the job at once: the local model batches them by token count (less padding)
        matrix = embedder.embed_batched(
            texts, check=check, progress=None if progress is None else lambda done: progress(done, total)
        )
    else:
        parts = []
        for start in range(0, total, batch):
            if check is not None:
                check()
            parts.append(embedder.embed(texts[start : start + batch]))
            if progress is not None:
                progress(min(start + batch, total), total)
        matrix = np.vstack(parts) if parts else np.zeros((0, embedder.dimensions), dtype=np.float32)
    out = []
    offset = 0
    for src, chunks in split:
        out.append(Prepared(src, chunks, matrix[offset : offset + len(chunks)]))
        offset += len(chunks)
    return out


def write(s: Session, kb: KnowledgeBase, prepared: list[Prepared], extra_meta: dict[str, Any] | None = None) -> int:
    """Replace the chunks of each prepared source (same transaction as the caller's); returns chunks written."""
    written = 0
    for item in prepared:
        s.execute(sa.delete(Chunk).where(Chunk.kb_id == kb.id, Chunk.source == item.source.key))
        rows = []
        for position, (text, vector) in enumerate(zip(item.texts, item.vectors, strict=True)):
            meta = {**(extra_meta or {}), **item.source.meta, "position": position}
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "kb_id": kb.id,
                    "source": item.source.key,
                    "source_type": item.source.kind,
                    "position": position,
                    "text": text,
                    "characters": len(text),
                    "words": len(text.split()),
                    "size": len(text.encode()),
                    "meta": meta,
                    "embedding": vectors.encode(vector),
                    "created_at": utcnow(),
                }
            )
        if rows:
            s.execute(sa.insert(Chunk), rows)
        written += len(rows)
    kb.revision += 1
    kb.status, kb.failure_reason, kb.updated_at = READY, None, utcnow()
    return written


def fail(s: Session, kb: KnowledgeBase, reason: str) -> None:
    kb.status, kb.failure_reason, kb.updated_at = FAILED, reason[:2000], utcnow()


# --- reading ---------------------------------------------------------------------------
def chunks_page(s: Session, kb: KnowledgeBase, page: int, size: int, search: str | None) -> dict[str, Any]:
    query = sa.select(Chunk).where(Chunk.kb_id == kb.id)
    if search:
        query = query.where(Chunk.text.contains(search, autoescape=True))
    total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
    rows = s.scalars(query.order_by(Chunk.source, Chunk.position).offset((page - 1) * size).limit(size))
    return {
        "chunks": [
            {"id": str(c.id), "content": c.text, "char_count": c.characters, "metadata": c.meta or {}} for c in rows
        ],
        "total": total,
        "page": page,
        "size": size,
        "pages": (total + size - 1) // size,
    }


def _embedder(kb: KnowledgeBase, context: Any = None) -> embeddings.Embedder:
    return embeddings.get(
        kb.embedding_provider,
        kb.embedding_model,
        user_id=str(kb.user_id),
        context=context,
        dimensions=kb.dimensions or 0,
    )


def query_embedding(kb: KnowledgeBase, query: str, model: str | None = None, context: Any = None) -> Any:
    if model and model != kb.embedding_model:
        raise ApiError(
            409,
            f"Knowledge base '{kb.name}' was embedded with '{kb.embedding_model}'; a query embedded with "
            f"'{model}' cannot search it",
        )
    try:
        return _embedder(kb, context).embed([query])[0]
    except embeddings.EmbeddingUnavailable as exc:
        raise ApiError(409, f"Knowledge base '{kb.name}' cannot be searched here: {exc}") from None
    except ValueError as exc:  # the provider is not usable as configured, or answered other dimensions
        raise ApiError(409, f"Knowledge base '{kb.name}' cannot be searched: {exc}") from None
    except ApiError:
        raise
    except Exception as exc:  # the provider failed or cannot be reached
        raise ApiError(502, f"{kb.embedding_provider} ({kb.embedding_model}): {exc}") from None


def search(
    s: Session,
    kb: KnowledgeBase,
    query: str,
    *,
    top_k: int = 5,
    threshold: float | None = None,
    metadata_filter: dict[str, Any] | None = None,
    model: str | None = None,
    context: Any = None,
) -> list[dict[str, Any]]:
    vector = query_embedding(kb, query, model, context)
    found = vectors.search(s, kb, vector, top_k=top_k, threshold=threshold, metadata_filter=metadata_filter)
    if not found:
        return []
    rows = {c.id: c for c in s.scalars(sa.select(Chunk).where(Chunk.id.in_([i for i, _ in found])))}
    return [
        {"id": str(i), "content": rows[i].text, "score": round(score, 6), "metadata": rows[i].meta or {}}
        for i, score in found
        if i in rows
    ]
