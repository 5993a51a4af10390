"""A live server (``service run``, one gunicorn worker) for the reference's published clients.

One worker, so the log buffer that ``/logs`` and ``/logs-stream`` read is the one the requests log into
(each worker keeps its own; see docs/plugins/monitor.md).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.build.buildkit import child_env
from tests.run.runkit import chat_echo

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    def __init__(self, tmp: Path) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = child_env(tmp, SERVICE_ENABLE_LOG_RETRIEVAL="true", SERVICE_LOG_LEVEL="info")
        self.log = tmp / "server.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "core.cli", "run", "--port", str(port), "--workers", "1"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        end = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{self.base}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if self.proc.poll() is not None or time.monotonic() > end:
                self.stop()
                pytest.fail(f"the server did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        token = requests.get(f"{self.base}/api/v1/auto_login", timeout=10).json()["access_token"]
        made = requests.post(
            f"{self.base}/api/v1/api_key/",
            json={"name": "clients"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        self.key = made.json()["api_key"]
        self.headers = {"x-api-key": self.key}

    def create_flow(self, name: str = "Echo", data: dict[str, Any] | None = None, **extra: Any) -> str:
        made = requests.post(
            f"{self.base}/api/v1/flows/",
            json={"name": name, "data": data or chat_echo(), **extra},
            headers=self.headers,
            timeout=10,
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path_factory.mktemp("live"))
    yield server
    server.stop()
