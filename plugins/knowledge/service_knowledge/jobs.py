"""The ingestion job: read the pending sources, chunk and embed them, then write everything at once."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import sqlalchemy as sa

from core import appstate, db
from core.jobs import JobCancelled, JobContext
from service_knowledge import services
from service_knowledge.models import KnowledgeBase, Pending

log = logging.getLogger(__name__)
INGEST = "knowledge.ingest"


def ingest(ctx: JobContext, kb_id: str, pending_ids: list[str]) -> dict[str, Any]:
    """Ingest ``pending_ids`` into knowledge base ``kb_id`` (owned by the job's owner)."""
    s = db.session()
    key = uuid.UUID(kb_id)
    kb = s.get(KnowledgeBase, key)
    if kb is None or str(kb.user_id) != ctx.owner:
        raise LookupError("Knowledge base not found")
    hooks = appstate.hooks()
    try:
        ctx.emit("progress", {"stage": "reading", "done": 0, "total": 0})
        sources = services.load_sources(
            s, kb, pending_ids, lambda ref: hooks.read_user_file(user_id=ctx.owner, ref=ref)
        )
        s.expunge(kb)  # keep its settings, end the read transaction: embedding can take minutes
        s.commit()

        def progress(done: int, total: int) -> None:
            ctx.emit("progress", {"stage": "embedding", "done": done, "total": total})

        prepared = services.prepare(kb, sources, progress=progress, check=ctx.check_cancelled)
        ctx.emit("progress", {"stage": "writing", "done": 0, "total": sum(len(p.texts) for p in prepared)})
        kb = s.get(KnowledgeBase, key)
        if kb is None:
            raise LookupError("Knowledge base was deleted during ingestion")
        written = services.write(s, kb, prepared)
        s.execute(sa.delete(Pending).where(Pending.id.in_([uuid.UUID(p) for p in pending_ids])))
        s.commit()
    except BaseException as exc:
        s.rollback()
        reason = "Ingestion cancelled" if isinstance(exc, JobCancelled) else (str(exc) or type(exc).__name__)
        log.info("ingestion into %s failed: %s", kb_id, reason)
        current = s.get(KnowledgeBase, key)
        if current is not None:
            services.fail(s, current, reason)
            s.execute(sa.delete(Pending).where(Pending.id.in_([uuid.UUID(p) for p in pending_ids])))
            s.commit()
        raise
    ctx.emit("progress", {"stage": "done", "done": written, "total": written})
    return {"chunks": written}
