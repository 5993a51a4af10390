"""The default deployment, for real: ``service run --workers 2``, SQLite, in-process jobs.

Every request goes over a fresh connection (``Connection: close``), so the two
gunicorn workers share the traffic: a build started on one is streamed, polled
and cancelled through whichever answers. No 404, every event exactly once, and
a build whose worker is killed ends with an ``error`` event. The job's process
is read from its record under ``<config_dir>/jobs/`` to kill the right one.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.build.buildkit import CHAT_ECHO, child_env, names, reference_flow, slow_flow
from tests.jobkit import stop_processes
from tests.serverkit import auto_login, service_run

pytestmark = pytest.mark.slow

LOST = "The worker running this job stopped unexpectedly"


class Server:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        env = child_env(
            tmp,
            SERVICE_PLUGINS="accounts,flows,build,monitor,standard,slowtest",
            SERVICE_BUILD_POLL_WAIT_SECONDS="1",
            SERVICE_BUILD_STREAM_BLOCK_SECONDS="1",
            SERVICE_BUILD_POLLING_TIMEOUT_SECONDS="4",  # room for poll gaps (1 s waits) under load
            SERVICE_LOG_LEVEL="warning",
        )
        self.log = tmp / "server.log"
        self.proc, self.base = service_run(env, self.log, workers=2)
        token = auto_login(self.base)
        self.headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
        self.statuses: dict[int, int] = {}
        self.lock = threading.Lock()

    def request(self, method: str, path: str, **kw) -> requests.Response:
        response = requests.request(method, self.base + path, headers=self.headers, timeout=60, **kw)
        with self.lock:
            self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        return response

    def build(self, flow_id: str, value: str = "hi", delivery: str = "polling") -> str:
        response = self.request(
            "POST", f"/api/v1/build/{flow_id}/flow?event_delivery={delivery}", json={"inputs": {"input_value": value}}
        )
        assert response.status_code == 200, response.text
        return str(response.json()["job_id"])

    def stream(self, job_id: str) -> list[dict]:
        response = self.request("GET", f"/api/v1/build/{job_id}/events")
        assert response.status_code == 200, response.text
        return [json.loads(c) for c in response.text.split("\n\n") if c.strip()]

    def poll(self, job_id: str) -> list[dict]:
        response = self.request("GET", f"/api/v1/build/{job_id}/events?event_delivery=polling")
        assert response.status_code == 200, response.text
        return [json.loads(c) for c in response.text.split("\n\n") if c.strip()]

    def poll_all(self, job_id: str, until: str = "", timeout: float = 30.0) -> list[dict]:
        events: list[dict] = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            events += self.poll(job_id)
            if events and (events[-1]["event"] in ("end", "error") or (until and until in names(events))):
                return events
        raise AssertionError(f"no {until or 'end'}: {names(events)}")

    def job_pid(self, job_id: str) -> int:
        return int(json.loads((self.tmp / "jobs" / f"{job_id}.json").read_text())["pid"])

    def stop(self) -> None:
        stop_processes([self.proc], timeout=20)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("two-workers"))
    yield s
    s.stop()


def test_two_workers_share_in_process_jobs(server):
    """One test (one xdist worker owns the server): the proofs in turn."""
    pids = {server.request("GET", "/api/v1/monitor/job_queue").json()["pid"] for _ in range(40)}
    assert len(pids) == 2, pids  # fresh connections reach both workers
    echo = server.request(
        "POST", "/api/v1/flows/", json={"name": "echo", "data": reference_flow("chat-echo.json")["data"]}
    )
    echo_id = echo.json()["id"]

    # 20 builds x (POST, then polls until the end), 20 x (POST, stream), each request on any worker
    owners: set[int] = set()
    for i in range(20):
        job_id = server.build(echo_id, f"poll {i}")
        owners.add(server.job_pid(job_id))
        events = server.poll_all(job_id)
        assert names(events) == CHAT_ECHO, names(events)  # each event once, in order
        assert [e["data"]["text"] for e in events if e["event"] == "add_message"] == [f"poll {i}"] * 2
        assert names(server.poll(job_id)) == ["end"]  # a poll after the end says so, on either worker
        streamed = server.stream(server.build(echo_id, f"stream {i}", "streaming"))
        assert names(streamed) == CHAT_ECHO
    assert owners == pids  # builds ran on both workers too

    # two clients polling one build concurrently through both workers: together every event exactly once
    for i in range(5):
        job_id = server.build(echo_id, f"pair {i}")
        got: list[list[dict]] = [[], []]

        def poller(k: int, job_id: str = job_id, got: list[list[dict]] = got) -> None:
            end = time.monotonic() + 20
            while time.monotonic() < end:
                batch = server.poll(job_id)
                got[k] += batch
                if any(e["event"] == "end" for e in batch):
                    return

        threads = [threading.Thread(target=poller, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both = [e for e in got[0] + got[1] if not (e["event"] == "end" and e["data"] == {})]
        assert sorted(names(both)) == sorted(CHAT_ECHO), (names(got[0]), names(got[1]))

    # cancel through whichever worker answers: the build ends at once with the cancelled error
    slow_id = server.request("POST", "/api/v1/flows/", json={"name": "slow", "data": slow_flow(30)}).json()["id"]
    for _ in range(6):
        job_id = server.build(slow_id)
        seen = server.poll_all(job_id, until="end_vertex")
        response = server.request("POST", f"/api/v1/build/{job_id}/cancel")
        assert response.json() == {"success": True, "message": "Flow build cancelled successfully"}
        rest = server.poll_all(job_id)
        assert names(seen + rest).count("end_vertex") == 1  # the 30 s Slow Pass stopped mid-run
        assert rest[-1]["event"] == "error" and rest[-1]["data"]["text"] == "Flow build cancelled"
        assert names(seen + rest)[:4] == ["vertices_sorted", "build_start", "add_message", "end_vertex"]
        assert "end" not in names(seen + rest)
    assert set(server.statuses) <= {200, 201}, server.statuses  # never a 404

    # the polling watchdog sees the activity of both workers: a steadily polled build outlives the
    # 4 s timeout whichever worker the polls reach; an abandoned one is cancelled with its error
    kept = server.request("POST", "/api/v1/flows/", json={"name": "kept", "data": slow_flow(6)}).json()["id"]
    polled, abandoned = server.build(kept), server.build(slow_id)
    server.poll(abandoned)  # then silence
    events = server.poll_all(polled)
    assert names(events)[-1] == "end", names(events)
    late = server.poll_all(abandoned)
    assert late[-1]["event"] == "error" and late[-1]["data"]["text"] == "Build abandoned: no poll for 4 s"
    assert [e["data"]["text"] for e in late if e["event"] == "error"] == ["Build abandoned: no poll for 4 s"]
    stats = server.request("GET", "/api/v1/monitor/job_queue").json()
    assert stats["polling_watchdog_kills"] == 1 and stats["builds_started"] == 40 + 5 + 6 + 2

    # a worker killed mid-build: readers on the other worker see the build end with an error
    job_id = server.build(slow_id, "doomed", "streaming")
    server.poll_all(job_id, until="end_vertex")
    victim = server.job_pid(job_id)
    os.kill(victim, signal.SIGKILL)
    t0 = time.monotonic()
    events = server.stream(job_id)  # answered by the survivor (or the worker gunicorn starts instead)
    assert events[-1]["event"] == "error" and events[-1]["data"]["text"] == LOST, events[-1]
    assert time.monotonic() - t0 < 5
    assert "end" not in names(events) and names(events).count("error") == 1
    # and the service goes on: the next build succeeds
    assert names(server.stream(server.build(echo_id, "after", "streaming"))) == CHAT_ECHO
    assert set(server.statuses) <= {200, 201}, server.statuses


def test_login_limit_holds_across_both_workers(server):
    """7 bad logins from one address over fresh connections (so both workers answer): the 6th and 7th are 429."""
    codes = []
    for _ in range(7):
        response = requests.post(
            f"{server.base}/api/v1/login",
            data={"username": "nobody", "password": "wrong password"},
            headers={"Connection": "close"},
            timeout=10,
        )
        codes.append(response.status_code)
        if response.status_code == 429:
            assert response.headers["Retry-After"] == "60"
    assert codes == [401] * 5 + [429, 429], codes
