"""Fixtures of the policies tests: the plugins a governed server runs, and a provider registry."""

from __future__ import annotations

import pytest

from core import hookimpl
from core.records import ModelProvider

PLUGINS = ["accounts", "flows", "run", "catalog", "build", "policies", "standard"]


class Providers:
    """A stand-in for the models plugin: registers two providers through the hook."""

    @hookimpl
    def register_model_providers(self) -> list[ModelProvider]:
        return [
            ModelProvider("openai", "OpenAI", "openai"),
            ModelProvider("my-local.llm", "Local LLM", "openai"),
        ]


@pytest.fixture
def app(make_app):
    return make_app(plugins=[*PLUGINS, ("providers", Providers())])
