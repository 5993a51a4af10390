"""Local embedding throughput: chunks/s of the NumPy encoder (runtime install, no PyTorch) and, where
PyTorch is installed, of the PyTorch path, on the same texts; and the cosine of their vectors.

``python -m bench.local_embedding [--chunks 500] [--words 200] [--repeat 1]`` (issue 27). Prints one JSON
object. With ``--repeat N`` the backends run N times each, alternately (the machine's load falls on both
alike), and each one's best run is reported with the list of its chunks/s.
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
    start = time.perf_counter()
    cpu = time.process_time()
    vectors = fn(texts)
    return vectors, time.perf_counter() - start, time.process_time() - cpu


def summary(runs: list[tuple[float, float]], chunks: int) -> dict[str, object]:
    wall, cpu = min(runs)
    out: dict[str, object] = {"chunks_per_s": round(chunks / wall, 1), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    if len(runs) > 1:
        out["runs_chunks_per_s"] = [round(chunks / w, 1) for w, _ in runs]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    texts = corpus(args.chunks, args.words)
    from service_knowledge import embeddings

    out: dict[str, object] = {"chunks": args.chunks, "words": args.words}
    models = {"numpy": embeddings.LocalMiniLM(backend="numpy")}
    try:
        import torch  # noqa: F401
    except ImportError:
        out["torch"] = None
    else:
        models["torch"] = embeddings.LocalMiniLM(backend="torch")
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    vectors = {}
    for model in models.values():
        model.embed(texts[:8])  # load and warm up
    for _ in range(args.repeat):
        for name, model in models.items():
            vectors[name], wall, cpu = timed(model.embed, texts)
            runs[name].append((wall, cpu))
    for name in models:
        out[name] = summary(runs[name], len(texts))
    if "torch" in vectors:
        out["min_cosine"] = float((vectors["numpy"] * vectors["torch"]).sum(axis=1).min())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
