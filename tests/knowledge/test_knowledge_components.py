"""Knowledge components in real flows: Chat Input -> Knowledge Retrieval -> Parser -> Chat Output
answers from the caller's own knowledge base; Knowledge Ingestion writes rows into one."""

from __future__ import annotations

import pytest
from service_bundle_standard.bundle import all_components
from service_knowledge.components import COMPONENTS

from core.engine import Registry
from tests.flowkit import edge, flow, node
from tests.knowledge.conftest import create_kb, ingest, upload, wait_kb
from tests.knowledge.corpus import DOCUMENTS

REGISTRY = Registry.from_classes([*all_components(), *COMPONENTS])


def save(client, caller, data, name="kb flow"):
    created = client.post("/api/v1/flows/", json={"name": name, "data": data}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    return created.get_json()["id"]


def answer(body):
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def retrieval_flow(kb_name: str, top_k: int = 1):
    chat_in = node("ChatInput", "ChatInput-1", registry=REGISTRY)
    retrieve = node("KnowledgeBase", "KnowledgeBase-1", registry=REGISTRY, knowledge_base=kb_name, top_k=top_k)
    parser = node("ParserComponent", "Parser-1", registry=REGISTRY, pattern="Answer from {source}: {content}")
    chat_out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    return flow(
        [chat_in, retrieve, parser, chat_out],
        [
            edge(chat_in, "message", retrieve, "search_query"),
            edge(retrieve, "retrieve_data", parser, "input_data"),
            edge(parser, "parsed_text", chat_out, "input_value"),
        ],
    )


def test_chat_retrieval_parser_answers_from_the_users_documents(client, alice, bob):
    create_kb(client, alice, "handbook", chunk_size=500, chunk_overlap=0)
    ids = [upload(client, alice, text.encode(), name)["id"] for name, text in DOCUMENTS.items()]
    ingest(client, alice, "handbook", file_ids=ids)
    assert wait_kb(client, alice, "handbook")["status"] == "ready"
    flow_id = save(client, alice, retrieval_flow("handbook"))
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "what causes the tides?"}, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    text = answer(response.get_json())
    assert text.startswith(f"Answer from {ids[2]}:") and "gravitational pull of the Moon" in text
    # bob's copy of the same flow cannot reach alice's knowledge base
    bob_flow = save(client, bob, retrieval_flow("handbook"))
    refused = client.post(f"/api/v1/run/{bob_flow}", json={"input_value": "tides"}, headers=bob.key)
    assert "Knowledge base 'handbook' not found" in str(refused.get_json())


def test_ingestion_component_then_retrieval(client, alice):
    text_in = node(
        "TextInput", "TextInput-1", registry=REGISTRY, input_value="The office wifi password is printed on the fridge."
    )
    ingest_node = node(
        "KnowledgeIngestion",
        "KnowledgeIngestion-1",
        registry=REGISTRY,
        knowledge_base="office",
        metadata_json='{"team": "ops"}',
    )
    data = flow([text_in, ingest_node], [edge(text_in, "text", ingest_node, "input_df")])
    response = client.post(f"/api/v1/run/{save(client, alice, data)}", json={"input_value": ""}, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    kb = client.get("/api/v1/knowledge_bases/office", headers=alice.bearer).get_json()
    assert kb["status"] == "ready" and kb["chunks"] == 1 and kb["source_types"] == ["row"]
    # the same row again replaces itself (allow_duplicates is off)
    client.post(f"/api/v1/run/{save(client, alice, data, 'again')}", json={"input_value": ""}, headers=alice.key)
    assert client.get("/api/v1/knowledge_bases/office", headers=alice.bearer).get_json()["chunks"] == 1
    found = client.post(
        "/api/v1/knowledge_bases/office/search",
        json={"query": "where is the wifi password?", "metadata_filter": {"team": "ops"}},
        headers=alice.bearer,
    ).get_json()["results"]
    assert "fridge" in found[0]["content"] and found[0]["metadata"]["team"] == "ops"


@pytest.mark.parametrize("key", ["KnowledgeIngestion", "KnowledgeBase", "Knowledge"])
def test_reference_fields_are_declared(key):
    template = REGISTRY[key].to_frontend_node()["template"]
    expected = {
        "knowledge_base", "mode", "input_df", "column_config", "chunk_size", "api_key", "allow_duplicates",
        "metadata_json", "search_query", "top_k", "include_metadata", "include_embeddings", "metadata_filter",
    }  # fmt: skip
    assert expected <= set(template)
