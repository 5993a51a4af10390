"""``python -m bench sessions``: the cost of the session revocation check (issue 20), in process.

The target: the check adds < 20 µs per authenticated request. Measured here:

* ``check_hit_us``: ``SessionCache.get`` when the user's entry is cached (a read of the shared mapped
  stamp, a dict lookup, a clock read): what every authenticated request pays;
* ``check_miss_us``: the same lookup reading the database (two small selects), paid once per user per
  ``SERVICE_SESSION_CACHE_SECONDS`` or after a change; the code before issue 20 paid a comparable user
  load (``Session.get(User)``) on every request;
* ``whoami_ms``: a whole ``GET /api/v1/users/whoami`` with a bearer token through the WSGI test client.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _per_call_us(func, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            func()
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    return best


def main(n: int = 20_000) -> str:
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from service_accounts import sessions

    from core import db
    from core.app import create_app

    app = create_app(config={"config_dir": tempfile.mkdtemp(prefix="service-sessions-"), "log_level": "warning"})
    client = app.test_client()
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    user_id = uuid.UUID(client.get("/api/v1/users/whoami", headers=bearer).get_json()["id"])
    with app.app_context():
        cache = sessions.cache()
        s = db.session()
        cache.get(s, user_id)
        hit = _per_call_us(lambda: cache.get(s, user_id), n)
        miss = _per_call_us(lambda: cache.load(s, user_id), n // 10)
        stat = _per_call_us(lambda: cache._read_stamp(), n)
    for _ in range(200):
        client.get("/api/v1/users/whoami", headers=bearer)
    whoami = _per_call_us(lambda: client.get("/api/v1/users/whoami", headers=bearer), 500) / 1000
    result = {
        "check_hit_us": round(hit, 2),
        "stamp_read_us": round(stat, 2),
        "check_miss_us": round(miss, 1),
        "whoami_ms": round(whoami, 3),
        "target_us": 20,
        "met": hit < 20,
    }
    text = json.dumps(result, indent=2)
    (HERE / "sessions.json").write_text(text + "\n")
    return text


if __name__ == "__main__":
    print(main())
