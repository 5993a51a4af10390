"""Helpers of the run tests: flows built from real catalog nodes, uploads, stream parsing, job waits."""

from __future__ import annotations

import io
import json
from typing import Any

from core.app import state
from tests.flowkit import edge, node
from tests.flowkit import flow as flow_data
from tests.flowkit import load_reference as reference

__all__ = ["edge", "flow_data", "node", "reference"]  # re-exported for the run tests


def chat_echo(**output_values: Any) -> dict[str, Any]:
    """Chat Input -> Chat Output (``ChatInput-AAAAA`` / ``ChatOutput-BBBBB``)."""
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB", **output_values)
    return flow_data([chat_in, chat_out], [edge(chat_in, "message", chat_out, "input_value")])


def create_flow(client: Any, caller: Any, data: dict[str, Any], name: str = "flow", **extra: Any) -> dict[str, Any]:
    response = client.post("/api/v1/flows/", json={"name": name, "data": data, **extra}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def upload(client: Any, caller: Any, document: dict[str, Any], filename: str = "flow.json") -> dict[str, Any]:
    raw = json.dumps(document).encode()
    response = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(raw), filename)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    [flow] = response.get_json()
    return flow


def answer(body: dict[str, Any]) -> str:
    """The text the reference documents as the answer of a run response."""
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def frames(raw: bytes) -> list[dict[str, Any]]:
    """Split a v1 run stream: bare JSON objects separated by blank lines (no SSE prefixes)."""
    text = raw.decode()
    assert text.endswith("\n\n"), text[-50:]
    parts = text.split("\n\n")[:-1]
    out = []
    for part in parts:
        assert not part.startswith(("data:", "event:", "id:")), part[:40]
        out.append(json.loads(part))
    return out


def wait_jobs(app: Any, timeout: float = 10.0) -> None:
    assert state(app).jobs.join(timeout), "background jobs still running"
