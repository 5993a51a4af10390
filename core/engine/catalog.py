"""Which bundle provides each reference component key: the one table behind "component X is not installed".

A flow exported from the reference may use any key of the reference catalog. Keys the
installed bundles register resolve normally; for the others this table names the bundle
that provides them (``optional``: a bundle of this project that an install may leave out,
``planned``: a bundle whose issue is still open), so the run error and the import report
can say what to install instead of "unknown component". The catalog test checks that every
reference key either resolves or is listed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["COMPONENT_BUNDLES", "BundleInfo", "missing_components", "not_installed_message"]


class BundleInfo(NamedTuple):
    bundle: str
    status: str  # "optional" (installable now) or "planned" (an open issue will provide it)
    display_name: str


def _table(bundle: str, status: str, entries: Mapping[str, str]) -> dict[str, BundleInfo]:
    return {key: BundleInfo(bundle, status, name) for key, name in entries.items()}


COMPONENT_BUNDLES: dict[str, BundleInfo] = {
    # installable now, outside the standard bundle
    **_table(
        "data",
        "optional",
        {
            "SQLComponent": "SQL Database",
            "RSSReaderSimple": "RSS Reader",
            "NewsSearch": "News Search",
            "UnifiedWebSearch": "Web Search",
            "MockDataGenerator": "Mock Data",
        },
    ),
    **_table(
        "tools",
        "optional",
        {
            "SearXNGTool": "SearXNG Search",
            "SearchAPI": "Search API",
            "SerpAPI": "Serp Search API",
            "GoogleSearchAPI": "Google Search API [DEPRECATED]",
            "GoogleSerperAPI": "Google Serper API [DEPRECATED]",
            "WikipediaAPI": "Wikipedia API",
            "WikidataAPI": "Wikidata API",
            "YahooFinanceTool": "Yahoo! Finance",
        },
    ),
    **_table("mcp", "optional", {"MCPTools": "MCP Tools"}),  # bundles/mcp (docs/plugins/mcp.md)
    **_table(
        "models",
        "optional",
        {
            "Agent": "Agent",
            "LanguageModelComponent": "Language Model",
            "EmbeddingModel": "Embedding Model",
            "ext:openai:OpenAIModelComponent@official": "OpenAI",
            "ext:openai:OpenAIEmbeddingsComponent@official": "OpenAI Embeddings",
            "ext:ollama:ChatOllamaComponent@official": "Ollama",
            "ext:ollama:OllamaEmbeddingsComponent@official": "Ollama Embeddings",
            "TextEmbedderComponent": "Text Embedder",
            # LLM operations
            "BatchRunComponent": "Batch Run",
            "GuardrailValidator": "Guardrails (Legacy)",
            "GuardrailValidatorV2": "Guardrails",
            "LLMSelectorComponent": "LLM Selector",
            "Smart Transform": "Smart Transform",
            "SmartRouter": "Smart Router",
            "StructuredOutput": "Structured Output",
        },
    ),
    **_table(
        "documents",
        "optional",
        {"File": "Read File", "Directory": "Directory", "FileSystemTool": "File System", "SaveToFile": "Write File"},
    ),
    **_table(
        "knowledge",
        "optional",
        {
            "Knowledge": "Knowledge",
            "KnowledgeBase": "Knowledge Base",
            "KnowledgeIngestion": "Knowledge Ingestion",
            "MemoryBase": "Memory Base",
        },
    ),
    **_table("sandbox", "optional", {"PythonREPLComponent": "Python Interpreter", "PythonREPLTool": "Python REPL"}),
    **_table("a2a", "optional", {"A2AAgent": "A2A Agent"}),
}


def not_installed_message(key: str) -> str | None:
    """``component X is not installed (bundle Y)`` for a key of the table, else ``None``."""
    info = COMPONENT_BUNDLES.get(key)
    if info is None:
        return None
    suffix = "" if info.status == "optional" else ", planned"
    return f"component {info.display_name} ({key}) is not installed (bundle {info.bundle}{suffix})"


def missing_components(flow_data: Any, registry: Any) -> list[dict[str, Any]]:
    """The nodes of ``flow_data`` whose component the registry lacks: ``{node_id, key, bundle, message}``."""
    nodes: Iterable[Any] = (flow_data or {}).get("nodes") or [] if isinstance(flow_data, Mapping) else []
    out: list[dict[str, Any]] = []
    for node in nodes:
        if not isinstance(node, Mapping) or node.get("type") == "noteNode":
            continue
        raw = node.get("data")
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        key = data.get("type")
        if not isinstance(key, str) or key in registry:
            continue
        info = COMPONENT_BUNDLES.get(key)
        out.append(
            {
                "node_id": str(node.get("id") or data.get("id") or ""),
                "key": key,
                "bundle": info.bundle if info else None,
                "message": not_installed_message(key) or f"Unknown component '{key}'",
            }
        )
    return out
