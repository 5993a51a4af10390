"""Local embedding throughput: chunks/s of the NumPy encoder (runtime install, no PyTorch) and, where
PyTorch is installed, of the PyTorch path, on the same texts; and the cosine of their vectors.

``python -m bench.local_embedding [--chunks 500] [--words 200]`` (issue 27). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import time

WORDS = " ".join(
    [
        "the river carried sediment past the old mill while engineers measured flow rates and recorded",
        "observations about erosion storage retrieval knowledge documents chunk embedding vector search",
        "model language sentence paragraph evaluation benchmark system service user flow component",
    ]
).split(" ")


def corpus(chunks: int, words: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) + "." for _ in range(chunks)]


def timed(fn, texts):
    fn(texts[:8])  # warm up
    start = time.perf_counter()
    cpu = time.process_time()
    vectors = fn(texts)
    return vectors, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--words", type=int, default=200)
    args = parser.parse_args()
    texts = corpus(args.chunks, args.words)
    from service_knowledge import embeddings

    out: dict[str, object] = {"chunks": args.chunks, "words": args.words}
    numpy_model = embeddings.LocalMiniLM(backend="numpy")
    vectors, wall, cpu = timed(numpy_model.embed, texts)
    out["numpy"] = {"chunks_per_s": round(len(texts) / wall, 1), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    try:
        import torch  # noqa: F401
    except ImportError:
        out["torch"] = None
    else:
        torch_model = embeddings.LocalMiniLM(backend="torch")
        reference, wall, cpu = timed(torch_model.embed, texts)
        out["torch"] = {"chunks_per_s": round(len(texts) / wall, 1), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        out["min_cosine"] = float((vectors * reference).sum(axis=1).min())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
