"""Helpers of the A2A tests: agent flows in projects with an auth type, a live server in a thread, SSE frames."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import make_server

from tests.build.buildkit import PLUGINS as BUILD_PLUGINS
from tests.build.buildkit import SlowBundle
from tests.serverkit import free_port

PLUGINS = [*BUILD_PLUGINS, "variables", "run", "a2a", ("slowtest", SlowBundle())]  # monitor comes with BUILD_PLUGINS


def project(client: Any, caller: Any, auth_type: str | None, name: str | None = None) -> str:
    body: dict[str, Any] = {"name": name or f"agents-{auth_type}"}
    if auth_type is not None:
        body["auth_settings"] = {"auth_type": auth_type}
    response = client.post("/api/v1/projects/", json=body, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["id"])


def agent(
    client: Any,
    caller: Any,
    data: dict[str, Any],
    *,
    folder_id: str,
    name: str = "agent",
    enabled: bool = True,
    flow_type: str = "agent",
    **extra: Any,
) -> str:
    body = {"name": name, "data": data, "folder_id": folder_id, "flow_type": flow_type, "a2a_enabled": enabled}
    response = client.post("/api/v1/flows/", json={**body, **extra}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["id"])


def rpc(method: str, params: dict[str, Any], rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def post_rpc(client: Any, flow_id: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    """POST a JSON-RPC ``body`` to the flow's A2A endpoint with the Flask test ``client``."""
    return client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=headers or {})


def task_row(app: Any, task_id: str) -> dict[str, Any]:
    """The A2A task row ``task_id``, column by column."""
    import uuid

    from service_a2a.models import Task

    from core import db

    with app.app_context():
        row = db.session().get(Task, uuid.UUID(task_id))
        assert row is not None
        return {c.name: getattr(row, c.name) for c in Task.__table__.columns}


def user_message(text: str, context_id: str | None = None, message_id: str = "m-1") -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "messageId": message_id,
        "kind": "message",
    }
    if context_id:
        message["contextId"] = context_id
    return message


def sse(raw: bytes) -> list[dict[str, Any]]:
    """The JSON of each ``data:`` frame of an SSE body."""
    out = []
    for block in raw.decode().split("\n\n"):
        if block.strip():
            assert block.startswith("data: "), block[:60]
            out.append(json.loads(block[len("data: ") :]))
    return out


@contextmanager
def live(app: Any) -> Iterator[str]:
    """Serve ``app`` over real HTTP on a free 127.0.0.1 port (threaded), for the a2a-sdk client."""
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)
