# ruff: noqa: S603, S607  (starts the worker, valgrind and callgrind_control: fixed argv, no shell)
"""``python -m bench.webhook_worker``: what one webhook execution costs, web side and worker side.

Throughput on a shared 2-core machine moves with the neighbours' load; instruction counts do not.
This builds the app in process (the web side, through the Flask test client), signs in, makes the
reference Webhook -> Parser -> Chat Output flow, starts ``service worker --simple`` on RQ and then:

* ``--count`` (default): the worker runs under ``valgrind --tool=callgrind --instr-atstart=no``;
  after ``--warmup`` executions its instructions are counted over ``--jobs`` more (callgrind_control
  ``-i on`` / ``-i off``): **instructions per job in the worker**, RQ's loop, our job store, the run
  and its database writes included;
* ``--profile FILE``: the webhooks are enqueued first, then a burst worker (``--burst``) runs them
  all under cProfile (``FILE``, a pstats dump; the top of the job function's callees is printed);
* ``--cpu``: the same burst in this process without a profiler: the worker thread's CPU time per job
  (RQ's SimpleWorker runs jobs on it; CPU time moves less with the load than wall time does);
* ``--count-web``: the web side under ``valgrind --tool=callgrind`` (this command starts itself under it, with
  no worker: the jobs only wait on the queue): **instructions per webhook request**, from the test client's
  request to the 202, the enqueue and what the request left to background writers (``core.batches``,
  flushed before counting stops) included;
* ``--rate``: no valgrind: the worker's wall and CPU seconds for ``--jobs`` executions queued
  beforehand (a burst worker; on a loaded machine only CPU per job is worth comparing).

The web side's CPU per ``POST /api/v1/webhook/{id}`` (the request through the test client, the
enqueue included) is measured in every mode (``time.process_time`` of this process).

``--database-url`` runs both on that database (PostgreSQL: a database this command may empty);
the default is a SQLite file in a temporary config directory. ``--redis-db`` (default 12): the Redis
database; the jobs go to a queue of their own (``bench-<random>``), whose keys are deleted after.
"""

from __future__ import annotations

import argparse
import glob
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import clean_env
from bench.scenarios import reference_flow

#: a queue of our own (Redis is shared: another checkout's jobs on the default queue would be counted)
QUEUE = f"bench-{uuid.uuid4().hex[:8]}"


def _clear(r: Any) -> None:
    """Our queue's keys only."""
    for pattern in (f"service:jobs:{QUEUE}:*", f"rq:queue:{QUEUE}", f"rq:*:{QUEUE}"):
        keys = list(r.scan_iter(match=pattern, count=1000))
        for i in range(0, len(keys), 500):
            r.delete(*keys[i : i + 500])


def _done(r: Any) -> int:
    return sum(int(v or 0) for v in r.hmget(f"service:jobs:{QUEUE}:stats", "finished", "failed", "cancelled"))


def _failed(r: Any) -> int:
    return int(r.hget(f"service:jobs:{QUEUE}:stats", "failed") or 0)


def _wait_done(r: Any, target: int, budget: float) -> int:
    end = time.monotonic() + budget
    while time.monotonic() < end:
        if _done(r) >= target:
            return _done(r)
        time.sleep(0.01)
    raise RuntimeError(f"only {_done(r)} of {target} jobs ended in {budget:.0f} s")


def _callgrind_totals(path: str) -> int:
    total = 0
    for line in Path(path).read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            total = max(total, int(line.split()[1]))
    return total


#: set in the environment of this command started again under callgrind by ``--count-web``
UNDER_CALLGRIND = "BENCH_WEBHOOK_WEB_UNDER_CALLGRIND"


def _count_web(args: argparse.Namespace) -> None:
    """Start this command again under callgrind (instrumentation off until its counted requests) and print the
    instructions per webhook request it counted."""
    work = Path(tempfile.mkdtemp(prefix="webhook-web-"))
    outfile = work / "cg.out"
    argv = ["--count-web", "--jobs", str(args.jobs), "--warmup", str(args.warmup), "--redis-db", str(args.redis_db)]
    if args.database_url:
        argv += ["--database-url", args.database_url]
    env = {**os.environ, UNDER_CALLGRIND: "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "service-bench-pycache"))
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={outfile}"]
    try:
        done = subprocess.run(
            [*cmd, sys.executable, "-m", "bench.webhook_worker", *argv], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        total = sum(_callgrind_totals(p) for p in glob.glob(f"{outfile}*"))
        print({"jobs": args.jobs, "web_instructions_per_post_M": round(total / args.jobs / 1e6, 3)})
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.webhook_worker", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--count", action="store_true", help="instructions per job in the worker (default)")
    mode.add_argument("--profile", metavar="FILE", help="cProfile a burst worker into FILE")
    mode.add_argument("--rate", action="store_true", help="wall and CPU seconds of a burst worker")
    mode.add_argument("--cpu", action="store_true", help="CPU time per job of a burst worker in this process")
    mode.add_argument("--count-web", action="store_true", help="instructions per webhook request (web side)")
    mode.add_argument("--profile-web", metavar="FILE", help="cProfile the webhook requests (web side) into FILE")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--redis-db", type=int, default=12)
    args = parser.parse_args()
    if args.count_web and not os.environ.get(UNDER_CALLGRIND):
        _count_web(args)
        return

    import redis

    work = Path(tempfile.mkdtemp(prefix="webhook-worker-"))
    settings = {
        "SERVICE_CONFIG_DIR": str(work / "config"),
        "SERVICE_REDIS_URL": f"redis://127.0.0.1:6379/{args.redis_db}",
        "SERVICE_JOB_BACKEND": "rq",
        "SERVICE_RATE_LIMIT_STORAGE_URI": "memory://",
        "SERVICE_LOG_LEVEL": "warning",
    }
    if args.database_url:
        settings["SERVICE_DATABASE_URL"] = args.database_url
    if args.count_web:  # no scheduler ticks in the count: their work is per second, not per request
        settings["SERVICE_TRIGGERS_TICK_S"] = "0"
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ.update(settings, SERVICE_ENV_FILE=os.devnull)
    r = redis.Redis.from_url(settings["SERVICE_REDIS_URL"])
    _clear(r)

    from core import db
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue

    app = create_app()
    service = state(app)
    service.jobs = RQQueue(app, service.settings, service.job_registry, queue_name=QUEUE)
    client = app.test_client()
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    key = {"x-api-key": client.post("/api/v1/api_key/", json={"name": "bench"}, headers=bearer).get_json()["api_key"]}
    made = client.post(
        "/api/v1/flows/",
        json={"name": "bench-webhook", "data": reference_flow("webhook-parser-chat.json")["data"]},
        headers=bearer,
    )
    assert made.status_code == 201, made.get_json()
    path = f"/api/v1/webhook/{made.get_json()['id']}"
    body = b'{"any": "payload", "n": 1}'

    try:
        from core.batches import flush_all
    except ImportError:  # code from before core.batches (a comparison): each request wrote its own rows

        def flush_all(timeout: float = 10.0) -> bool:
            return True

    def post(n: int) -> float:
        """CPU seconds per webhook request (web side, every thread of this process: the batched writers' too)
        over ``n`` requests; the requests' own thread's share is left in ``request_thread_cpu``."""
        cpu, mine = time.process_time(), time.thread_time()
        for _ in range(n):
            answer = client.post(path, data=body, headers={**key, "Content-Type": "application/json"})
            assert answer.status_code == 202, answer.get_json()
        request_thread_cpu[0] = (time.thread_time() - mine) / n
        return (time.process_time() - cpu) / n

    request_thread_cpu = [0.0]

    env = clean_env(**settings)
    # compiled modules cached outside the checkout and the venv: a worker under valgrind otherwise spends
    # minutes compiling its imports where the machine sets PYTHONDONTWRITEBYTECODE
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "service-bench-pycache"))
    script = Path(sys.executable).parent / "service"
    worker_cmd = [str(script), "worker", "--simple", "--queue", QUEUE]
    log = work / "worker.log"
    out: dict[str, Any] = {"jobs": args.jobs, "database": "postgresql" if args.database_url else "sqlite"}
    proc: subprocess.Popen[bytes] | None = None
    try:
        if args.count_web:  # this process under callgrind (_count_web): count the requests, the writers' work too
            post(args.warmup)
            flush_all()
            subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
            post(args.jobs)
            flush_all()
            subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
        elif args.profile_web:  # the requests' thread under cProfile (CPU time), no worker
            import cProfile

            post(args.warmup)
            flush_all()
            profiler = cProfile.Profile(time.thread_time)
            out["web_cpu_ms_per_post"] = round(profiler.runcall(post, args.jobs) * 1000, 3)
            flush_all()
            profiler.dump_stats(args.profile_web)
            pstats.Stats(args.profile_web).sort_stats("tottime").print_stats(40)
        elif args.profile or args.rate or args.cpu:
            # warm the web side (the batched writers' first write included: it compiles their statements, 54 ms
            # for the queued executions' insert), then queue everything before the worker starts
            post(args.warmup)
            flush_all()
            out["web_cpu_ms_per_post"] = round(post(args.jobs) * 1000, 3)
            out["request_thread_cpu_ms_per_post"] = round(request_thread_cpu[0] * 1000, 3)
            queued = args.warmup + args.jobs
            if args.cpu:
                from core.jobs.worker import run_worker

                cpu = time.thread_time()
                t = time.perf_counter()
                run_worker(app, queue=QUEUE, burst=True, simple=True)
                out["burst_wall_s"] = round(time.perf_counter() - t, 2)
                out["worker_thread_cpu_ms_per_job"] = round((time.thread_time() - cpu) * 1000 / queued, 3)
            elif args.profile:
                # the worker in this process (RQ's SimpleWorker on the app built above), its CPU time profiled
                import cProfile

                from core.jobs.worker import run_worker

                profiler = cProfile.Profile(time.thread_time)
                cpu = time.thread_time()
                t = time.perf_counter()
                profiler.runcall(run_worker, app, queue=QUEUE, burst=True, simple=True)
                out["burst_wall_s"] = round(time.perf_counter() - t, 2)
                out["worker_thread_cpu_ms_per_job"] = round((time.thread_time() - cpu) * 1000 / queued, 3)
                profiler.dump_stats(args.profile)
                pstats.Stats(args.profile).sort_stats("cumulative").print_stats(45)
            else:
                t = time.perf_counter()
                with open(log, "w") as handle:
                    proc = subprocess.Popen([*worker_cmd, "--burst"], env=env, stdout=handle, stderr=subprocess.STDOUT)
                proc.wait(timeout=1800)
                out["burst_wall_s"] = round(time.perf_counter() - t, 2)
                children = os.times()
                out["worker_cpu_s"] = round(children.children_user + children.children_system, 2)
            out["ended"] = _done(r)
            out["failed"] = _failed(r)
        else:
            outfile = work / "cg.out"
            cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={outfile}", *worker_cmd]
            with open(log, "w") as handle:
                proc = subprocess.Popen(cmd, env=env, stdout=handle, stderr=subprocess.STDOUT)
            end = time.monotonic() + 600
            while not r.zcard(f"service:jobs:{QUEUE}:workers") and time.monotonic() < end:
                if proc.poll() is not None:
                    raise RuntimeError(log.read_text()[-3000:])
                time.sleep(0.2)
            post(args.warmup)
            _wait_done(r, args.warmup, 600)
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
            out["web_cpu_ms_per_post"] = round(post(args.jobs) * 1000, 3)
            _wait_done(r, args.warmup + args.jobs, 1800)
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
            dumps = sorted(glob.glob(f"{outfile}*"))
            total = sum(_callgrind_totals(p) for p in dumps)
            out["worker_instructions_per_job_M"] = round(total / args.jobs / 1e6, 3)
            out["failed"] = _failed(r)
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        _clear(r)
        if args.database_url:
            db.truncate_all(state(app).engine)
        shutil.rmtree(work, ignore_errors=True)
    print(out)


if __name__ == "__main__":
    main()
