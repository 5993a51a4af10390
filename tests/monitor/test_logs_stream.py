"""``GET /logs-stream`` and ``GET /logs`` as the reference serves them (issue 27, point 5).

The reference streams ``{"<epoch_ms>": "<line>"}`` blocks, each followed by a blank line (no ``data:``
prefix: its JS client parses the body as NDJSON), starting with the lines logged after the stream
opened, and writes ``keepalive`` after five idle one-second polls.
"""

from __future__ import annotations

import json
import logging

import pytest
from service_monitor import resources as monitor_resources

from tests.conftest import make_user, superuser


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(monitor_resources, "STREAM_POLL_SECONDS", 0.02)
    monkeypatch.setattr(monitor_resources, "STREAM_IDLE_POLLS_BEFORE_KEEPALIVE", 3)


def _read(response, count: int, until: str | None = None) -> list[str]:
    """The stream's first ``count`` blocks, or fewer: up to the first block that is ``until``."""
    text = ""
    for chunk in response.response:
        text += chunk.decode() if isinstance(chunk, bytes) else chunk
        done = text.split("\n\n")[:-1]
        if len(done) >= count or (until is not None and until in done):
            break
    response.close()
    blocks = text.split("\n\n")[:count]
    return blocks[: blocks.index(until) + 1] if until is not None and until in blocks else blocks


def test_logs_stream_is_off_by_default_and_superuser_only(make_app):
    client = make_app().test_client()
    admin = superuser(client)
    response = client.get("/logs-stream", headers=admin.key)
    assert response.status_code == 501
    assert response.get_json() == {"detail": "Log retrieval is disabled"}

    client = make_app(enable_log_retrieval=True).test_client()
    admin = superuser(client)
    user = make_user(client, admin)
    assert client.get("/logs-stream", headers=user.key).status_code == 403
    assert client.get("/logs-stream").status_code in (401, 403)


def test_logs_stream_sends_new_lines_then_keepalives(make_app, fast):
    client = make_app(enable_log_retrieval=True).test_client()
    admin = superuser(client)
    logging.getLogger("probe").warning("an old line, before the stream")
    # the JS client adds ?stream=true to every streamed path
    response = client.get("/logs-stream?stream=true", headers=admin.key, buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"

    logging.getLogger("probe").warning("a new line, after the stream opened")
    # the lines logged meanwhile, then a keepalive once nothing new came (another test's background thread may
    # log a line of its own in between: the stream carries every line of the process)
    blocks = _read(response, 8, until="keepalive")
    assert blocks[-1] == "keepalive" and "keepalive" not in blocks[:-1], blocks
    lines = [item for block in blocks[:-1] for item in json.loads(block).items()]
    [(stamp, line)] = [(stamp, line) for stamp, line in lines if "probe" in line]
    assert int(stamp) > 1_600_000_000_000
    assert "a new line, after the stream opened" in line


def test_logs_default_to_the_last_ten_lines(make_app):
    client = make_app(enable_log_retrieval=True).test_client()
    admin = superuser(client)
    for n in range(15):
        logging.getLogger("probe").warning("numbered line %d", n)
    lines = list(client.get("/logs", headers=admin.key).get_json().values())
    assert len(lines) == 10
    assert "numbered line 14" in lines[-1]
    stamps = sorted(int(k) for k in client.get("/logs?lines_before=15", headers=admin.key).get_json())
    # a timestamp alone: the ten lines before it (the reference's get_before_timestamp(ts, 10))
    before = client.get(f"/logs?timestamp={stamps[-1]}", headers=admin.key).get_json()
    assert len(before) == 10 and str(stamps[-1]) not in before
    # lines_after counts from the line at the timestamp itself (the reference's ts >= timestamp)
    after = client.get(f"/logs?timestamp={stamps[-3]}&lines_after=2", headers=admin.key).get_json()
    assert sorted(int(k) for k in after) == stamps[-3:-1]


def test_log_lines_carry_no_secrets(make_app):
    client = make_app(enable_log_retrieval=True).test_client()
    admin = superuser(client)
    probe = logging.getLogger("probe")
    probe.warning("calling with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl")
    probe.warning("key sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 refused")
    probe.warning("url https://api.example.test/v1?api_key=hunter2hunter2&x=1")
    probe.warning('payload {"password": "correct-horse-battery", "openai_api_key": "abc123def456"}')
    text = json.dumps(client.get("/logs?lines_before=10", headers=admin.key).get_json())
    for secret in ("eyJhbGciOiJIUzI1NiJ9", "sk-AbCdEfGhIjKlMnOpQrStUvWxYz", "hunter2", "correct-horse", "abc123def456"):
        assert secret not in text
    assert "refused" in text and "api.example.test" in text
