"""Issue 30's "done when", tried as an operator would: a deployment of two web workers and two RQ workers.

``service run --workers 2`` (two gunicorn worker processes) and two ``service worker`` processes (RQ's forking
worker, the default) share one database, one Redis and one Prometheus multiprocess directory, and export
spans to the local OTLP/HTTP receiver (``OTEL_EXPORTER_OTLP_ENDPOINT``, the batch span processor's default
5 s delay, so a forked job process must export before it ends); models are the local OpenAI-protocol server.
The operator then

1. runs flows on several surfaces (v1 run and v2 sync in the web workers; webhooks and v2 background runs in
   the RQ workers) until both web workers and both RQ workers have run some;
2. scrapes ``/metrics`` once: the runs by surface and status equal the ``flow.execute`` spans every process
   exported, and the queue's gauges see both workers;
3. follows the slowest run (a slowed model call) by its trace id from the HTTP request's server span through
   the RQ worker's run span and its component down to the model call, each the child of the one before;
4. sets a monthly token budget and watches it stop a run at its next model call, then refuse the next one
   (429 with ``Retry-After`` for the API caller).

Redis: ``SERVICE_TEST_OPS_REDIS_URL`` (default db 12, emptied of this test's queue). Database:
``SERVICE_TEST_DATABASE_URL`` (a ``<name>_ops`` database), else an SQLite file the four processes share.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.jobkit import forget_queues, redis_or_skip, stop_processes, wait_rq_workers
from tests.models.test_observe_model_calls import model_flow
from tests.observability.otlp_receiver import Receiver
from tests.openai_server import OpenAIServer
from tests.run.runkit import chat_echo, edge, flow_data, node
from tests.serverkit import auto_login, free_port, shared_database_url, spawn, wait_healthy

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("SERVICE_TEST_OPS_REDIS_URL", "redis://127.0.0.1:6379/12")
TOKEN = "ops-scrape-token-0123456789"
SLOW_SECONDS = 1.5
INBOUND_TRACE = "5b8efff798038103d269b633813fc60c"
INBOUND_SPAN = "eee19b7ec3c1b174"
SERVER, CLIENT = 2, 3  # protobuf span kinds


class Deployment:
    def __init__(self, base: str, receiver: Receiver, llm: OpenAIServer, prom: Path, workers: list[str]) -> None:
        self.base = base
        self.receiver = receiver
        self.llm = llm
        self.prom = prom
        self.workers = workers
        self.admin = {"Authorization": f"Bearer {auto_login(base)}"}
        made = requests.post(f"{base}/api/v1/api_key/", json={"name": "ops"}, headers=self.admin, timeout=30)
        assert made.status_code in (200, 201), made.text
        self.key = {"x-api-key": made.json()["api_key"]}

    def flow(self, name: str, data: dict[str, Any], **extra: Any) -> str:
        made = requests.post(
            f"{self.base}/api/v1/flows/", json={"name": name, "data": data, **extra}, headers=self.admin, timeout=30
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        headers = {**self.key, "Connection": "close", **kwargs.pop("headers", {})}  # a new connection: any worker
        return requests.post(f"{self.base}{path}", headers=headers, timeout=120, **kwargs)

    def runs(self, **attributes: Any) -> list[dict[str, Any]]:
        return [
            s
            for s in self.receiver.named("flow.execute")
            if all(s["attributes"].get(k) == v for k, v in attributes.items())
        ]

    def runs_by_process(self, surface: str) -> dict[str, float]:
        """``service_runs_total{surface}`` (status ok) in each process's file of the multiprocess directory: the
        per-process numbers one scrape adds up."""
        from prometheus_client.mmap_dict import MmapedDict

        found: dict[str, float] = {}
        for path in self.prom.glob("counter_*.db"):
            for key, value, _ts, _pos in MmapedDict.read_all_values_from_file(str(path)):
                _metric, sample, labels, _help = json.loads(key)
                if sample == "service_runs_total" and labels == {"surface": surface, "status": "ok"} and value:
                    found[path.stem.split("_", 1)[1]] = value
        return found

    def wait(self, what: str, check: Any, timeout: float = 120.0) -> Any:
        end = time.monotonic() + timeout
        while not (found := check()):
            if time.monotonic() > end:
                seen = sorted(
                    (s["attributes"]["protocol"], s["attributes"].get("job_id"), s["service"])
                    for s in self.receiver.named("flow.execute")
                )
                pytest.fail(f"{what}: not seen after {timeout:g} s; runs seen: {seen}")
            time.sleep(0.1)
        return found


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    raw = redis_or_skip(REDIS_URL, decode=False)
    tmp = tmp_path_factory.mktemp("ops")
    database_url = shared_database_url(tmp, "ops")
    queue = "service"  # the default queue, in a Redis database of its own
    receiver = Receiver()
    llm = OpenAIServer().start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "OTEL_", "PROMETHEUS_"))}
    env.update(
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_CONFIG_DIR=str(tmp),
        SERVICE_DATABASE_URL=database_url,
        SERVICE_SECRET_KEY="ops-secret-key-0123456789abcdef",
        SERVICE_AUTO_LOGIN="true",
        SERVICE_JOB_BACKEND="rq",
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_LOG_LEVEL="warning",
        SERVICE_METRICS_ENABLED="true",
        SERVICE_METRICS_TOKEN=TOKEN,
        SERVICE_METRICS_MULTIPROC_DIR=str(tmp / "prom"),
        SERVICE_SSRF_ALLOWED_HOSTS="127.0.0.1",
        OPENAI_COMPATIBLE_BASE_URL=llm.url,
        OPENAI_COMPATIBLE_API_KEY="sk-test",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_METRIC_EXPORT_INTERVAL="60000",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    port = free_port()
    procs = []
    workers = [f"ops-{uuid.uuid4().hex[:6]}-w1", f"ops-{uuid.uuid4().hex[:6]}-w2"]

    def logs() -> str:
        return "".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(tmp.glob("*.log")))

    try:
        web = spawn(
            [sys.executable, "-m", "core.cli", "run", "--port", str(port), "--workers", "2"],
            {**env, "OTEL_SERVICE_NAME": "service-web"},
            tmp / "web.log",
        )
        procs.append(web)
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, web, logs)
        for name in workers:  # after the web process migrated the database
            args = [sys.executable, "-m", "core.cli", "worker", "--name", name]
            procs.append(
                spawn(args, {**env, "OTEL_SERVICE_NAME": name, "SERVICE_LOG_LEVEL": "info"}, tmp / f"{name}.log")
            )
        wait_rq_workers(raw, [queue], procs, logs, count=2)
        yield Deployment(base, receiver, llm, tmp / "prom", workers)
    finally:
        stop_processes(procs, timeout=20)
        forget_queues(raw, [queue], dedicated_db=True)
        llm.stop()
        receiver.close()


def _two_model_calls() -> dict[str, Any]:
    from tests.models.conftest import registry

    chat_in = node("ChatInput", "ChatInput-AAAAA")
    first, second = (
        node(
            "LanguageModelComponent",
            f"LanguageModelComponent-{tag}",
            registry=registry(),
            model=[{"name": "test-model", "provider": "OpenAI Compatible"}],
        )
        for tag in ("MMMMM", "NNNNN")
    )
    out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data(
        [chat_in, first, second, out],
        [
            edge(chat_in, "message", first, "input_value"),
            edge(first, "text_output", second, "input_value"),
            edge(second, "text_output", out, "input_value"),
        ],
    )


def _scrape(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = requests.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def test_an_operator_follows_runs_of_two_web_and_two_rq_workers(deployment):
    ops, receiver, llm = deployment, deployment.receiver, deployment.llm
    echo = ops.flow("echo", chat_echo(), webhook=True)
    model = ops.flow("model", model_flow(False), webhook=True)

    # 1. runs on several surfaces; v1 runs on fresh connections until both web workers have run some (each
    # process counts in its own file of the multiprocess directory)
    web: dict[str, float] = {}
    for i in range(80):
        assert ops.post(f"/api/v1/run/{echo}", json={"input_value": f"web {i}"}).status_code == 200
        web = ops.runs_by_process("run")
        if len(web) == 2 and i >= 3:
            break
        time.sleep(0.05)
    assert len(web) == 2, f"one web worker answered every run: {web}"
    sync = ops.post("/api/v2/workflows", json={"flow_id": echo, "input_value": "v2"})
    assert sync.status_code == 200 and sync.json()["status"] == "completed", sync.text
    background = ops.post("/api/v2/workflows", json={"flow_id": echo, "input_value": "bg", "mode": "background"})
    assert background.status_code == 200, background.text
    # model runs queued together, each answer slowed, so both RQ workers take some; the one with the inbound
    # traceparent is the slowest of all
    for _ in range(4):
        llm.reply("quick", usage={"prompt_tokens": 12, "completion_tokens": 5}, delay=0.5)
    llm.reply("slow", usage={"prompt_tokens": 40, "completion_tokens": 2}, delay=SLOW_SECONDS)
    queued = [ops.post(f"/api/v1/webhook/{model}", data="{}") for _ in range(4)]
    assert all(r.status_code == 202 for r in queued), [r.text for r in queued]
    time.sleep(0.3)  # the slowed reply is the fifth to be asked for
    traced = ops.post(
        f"/api/v1/webhook/{model}", data="{}", headers={"traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
    )
    assert traced.status_code == 202, traced.text
    jobs = [r.json()["job_id"] for r in [*queued, traced]]

    def webhooks_finished() -> bool:
        states = [
            requests.get(f"{ops.base}/api/v1/webhook/jobs/{job}", headers=ops.key, timeout=30).json()["status"]
            for job in jobs
        ]
        assert not {"failed", "cancelled"} & set(states), states
        return set(states) == {"finished"}

    ops.wait("5 webhook runs finished", webhooks_finished)
    ops.wait("5 webhook runs' spans", lambda: ops.runs(protocol="webhook")[4:])
    job = background.json()["job_id"]

    def background_done() -> bool:
        answer = requests.get(f"{ops.base}/api/v2/workflows", params={"job_id": job}, headers=ops.key, timeout=30)
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] not in ("failed", "cancelled"), answer.text
        return answer.json()["status"] == "completed"

    ops.wait("the background run's answer", background_done)
    [ran] = ops.wait("the background run's span", lambda: ops.runs(protocol="workflows", status="ok", job_id=job))
    assert ran["service"] in ops.workers, ran  # queued: run by an RQ worker

    # 2. one scrape: every process's runs, by surface and status, as the spans they exported
    samples = _scrape(ops.base)
    total = sum(v for (name, _labels), v in samples.items() if name == "service_runs_total")
    # the batch span processor's default delay (5 s); a forked RQ job process exports before it ends
    spans = ops.wait(f"{total:g} run spans", lambda: len(ops.runs()) >= total and ops.runs(), timeout=60)
    webhooks = ops.runs(protocol="webhook")
    assert samples[("service_runs_total", (("status", "ok"), ("surface", "run")))] == sum(web.values()) == i + 1
    # each forked process is an instance of its own (the master's service.instance.id is not inherited: the
    # SDK detects it again after a fork), so a backend never adds two workers' cumulative counts up as one
    assert len({s["instance"] for s in ops.runs(protocol="run")}) == 2, "two web workers, two instances"
    assert len({s["instance"] for s in webhooks}) >= 2, "the RQ job processes are instances of their own"
    for surface in {s["attributes"]["protocol"] for s in spans}:
        exported = [s for s in spans if s["attributes"]["protocol"] == surface]
        assert samples[("service_runs_total", (("status", "ok"), ("surface", surface)))] == len(exported), surface
    webhook_runs = [(s["attributes"]["run_id"], s["attributes"].get("job_id"), s["service"]) for s in webhooks]
    # a string, so that pytest shows every run (run id, job id, process) when the count is off
    assert samples[("service_runs_total", (("status", "ok"), ("surface", "webhook")))] == 5, "\n".join(
        map(str, sorted(webhook_runs, key=lambda r: str(r[1])))
    )
    assert samples[("service_model_calls_total", (("model", "test-model"), ("provider", "openai-compatible")))] == 5
    assert {s["service"] for s in webhooks} == set(ops.workers), "both RQ workers ran webhooks"
    tokens = (("model", "test-model"), ("provider", "openai-compatible"), ("type", "input"))
    assert samples[("service_model_tokens_total", tokens)] == 4 * 12 + 40
    assert samples[("service_workers_alive", (("backend", "rq"),))] == 2
    assert samples[("service_job_queue_depth", (("backend", "rq"),))] == 0
    assert echo not in str(samples) and model not in str(samples)  # a flow id is never a label

    # 3. the slow run, followed by its trace id from the HTTP request to the model call
    [slowest] = [s for s in spans if s["trace_id"] == INBOUND_TRACE]
    assert slowest["attributes"]["duration_ms"] >= SLOW_SECONDS * 1000

    def whole_trace() -> dict[str, dict[str, Any]] | None:
        # the web worker's request span comes in its own process's batch (every 5 s by default), which may be
        # after the RQ worker's run span
        found = {s["span_id"]: s for s in receiver.spans if s["trace_id"] == slowest["trace_id"]}
        names = {s["name"] for s in found.values()}
        return found if slowest["parent_id"] in found and "chat test-model" in names else None

    trace = ops.wait("the slow run's request span and model call", whole_trace, timeout=60)
    server = trace[slowest["parent_id"]]
    assert server["kind"] == SERVER and server["service"] == "service-web"
    assert server["name"] == "POST /api/v1/webhook/<flow_id_or_name>" and server["parent_id"] == INBOUND_SPAN
    assert slowest["service"] in ops.workers  # the run span came from an RQ worker
    [call] = [s for s in trace.values() if s["name"] == "chat test-model"]
    component = trace[call["parent_id"]]
    assert component["attributes"]["component.id"] == "LanguageModelComponent-MMMMM"
    assert component["parent_id"] == slowest["span_id"] and call["kind"] == CLIENT
    assert (call["end"] - call["start"]) / 1e9 >= SLOW_SECONDS and call["service"] == slowest["service"]
    assert call["attributes"]["gen_ai.usage.input_tokens"] == 40

    # what the forked job processes' writer threads still held as RQ ended them (os._exit) is stored too:
    # the five webhook runs' native traces and their components' transactions
    def stored(path: str, key: str) -> list[Any]:
        answer = requests.get(f"{ops.base}{path}", params={"flow_id": model}, headers=ops.admin, timeout=30)
        assert answer.status_code == 200, answer.text
        return list(answer.json()[key])

    traces = stored("/api/v1/monitor/traces", "traces")
    assert len(traces) == 5 and {t["status"] for t in traces} == {"ok"}, traces
    transactions = stored("/api/v1/monitor/transactions", "items")
    assert len(transactions) == 5 * len(components := {t["vertex_id"] for t in transactions}), transactions
    assert components == {"ChatInput-AAAAA", "LanguageModelComponent-MMMMM", "ChatOutput-BBBBB"}

    # 4. a monthly token budget stops a run at its next model call, then refuses the next run with 429
    budgeted = ops.flow("budgeted", _two_model_calls())
    body = {"scope": "flow", "scope_id": budgeted, "metric": "tokens", "period": "month", "limit": 100}
    made = requests.post(f"{ops.base}/api/v1/monitor/budgets", json=body, headers=ops.admin, timeout=30)
    assert made.status_code == 201, made.text
    llm.reply("first", usage={"prompt_tokens": 100, "completion_tokens": 50})
    sent = len(llm.chat_requests)
    stopped = ops.post(f"/api/v1/run/{budgeted}", json={"input_value": "q"})
    assert stopped.status_code == 500 and "The tokens budget of this flow (100 per month) is spent" in stopped.text
    assert len(llm.chat_requests) == sent + 1  # the second model call was never made
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # whichever web worker answers
        refused = list(pool.map(lambda _: ops.post(f"/api/v1/run/{budgeted}", json={"input_value": "q"}), range(4)))
    for answer in refused:
        assert answer.status_code == 429 and int(answer.headers["Retry-After"]) > 0, answer.text
        assert answer.json() == {"detail": "The tokens budget of this flow (100 per month) is spent."}
    queued_refused = ops.post(f"/api/v1/webhook/{budgeted}", data="{}")
    assert queued_refused.status_code == 429 and int(queued_refused.headers["Retry-After"]) > 0
    assert len(llm.chat_requests) == sent + 1
