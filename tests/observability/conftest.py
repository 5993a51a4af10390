"""Fixtures of the observability tests: a local OTLP/HTTP receiver and an app exporting to it."""

from __future__ import annotations

import pytest

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
    yield found
    otel.flush()
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    otel.configure()  # back to off for the next test
    found.close()


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


@pytest.fixture
def app(make_app, receiver, recorder):
    return make_app(plugins=[*OBS_PLUGINS, ("recorder", recorder)])
