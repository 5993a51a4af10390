"""Prometheus metrics (``SERVICE_METRICS_ENABLED``): one scrape shows every process of the deployment.

``prometheus_client``'s multiprocess mode: each process (gunicorn workers, RQ workers) writes its samples to
files in one directory (``PROMETHEUS_MULTIPROC_DIR`` when the operator set it, else
``SERVICE_METRICS_MULTIPROC_DIR``, else ``<config dir>/metrics``), and a scrape merges them. The job queue's
gauges (depth, active jobs, workers alive) are read from the queue itself at scrape time.

Labels are bounded: HTTP routes are URL rules (``/api/v1/run/<flow_id_or_name>``), runs are counted by
surface and status, model calls by model. A flow id is never a label.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

NAMESPACE = "service"
#: buckets of run and model call durations (seconds): a run may take minutes
LONG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, float("inf"))

_lock = threading.Lock()
_metrics: Metrics | None = None


class Metrics:
    """The instruments of this process (created once, after the multiprocess directory is chosen)."""

    def __init__(self, directory: Path) -> None:
        from prometheus_client import Counter, Histogram

        self.directory = directory
        self.http_duration = Histogram(
            "http_server_request_duration_seconds",
            "Duration of HTTP server requests",
            ["http_request_method", "http_route", "http_response_status_code"],
            namespace=NAMESPACE,
            registry=None,
        )
        self.runs = Counter(
            "runs", "Runs of flows, by surface and status", ["surface", "status"], namespace=NAMESPACE, registry=None
        )
        self.run_duration = Histogram(
            "run_duration_seconds",
            "Duration of runs of flows, by surface and status",
            ["surface", "status"],
            namespace=NAMESPACE,
            registry=None,
            buckets=LONG_BUCKETS,
        )
        self.model_calls = Counter(
            "model_calls",
            "Calls to language models, by provider and model",
            ["provider", "model"],
            namespace=NAMESPACE,
            registry=None,
        )
        self.model_tokens = Counter(
            "model_tokens",
            "Tokens of language model calls, by provider, model and type (input, output)",
            ["provider", "model", "type"],
            namespace=NAMESPACE,
            registry=None,
        )


def choose_directory(config_dir: Path, configured: str) -> Path:
    """The multiprocess directory, made; ``PROMETHEUS_MULTIPROC_DIR`` is set to it for this process."""
    chosen = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or configured or str(config_dir / "metrics")
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    return path


def enable(directory: Path) -> Metrics:
    """This process's instruments, writing to ``directory`` (once per process: the files are per pid)."""
    global _metrics
    with _lock:
        if _metrics is not None and _metrics.directory == directory:
            return _metrics
        from prometheus_client import values

        # the value class is chosen when prometheus_client is imported: choose again now that the directory is set
        values.ValueClass = values.get_value_class()
        _metrics = Metrics(directory)
        return _metrics


def current() -> Metrics | None:
    """The instruments in force (None when metrics are off)."""
    return _metrics


def disable() -> None:
    """Stop recording in this process (tests; an app built with metrics off after one with them on)."""
    global _metrics
    _metrics = None


class QueueCollector:
    """The job queue's gauges, read at scrape time from the queue (every process's jobs)."""

    def __init__(self, jobs: Any) -> None:
        self.jobs = jobs

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            numbers = self.jobs.metrics()
        except Exception:  # a scrape still answers the rest when the queue cannot be read
            log.warning("job queue metrics unavailable", exc_info=True)
            return
        backend = str(numbers.get("job_backend") or numbers.get("backend") or "")
        gauges = {
            "jobs_active": ("Jobs running now", numbers.get("active_jobs")),
            "job_queue_depth": ("Jobs waiting to start", numbers.get("queue_length", numbers.get("queued"))),
            "workers_alive": ("Job workers alive (RQ heartbeats)", numbers.get("workers")),
        }
        for name, (doc, value) in gauges.items():
            if value is None:
                continue
            family = GaugeMetricFamily(f"{NAMESPACE}_{name}", doc, labels=["backend"])
            family.add_metric([backend], float(value))
            yield family


def exposition(jobs: Any) -> tuple[bytes, str]:
    """The text exposition of every process's samples plus the job queue's gauges."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

    metrics = _metrics
    registry = CollectorRegistry()
    if metrics is not None:
        multiprocess.MultiProcessCollector(registry, path=str(metrics.directory))
    registry.register(QueueCollector(jobs))
    return generate_latest(registry), CONTENT_TYPE_LATEST
