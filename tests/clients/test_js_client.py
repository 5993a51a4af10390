"""The reference's published JS client, ``@datastax/langflow-client`` (npm), against a live server.

Installed by ``.ci/run`` from ``tests/clients/js/package-lock.json`` (``npm ci``); without node or the
package the test skips and says how to install it. ``drive.mjs`` calls every method the client has
(run, tweaks, stream, the v1 flow upload, v2 files upload and list, logs fetch and stream) and prints
what each returned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).parent / "js"
PACKAGE = JS / "node_modules" / "@datastax" / "langflow-client" / "package.json"


@pytest.fixture(scope="module")
def driven(live):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the @datastax/langflow-client tests need Node.js 20+")
    if not PACKAGE.exists():
        pytest.skip("npm package @datastax/langflow-client is not installed: run `npm ci` in tests/clients/js")
    flow_id = live.create_flow("JS echo")
    env = {
        **os.environ,
        "SERVICE_URL": live.base,
        "SERVICE_API_KEY": live.key,
        "FLOW_ID": flow_id,
    }
    done = subprocess.run([node, str(JS / "drive.mjs")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return flow_id, json.loads(done.stdout)


def test_run_and_tweaks(driven):
    _flow_id, out = driven
    assert out["run"] == {"text": "hello from js", "sessionId": "js-session"}
    assert out["run_tweaked"] == {"text": "tweak me", "senderName": "Tweaked"}


def test_stream_events(driven):
    _flow_id, out = driven
    events = out["stream"]
    assert "add_message" in events and events[-2] == "end" and events[-1] == "streamed hello", events


def test_file_uploads(driven):
    flow_id, out = driven
    assert out["upload_file"]["flowId"] == flow_id, out["upload_file"]
    assert out["upload_file"]["filePath"].startswith(f"{flow_id}/") and out["upload_file"]["filePath"].endswith(".png")
    stored = out["files_upload"]
    assert stored["name"] == "notes" and stored["size"] == len("some notes") and stored["id"], stored
    assert stored["created"] != "Invalid Date"
    assert "notes" in out["files_list"]


def test_logs_fetch_and_stream(driven):
    _flow_id, out = driven
    # as published, the client sends its logs calls without the key (see drive.mjs): refused, as on the reference
    assert out["logs_fetch_as_published"]["status"] == 403, out["logs_fetch_as_published"]
    fetched = out["logs_fetch"]
    assert isinstance(fetched, list) and 0 < len(fetched) <= 5, fetched
    assert all(line["ms"] > 1_600_000_000_000 and isinstance(line["message"], str) for line in fetched)
    streamed = out["logs_stream"]
    assert isinstance(streamed, list) and len(streamed) == 1, streamed
    assert streamed[0]["ms"] >= max(line["ms"] for line in fetched)
    assert "NoSuchComponent" in streamed[0]["message"], streamed


def test_errors_are_client_errors(driven):
    _flow_id, out = driven
    assert out["run_unknown_flow"]["status"] == 404, out["run_unknown_flow"]
