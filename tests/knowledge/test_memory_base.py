"""Memory Base in real runs: the run user's own memory base, this session's entries by default;
empty and bad inputs; another user's memory base is not found; an export/import round trip."""

from __future__ import annotations

import json

from service_bundle_standard.bundle import all_components
from service_knowledge.components import COMPONENTS

from core.engine import Registry
from tests.flowkit import edge, export_and_import, flow, node, node_templates

REGISTRY = Registry.from_classes([*all_components(), *COMPONENTS])


def save(client, caller, data, name="memory flow"):
    created = client.post("/api/v1/flows/", json={"name": name, "data": data}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    return created.get_json()["id"]


def remember(client, caller, text, session):
    source = node("TextInput", "TextInput-1", registry=REGISTRY, input_value=text)
    ingest = node(
        "KnowledgeIngestion",
        "KnowledgeIngestion-1",
        registry=REGISTRY,
        knowledge_base="memories",
        metadata_json=json.dumps({"session_id": session}),
    )
    data = flow([source, ingest], [edge(source, "text", ingest, "input_df")])
    response = client.post(f"/api/v1/run/{save(client, caller, data)}", json={"input_value": ""}, headers=caller.key)
    assert response.status_code == 200, response.get_json()


def recall_flow(**fields):
    chat_in = node("ChatInput", "ChatInput-1", registry=REGISTRY)
    memory = node("MemoryBase", "MemoryBase-1", registry=REGISTRY, **fields)
    parser = node("ParserComponent", "Parser-1", registry=REGISTRY, pattern="[{session_id}] {content}")
    chat_out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    return flow(
        [chat_in, memory, parser, chat_out],
        [
            edge(chat_in, "message", memory, "search_query"),
            edge(memory, "retrieve_data", parser, "input_data"),
            edge(parser, "parsed_text", chat_out, "input_value"),
        ],
    )


def recall(client, caller, flow_id, query, session):
    response = client.post(
        f"/api/v1/run/{flow_id}", json={"input_value": query, "session_id": session}, headers=caller.key
    )
    return response.status_code, response.get_json()


def answer(body):
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def test_memory_base_recalls_this_sessions_entries(client, alice, bob):
    remember(client, alice, "My favourite colour is teal.", "s1")
    remember(client, alice, "My favourite colour is orange.", "s2")
    flow_id = save(client, alice, recall_flow(memory_base="memories", top_k=5))
    status, body = recall(client, alice, flow_id, "favourite colour", "s1")
    assert status == 200, body
    assert answer(body) == "[s1] My favourite colour is teal."
    status, body = recall(client, alice, flow_id, "favourite colour", "s2")
    assert answer(body) == "[s2] My favourite colour is orange."
    # every session when the filter is off
    everything = save(client, alice, recall_flow(memory_base="memories", filter_by_session=False))
    status, body = recall(client, alice, everything, "favourite colour", "s3")
    assert "teal" in answer(body) and "orange" in answer(body)
    # an unknown session finds nothing
    status, body = recall(client, alice, flow_id, "favourite colour", "s9")
    assert status == 200 and answer(body) == ""
    # bob's copy of the flow cannot reach alice's memory base
    theirs = save(client, bob, recall_flow(memory_base="memories"))
    _status, body = recall(client, bob, theirs, "favourite colour", "s1")
    assert "Memory base 'memories' not found" in str(body) and "teal" not in str(body)


def test_memory_base_empty_and_bad_inputs(client, alice):
    remember(client, alice, "Something worth keeping.", "s1")
    for fields, query, message in (
        ({"memory_base": ""}, "q", "Choose a memory base"),
        ({"memory_base": "memories"}, "", "A search query is required"),
        ({"memory_base": "memories", "top_k": 0}, "q", "'top_k' must be at least 1"),
        ({"memory_base": "nowhere"}, "q", "Memory base 'nowhere' not found"),
    ):
        _status, body = recall(client, alice, save(client, alice, recall_flow(**fields)), query, "s1")
        assert message in str(body), (fields, body)


def test_memory_base_round_trips_through_export_and_import(client, alice, bob):
    data = recall_flow(memory_base="memories", top_k=3, include_metadata=False)
    flow_id = save(client, alice, data)
    nodes = export_and_import(client, alice, bob, flow_id, "memory.json")["nodes"]
    assert node_templates(nodes) == node_templates(data["nodes"])
