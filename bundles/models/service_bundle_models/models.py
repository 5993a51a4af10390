"""Model components: OpenAI, Language Model (OpenAI Compatible / OpenAI / Ollama), Ollama, embeddings."""

from __future__ import annotations

from typing import Any, ClassVar

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DictInput,
    DropdownInput,
    FloatInput,
    HandleInput,
    Input,
    IntInput,
    MessageTextInput,
    MultilineInput,
    SecretStrInput,
    SliderInput,
    StrInput,
    TableInput,
)
from core.engine.types import new_id, to_text
from service_bundle_models import attachments
from service_bundle_models.provider import (
    COMPATIBLE,
    PROVIDER_IDS,
    ChatModel,
    EmbeddingModelClient,
    discover,
    provider_for,
)

WATSONX_URL = "https://us-south.ml.cloud.ibm.com"


def _watsonx() -> list[Input]:
    """The reference's hidden IBM watsonx.ai fields: kept so exported flows round-trip (no watsonx provider here)."""
    return [
        StrInput("base_url_ibm_watsonx", "watsonx API Endpoint", WATSONX_URL, show=False),
        StrInput("project_id", "watsonx Project ID", "", show=False),
    ]


OPENAI_MODELS = ["gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"]


class ModelInput(Input):
    """The reference's ``model`` field: ``[{name, provider, icon, category, metadata}]``, or a connected model."""

    input_type = "ModelInput"
    field_type = "model"
    default: Any = []

    def coerce_one(self, value: Any) -> Any:
        return value


def _selected(value: Any) -> tuple[str, str] | None:
    """``(model name, provider)`` of a model field value (list of one entry, an entry, or a name)."""
    entry = value[0] if isinstance(value, list) and value else value
    if isinstance(entry, dict) and entry.get("name"):
        return str(entry["name"]), str(entry.get("provider") or COMPATIBLE)
    if isinstance(entry, str) and entry:
        return entry, COMPATIBLE
    return None


def _text(value: Any) -> str:
    return to_text(value) if value is not None else ""


class _ChatComponent(Component):
    """Shared by the chat model components: ``build_model`` (a :class:`ChatModel`) and ``text_response``."""

    io_bound = True
    category = "models_and_agents"
    icon = "brain-circuit"

    def build_model(self) -> ChatModel:
        raise NotImplementedError

    def text_response(self) -> Message:
        model = self.build_model()
        messages: list[dict[str, Any]] = []
        system = _text(getattr(self, "system_message", ""))
        if system:
            messages.append({"role": "system", "content": system})
        content = attachments.user_content(self.context, getattr(self, "input_value", ""))
        messages.append({"role": "user", "content": content})
        message_id = new_id()
        on_token = (lambda chunk: self.emit_token(chunk, message_id)) if getattr(self, "stream", False) else None
        result = model.complete(self.context, messages, on_token=on_token)
        message = Message(result.text, id=message_id, properties={"usage": _usage(result.usage)})
        self.status = message
        return message


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "input_tokens": usage.get("prompt_tokens"),
        "output_tokens": usage.get("completion_tokens"),
        "total_tokens": usage.get("total_tokens"),
    }


class OpenAIModel(_ChatComponent):
    key = "ext:openai:OpenAIModelComponent@official"
    aliases = ("OpenAIModel", "OpenAIModelComponent")
    display_name = "OpenAI"
    description = "Generates text using an OpenAI-style chat completions endpoint."
    icon = "OpenAI"
    inputs: ClassVar[list[Input]] = [
        MessageTextInput("input_value", "Input"),
        MultilineInput("system_message", "System Message", info="System message to pass to the model."),
        BoolInput("stream", "Stream", False, advanced=True, info="Stream the response from the model."),
        IntInput("max_tokens", "Max Tokens", 0, advanced=True, info="The maximum number of tokens (0: unlimited)."),
        DictInput("model_kwargs", "Model Kwargs", {}, advanced=True),
        BoolInput("json_mode", "JSON Mode", False, advanced=True, info="Ask for a JSON object."),
        DropdownInput("model_name", "Model Name", "gpt-4o-mini", options=OPENAI_MODELS, combobox=True),
        StrInput("openai_api_base", "OpenAI API Base", "", advanced=True, info="Any OpenAI-style endpoint."),
        SecretStrInput("api_key", "OpenAI API Key", "OPENAI_API_KEY", required=True, load_from_db=True),
        SliderInput("temperature", "Temperature", 0.1),
        IntInput("seed", "Seed", 1, advanced=True),
        IntInput("max_retries", "Max Retries", 5, advanced=True),
        IntInput("timeout", "Timeout", 700, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("text_output", "Model Response", "text_response", ["Message"]),
        Output("model_output", "Language Model", "build_model", ["LanguageModel"]),
    ]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return ["openai"]

    def build_model(self) -> ChatModel:
        _pid, url, key = provider_for("OpenAI", self.context, api_key=self.api_key, base_url=self.openai_api_base)
        return ChatModel(
            "openai",
            str(self.model_name or ""),
            url,
            key,
            temperature=self.temperature,
            max_tokens=self.max_tokens or None,
            seed=self.seed,
            json_mode=bool(self.json_mode),
            timeout=float(self.timeout or 60),
            max_retries=int(self.max_retries or 0),
            extra=dict(self.model_kwargs or {}),
        )


class LanguageModel(_ChatComponent):
    key = "LanguageModelComponent"
    display_name = "Language Model"
    description = "Runs a language model of a configured provider (OpenAI Compatible: any OpenAI-style endpoint)."
    inputs: ClassVar[list[Input]] = [
        ModelInput("model", "Language Model", [], required=True, input_types=["LanguageModel"], real_time_refresh=True),
        StrInput("model_name", "Model Name", "", advanced=True),
        StrInput("provider", "Provider", "", advanced=True),
        SecretStrInput("api_key", "API Key", "", advanced=True, load_from_db=False),
        *_watsonx(),
        StrInput("ollama_base_url", "Ollama API URL", "", show=False),
        MessageTextInput("input_value", "Input"),
        MultilineInput("system_message", "System Message"),
        BoolInput("stream", "Stream", False, advanced=True),
        SliderInput("temperature", "Temperature", 0.1, advanced=True),
        IntInput("max_tokens", "Max Tokens", 0, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("text_output", "Model Response", "text_response", ["Message"]),
        Output("model_output", "Language Model", "build_model", ["LanguageModel"]),
    ]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        chosen = _selected(params.get("model"))
        provider = str(params.get("provider") or (chosen[1] if chosen else COMPATIBLE))
        return [PROVIDER_IDS.get(provider, provider.lower().replace(" ", "-"))]

    def _choice(self) -> tuple[str, str]:
        if isinstance(self.model, ChatModel):
            return self.model.model, self.model.provider_id
        chosen = _selected(self.model)
        name = str(self.model_name or (chosen[0] if chosen else ""))
        provider = str(self.provider or (chosen[1] if chosen else COMPATIBLE))
        if not name:
            raise ComponentError("Language Model: choose a model.")
        return name, provider

    def build_model(self) -> ChatModel:
        if isinstance(self.model, ChatModel):
            return self.model
        name, provider = self._choice()
        pid, url, key = provider_for(provider, self.context, api_key=self.api_key, base_url=self.ollama_base_url)
        return ChatModel(pid, name, url, key, temperature=self.temperature, max_tokens=self.max_tokens or None)

    def available_models(self, refresh: bool = False) -> list[str]:
        """Live discovery: what the provider's ``GET /models`` lists (cached per provider)."""
        _name, provider = self._choice() if self.model else ("", COMPATIBLE)
        pid, url, key = provider_for(provider, self.context, api_key=self.api_key, base_url=self.ollama_base_url)
        return discover(pid, url, key, self.context.egress, refresh=refresh)


class ChatOllama(_ChatComponent):
    key = "ext:ollama:ChatOllamaComponent@official"
    aliases = ("OllamaModel", "ChatOllamaComponent")
    display_name = "Ollama"
    description = "Generates text using Ollama's OpenAI-compatible API."
    icon = "Ollama"
    inputs: ClassVar[list[Input]] = [
        StrInput("base_url", "Base URL", "http://localhost:11434"),
        StrInput("model_name", "Model Name", "", required=True),
        SecretStrInput("api_key", "Ollama API Key", "", advanced=True),
        SliderInput("temperature", "Temperature", 0.1, advanced=True),
        TableInput("format", "Format", [], show=False),
        DictInput("metadata", "Metadata", {}, advanced=True),
        DropdownInput(
            "mirostat", "Mirostat", "Disabled", options=["Disabled", "Mirostat", "Mirostat 2.0"], advanced=True
        ),
        FloatInput("mirostat_eta", "Mirostat Eta", None, advanced=True),
        FloatInput("mirostat_tau", "Mirostat Tau", None, advanced=True),
        IntInput("num_ctx", "Context Window Size", 0, advanced=True),
        IntInput("num_gpu", "Number of GPUs", 0, advanced=True),
        IntInput("num_thread", "Number of Threads", 0, advanced=True),
        IntInput("repeat_last_n", "Repeat Last N", 0, advanced=True),
        FloatInput("repeat_penalty", "Repeat Penalty", None, advanced=True),
        FloatInput("tfs_z", "TFS Z", None, advanced=True),
        IntInput("timeout", "Timeout", 0, advanced=True),
        IntInput("top_k", "Top K", 0, advanced=True),
        FloatInput("top_p", "Top P", None, advanced=True),
        BoolInput("enable_verbose_output", "Ollama Verbose Output", False, advanced=True),
        MessageTextInput("tags", "Tags", "", advanced=True),
        MessageTextInput("stop_tokens", "Stop Tokens", "", advanced=True, info="Comma-separated."),
        MessageTextInput("system", "System", "", advanced=True),
        BoolInput("tool_model_enabled", "Tool Model Enabled", True),
        MessageTextInput("template", "Template", "", advanced=True),
        BoolInput("enable_structured_output", "Enable Structured Output", False, info="Ask for a JSON object."),
        MessageTextInput("input_value", "Input"),
        MultilineInput("system_message", "System Message"),
        BoolInput("stream", "Stream", False, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("text_output", "Model Response", "text_response", ["Message"]),
        Output("model_output", "Language Model", "build_model", ["LanguageModel"]),
        Output("data_output", "Data", "build_data_output", ["JSON"]),
        Output("dataframe_output", "Table", "build_dataframe_output", ["Table"]),
    ]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return ["ollama"]

    def build_model(self) -> ChatModel:
        _pid, url, key = provider_for("Ollama", self.context, api_key=self.api_key, base_url=self.base_url)
        # Ollama's OpenAI-compatible API takes top_p and stop; its native options (num_ctx, mirostat...) are
        # not part of that API and are kept only so exported flows round-trip
        extra: dict[str, Any] = {}
        if self.top_p is not None:
            extra["top_p"] = self.top_p
        stops = [t.strip() for t in _text(self.stop_tokens).split(",") if t.strip()]
        if stops:
            extra["stop"] = stops
        return ChatModel(
            "ollama",
            str(self.model_name),
            url,
            key,
            temperature=self.temperature,
            timeout=float(self.timeout or 60),
            json_mode=bool(self.enable_structured_output),
            extra=extra,
        )

    def build_data_output(self) -> Data:
        message = self.text_response()
        return Data({"text": message.text})

    def build_dataframe_output(self) -> DataFrame:
        message = self.text_response()
        return DataFrame([{"text": message.text}])


class EmbeddingModel(Component):
    key = "EmbeddingModel"
    display_name = "Embedding Model"
    description = "Embeds text with a configured provider (OpenAI Compatible: any OpenAI-style /embeddings)."
    icon = "binary"
    category = "models_and_agents"
    inputs: ClassVar[list[Input]] = [
        ModelInput("model", "Embedding Model", [], required=True, input_types=["Embeddings"]),
        StrInput("model_name", "Model Name", "", advanced=True),
        StrInput("provider", "Provider", "", advanced=True),
        SecretStrInput("api_key", "API Key", "", advanced=True),
        MessageTextInput("api_base", "API Base URL", "", advanced=True),
        StrInput("base_url_ibm_watsonx", "watsonx API Endpoint", WATSONX_URL, show=False),
        MessageTextInput("project_id", "watsonx Project ID", "", show=False),
        StrInput("ollama_base_url", "Ollama API URL", "", show=False),
        IntInput("dimensions", "Dimensions", 0, advanced=True),
        IntInput("chunk_size", "Chunk Size", 1000, advanced=True),
        FloatInput("request_timeout", "Request Timeout", None, advanced=True),
        IntInput("max_retries", "Max Retries", 3, advanced=True),
        BoolInput("show_progress_bar", "Show Progress Bar", False, advanced=True),
        DictInput("model_kwargs", "Model Kwargs", {}, advanced=True),
        IntInput("truncate_input_tokens", "Truncate Input Tokens", 200, advanced=True, show=False),
        BoolInput("input_text", "Include the original text in the output", True, advanced=True, show=False),
    ]
    outputs: ClassVar[list[Output]] = [Output("embeddings", "Embedding Model", "build_embeddings", ["Embeddings"])]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return LanguageModel.model_providers(params)

    def build_embeddings(self) -> EmbeddingModelClient:
        chosen = _selected(self.model)
        name = str(self.model_name or (chosen[0] if chosen else ""))
        provider = str(self.provider or (chosen[1] if chosen else COMPATIBLE))
        if not name:
            raise ComponentError("Embedding Model: choose a model.")
        pid, url, key = provider_for(
            provider, self.context, api_key=self.api_key, base_url=_text(self.api_base) or self.ollama_base_url
        )
        return _tuned_client(self, pid, name, url, key)


def _tuned_client(component: Component, pid: str, model: str, url: str, key: str) -> EmbeddingModelClient:
    """An embeddings client with the component's dimensions, chunk size, timeout and retries."""
    return EmbeddingModelClient(
        pid,
        model,
        url,
        component.context,
        key,
        dimensions=component.dimensions or None,
        chunk_size=int(component.chunk_size or 1000),
        timeout=float(component.request_timeout or 60),
        max_retries=int(component.max_retries or 0),
    )


class OpenAIEmbeddings(Component):
    key = "ext:openai:OpenAIEmbeddingsComponent@official"
    aliases = ("OpenAIEmbeddings", "OpenAIEmbeddingsComponent")
    display_name = "OpenAI Embeddings"
    description = "Embeds text with an OpenAI-style /embeddings endpoint."
    icon = "OpenAI"
    category = "models_and_agents"
    inputs: ClassVar[list[Input]] = [
        DictInput("default_headers", "Default Headers", {}, advanced=True),
        DictInput("default_query", "Default Query", {}, advanced=True),
        IntInput("chunk_size", "Chunk Size", 1000, advanced=True),
        MessageTextInput("client", "Client", "", advanced=True),
        MessageTextInput("deployment", "Deployment", "", advanced=True),
        IntInput("embedding_ctx_length", "Embedding Context Length", 1536, advanced=True),
        IntInput("max_retries", "Max Retries", 3, advanced=True),
        DropdownInput(
            "model",
            "Model",
            "text-embedding-3-small",
            options=["text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002"],
            combobox=True,
        ),
        DictInput("model_kwargs", "Model Kwargs", {}, advanced=True),
        SecretStrInput("openai_api_key", "OpenAI API Key", "OPENAI_API_KEY", required=True, load_from_db=True),
        MessageTextInput("openai_api_base", "OpenAI API Base", "", advanced=True),
        MessageTextInput("openai_api_type", "OpenAI API Type", "", advanced=True),
        MessageTextInput("openai_api_version", "OpenAI API Version", "", advanced=True),
        MessageTextInput("openai_organization", "OpenAI Organization", "", advanced=True),
        MessageTextInput("openai_proxy", "OpenAI Proxy", "", advanced=True),
        FloatInput("request_timeout", "Request Timeout", None, advanced=True),
        BoolInput("show_progress_bar", "Show Progress Bar", False, advanced=True),
        BoolInput("skip_empty", "Skip Empty", False, advanced=True),
        MessageTextInput("tiktoken_model_name", "TikToken Model Name", "", advanced=True),
        BoolInput("tiktoken_enable", "TikToken Enable", True, advanced=True),
        IntInput("dimensions", "Dimensions", 0, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [Output("embeddings", "Embeddings", "build_embeddings", ["Embeddings"])]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return ["openai"]

    def build_embeddings(self) -> EmbeddingModelClient:
        _pid, url, key = provider_for(
            "OpenAI", self.context, api_key=self.openai_api_key, base_url=_text(self.openai_api_base)
        )
        return _tuned_client(self, "openai", str(self.model), url, key)


class OllamaEmbeddings(Component):
    key = "ext:ollama:OllamaEmbeddingsComponent@official"
    aliases = ("OllamaEmbeddings", "OllamaEmbeddingsComponent")
    display_name = "Ollama Embeddings"
    description = "Embeds text with Ollama's OpenAI-compatible /embeddings."
    icon = "Ollama"
    category = "models_and_agents"
    inputs: ClassVar[list[Input]] = [
        StrInput("model_name", "Ollama Model", "", required=True),
        StrInput("base_url", "Ollama Base URL", "http://localhost:11434", required=True),
        SecretStrInput("api_key", "Ollama API Key", "", advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [Output("embeddings", "Embeddings", "build_embeddings", ["Embeddings"])]

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return ["ollama"]

    def build_embeddings(self) -> EmbeddingModelClient:
        _pid, url, key = provider_for("Ollama", self.context, api_key=self.api_key, base_url=self.base_url)
        return EmbeddingModelClient("ollama", str(self.model_name), url, self.context, key)


class TextEmbedder(Component):
    key = "TextEmbedderComponent"
    display_name = "Text Embedder"
    description = "Generate embeddings for a given message using the specified embedding model."
    icon = "binary"
    category = "models_and_agents"
    legacy = True
    inputs: ClassVar[list[Input]] = [
        HandleInput("embedding_model", "Embedding Model", input_types=["Embeddings"], required=True),
        MessageTextInput("message", "Message", "", required=True),
    ]
    outputs: ClassVar[list[Output]] = [Output("embeddings", "Embedding Data", "generate_embeddings", ["JSON"])]

    def generate_embeddings(self) -> Data:
        model = self.embedding_model
        if not hasattr(model, "embed_query"):
            raise ComponentError("Text Embedder: connect an embedding model.")
        text = _text(self.message)
        if not text:
            raise ComponentError("Text Embedder: the message is empty.")
        data = Data({"text": text, "embeddings": model.embed_query(text)})
        self.status = data
        return data


COMPONENTS = [
    OpenAIModel,
    LanguageModel,
    ChatOllama,
    EmbeddingModel,
    OpenAIEmbeddings,
    OllamaEmbeddings,
    TextEmbedder,
]
