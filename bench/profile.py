"""``python -m bench profile``: cProfile of the simplified run's hot path, in process (WSGI test client).

Builds the app with every installed plugin in a temporary config directory, creates an API key and the
Chat Input -> Chat Output flow, runs it ``--runs`` times and prints the top entries by own time and by
cumulative time (also written to ``bench/profile.txt``).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(runs: int = 2000, top: int = 30) -> str:
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from bench.common import in_process_run
    from core.app import create_app

    app = create_app(config={"config_dir": tempfile.mkdtemp(prefix="service-profile-"), "log_level": "warning"})
    client = app.test_client()
    url, body, key = in_process_run(client)
    for _ in range(200):
        client.post(url, data=body, headers=key, content_type="application/json")
    t = time.perf_counter()
    for _ in range(runs):
        client.post(url, data=body, headers=key, content_type="application/json")
    plain = (time.perf_counter() - t) / runs * 1000
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        response = client.post(url, data=body, headers=key, content_type="application/json")
    profiler.disable()
    assert response.status_code == 200
    out = io.StringIO()
    out.write(f"{runs} runs, {plain:.3f} ms per request in process without the profiler\n\n")
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    out.write("== by own time ==\n")
    stats.sort_stats("tottime").print_stats(top)
    out.write("== by cumulative time ==\n")
    stats.sort_stats("cumulative").print_stats(top)
    text = out.getvalue()
    (HERE / "profile.txt").write_text(text)
    return text
