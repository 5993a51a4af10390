"""``GET /api/v1/monitor/job_queue`` and the ``job_queue_metrics`` hook the monitor plugin publishes."""

import types

from core import hookimpl
from tests.conftest import superuser


def probe_plugin(answer):
    module = types.ModuleType("queueprobe")

    @hookimpl(optionalhook=True)
    def job_queue_metrics():
        return answer

    module.job_queue_metrics = job_queue_metrics
    return ("queueprobe", module)


def test_plugins_add_their_counters_to_the_job_queue_metrics(make_app):
    client = make_app(plugins=["accounts", "monitor", probe_plugin({"probe_jobs": 3})]).test_client()
    assert client.get("/api/v1/monitor/job_queue").status_code == 403  # superusers only
    admin = superuser(client)
    metrics = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()
    assert metrics["probe_jobs"] == 3
    assert metrics["backend"] == "inprocess"
    assert "active_jobs" in metrics and "builds_started" not in metrics  # no build plugin loaded


def test_an_implementation_without_the_monitor_plugin_is_ignored(make_app):
    """``optionalhook``: the build plugin (or any) may answer a hook whose publisher is absent."""
    client = make_app(plugins=["accounts", probe_plugin(None)]).test_client()
    admin = superuser(client)
    assert client.get("/api/v1/monitor/job_queue", headers=admin.bearer).status_code == 404


def test_a_publisher_named_twice_is_a_duplicate_plugin(make_app):
    """Its hook specs are added once; the second registration is refused by name (not a pluggy error)."""
    import pytest

    from core.plugins import PluginError

    with pytest.raises(PluginError, match="'monitor' is already registered"):
        make_app(plugins=["accounts", "monitor", "monitor"])
