"""Hook implementations of the knowledge plugin (thin: the logic is in services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.records import Job, Migrations

#: the hooks this plugin publishes: embeddings by provider (the models bundle answers ``embed_texts``)
HOOKSPECS = "service_knowledge.hookspecs"


@hookimpl
def register_blueprints():
    from service_knowledge.resources import knowledge_blp

    return [knowledge_blp]


@hookimpl
def register_migrations():
    return [Migrations("knowledge", Path(__file__).parent / "migrations")]


@hookimpl
def register_jobs():
    from service_knowledge.jobs import INGEST, ingest

    return [Job(INGEST, ingest, "Chunk, embed and store sources in a knowledge base")]


@hookimpl
def register_components():
    from service_knowledge.components import COMPONENTS

    return list(COMPONENTS)


@hookimpl
def extend_config(actor: Any, public: bool) -> dict[str, Any] | None:
    from service_knowledge.embeddings import local_available

    # true only when a knowledge base can actually be embedded and searched on this server
    return {"local_vector_store_available": local_available()}


@hookimpl
def on_user_deleted(user_id: str) -> None:
    import uuid

    import sqlalchemy as sa

    from core import db
    from service_knowledge import services
    from service_knowledge.models import KnowledgeBase

    s = db.session()
    for kb in s.scalars(sa.select(KnowledgeBase).where(KnowledgeBase.user_id == uuid.UUID(str(user_id)))):
        services.delete(s, kb)
    s.flush()


@hookimpl(optionalhook=True)
def resource_ref(kind: str, resource_id: str):
    """The teams plugin's ``resource_ref`` for a knowledge base (shares of ``knowledge_base``), any owner's."""
    import uuid

    if kind != "knowledge_base":
        return None
    try:
        key = uuid.UUID(str(resource_id))
    except ValueError:
        return None
    from core import db
    from service_knowledge import services
    from service_knowledge.models import KnowledgeBase

    row = db.session().get(KnowledgeBase, key)
    return None if row is None else services.kb_ref(row)
