"""A live server (``service run``, one gunicorn worker) for the reference's published clients.

One worker, so the log buffer that ``/logs`` and ``/logs-stream`` read is the one the requests log into
(each worker keeps its own; see docs/plugins/monitor.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.build.buildkit import child_env
from tests.jobkit import stop_processes
from tests.run.runkit import chat_echo
from tests.serverkit import auto_login, service_run

pytestmark = pytest.mark.slow


class LiveServer:
    def __init__(self, tmp: Path) -> None:
        env = child_env(tmp, SERVICE_ENABLE_LOG_RETRIEVAL="true", SERVICE_LOG_LEVEL="info")
        self.log = tmp / "server.log"
        self.proc, self.base = service_run(env, self.log, workers=1)
        token = auto_login(self.base)
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
        stop_processes([self.proc], timeout=20)


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path_factory.mktemp("live"))
    yield server
    server.stop()
