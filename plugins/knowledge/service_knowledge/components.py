"""Knowledge components: Knowledge Ingestion (``KnowledgeIngestion``), Knowledge Retrieval
(``KnowledgeBase``, alias ``KnowledgeRetrieval``), the combined ``Knowledge`` node and
Memory Base (``MemoryBase``: retrieval filtered by the run's session).

They act for the run's user (``RunContext.user_id``) on that user's knowledge
bases only, inside the app context every run surface provides (a request or
a job); ingestion here is synchronous, within the run.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    FloatInput,
    HandleInput,
    IntInput,
    MessageTextInput,
    SecretStrInput,
    StrInput,
    TabInput,
    TableInput,
)
from core.engine.types import to_text

DEFAULT_COLUMNS = [{"column_name": "text", "vectorize": True, "identifier": True}]


def _session() -> Any:
    from flask import has_app_context

    from core import db

    if not has_app_context():
        raise ComponentError("Knowledge bases are not available here (no service context)")
    return db.session()


def _user(component: Component) -> uuid.UUID:
    if not component.context.user_id:
        raise ComponentError("Knowledge bases need a signed-in user")
    return uuid.UUID(str(component.context.user_id))


def _rows(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    rows: list[dict[str, Any]] = []
    for item in items:
        if item in (None, ""):
            continue
        if isinstance(item, DataFrame):
            rows.extend(item.to_records())
        elif isinstance(item, Message):
            rows.append({"text": to_text(item.text)})
        elif isinstance(item, Data):
            rows.append(dict(item.data))
        elif isinstance(item, dict):
            rows.append(dict(item))
        else:
            rows.append({"text": to_text(item)})
    return rows


def _json_object(raw: Any, field: str) -> dict[str, Any]:
    if raw in (None, ""):
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(to_text(raw))
    except ValueError:
        raise ComponentError(f"'{field}' must be a JSON object") from None
    if not isinstance(value, dict):
        raise ComponentError(f"'{field}' must be a JSON object")
    return value


_COMMON = [
    StrInput("knowledge_base", "Knowledge", "", required=True, info="Name of one of your knowledge bases."),
]
_INGEST_INPUTS = [
    HandleInput(
        "input_df",
        "Input",
        "",
        input_types=["Message", "Data", "JSON", "DataFrame", "Table"],
        required=True,
        info="Rows to ingest: Table rows, JSON objects or Message texts.",
    ),
    TableInput("column_config", "Column Configuration", DEFAULT_COLUMNS, required=True),
    IntInput("chunk_size", "Chunk Size", 1000, advanced=True),
    SecretStrInput("api_key", "Embedding Provider API Key", "", advanced=True, load_from_db=True),
    BoolInput("allow_duplicates", "Allow Duplicates", False, advanced=True),
    StrInput("metadata_json", "Additional Metadata", "", advanced=True, info="A JSON object added to every chunk."),
]
_RETRIEVE_INPUTS = [
    MessageTextInput("search_query", "Search Query", "", info="The text to search for."),
    IntInput("top_k", "Top K Results", 5, advanced=True),
    FloatInput("score_threshold", "Score Threshold", 0.0, advanced=True, info="Minimum cosine score (0 keeps all)."),
    BoolInput("include_metadata", "Include Metadata", True),
    BoolInput("include_embeddings", "Include Embeddings", False, advanced=True),
    MessageTextInput("metadata_filter", "Metadata Filter", "", advanced=True, info='JSON, e.g. {"source": "a.md"}'),
]


def _hidden(inputs: list[Any], names: set[str]) -> list[Any]:
    import copy

    out = []
    for inp in inputs:
        if inp.name in names:
            inp = copy.copy(inp)
            inp.show = False
        out.append(inp)
    return out


class _KnowledgeOps(Component):
    category = "files_and_knowledge"
    icon = "database"

    def _kb(self, s: Any, *, create: bool = False) -> Any:
        from service_knowledge import services

        name = to_text(self.knowledge_base).strip()
        if not name:
            raise ComponentError("Choose a knowledge base")
        kb = services.find_usable(s, _user(self), name, "write" if create else "read")
        if kb is None and create:
            body = {"name": name, "chunk_size": int(self.chunk_size or 1000)}
            kb = services.create(s, _user(self), body, context=self.context)
        if kb is None:
            raise ComponentError(f"Knowledge base '{name}' not found")
        return kb

    def build_kb_info(self) -> Data:
        from service_knowledge import services

        rows = _rows(self.input_df)
        if not rows:
            raise ComponentError("Nothing to ingest")
        columns = [c for c in (self.column_config or DEFAULT_COLUMNS) if isinstance(c, dict)]
        vectorize = [str(c.get("column_name")) for c in columns if c.get("vectorize")] or ["text"]
        extra = _json_object(self.metadata_json, "metadata_json")
        sources = []
        for row in rows:
            text = "\n".join(to_text(row.get(col)) for col in vectorize if row.get(col) not in (None, "")).strip()
            if not text:
                continue
            digest = hashlib.sha256(text.encode()).hexdigest()
            key = f"row:{uuid.uuid4()}" if self.allow_duplicates else f"row:{digest}"
            meta = {k: v for k, v in row.items() if k not in vectorize and isinstance(v, (str, int, float, bool))}
            sources.append(services.Source(key, "row", text, {**extra, **meta}))
        if not sources:
            raise ComponentError(f"No text in the columns {', '.join(vectorize)}")
        s = _session()
        try:
            kb = self._kb(s, create=True)
            prepared = services.prepare(kb, sources, check=self.context.check, context=self.context)
            written = services.write(s, kb, prepared)
            info = services.kb_out(s, kb)
            s.commit()
        except ComponentError:
            s.rollback()
            raise
        except Exception as exc:
            s.rollback()
            raise ComponentError(f"Ingestion failed: {exc}") from None
        result = Data({**info, "ingested_chunks": written})
        self.status = result
        return result

    def retrieve_data(self) -> DataFrame:
        from core.errors import ApiError
        from service_knowledge import services, vectors

        query = to_text(self.search_query).strip()
        if not query:
            raise ComponentError("A search query is required")
        s = _session()
        kb = self._kb(s)
        threshold = float(self.score_threshold or 0.0) or None
        try:
            found = services.search(
                s,
                kb,
                query,
                top_k=int(self.top_k or 5),
                threshold=threshold,
                metadata_filter=_json_object(self.metadata_filter, "metadata_filter") or None,
                context=self.context,
            )
        except ApiError as exc:
            raise ComponentError(str(exc.detail)) from None
        rows = []
        index = vectors.index_for(s, kb) if self.include_embeddings else None
        for hit in found:
            row = _row(hit, self.include_metadata)
            if index is not None:
                row["_embeddings"] = index.matrix[index.position(uuid.UUID(hit["id"]))].tolist()
            rows.append(row)
        frame = DataFrame(rows)
        self.status = frame
        return frame


class KnowledgeIngestion(_KnowledgeOps):
    key = "KnowledgeIngestion"
    display_name = "Knowledge Ingestion"
    description = "Chunk, embed and store rows in one of your knowledge bases (created if missing)."
    legacy = True
    inputs = [
        *_COMMON,
        TabInput("mode", "Mode", "Ingest", options=["Ingest", "Retrieve"]),
        *_INGEST_INPUTS,
        *_hidden(_RETRIEVE_INPUTS, {r.name for r in _RETRIEVE_INPUTS}),
    ]
    outputs = [Output("dataframe_output", "Results", "build_kb_info", ["JSON"])]


class KnowledgeRetrieval(_KnowledgeOps):
    key = "KnowledgeBase"
    display_name = "Knowledge Base"
    legacy = True
    description = "Search one of your knowledge bases: the top-k chunks nearest to the query, with scores."
    aliases = ("KnowledgeRetrieval",)
    inputs = [
        *_COMMON,
        TabInput("mode", "Mode", "Retrieve", options=["Ingest", "Retrieve"]),
        *_hidden(_INGEST_INPUTS, {i.name for i in _INGEST_INPUTS}),
        *_RETRIEVE_INPUTS,
    ]
    outputs = [Output("retrieve_data", "Results", "retrieve_data", ["Table"])]


class Knowledge(_KnowledgeOps):
    key = "Knowledge"
    display_name = "Knowledge"
    description = "Ingest rows into, or search, one of your knowledge bases."
    inputs = [
        *_COMMON,
        TabInput("mode", "Mode", "Ingest", options=["Ingest", "Retrieve"]),
        *_INGEST_INPUTS,
        *_hidden(_RETRIEVE_INPUTS, {r.name for r in _RETRIEVE_INPUTS}),  # the editor shows them in Retrieve mode
    ]
    outputs = [
        Output("dataframe_output", "Results", "build_kb_info", ["JSON"]),
        Output("retrieve_data", "Results", "retrieve_data", ["Table"]),
    ]


class MemoryBase(Component):
    """Search a memory base: one of the run user's knowledge bases holding what was said before.

    Rows ingested with a ``session_id`` column (Knowledge Ingestion of a Message History table,
    or ``metadata_json``) keep it as metadata; ``filter_by_session`` keeps only the current
    run's session.
    """

    key = "MemoryBase"
    display_name = "Memory Base"
    description = "Search one of your memory bases (knowledge bases of past conversations), this session's by default."
    icon = "brain"
    category = "files_and_knowledge"
    inputs = [
        StrInput("memory_base", "Memory Base", "", required=True, info="Name of one of your knowledge bases."),
        MessageTextInput("search_query", "Search Query", "", info="The text to search for."),
        IntInput("top_k", "Top K Results", 5, advanced=True),
        BoolInput("include_metadata", "Include Metadata", True, advanced=True),
        BoolInput(
            "filter_by_session",
            "Filter by Session",
            True,
            advanced=True,
            info="Only entries whose session_id is the current session's.",
        ),
    ]
    outputs = [Output("retrieve_data", "Results", "retrieve_memory", ["Table"])]

    def retrieve_memory(self) -> DataFrame:
        from core.errors import ApiError
        from service_knowledge import services

        name = to_text(self.memory_base).strip()
        if not name:
            raise ComponentError("Choose a memory base")
        query = to_text(self.search_query).strip()
        if not query:
            raise ComponentError("A search query is required")
        top_k = 5 if self.top_k in (None, "") else int(self.top_k)
        if top_k < 1:
            raise ComponentError("'top_k' must be at least 1")
        s = _session()
        kb = services.find_usable(s, _user(self), name)
        if kb is None:
            raise ComponentError(f"Memory base '{name}' not found")
        session = self.context.session_id if self.filter_by_session else None
        try:
            found = services.search(
                s, kb, query, top_k=top_k, metadata_filter={"session_id": str(session)} if session else None
            )
        except ApiError as exc:
            raise ComponentError(str(exc.detail)) from None
        rows = []
        for hit in found:
            rows.append(_row(hit, self.include_metadata))
        frame = DataFrame(rows)
        self.status = frame
        return frame


def _row(hit: dict[str, Any], include_metadata: Any) -> dict[str, Any]:
    """One retrieved chunk as the reference's retrieval rows carry it: ``content``, ``_score`` and, asked for,
    the chunk's metadata (flows written for the reference read ``{content}``)."""
    row: dict[str, Any] = {"content": hit["content"], "_score": hit["score"]}
    if include_metadata:
        row.update({k: v for k, v in hit["metadata"].items() if k not in row})
    return row


COMPONENTS = [KnowledgeIngestion, KnowledgeRetrieval, Knowledge, MemoryBase]
