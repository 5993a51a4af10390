"""Language and embedding models of any OpenAI-style endpoint, and live model discovery.

Provider ids (the model-provider policy approves these, see ``register_model_providers``):

* ``openai``: the reference's ``OpenAI`` component (``openai_api_base``, default the OpenAI API);
* ``openai-compatible``: the ``Language Model`` component's ``OpenAI Compatible`` provider; its
  endpoint and key come from the owner's variables ``OPENAI_COMPATIBLE_BASE_URL`` /
  ``OPENAI_COMPATIBLE_API_KEY``, then the environment variables of the same names;
* ``ollama``: Ollama's OpenAI-compatible API (``<base_url>/v1``).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.engine import ComponentError, RunContext
from core.engine.egress import EgressPolicy
from core.engine.observe import ModelCall
from service_bundle_models.client import ChatResult, ModelClient, ProviderError

__all__ = ["ChatModel", "EmbeddingModelClient", "discover", "provider_for"]

OPENAI_URL = "https://api.openai.com/v1"
COMPATIBLE = "OpenAI Compatible"
PROVIDER_IDS = {"OpenAI": "openai", COMPATIBLE: "openai-compatible", "Ollama": "ollama"}
DISPLAY = {"openai": "OpenAI", "openai-compatible": COMPATIBLE, "ollama": "Ollama"}


class ProviderConfigError(ComponentError, ValueError):
    """The provider is not usable as configured (no endpoint, no key, a blocked address): the caller's to fix."""


def _ttl() -> float:
    try:
        return float(os.environ.get("SERVICE_MODELS_DISCOVERY_TTL_SECONDS", "60"))
    except ValueError:
        return 60.0


# --- discovery: GET /models, cached per provider endpoint and key --------------------------------
_cache: dict[tuple[str, str, str], tuple[float, list[str]]] = {}
_cache_lock = threading.Lock()


def discover(
    provider_id: str, base_url: str, api_key: str, policy: EgressPolicy, *, refresh: bool = False
) -> list[str]:
    """The model ids the endpoint's ``GET /models`` lists (cached ``SERVICE_MODELS_DISCOVERY_TTL_SECONDS``)."""
    key = (provider_id, base_url.rstrip("/"), hashlib.sha256(api_key.encode()).hexdigest())
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] > now and not refresh:
            return list(hit[1])
    try:
        models = ModelClient(base_url, api_key, policy, timeout=10.0, max_retries=1).list_models()
    except ProviderError as exc:
        kind = ProviderConfigError if exc.blocked or exc.status in (401, 403, 404) else ComponentError
        raise kind(f"{DISPLAY.get(provider_id, provider_id)}: cannot list models: {exc}") from exc
    with _cache_lock:
        _cache[key] = (now + _ttl(), models)
    return list(models)


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _setting(context: RunContext, name: str) -> str:
    """The owner's global variable ``name``, else the environment variable of the same name."""
    value = context.variable(name)
    return str(value) if value else os.environ.get(name, "")


def provider_for(provider: str, context: RunContext, *, api_key: str = "", base_url: str = "") -> tuple[str, str, str]:
    """``(provider id, base URL, API key)`` for a provider name of the reference's model field."""
    pid = PROVIDER_IDS.get(provider) or provider.lower().replace(" ", "-")
    if pid == "openai-compatible":
        url = base_url or _setting(context, "OPENAI_COMPATIBLE_BASE_URL")
        key = api_key or _setting(context, "OPENAI_COMPATIBLE_API_KEY")
        if not url:
            raise ProviderConfigError(
                "OpenAI Compatible: set the global variable OPENAI_COMPATIBLE_BASE_URL (or the environment variable)."
            )
        return pid, url, key
    if pid == "openai":
        key = api_key or _setting(context, "OPENAI_API_KEY")
        if not key:
            raise ProviderConfigError("OpenAI: set an API key (the global variable OPENAI_API_KEY).")
        return pid, base_url or OPENAI_URL, key
    if pid == "ollama":
        url = (base_url or "http://localhost:11434").rstrip("/")
        return pid, url if url.endswith("/v1") else url + "/v1", api_key
    raise ProviderConfigError(f"Model provider '{provider}' is not available (providers: {', '.join(PROVIDER_IDS)}).")


def check_allowed(context: RunContext, provider_id: str) -> None:
    if context.provider_allowed is not None and not context.provider_allowed(provider_id):
        raise ComponentError(f"Model provider '{provider_id}' is not allowed by the model-provider policy.")


@dataclass
class ChatModel:
    """A configured chat model (the ``LanguageModel`` value an Agent receives)."""

    provider_id: str
    model: str
    base_url: str
    api_key: str = field(default="", repr=False)
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    json_mode: bool = False
    timeout: float = 60.0
    max_retries: int = 3
    extra: dict[str, Any] = field(default_factory=dict)

    def client(self, context: RunContext) -> ModelClient:
        check_allowed(context, self.provider_id)
        return ModelClient(
            self.base_url,
            self.api_key,
            context.egress,
            timeout=self.timeout,
            max_retries=self.max_retries,
            deadline=context.deadline,
        )

    def complete(
        self,
        context: RunContext,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        on_token: Callable[[str], None] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        if not self.model:
            raise ComponentError(f"{DISPLAY.get(self.provider_id, self.provider_id)}: choose a model.")
        body: dict[str, Any] = {**self.extra, "model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        if response_format is not None:
            body["response_format"] = response_format
        elif self.json_mode:
            body["response_format"] = {"type": "json_object"}
        if tools:
            body["tools"] = tools
        watch = context.watch
        if watch is None:
            return self._call(context, body, on_token)
        watch.before_model_call(self.provider_id, self.model)  # may refuse it (a budget spent)
        started, t0 = time.time(), time.perf_counter()
        try:
            result = self._call(context, body, on_token)
        except ComponentError as exc:
            watch.model_call(self._report(started, t0, messages, on_token, error=str(exc)))
            raise
        watch.model_call(self._report(started, t0, messages, on_token, result=result))
        return result

    def _call(self, context: RunContext, body: dict[str, Any], on_token: Callable[[str], None] | None) -> ChatResult:
        try:
            return self.client(context).chat(body, on_token)
        except ProviderError as exc:
            raise ComponentError(f"{DISPLAY.get(self.provider_id, self.provider_id)} ({self.model}): {exc}") from exc

    def _report(
        self,
        started: float,
        t0: float,
        messages: list[dict[str, Any]],
        on_token: Callable[[str], None] | None,
        *,
        result: ChatResult | None = None,
        error: str | None = None,
    ) -> ModelCall:
        """The :class:`ModelCall` record of one call (token counts from the provider's ``usage``)."""
        usage = result.usage if result is not None else {}
        last = messages[-1].get("content") if messages else None
        return ModelCall(
            provider=self.provider_id,
            model=(result.model if result is not None and result.model else self.model),
            started_at=started,
            duration_s=time.perf_counter() - t0,
            input_tokens=_count(usage.get("prompt_tokens", usage.get("input_tokens"))),
            output_tokens=_count(usage.get("completion_tokens", usage.get("output_tokens"))),
            streamed=on_token is not None,
            error=error,
            finish_reason=result.finish_reason if result is not None else None,
            prompt=last if isinstance(last, str) else None,
            completion=result.text if result is not None else None,
        )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class EmbeddingModelClient:
    """A configured embedding model (the ``Embeddings`` value): ``embed_documents`` / ``embed_query``."""

    provider_id: str
    model: str
    base_url: str
    context: RunContext = field(repr=False)
    api_key: str = field(default="", repr=False)
    dimensions: int | None = None
    chunk_size: int = 1000
    timeout: float = 60.0
    max_retries: int = 3

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        client = ChatModel(
            self.provider_id,
            self.model,
            self.base_url,
            self.api_key,
            timeout=self.timeout,
            max_retries=self.max_retries,
        ).client(self.context)
        out: list[list[float]] = []
        step = max(1, self.chunk_size)
        try:
            for start in range(0, len(texts), step):
                out.extend(client.embed(self.model, texts[start : start + step], self.dimensions))
        except ProviderError as exc:
            raise ComponentError(f"{DISPLAY.get(self.provider_id, self.provider_id)} ({self.model}): {exc}") from exc
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
