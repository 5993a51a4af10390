"""Fixtures of the models tests: the local OpenAI-compatible server, and a registry with the models bundle."""

from __future__ import annotations

from typing import Any

import pytest
from service_bundle_models.bundle import register_components
from service_bundle_models.provider import clear_cache
from service_bundle_standard.bundle import all_components

from core.engine import EgressPolicy, Registry, RunContext
from tests.openai_server import OpenAIServer

_REGISTRY: Registry | None = None


def registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = Registry.from_classes([*all_components(), *register_components()])
    return _REGISTRY


@pytest.fixture
def llm():
    clear_cache()
    with OpenAIServer() as server:
        yield server


def context(llm: OpenAIServer, **kw: Any) -> RunContext:
    """A run context whose owner's variables point the OpenAI Compatible provider at ``llm``."""
    kw.setdefault("request_variables", {"OPENAI_COMPATIBLE_BASE_URL": llm.url, "OPENAI_COMPATIBLE_API_KEY": "sk-test"})
    kw.setdefault("egress", EgressPolicy(allowed_hosts=("127.0.0.1",)))
    return RunContext(flow_id="flow-1", session_id="s1", registry=registry(), **kw)
