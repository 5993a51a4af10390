"""Knowledge plugin: knowledge bases, ingestion jobs, local embeddings, vector search and components."""

__version__ = "0.1.0"
