"""Hook implementations of the models bundle: its components and the model providers they call."""

from __future__ import annotations

from core import hookimpl
from core.engine import RunContext
from core.records import ModelProvider
from service_bundle_models import agent, guardrails, llm_ops, models, transform
from service_bundle_models.provider import (
    DISPLAY,
    PROVIDER_IDS,
    EmbeddingModelClient,
    ProviderConfigError,
    check_allowed,
    discover,
    provider_for,
)


@hookimpl
def register_components() -> list[type]:
    return [*models.COMPONENTS, *agent.COMPONENTS, *llm_ops.COMPONENTS, *transform.COMPONENTS, *guardrails.COMPONENTS]


@hookimpl(optionalhook=True)  # published by the policies plugin, which may be absent
def register_model_providers() -> list[ModelProvider]:
    return [ModelProvider(pid, name, "openai") for pid, name in DISPLAY.items()]


@hookimpl(optionalhook=True)  # published by the catalog plugin, which may be absent
def list_models(context: RunContext, provider: str, refresh: bool) -> list[str] | None:
    if provider not in PROVIDER_IDS:
        return None
    pid, url, key = provider_for(provider, context)
    return discover(pid, url, key, context.egress, refresh=refresh)


@hookimpl(optionalhook=True)  # published by the knowledge plugin, which may be absent
def embed_texts(context: RunContext, provider: str, model: str, texts: list[str]) -> list[list[float]] | None:
    if provider not in PROVIDER_IDS:
        return None
    pid, url, key = provider_for(provider, context)
    try:
        check_allowed(context, pid)
    except Exception as exc:  # refused by the model-provider policy: the caller's to fix, like a missing key
        raise ProviderConfigError(str(exc)) from exc
    return EmbeddingModelClient(pid, model, url, context, api_key=key, chunk_size=256).embed_documents(texts)
