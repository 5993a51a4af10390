"""Files and knowledge-base figures:
``python -m bench.knowledge [ingest] [search] [vec] [files] [--postgres URL]``.

* ingest: a 1 MB text corpus (``BENCH_KB_CORPUS_BYTES``) chunked (1000/200) and embedded with the local
  all-MiniLM-L6-v2 on the CPU, then written in one transaction (SQLite): chunks/s and total, model load apart,
  and the process's CPU seconds for chunking and embedding (all threads; less sensitive to load than wall).
* search: top-5 over 100,000 stored chunks (random unit vectors, 384 dimensions, written straight into
  ``knowledge_chunk``), on SQLite and, with ``--postgres``, on PostgreSQL: first (cold) query, then
  p50/p95 of warm exact queries (vector product, top-k, and the 5 rows fetched).
* vec: the same 100,000 vectors in sqlite-vec's ``vec0`` table, for the storage choice.
* files: a 100 MB upload then download through ``service run`` (gunicorn, one gevent worker): the
  worker's peak RSS growth (VmHWM) and the throughput.

Results are printed as JSON and written to ``bench/knowledge-results.json``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "knowledge-results.json"
DIM = 384


def corpus(size: int = 1_000_000, seed: int = 7) -> str:
    """Deterministic English-like text: sentences of common words, paragraphs of 3 to 8 sentences."""
    rng = random.Random(seed)
    words = [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "as",
        "was",
        "with",
        "be",
        "by",
        "on",
        "not",
        "he",
        "this",
        "are",
        "or",
        "his",
        "from",
        "at",
        "which",
        "but",
        "have",
        "an",
        "they",
        "you",
        "were",
        "her",
        "she",
        "there",
        "one",
        "all",
        "we",
        "their",
        "been",
        "has",
        "will",
        "would",
        "who",
        "if",
        "more",
        "when",
        "can",
        "out",
        "so",
        "said",
        "what",
        "up",
        "its",
        "about",
        "into",
        "than",
        "them",
        "only",
        "other",
        "new",
        "some",
        "could",
        "time",
        "these",
        "two",
        "may",
        "then",
        "do",
        "first",
        "any",
        "my",
        "now",
        "such",
        "like",
        "our",
        "over",
        "man",
        "me",
        "even",
        "most",
        "made",
        "after",
        "also",
        "did",
        "many",
        "before",
        "must",
        "through",
        "back",
        "years",
        "where",
        "much",
        "your",
        "way",
        "well",
        "down",
        "should",
        "because",
        "each",
        "just",
        "those",
        "people",
        "how",
        "too",
        "little",
        "state",
        "good",
        "very",
        "make",
        "world",
        "still",
        "own",
        "see",
        "men",
        "work",
        "long",
        "get",
        "here",
        "between",
        "both",
        "life",
        "being",
        "under",
        "never",
        "day",
        "same",
        "another",
        "know",
        "while",
        "last",
        "might",
        "river",
        "mountain",
        "engine",
        "protocol",
        "bread",
        "ocean",
        "planet",
        "garden",
        "market",
        "history",
        "language",
        "music",
        "science",
        "energy",
    ]
    out: list[str] = []
    total = 0
    while total < size:
        paragraph = []
        for _ in range(rng.randint(3, 8)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 22)))
            paragraph.append(sentence.capitalize() + ".")
        text = " ".join(paragraph)
        out.append(text)
        total += len(text) + 1
    return "\n".join(out)[:size]


def _app(database_url: str | None = None) -> Any:
    from core.app import create_app

    config: dict[str, Any] = {"config_dir": tempfile.mkdtemp(prefix="bench-kb-")}
    if database_url:
        config["database_url"] = database_url
    return create_app(config=config, plugins=["accounts", "files", "knowledge"])


def _cpu_s() -> float:
    """CPU seconds of this process, every thread (less sensitive to other processes' load than wall time)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def ingest() -> dict[str, Any]:
    import torch
    from service_knowledge import embeddings, services

    from core import db

    app = _app()
    text = corpus(int(os.environ.get("BENCH_KB_CORPUS_BYTES", "1000000")))
    load_at_start = [round(x, 1) for x in os.getloadavg()]
    with app.app_context():
        t0, c0 = time.perf_counter(), _cpu_s()
        embeddings.get(embeddings.LOCAL_PROVIDER, embeddings.LOCAL_MODEL).embed(["warm up"])
        load_s, load_cpu_s = time.perf_counter() - t0, _cpu_s() - c0
        s = db.session()
        kb = services.create(s, uuid.uuid4(), {"name": "bench"})
        s.commit()
        t1, c1 = time.perf_counter(), _cpu_s()
        prepared = services.prepare(kb, [services.Source("text:corpus", "text", text, {})])
        t2, c2 = time.perf_counter(), _cpu_s()
        written = services.write(s, kb, prepared)
        s.commit()
        t3 = time.perf_counter()
        model = embeddings._load_local()
        counts = np.array([len(ids) for ids in model.tokenizer(prepared[0].texts, truncation=True)["input_ids"]])
    return {
        "corpus_bytes": len(text.encode()),
        "chunks": written,
        "tokens": int(counts.sum()),
        "tokens_per_chunk_min_mean_max": [int(counts.min()), round(float(counts.mean()), 1), int(counts.max())],
        "torch_threads": torch.get_num_threads(),
        "fast_encoder": getattr(embeddings, "_encoder", None) is not None,
        "model_load_s": round(load_s, 2),
        "model_load_cpu_s": round(load_cpu_s, 1),
        "chunk_and_embed_s": round(t2 - t1, 2),
        "chunk_and_embed_cpu_s": round(c2 - c1, 1),
        "write_s": round(t3 - t2, 3),
        "total_s": round(t3 - t1, 2),
        "chunks_per_s": round(written / (t3 - t1), 1),
        "load_and_total_s": round(load_s + t3 - t1, 2),  # what a fresh process's first ingest takes
        "load_average_start_end": [load_at_start, [round(x, 1) for x in os.getloadavg()]],
    }


def _vectors(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, DIM), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def _fill(app: Any, n: int) -> Any:
    import sqlalchemy as sa
    from service_knowledge import services
    from service_knowledge.models import Chunk

    from core import db
    from core.db import utcnow

    matrix = _vectors(n)
    with app.app_context():
        s = db.session()
        kb = services.create(s, uuid.uuid4(), {"name": "scale"})
        now = utcnow()
        for start in range(0, n, 5000):
            rows = [
                {
                    "id": uuid.uuid4(),
                    "kb_id": kb.id,
                    "source": f"text:doc{i // 50}",
                    "source_type": "text",
                    "position": i % 50,
                    "text": f"chunk {i}",
                    "characters": 8,
                    "words": 2,
                    "size": 8,
                    "meta": {"source": f"doc{i // 50}", "position": i % 50},
                    "embedding": matrix[i].tobytes(),
                    "created_at": now,
                }
                for i in range(start, min(n, start + 5000))
            ]
            s.execute(sa.insert(Chunk), rows)
        kb.revision += 1
        kb.status = services.READY
        s.commit()
        return kb.id


def search(database_url: str | None = None, n: int = 100_000, queries: int = 200) -> dict[str, Any]:
    import sqlalchemy as sa
    from service_knowledge import vectors
    from service_knowledge.models import Chunk, KnowledgeBase

    from core import db

    app = _app(database_url)
    t0 = time.perf_counter()
    kb_id = _fill(app, n)
    fill_s = time.perf_counter() - t0
    qs = _vectors(queries, seed=11)
    with app.app_context():
        s = db.session()
        kb = s.get(KnowledgeBase, kb_id)
        vectors.forget(kb_id)

        def one(q: np.ndarray) -> float:
            start = time.perf_counter()
            found = vectors.search(s, kb, q, top_k=5)
            rows = s.execute(sa.select(Chunk.text).where(Chunk.id.in_([i for i, _ in found]))).all()
            assert len(rows) == 5
            return (time.perf_counter() - start) * 1000

        cold = one(qs[0])
        warm = []
        ceiling = []
        bare = vectors.index_for(s, kb).matrix.copy()
        for q in qs[1:]:  # interleaved, so both see the same load
            warm.append(one(q))
            start = time.perf_counter()
            scores = bare @ q  # the ceiling: one bare pass over a matrix of the same size
            np.argpartition(scores, len(scores) - 5)
            ceiling.append((time.perf_counter() - start) * 1000)
    warm.sort()
    ceiling.sort()
    return {
        "database": "postgresql" if database_url else "sqlite",
        "chunks": n,
        "fill_s": round(fill_s, 1),
        "cold_first_query_ms": round(cold, 1),
        "p50_ms": round(statistics.median(warm), 2),
        "p95_ms": round(warm[int(len(warm) * 0.95)], 2),
        "ceiling_bare_matmul_p50_ms": round(statistics.median(ceiling), 2),
        "ratio_to_ceiling_p50": round(statistics.median(warm) / statistics.median(ceiling), 2),
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }


def sqlite_vec(n: int = 100_000, queries: int = 200) -> dict[str, Any]:
    import sqlite3

    import sqlite_vec as sv

    path = Path(tempfile.mkdtemp(prefix="bench-vec-")) / "vec.db"
    t0 = time.perf_counter()
    conn = sqlite3.connect(path)
    if not hasattr(conn, "enable_load_extension"):
        site = Path(sv.__file__).parent
        return {
            "available": False,
            "reason": "this Python's sqlite3 module is built without loadable extensions",
            "install_kib": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) // 1024,
        }
    conn.enable_load_extension(True)
    sv.load(conn)
    load_ms = (time.perf_counter() - t0) * 1000
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}])")
    matrix = _vectors(n)
    t1 = time.perf_counter()
    conn.executemany("INSERT INTO v(rowid, embedding) VALUES (?, ?)", ((i + 1, matrix[i].tobytes()) for i in range(n)))
    conn.commit()
    fill_s = time.perf_counter() - t1
    qs = _vectors(queries, seed=11)
    times = []
    for q in qs:
        start = time.perf_counter()
        rows = conn.execute(
            "SELECT rowid, distance FROM v WHERE embedding MATCH ? ORDER BY distance LIMIT 5", (q.tobytes(),)
        ).fetchall()
        assert len(rows) == 5
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    site = Path(sv.__file__).parent
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    return {
        "chunks": n,
        "extension_load_ms": round(load_ms, 1),
        "fill_s": round(fill_s, 1),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(len(times) * 0.95)], 2),
        "install_kib": size // 1024,
    }


def _hwm_kib(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def files(size_mb: int = 100) -> dict[str, Any]:
    from bench.common import Service

    work = Path(tempfile.mkdtemp(prefix="bench-files-"))
    svc = Service(work, workers=1, name="files", MAX_FILE_SIZE_UPLOAD=str(size_mb * 2))
    try:
        svc.wait()
        svc.setup()
        worker = svc.workers()[0]
        # one small upload and download first, so imports and pools are warm
        _upload(svc, 1)
        rss_before, _ = _hwm_kib(worker)
        t0 = time.perf_counter()
        file_id = _upload(svc, size_mb)
        up_s = time.perf_counter() - t0
        _, hwm_up = _hwm_kib(worker)
        t1 = time.perf_counter()
        got = _download(svc, file_id)
        down_s = time.perf_counter() - t1
        rss_after, hwm_down = _hwm_kib(worker)
        assert got == size_mb * 1024 * 1024, got
    finally:
        svc.stop()
    return {
        "file_mb": size_mb,
        "rss_before_mib": round(rss_before / 1024, 1),
        "peak_growth_upload_mib": round((hwm_up - rss_before) / 1024, 1),
        "peak_growth_download_mib": round((hwm_down - rss_before) / 1024, 1),
        "rss_after_mib": round(rss_after / 1024, 1),
        "upload_mb_s": round(size_mb / up_s, 1),
        "download_mb_s": round(size_mb / down_s, 1),
    }


def _upload(svc: Any, size_mb: int) -> str:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    block = os.urandom(1024 * 1024)
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=300)
    conn.putrequest("POST", "/api/v2/files")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Content-Length", str(len(head) + size_mb * len(block) + len(tail)))
    for key, value in svc.bearer.items():
        conn.putheader(key, value)
    conn.endheaders()
    conn.send(head)
    for _ in range(size_mb):
        conn.send(block)
    conn.send(tail)
    response = conn.getresponse()
    body = json.loads(response.read())
    assert response.status == 201, body
    return str(body["id"])


def _download(svc: Any, file_id: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=300)
    conn.request("GET", f"/api/v2/files/{file_id}", headers=svc.bearer)
    response = conn.getresponse()
    assert response.status == 200
    total = 0
    while chunk := response.read(1024 * 1024):
        total += len(chunk)
    return total


def main(argv: list[str]) -> None:
    postgres = None
    if "--postgres" in argv:
        postgres = argv[argv.index("--postgres") + 1]
        argv = [a for a in argv if a not in ("--postgres", postgres)]
    wanted = argv or ["ingest", "search", "vec", "files"]
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if "files" in wanted:
        results["files"] = files()
        print(json.dumps(results["files"]), flush=True)
    if "vec" in wanted:
        results["sqlite_vec"] = sqlite_vec()
        print(json.dumps(results["sqlite_vec"]), flush=True)
    if "search" in wanted:
        results["search_sqlite"] = search()
        print(json.dumps(results["search_sqlite"]), flush=True)
        if postgres:
            results["search_postgresql"] = search(postgres)
            print(json.dumps(results["search_postgresql"]), flush=True)
    if "ingest" in wanted:
        results["ingest"] = ingest()
        print(json.dumps(results["ingest"]), flush=True)
    results["load_average_at_end"] = os.getloadavg()
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
