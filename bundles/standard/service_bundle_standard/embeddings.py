"""Embedding Similarity: compare two embedding vectors (the JSON objects Text Embedder produces).

Plain Python arithmetic (no numpy needed for two vectors). The embedding *models* and Text
Embedder belong to the models bundle; this component only needs the vectors.
"""

from __future__ import annotations

import math
from typing import Any

from core.engine import Component, Data, Output
from core.engine.inputs import DataInput, DropdownInput
from service_bundle_standard.legacy_data import as_data_list

METRICS = {
    "Cosine Similarity": "cosine_similarity",
    "Euclidean Distance": "euclidean_distance",
    "Manhattan Distance": "manhattan_distance",
}


def _vector(item: Data, position: str) -> list[float]:
    raw = item.data.get("embeddings")
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"The {position} JSON object has no 'embeddings' list.")
    try:
        return [float(x) for x in raw]
    except (TypeError, ValueError):
        raise ValueError(f"The {position} embeddings must be numbers.") from None


def similarity(a: list[float], b: list[float], metric: str) -> float:
    if metric == "Cosine Similarity":
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        if norms == 0:
            raise ValueError("Cosine similarity is undefined for a zero vector.")
        return sum(x * y for x, y in zip(a, b, strict=True)) / norms
    if metric == "Euclidean Distance":
        return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
    if metric == "Manhattan Distance":
        return sum(abs(x - y) for x, y in zip(a, b, strict=True))
    raise ValueError(f"Invalid similarity metric '{metric}'. Use one of: {', '.join(METRICS)}")


class EmbeddingSimilarityComponent(Component):
    key = "EmbeddingSimilarityComponent"
    display_name = "Embedding Similarity"
    display_names = {"en": "Embedding Similarity", "fr": "Similarité d'embeddings", "de": "Embedding-Ähnlichkeit"}
    description = "Compute selected form of similarity between two embedding vectors."
    icon = "equal"
    category = "embeddings"
    legacy = True
    inputs = [
        DataInput(
            "embedding_vectors",
            "Embedding Vectors",
            "",
            is_list=True,
            required=True,
            info="A list containing exactly two JSON objects with embedding vectors to compare.",
        ),
        DropdownInput(
            "similarity_metric",
            "Similarity Metric",
            "Cosine Similarity",
            options=list(METRICS),
            info="Select the similarity metric to use.",
        ),
    ]
    outputs = [Output("similarity_data", "Similarity Data", "compute_similarity", ["JSON"])]

    def compute_similarity(self) -> Data:
        items = as_data_list(self.embedding_vectors)
        if len(items) != 2:
            raise ValueError(f"Exactly two embedding vectors are required, got {len(items)}.")
        if self.similarity_metric not in METRICS:
            raise ValueError(f"Invalid similarity metric '{self.similarity_metric}'. Use one of: {', '.join(METRICS)}")
        a, b = _vector(items[0], "first"), _vector(items[1], "second")
        score: dict[str, Any]
        if len(a) != len(b):
            score = {"error": "Embeddings must have the same dimensions."}  # the reference's answer
        else:
            score = {METRICS[self.similarity_metric]: similarity(a, b, self.similarity_metric)}
        data = Data({"embedding_1": a, "embedding_2": b, "similarity_score": score}, text_key="similarity_score")
        self.status = data
        return data


COMPONENTS = [EmbeddingSimilarityComponent]
