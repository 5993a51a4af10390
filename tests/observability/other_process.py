"""A second service process for the metrics test: runs a flow ``N`` times, writing to the shared metrics directory.

``python -m tests.observability.other_process CONFIG_DIR METRICS_DIR N``
"""

from __future__ import annotations

import sys

from core.app import create_app
from tests.conftest import make_user, superuser
from tests.observability.conftest import OBS_PLUGINS
from tests.run.conftest import MessageRecorder
from tests.run.runkit import chat_echo, create_flow

if __name__ == "__main__":
    config_dir, metrics_dir, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = {
        "config_dir": config_dir,
        "rate_limit_storage_uri": "memory://",
        "metrics_enabled": True,
        "metrics_multiproc_dir": metrics_dir,
    }
    app = create_app(config=config, plugins=[*OBS_PLUGINS, ("recorder", MessageRecorder())])
    app.testing = True
    client = app.test_client()
    caller = make_user(client, superuser(client), username="other")
    flow = create_flow(client, caller, chat_echo())
    for _ in range(count):
        assert (
            client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=caller.key).status_code == 200
        )
    print("done", flush=True)
