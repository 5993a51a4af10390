"""Prometheus ``/metrics``: off by default, superusers or a scrape token, every process in one scrape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.observability.conftest import OBS_PLUGINS
from tests.run.conftest import MessageRecorder
from tests.run.runkit import chat_echo, create_flow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "scrape-token-0123456789"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


@pytest.fixture
def metrics_dir(tmp_path) -> Path:
    return tmp_path / "prom"


@pytest.fixture
def app(make_app, metrics_dir, monkeypatch):
    from service_observability import metrics

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    app = make_app(
        plugins=[*OBS_PLUGINS, ("recorder", MessageRecorder())],
        metrics_enabled=True,
        metrics_token=TOKEN,
        metrics_multiproc_dir=str(metrics_dir),
    )
    yield app
    metrics.disable()


def test_metrics_are_off_by_default(make_app):
    client = make_app(plugins=["accounts", "observability"]).test_client()
    assert client.get("/metrics").status_code == 404


def test_metrics_need_a_superuser_or_the_scrape_token(client, admin, alice):
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code in (401, 403)
    assert client.get("/metrics", headers=alice.bearer).status_code == 403
    assert client.get("/metrics", headers=admin.bearer).status_code == 200
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.content_type.startswith("text/plain")


def test_one_scrape_counts_the_runs_of_every_process(client, alice, metrics_dir, tmp_path):
    flow = create_flow(client, alice, chat_echo())
    for _ in range(3):
        assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 200
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PROMETHEUS_"))}
    env["SERVICE_ENV_FILE"] = os.devnull
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    other = subprocess.run(
        [sys.executable, "-m", "tests.observability.other_process", str(tmp_path / "other"), str(metrics_dir), "2"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert other.returncode == 0 and "done" in other.stdout, other.stderr[-3000:]
    text = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True)
    samples = _samples(text)
    assert samples[("service_runs_total", (("status", "ok"), ("surface", "run")))] == 5
    assert samples[("service_run_duration_seconds_count", (("status", "ok"), ("surface", "run")))] == 5
    route = (
        ("http_request_method", "POST"),
        ("http_response_status_code", "200"),
        ("http_route", "/api/v1/run/<flow_id_or_name>"),
    )
    assert samples[("service_http_server_request_duration_seconds_count", route)] == 5
    assert ("service_jobs_active", (("backend", "inprocess"),)) in samples
    assert flow["id"] not in text  # never a label


def test_a_failed_run_is_counted_as_error(client, alice):
    from tests.run.runkit import edge, flow_data, node

    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    flow = create_flow(
        client, alice, flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    )
    assert client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).status_code == 500
    samples = _samples(client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True))
    assert samples[("service_runs_total", (("status", "error"), ("surface", "run")))] == 1
