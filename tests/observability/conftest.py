"""Fixtures of the observability tests: a local OTLP/HTTP receiver and an app exporting to it."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from tests.observability.otlp_receiver import Receiver
from tests.run.conftest import PLUGINS, MessageRecorder

#: the run tests' plugins plus this one
OBS_PLUGINS = [*PLUGINS, "observability"]


@pytest.fixture
def receiver(monkeypatch):
    from service_observability import otel

    found = Receiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "service-under-test")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "60000")  # metrics are flushed by the tests
    yield found
    otel.flush()
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    otel.configure()  # back to off for the next test
    found.close()


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


class ClosingClient(FlaskClient):
    """A test client that reads and closes every answer, as a WSGI server does: the HTTP instrumentation
    ends a request's span (and detaches its context) when the answer is closed."""

    def open(self, *args, **kwargs):
        kwargs.setdefault("buffered", True)
        return super().open(*args, **kwargs)


@pytest.fixture
def app(make_app, receiver, recorder):
    made = make_app(plugins=[*OBS_PLUGINS, ("recorder", recorder)])
    made.test_client_class = ClosingClient
    return made
