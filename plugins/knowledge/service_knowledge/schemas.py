"""Request shapes of the knowledge-base endpoints."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate


class KnowledgeCreateSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    embedding_provider = fields.String(load_default=None, allow_none=True)
    embedding_model = fields.String(load_default=None, allow_none=True)
    chunk_size = fields.Integer(load_default=1000, validate=validate.Range(min=50, max=20000))
    chunk_overlap = fields.Integer(load_default=200, validate=validate.Range(min=0, max=10000))
    separator = fields.String(load_default="\n", validate=validate.Length(max=32))
    column_config = fields.Raw(load_default=None, allow_none=True)


class KnowledgeDeleteSchema(Schema):
    kb_names = fields.List(fields.String(), required=True)


class IngestJSONSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    file_ids = fields.List(fields.String(validate=validate.Length(min=1, max=512)), load_default=list)
    text = fields.String(load_default=None, allow_none=True)
    source_name = fields.String(load_default="text", validate=validate.Length(min=1, max=200))


class ChunksQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE

    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=1_000_000))
    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=1000))
    search = fields.String(load_default=None)


class SearchSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    query = fields.String(required=True, validate=validate.Length(min=1, max=10000))
    top_k = fields.Integer(load_default=5, validate=validate.Range(min=1, max=100))
    score_threshold = fields.Float(load_default=None, allow_none=True)
    metadata_filter = fields.Dict(load_default=None, allow_none=True)
    embedding_model = fields.String(load_default=None, allow_none=True)


# --- response shapes (documentation: the views answer plain dicts in exactly these shapes) -------------------
class KnowledgeBaseSchema(Schema):
    """One knowledge base as the reference lists it, plus its ingestion status."""

    id = fields.UUID()
    dir_name = fields.String()
    name = fields.String()
    embedding_provider = fields.String(allow_none=True)
    embedding_model = fields.String(allow_none=True)
    chunks = fields.Integer()
    characters = fields.Integer()
    words = fields.Integer()
    size = fields.Integer()
    avg_chunk_size = fields.Float()
    source_types = fields.List(fields.String())
    chunk_size = fields.Integer()
    chunk_overlap = fields.Integer()
    separator = fields.String()
    status = fields.String(metadata={"description": "ready | ingesting | failed"})
    failure_reason = fields.String(allow_none=True)
    last_job_id = fields.String(allow_none=True)
    column_config = fields.Raw(allow_none=True)
    backend_type = fields.String()
    backend_config = fields.Dict()
    created_at = fields.DateTime()
    updated_at = fields.DateTime()


class KnowledgeDeletedSchema(Schema):
    message = fields.String(required=True)
    deleted_count = fields.Integer(required=True)
    not_found = fields.List(fields.String(), metadata={"description": "names that did not exist (when any)"})


class KnowledgeMessageSchema(Schema):
    message = fields.String(required=True)


class IngestQueuedSchema(Schema):
    job_id = fields.String(required=True)
    knowledge_base = fields.String(required=True)
    status = fields.String(required=True)


class JobEventSchema(Schema):
    event = fields.String(required=True)
    data = fields.Raw(allow_none=True)


class IngestionJobSchema(Schema):
    job_id = fields.String(required=True)
    state = fields.String(required=True)
    error = fields.String(allow_none=True)
    progress = fields.Raw(allow_none=True, metadata={"description": "the last progress event's data"})
    events = fields.List(fields.Nested(JobEventSchema))


class ChunkSchema(Schema):
    id = fields.String(required=True)
    content = fields.String(required=True)
    char_count = fields.Integer()
    metadata = fields.Dict()


class ChunksPageSchema(Schema):
    chunks = fields.List(fields.Nested(ChunkSchema))
    total = fields.Integer()
    page = fields.Integer()
    size = fields.Integer()
    pages = fields.Integer()


class SearchHitSchema(Schema):
    id = fields.String(required=True)
    content = fields.String(required=True)
    score = fields.Float(required=True)
    metadata = fields.Dict()


class SearchResultsSchema(Schema):
    results = fields.List(fields.Nested(SearchHitSchema))


#: ``POST /{kb_name}/ingest`` reads JSON or multipart by hand (files of several parts, or stored file ids)
INGEST_BODY = {
    "required": True,
    "description": "Stored files by id, uploaded files, or a text to ingest (at least one).",
    "content": {
        "application/json": {"schema": IngestJSONSchema},
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    "file_ids": {"type": "array", "items": {"type": "string"}},
                    "text": {"type": "string"},
                    "source_name": {"type": "string"},
                },
            }
        },
    },
}
