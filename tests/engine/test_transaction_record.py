"""The transaction record made straight from a vertex's result equals the one made from its end_vertex payload."""

from __future__ import annotations

import dataclasses

from core.contracts import VertexRecord
from core.engine import RunContext, VertexFinished, run_flow
from core.engine.results import end_vertex_payload
from core.runs.hook_ports import _record_transaction, _record_vertex
from tests.flowkit import edge, flow, node, standard_registry

TRANSACTION = ("user_id", "flow_id", "job_id", "inputs", "vertex_id", "valid", "outputs", "error", "target_id", "build")


class Hook:
    def __init__(self) -> None:
        self.records: list[dict] = []

    def on_vertex_built(self, *, record: VertexRecord) -> None:
        self.records.append(dataclasses.asdict(record))


def _both(event: VertexFinished) -> tuple[dict, dict]:
    from_payload, from_result = Hook(), Hook()
    _record_vertex(from_payload, "u", "f", "j", event.payload(), build_record=False)
    _record_transaction(from_result, "u", "f", "j", event)
    (a,), (b,) = from_payload.records, from_result.records
    # the members a transaction is written from (the payload's record adds build-only ones)
    return {k: a[k] for k in TRANSACTION}, {k: b[k] for k in TRANSACTION}


def test_records_match_for_valid_and_failed_vertices():
    chat_in = node("ChatInput", "ChatInput-1")
    middle = node("Pass", "Pass-1")
    chat_out = node("ChatOutput", "ChatOutput-1")
    data = flow(
        [chat_in, middle, chat_out],
        [edge(chat_in, "message", middle, "input_message"), edge(middle, "output_message", chat_out, "input_value")],
    )
    events: list[VertexFinished] = []
    result = run_flow(
        data,
        standard_registry(),
        RunContext(emit=lambda e: events.append(e) if isinstance(e, VertexFinished) else None),
        input_value="hi",
    )
    assert result.ok and len(events) == 3
    for event in events:
        expected, got = _both(event)
        assert got == expected
    assert [_both(e)[1]["target_id"] for e in events] == ["Pass-1", "ChatOutput-1", None]
    # a failed vertex: its error under each output, the error text, not valid
    vr = result.results["Pass-1"]
    vr.valid, vr.error = False, "it broke"
    failed = VertexFinished(
        vr.id,
        vr.display_name,
        False,
        vr.error,
        build=lambda: end_vertex_payload(vr, graph=result.graph, next_ids=["ChatOutput-1"]),
        result=vr,
        next_ids=("ChatOutput-1",),
    )
    expected, got = _both(failed)
    assert got == expected and got["error"] == "it broke" and got["valid"] is False
