"""Knowledge bases over HTTP with the real local model, in-process jobs: create, ingest (text, stored
files, multipart), progress, chunks, search quality, re-ingest, failures, model mismatch, isolation."""

from __future__ import annotations

import io

import pytest

from tests.files.docs_fixtures import pdf_bytes
from tests.knowledge.conftest import create_kb, ingest, upload, wait_job, wait_kb
from tests.knowledge.corpus import DOCUMENTS, QUESTIONS

ITEM_FIELDS = {
    "id", "dir_name", "name", "embedding_provider", "embedding_model", "size", "words", "characters", "chunks",
    "avg_chunk_size", "chunk_size", "chunk_overlap", "separator", "status", "failure_reason", "last_job_id",
    "source_types", "column_config", "backend_type", "backend_config",
}  # fmt: skip


def test_create_list_read_delete_and_isolation(client, alice, bob):
    created = create_kb(client, alice, "manuals")
    assert set(created) >= ITEM_FIELDS
    assert created["status"] == "empty" and created["chunks"] == 0
    assert created["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert client.post("/api/v1/knowledge_bases/", json={"name": "manuals"}, headers=alice.bearer).status_code == 409
    assert client.post("/api/v1/knowledge_bases/", json={"name": "../x"}, headers=alice.bearer).status_code == 422
    assert client.post("/api/v1/knowledge_bases/", json={}, headers=alice.bearer).status_code == 422
    bad_model = client.post(
        "/api/v1/knowledge_bases/", json={"name": "m", "embedding_model": "nope"}, headers=alice.bearer
    )
    assert bad_model.status_code == 422
    assert [kb["name"] for kb in client.get("/api/v1/knowledge_bases", headers=alice.bearer).get_json()] == ["manuals"]
    # bob sees nothing of alice's, and may use the same name
    assert client.get("/api/v1/knowledge_bases", headers=bob.bearer).get_json() == []
    missing = client.get("/api/v1/knowledge_bases/manuals", headers=bob.bearer)
    assert missing.status_code == 404 and missing.get_json() == {"detail": "Knowledge base 'manuals' not found"}
    assert client.delete("/api/v1/knowledge_bases/manuals", headers=bob.bearer).status_code == 404
    none = client.delete("/api/v1/knowledge_bases", json={"kb_names": ["manuals", "zz"]}, headers=bob.bearer)
    assert none.status_code == 404 and none.get_json()["detail"] == "Knowledge bases not found: manuals, zz"
    create_kb(client, bob, "manuals")
    create_kb(client, alice, "other")
    deleted = client.delete("/api/v1/knowledge_bases", json={"kb_names": ["manuals", "zz"]}, headers=alice.bearer)
    assert deleted.status_code == 200
    assert deleted.get_json()["deleted_count"] == 1 and deleted.get_json()["not_found"] == ["zz"]
    assert client.delete("/api/v1/knowledge_bases/other", headers=alice.bearer).status_code == 200
    assert client.get("/api/v1/knowledge_bases", headers=alice.bearer).get_json() == []
    assert client.get("/api/v1/knowledge_bases/manuals", headers=bob.bearer).status_code == 200


def test_config_tells_the_truth(client, alice):
    config = client.get("/api/v1/config", headers=alice.bearer).get_json()
    assert config["local_vector_store_available"] is True


def test_ingest_search_quality_and_chunks(client, alice, app):
    create_kb(client, alice, "corpus", chunk_size=400, chunk_overlap=50)
    names = {upload(client, alice, text.encode(), name)["id"]: name for name, text in DOCUMENTS.items()}
    file_ids = list(names)
    job_id = ingest(client, alice, "corpus", file_ids=file_ids)
    kb = wait_kb(client, alice, "corpus")
    assert kb["status"] == "ready", kb
    assert kb["chunks"] >= len(DOCUMENTS) and kb["source_types"] == ["file"]
    assert kb["characters"] > 0 and kb["words"] > 0 and kb["avg_chunk_size"] > 0
    assert kb["last_job_id"] == job_id
    job = wait_job(client, alice, "corpus", job_id)  # the base is ready a moment before its job ends
    assert job["state"] == "finished"
    stages = [e["data"]["stage"] for e in job["events"] if e["event"] == "progress"]
    assert stages[0] == "reading" and "embedding" in stages and stages[-1] == "done"
    # a relevant query ranks its document first
    for question, expected in QUESTIONS.items():
        hits = client.post(
            "/api/v1/knowledge_bases/corpus/search", json={"query": question, "top_k": 3}, headers=alice.bearer
        ).get_json()["results"]
        assert names[hits[0]["metadata"]["source"]] == expected, (question, hits[0])
        assert hits[0]["score"] >= hits[-1]["score"]
    page = client.get("/api/v1/knowledge_bases/corpus/chunks?limit=2&search=Moon", headers=alice.bearer).get_json()
    assert page["total"] == 1 and "Moon" in page["chunks"][0]["content"]
    # threshold and metadata filter
    strict = client.post(
        "/api/v1/knowledge_bases/corpus/search",
        json={"query": "sourdough", "score_threshold": 0.99},
        headers=alice.bearer,
    ).get_json()["results"]
    assert strict == []
    filtered = client.post(
        "/api/v1/knowledge_bases/corpus/search",
        json={"query": "bread", "metadata_filter": {"source": file_ids[4]}},
        headers=alice.bearer,
    ).get_json()["results"]
    assert filtered and all(h["metadata"]["source"] == file_ids[4] for h in filtered)


def test_reingest_replaces_a_sources_chunks(client, alice):
    create_kb(client, alice, "notes", chunk_size=100, chunk_overlap=0)
    ingest(client, alice, "notes", text="alpha " * 50, source_name="doc")
    first = wait_kb(client, alice, "notes")
    ingest(client, alice, "notes", text="beta gamma", source_name="doc")
    second = wait_kb(client, alice, "notes")
    assert first["chunks"] > 1 and second["chunks"] == 1 and second["source_types"] == ["text"]
    chunks = client.get("/api/v1/knowledge_bases/notes/chunks", headers=alice.bearer).get_json()["chunks"]
    assert [c["content"] for c in chunks] == ["beta gamma"]


def test_multipart_ingest_of_pdf_and_markdown(client, alice):
    create_kb(client, alice, "uploads")
    response = client.post(
        "/api/v1/knowledge_bases/uploads/ingest",
        data={
            "files": [
                (io.BytesIO(pdf_bytes("The warranty lasts three years")), "terms.pdf"),
                (io.BytesIO(b"# Setup\n\nPlug the router in and wait."), "setup.md"),
            ]
        },
        headers=alice.bearer,
    )
    assert response.status_code == 202, response.get_json()
    kb = wait_kb(client, alice, "uploads")
    assert kb["status"] == "ready" and kb["chunks"] == 2
    hits = client.post(
        "/api/v1/knowledge_bases/uploads/search", json={"query": "how long is the warranty?"}, headers=alice.bearer
    ).get_json()["results"]
    assert "warranty" in hits[0]["content"]


def test_failure_keeps_the_base_readable_and_whole(client, alice, bob):
    create_kb(client, alice, "kept", chunk_size=200, chunk_overlap=0)
    ingest(client, alice, "kept", text="original content about rivers", source_name="a")
    ready = wait_kb(client, alice, "kept")
    theirs = upload(client, bob, b"bob only", "private.txt")["id"]
    ingest(client, alice, "kept", text="new text", source_name="a", file_ids=[theirs])
    failed = wait_kb(client, alice, "kept")
    assert failed["status"] == "failed"
    assert "File not found" in failed["failure_reason"]
    assert failed["chunks"] == ready["chunks"]  # nothing half-written: the old chunks are intact
    chunks = client.get("/api/v1/knowledge_bases/kept/chunks", headers=alice.bearer).get_json()["chunks"]
    assert [c["content"] for c in chunks] == ["original content about rivers"]
    # the next ingestion recovers
    ingest(client, alice, "kept", text="fresh", source_name="b")
    assert wait_kb(client, alice, "kept")["status"] == "ready"


def test_model_mismatch_is_refused(client, alice, app):
    create_kb(client, alice, "fixed")
    ingest(client, alice, "fixed", text="some text", source_name="t")
    wait_kb(client, alice, "fixed")
    asked = client.post(
        "/api/v1/knowledge_bases/fixed/search",
        json={"query": "text", "embedding_model": "text-embedding-3-small"},
        headers=alice.bearer,
    )
    assert asked.status_code == 409 and "cannot search it" in asked.get_json()["detail"]
    with app.app_context():
        import sqlalchemy as sa
        from service_knowledge.models import KnowledgeBase

        from core import db

        s = db.session()
        s.execute(sa.update(KnowledgeBase).values(embedding_model="text-embedding-3-small"))
        s.commit()
    recorded = client.post("/api/v1/knowledge_bases/fixed/search", json={"query": "text"}, headers=alice.bearer)
    assert recorded.status_code == 409 and "cannot be searched here" in recorded.get_json()["detail"]


def test_ingest_validation(client, alice):
    create_kb(client, alice, "v")
    assert client.post("/api/v1/knowledge_bases/v/ingest", json={}, headers=alice.bearer).status_code == 422
    assert client.post("/api/v1/knowledge_bases/v/ingest", json=[1], headers=alice.bearer).status_code == 422
    assert (
        client.post("/api/v1/knowledge_bases/nope/ingest", json={"text": "x"}, headers=alice.bearer).status_code == 404
    )
    odd = client.post(
        "/api/v1/knowledge_bases/v/ingest",
        data={"files": [(io.BytesIO(b"\x00\x01\x02"), "blob.exe")]},
        headers=alice.bearer,
    )
    assert odd.status_code == 422


@pytest.mark.parametrize("path", ["/api/v1/knowledge_bases/x/chunks", "/api/v1/knowledge_bases/x/jobs/abc"])
def test_foreign_or_missing_is_404(client, alice, path):
    assert client.get(path, headers=alice.bearer).status_code == 404
