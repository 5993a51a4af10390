"""Knowledge bases embedded by an OpenAI-style `/embeddings` endpoint (tests/openai_server.py) through the
models bundle's providers (the `embed_texts` hook): create, ingest, search, the recorded model, refusals."""

from __future__ import annotations

import pytest

from tests.knowledge.conftest import PLUGINS, ingest, wait_kb
from tests.openai_server import OpenAIServer

LINES = [
    "The harbour opens at dawn each day.",
    "Invoices are paid within thirty days.",
    "The cat sleeps on the warm windowsill.",
    "Backups run every night at two.",
]


@pytest.fixture
def llm():
    with OpenAIServer(api_key="sk-test") as server:
        yield server


@pytest.fixture
def app(make_app, llm, monkeypatch):
    from service_bundle_models.provider import clear_cache

    clear_cache()
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    return make_app(plugins=[*PLUGINS, "models"])


def _embedding_calls(llm):
    return [r for r in llm.requests if r["path"].endswith("/embeddings")]


def test_a_base_embedded_by_an_openai_compatible_endpoint(client, alice, bob, llm):
    body = {
        "name": "remote",
        "embedding_provider": "OpenAI Compatible",
        "embedding_model": "test-embedding",
        "chunk_size": 60,
        "chunk_overlap": 0,
    }
    created = client.post("/api/v1/knowledge_bases/", json=body, headers=alice.bearer)
    assert created.status_code == 201, created.get_json()
    kb = created.get_json()
    assert (kb["embedding_provider"], kb["embedding_model"]) == ("OpenAI Compatible", "test-embedding")
    calls = _embedding_calls(llm)
    assert calls and calls[-1]["body"]["model"] == "test-embedding"  # a probe checked the model and its size
    assert calls[-1]["headers"]["Authorization"] == "Bearer sk-test"

    ingest(client, alice, "remote", text="\n".join(LINES), source_name="facts.txt")
    done = wait_kb(client, alice, "remote", timeout=60)
    assert done["status"] == "ready", done["failure_reason"]
    assert done["chunks"] == len(LINES)
    batched = _embedding_calls(llm)[-1]["body"]["input"]
    assert sorted(batched) == sorted(LINES)  # one batched call for the four chunks

    for line in LINES:  # the test server's vectors are hashes of the text: the same text is the nearest
        found = client.post(
            "/api/v1/knowledge_bases/remote/search", json={"query": line, "top_k": 2}, headers=alice.bearer
        )
        assert found.status_code == 200, found.get_json()
        results = found.get_json()["results"]
        assert results[0]["content"] == line and results[0]["score"] == pytest.approx(1.0, abs=1e-5)
        assert results[0]["metadata"]["source"] == "facts.txt"

    # a query embedded by another model is refused, as is bob's look at alice's base
    other = client.post(
        "/api/v1/knowledge_bases/remote/search",
        json={"query": LINES[0], "embedding_model": "text-embedding-3-large"},
        headers=alice.bearer,
    )
    assert other.status_code == 409 and "test-embedding" in other.get_json()["detail"]
    assert (
        client.post("/api/v1/knowledge_bases/remote/search", json={"query": "x"}, headers=bob.bearer).status_code == 404
    )


def test_provider_refusals(client, alice, llm, monkeypatch):
    unknown = client.post(
        "/api/v1/knowledge_bases/",
        json={"name": "a", "embedding_provider": "Nobody", "embedding_model": "m"},
        headers=alice.bearer,
    )
    assert unknown.status_code == 422 and "not available" in unknown.get_json()["detail"][0]["msg"]
    monkeypatch.delenv("OPENAI_COMPATIBLE_BASE_URL")
    unset = client.post(
        "/api/v1/knowledge_bases/",
        json={"name": "b", "embedding_provider": "OpenAI Compatible", "embedding_model": "m"},
        headers=alice.bearer,
    )
    assert unset.status_code == 422 and "OPENAI_COMPATIBLE_BASE_URL" in unset.get_json()["detail"][0]["msg"]
    assert client.get("/api/v1/knowledge_bases", headers=alice.bearer).get_json() == []  # nothing half-made


def test_the_base_fails_readably_when_the_endpoint_goes_away(client, alice, llm):
    body = {"name": "gone", "embedding_provider": "OpenAI Compatible", "embedding_model": "test-embedding"}
    assert client.post("/api/v1/knowledge_bases/", json=body, headers=alice.bearer).status_code == 201
    ingest(client, alice, "gone", text="first text", source_name="one")
    assert wait_kb(client, alice, "gone", timeout=60)["status"] == "ready"
    llm.stop()
    ingest(client, alice, "gone", text="second text", source_name="two")
    failed = wait_kb(client, alice, "gone", timeout=120)
    assert failed["status"] == "failed" and failed["failure_reason"]
    assert failed["chunks"] == 1  # the first ingestion is intact: nothing half-written


def test_the_embed_texts_hook(app, alice, llm):
    from service_knowledge.embeddings import user_context

    from core.app import state

    with app.app_context():
        hook = state(app).host.hook
        context = user_context(alice.id)
        vectors = hook.embed_texts(context=context, provider="OpenAI Compatible", model="m", texts=["a", "b"])
        assert len(vectors) == 2 and len(vectors[0]) == 8 and vectors[0] != vectors[1]
        assert hook.embed_texts(context=context, provider="Nobody", model="m", texts=["a"]) is None
        context.provider_allowed = lambda provider_id: provider_id != "openai-compatible"  # the policy's veto
        with pytest.raises(ValueError, match="not allowed"):
            hook.embed_texts(context=context, provider="OpenAI Compatible", model="m", texts=["a"])
