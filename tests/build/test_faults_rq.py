"""Issue 20, point 1: builds on the RQ backend survive quiet steps and Redis outages.

A component that works for 8 s without emitting an event outlives the Redis
client's socket timeout (5 s by default): polls and streams of its events must
treat the quiet time as "no events yet", never as an error. A Redis that is
down answers 503 with ``Retry-After``, never 500.
"""

from __future__ import annotations

import subprocess
import threading
import time

import redis

from tests.build.buildkit import app_plugins, create_flow, names, poll_all, slow_flow, stream_all
from tests.build.test_build_jobs import start
from tests.conftest import superuser
from tests.serverkit import free_port as _free_port


def test_a_quiet_step_longer_than_the_socket_timeout_is_polled_and_streamed(make_rq_app, monkeypatch):
    # waits longer than redis-py's 5 s socket timeout make the failure certain (at 5 s it was a race)
    monkeypatch.setenv("SERVICE_BUILD_POLL_WAIT_SECONDS", "7")
    monkeypatch.setenv("SERVICE_BUILD_STREAM_BLOCK_SECONDS", "7")
    polled_app, streamed_app = make_rq_app("simple"), make_rq_app("fork")
    results: dict[str, list] = {}

    def stream() -> None:
        client = streamed_app.test_client()
        admin = superuser(client)
        job_id = start(client, admin, create_flow(client, admin, slow_flow(8)), query="?event_delivery=streaming")
        results["stream"] = stream_all(client, job_id, admin.bearer)

    streamer = threading.Thread(target=stream)
    streamer.start()
    client = polled_app.test_client()
    admin = superuser(client)
    job_id = start(client, admin, create_flow(client, admin, slow_flow(8)), query="?event_delivery=polling")
    polled = poll_all(client, job_id, admin.bearer, timeout=40)  # asserts every poll answers 200
    streamer.join(60)
    assert names(polled)[-1] == "end" and "error" not in names(polled)
    assert names(results["stream"])[-1] == "end" and "error" not in names(results["stream"])
    for events in (polled, results["stream"]):  # every event once (a quiet read must not rewind the cursor)
        assert names(events).count("vertices_sorted") == 1 and names(events).count("end") == 1


def test_redis_outage_is_a_503_with_retry_after(make_app, tmp_path):
    # a Redis of this test's own, stopped once the service runs (start-up refuses a dead Redis)
    port = _free_port()
    redis_server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client_of_redis = redis.Redis(port=port)
        for _ in range(100):
            try:
                client_of_redis.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        app = make_app(
            plugins=app_plugins(), job_backend="rq", redis_url=f"redis://127.0.0.1:{port}/0", config_dir=tmp_path
        )
        client = app.test_client()
        admin = superuser(client)
        flow_id = create_flow(client, admin, slow_flow(0.1))
    finally:
        redis_server.terminate()
        redis_server.wait(10)
    for response in (
        client.post(f"/api/v1/build/{flow_id}/flow", json={}, headers=admin.bearer),
        client.get("/api/v1/build/00000000-0000-0000-0000-000000000001/events", headers=admin.bearer),
        client.post("/api/v1/build/00000000-0000-0000-0000-000000000001/cancel", headers=admin.bearer),
        client.get("/api/v1/monitor/job_queue", headers=admin.bearer),
    ):
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.headers["Retry-After"].isdigit()
        assert "unavailable" in response.get_json()["detail"].lower()
