"""Row and message ids are UUIDv7: time-ordered, so a batch of inserts appends to the primary-key index."""

from __future__ import annotations

import uuid

from core import db
from core.engine.types import new_id as new_message_id


def test_row_ids_are_version_7_and_increase():
    ids = [db.new_id() for _ in range(1000)]
    assert {i.version for i in ids} == {7}
    assert ids == sorted(ids)  # monotonic within a process, even within one millisecond
    assert len(set(ids)) == len(ids)


def test_message_ids_are_version_7_strings():
    ids = [new_message_id() for _ in range(100)]
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert ids == sorted(ids)


def test_a_runs_stored_messages_and_flows_get_version_7_ids(client, alice):
    from tests.flowkit import load_reference

    data = load_reference("chat-echo.json")["data"]
    flow = client.post("/api/v1/flows/", json={"name": "ids", "data": data}, headers=alice.key).get_json()
    assert uuid.UUID(flow["id"]).version == 7
    for text in ("one", "two"):
        response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": text}, headers=alice.key)
        assert response.status_code == 200
    messages = client.get(f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=alice.key).get_json()
    ids = [uuid.UUID(m["id"]) for m in messages]
    assert len(ids) == 4 and {i.version for i in ids} == {7}
    assert ids == sorted(ids)  # listed by time, and the ids were made in that order
