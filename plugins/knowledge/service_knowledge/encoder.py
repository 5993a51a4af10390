"""The local model's forward pass written out over its loaded weights, for ingestion on the CPU.

Why hand-written (measured on the 2-core AVX2 machine, one thread, against sentence-transformers'
``encode`` of the same BERT modules; ``bench/NOTES.md``, issue 15):

* every activation of a batch lives in a few buffers allocated once per batch: eager PyTorch allocates
  each layer's outputs anew, and the feed-forward's (up to 50 MB) are above glibc's mmap threshold, so
  each is mapped, page-faulted and unmapped again (380,000 page faults and ~7% of the CPU on 256 chunks);
* the query, key and value projections are one matrix product three times as wide;
* the feed-forward's GELU runs in place after MKL's product (oneDNN's linear with the GELU fused ran at
  53 GFLOP per CPU-second where MKL's product plus a separate GELU ran at 80);
* each worker thread runs whole batches with one intra-op thread (``embed_batches``): with PyTorch's two
  intra-op threads every one of the ~50 operations of a batch ends in a barrier, which costs 15% more
  CPU, more on a machine whose other processes take a core away mid-operation.

The arithmetic is the model's own (the same weights, MKL products, SDPA attention, LayerNorm, exact
GELU, mean pooling over the attention mask, L2 normalisation), so the vectors are sentence-transformers'
up to float rounding (~1e-7): :func:`build` checks that on probe texts and returns ``None`` (the caller
keeps ``encode``) for any model that is not a plain absolute-position BERT with mean pooling, or whose
vectors differ.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# texts of similar length checked against ``encode`` when the model is loaded (padding included)
PROBES = [
    "hello world",
    "A slightly longer sentence, with punctuation; and a few more tokens than the first one.",
    "Café, naïve façade, 東京 🙂",
    " ".join(["the river carried sediment past the old mill"] * 12),
]
TOLERANCE = 1e-5  # max abs difference per component accepted at load (the test's bound)


def token_ids(tokenizer: Any, max_length: int, texts: Sequence[str]) -> list[list[int]]:
    """Token ids per text as sentence-transformers makes them: stripped, special tokens added, truncated."""
    encoded = tokenizer(
        [t.strip() for t in texts],
        truncation=True,
        max_length=max_length,
        return_attention_mask=False,
        return_token_type_ids=False,
    )
    return [list(ids) for ids in encoded["input_ids"]]


class Encoder:
    """A BERT encoder with mean pooling and L2 normalisation over a ``SentenceTransformer``'s weights."""

    def __init__(self, model: Any) -> None:
        import torch

        modules = list(model)
        if len(modules) != 3 or [type(m).__name__ for m in modules] != ["Transformer", "Pooling", "Normalize"]:
            raise ValueError(f"not Transformer + Pooling + Normalize: {[type(m).__name__ for m in modules]}")
        if getattr(modules[1], "pooling_mode", None) != "mean":
            raise ValueError(f"pooling is not the mean: {getattr(modules[1], 'pooling_mode', None)}")
        bert = modules[0].auto_model
        config = bert.config
        if config.model_type != "bert" or config.hidden_act != "gelu":
            raise ValueError(f"not a BERT with exact GELU: {config.model_type}, {config.hidden_act}")
        if getattr(config, "position_embedding_type", "absolute") != "absolute":
            raise ValueError("relative position embeddings")
        self.tokenizer = model.tokenizer
        self.max_length = int(model.max_seq_length)
        self.heads = int(config.num_attention_heads)
        self.width = int(config.hidden_size)
        self.inner = int(config.intermediate_size)
        if self.width % self.heads:
            raise ValueError("hidden size not a multiple of the heads")
        if self.max_length > config.max_position_embeddings:
            raise ValueError("max_seq_length beyond the position embeddings")

        def w(t: Any) -> Any:
            return t.detach().to(torch.float32).contiguous()

        emb = bert.embeddings
        self.word = w(emb.word_embeddings.weight)
        self.position = w(emb.position_embeddings.weight)
        self.token_type = w(emb.token_type_embeddings.weight[0])  # single texts: segment 0 throughout
        self.norm = (w(emb.LayerNorm.weight), w(emb.LayerNorm.bias), float(emb.LayerNorm.eps))
        self.layers = []
        for layer in bert.encoder.layer:
            att = layer.attention.self
            out = layer.attention.output
            self.layers.append(
                {
                    # x @ w: weights transposed once, row-major (MKL's fastest layout measured)
                    "qkv": torch.cat([w(att.query.weight), w(att.key.weight), w(att.value.weight)]).t().contiguous(),
                    "qkv_bias": torch.cat([w(att.query.bias), w(att.key.bias), w(att.value.bias)]),
                    "out": w(out.dense.weight).t().contiguous(),
                    "out_bias": w(out.dense.bias),
                    "norm1": (w(out.LayerNorm.weight), w(out.LayerNorm.bias), float(out.LayerNorm.eps)),
                    "up": w(layer.intermediate.dense.weight).t().contiguous(),
                    "up_bias": w(layer.intermediate.dense.bias),
                    "down": w(layer.output.dense.weight).t().contiguous(),
                    "down_bias": w(layer.output.dense.bias),
                    "norm2": (
                        w(layer.output.LayerNorm.weight),
                        w(layer.output.LayerNorm.bias),
                        float(layer.output.LayerNorm.eps),
                    ),
                }
            )

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text as sentence-transformers makes them (stripped, truncated at the maximum)."""
        return token_ids(self.tokenizer, self.max_length, texts)

    def forward(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors (float32, one row per sequence) of a batch of token-id sequences."""
        import torch
        import torch.nn.functional as F

        rows, length = len(batch), max(len(ids) for ids in batch)
        ids = torch.zeros(rows, length, dtype=torch.long)
        mask = torch.zeros(rows, length, dtype=torch.bool)
        for r, seq in enumerate(batch):
            ids[r, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
            mask[r, : len(seq)] = True
        width, heads = self.width, self.heads
        head = width // heads
        m = rows * length
        with torch.inference_mode():
            # one buffer per product for the whole batch (see the module's doc: no mmap per layer)
            qkv_buf = torch.empty(m, 3 * width)
            out_buf = torch.empty(m, width)
            up_buf = torch.empty(m, self.inner)
            down_buf = torch.empty(m, width)
            x = self.word[ids].add_(self.position[:length]).add_(self.token_type)
            x = F.layer_norm(x, (width,), self.norm[0], self.norm[1], self.norm[2]).view(m, width)
            # no mask when no row is padded (sorted batches often are not): SDPA's unmasked path
            attn_mask = None if bool(mask.all()) else mask.view(rows, 1, 1, length)
            for layer in self.layers:
                qkv = torch.addmm(layer["qkv_bias"], x, layer["qkv"], out=qkv_buf)
                q, k, v = qkv.view(rows, length, 3, heads, head).permute(2, 0, 3, 1, 4).unbind(0)
                att = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=1.0 / math.sqrt(head))
                att = att.transpose(1, 2).reshape(m, width)
                h = torch.addmm(layer["out_bias"], att, layer["out"], out=out_buf).add_(x)
                h = F.layer_norm(h, (width,), *layer["norm1"])
                up = torch.addmm(layer["up_bias"], h, layer["up"], out=up_buf)
                torch.ops.aten.gelu_(up)  # exact (erf) GELU, as BERT's "gelu"
                down = torch.addmm(layer["down_bias"], up, layer["down"], out=down_buf).add_(h)
                x = F.layer_norm(down, (width,), *layer["norm2"])
            weights = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x.view(rows, length, width) * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return F.normalize(pooled, p=2, dim=1).numpy()


def build(model: Any) -> Encoder | None:
    """The hand-written encoder for ``model`` if it applies and gives ``model.encode``'s vectors on the
    probe texts; ``None`` (logged) otherwise, and the caller keeps ``encode``."""
    try:
        encoder = Encoder(model)
        want = np.asarray(model.encode(PROBES, normalize_embeddings=True, show_progress_bar=False), np.float32)
        got = encoder.forward(encoder.tokenize(PROBES))
        diff = float(np.abs(got - want).max())
        if not diff < TOLERANCE:
            raise ValueError(f"vectors differ from encode's by {diff:.2e}")
    except Exception as exc:  # an unexpected model or library version: the plain path stays
        log.warning("local embedding model: fast encoder not used, sentence-transformers' encode instead (%s)", exc)
        return None
    return encoder


def batches(lengths: Sequence[int], *, max_rows: int, max_tokens: int) -> list[list[int]]:
    """Indexes of ``lengths`` by decreasing length (stable), cut into batches of at most ``max_rows`` rows
    and ``max_tokens`` padded tokens (at least one row each)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    out: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted longest first: the batch's first row sets its padded length
        if current and (len(current) >= max_rows or (len(current) + 1) * lengths[current[0]] > max_tokens):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    return out


def _one_thread(fn: Callable[[Any], np.ndarray], item: Any) -> np.ndarray:
    import torch

    if torch.get_num_threads() != 1:  # this worker's own intra-op setting (OpenMP's is per thread)
        torch.set_num_threads(1)
    return fn(item)


def run_parallel(
    fn: Callable[[Any], np.ndarray],
    items: Sequence[Any],
    workers: int,
    *,
    check: Callable[[], None] | None = None,
) -> Generator[tuple[int, np.ndarray]]:
    """:func:`parallel` with one PyTorch intra-op thread per worker (PyTorch releases the GIL in its
    kernels); the intra-op thread count of the process is restored afterwards."""
    import torch

    saved = torch.get_num_threads()
    try:
        yield from parallel(functools.partial(_one_thread, fn), items, workers, check=check)
    finally:
        # set_num_threads(1) in the workers also changed the default that threads created later start with
        torch.set_num_threads(saved)


def parallel(
    fn: Callable[[Any], np.ndarray],
    items: Sequence[Any],
    workers: int,
    *,
    check: Callable[[], None] | None = None,
) -> Generator[tuple[int, np.ndarray]]:
    """``(index, fn(item))`` for each item in order, computed by ``workers`` OS threads (``fn`` must
    release the GIL in its kernels, as PyTorch's and NumPy's do). ``check`` runs on the caller's thread
    before each item is handed out; it may raise, and then the items not started are dropped and the
    running ones are awaited. Under gevent's monkey-patching, gevent's pool of native threads is used
    (the caller's greenlet waits cooperatively)."""
    executor = _executor(workers)
    inflight: deque[tuple[int, Any]] = deque()
    try:
        for index, item in enumerate(items):
            if check is not None:
                check()
            inflight.append((index, executor.submit(fn, item)))
            if len(inflight) >= 2 * workers:  # a second item queued per worker: none waits for the caller
                done, future = inflight.popleft()
                yield done, future.result()
        while inflight:
            done, future = inflight.popleft()
            yield done, future.result()
    finally:
        for _, future in inflight:  # stopped early: drop what has not started, await what has
            if not future.cancel():
                with contextlib.suppress(Exception):
                    future.exception()
        executor.shutdown(wait=True)


def _executor(workers: int) -> Any:
    import sys

    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        from gevent.threadpool import ThreadPoolExecutor as NativeThreads

        return NativeThreads(workers)
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers, thread_name_prefix="embed")
