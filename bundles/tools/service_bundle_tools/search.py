"""Web search tools: SearXNG, Search API (searchapi.io), Serp API (serpapi.com), Google Custom Search and
Google Serper (both deprecated in the reference, still loadable). Each speaks its service's HTTP API."""

from __future__ import annotations

from typing import Any

from core.engine import Component, Data, Output
from core.engine.inputs import DictInput, DropdownInput, IntInput, MessageTextInput, SecretStrInput
from core.engine.tools import Tool
from core.engine.types import to_text
from service_bundle_tools.api import SearchTool, get_json, require, tool_outputs, truncate

SEARCHAPI_URL = "https://www.searchapi.io/api/v1/search"
SERPAPI_URL = "https://serpapi.com/search"
GOOGLE_CSE_URL = "https://www.googleapis.com/customsearch/v1"
SERPER_URL = "https://google.serper.dev"


def organic(results: Any, key: str, max_results: int, snippet_limit: int) -> list[Data]:
    """The reference's rows: ``title`` and ``snippet`` cut at ``snippet_limit``, ``link``, and the snippet again as
    ``text`` (the row's text)."""
    items = results.get(key) if isinstance(results, dict) else None
    out = []
    for item in (items or [])[: max(0, max_results)]:
        if isinstance(item, dict):
            snippet = truncate(item.get("snippet") or item.get("content"), snippet_limit)
            row = {
                "title": truncate(item.get("title"), snippet_limit),
                "link": to_text(item.get("link") or item.get("url")),
                "snippet": snippet,
                "text": snippet,
            }
            out.append(Data(row))
    return out


class SearXNGTool(Component):
    key = "SearXNGTool"
    display_name = "SearXNG Search"
    display_names = {"en": "SearXNG Search", "fr": "Recherche SearXNG", "de": "SearXNG-Suche"}
    description = "A component that searches for tools using SearXNG."
    icon = "search"
    category = "tools"
    legacy = True
    io_bound = True
    inputs = [
        MessageTextInput("url", "URL", "http://localhost", required=True, info="The SearXNG instance."),
        IntInput("max_results", "Max Results", 10, required=True),
        DropdownInput("categories", "Categories", [], options=[], is_list=True, info="Search categories."),
        DropdownInput("language", "Language", "", options=[], info="Search language, e.g. en, fr, all."),
    ]
    outputs = [Output("result_tool", "Tool", "build_tool", ["Tool"])]

    def search(self, query: str) -> list[Data]:
        base = require(self.url, "The SearXNG URL").rstrip("/")
        params: dict[str, Any] = {"q": query, "format": "json"}
        categories = [c for c in (self.categories or []) if c]
        if categories:
            params["categories"] = ",".join(categories)
        if to_text(self.language):
            params["language"] = to_text(self.language)
        results = get_json(self, f"{base}/search", params=params)
        # the reference answers with the instance's own result objects (url, title, content, engine...)
        items = results.get("results") if isinstance(results, dict) else None
        kept = (items or [])[: max(0, self.max_results)]
        return [Data(dict(item), text_key="content") for item in kept if isinstance(item, dict)]

    def build_tool(self) -> Tool:
        from core.engine.tools import string_tool

        def run(query: str) -> str:
            import json

            return json.dumps([d.data for d in self.search(require(query, "A search query"))], ensure_ascii=False)

        return string_tool(
            "searxng_search_tool",  # the reference's tool name (lfx searxng.py)
            "Searches the web with SearXNG and returns its result objects (url, title, content...).",
            run,
            arg="query",
        )


class SearchAPI(SearchTool):
    key = "SearchAPI"
    display_name = "Search API"
    display_names = {"en": "Search API"}
    description = "Call the searchapi.io API with result limiting"
    icon = "SearchAPI"
    documentation = "https://www.searchapi.io/docs/google"
    tool_name = "search_api"
    tool_description = "Searches the web with searchapi.io and returns result titles, links and snippets."
    inputs = [
        MessageTextInput("engine", "Engine", "google"),
        SecretStrInput("api_key", "SearchAPI API Key", "", required=True),
        MessageTextInput("input_value", "Input", "", tool_mode=True),
        DictInput("search_params", "Search parameters", {}, advanced=True, is_list=True),
        IntInput("max_results", "Max Results", 5, advanced=True),
        IntInput("max_snippet_length", "Max Snippet Length", 100, advanced=True),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        key = require(self.api_key, "The SearchAPI API key")
        params = {**(self.search_params or {}), "engine": to_text(self.engine) or "google", "q": query, "api_key": key}
        results = get_json(self, SEARCHAPI_URL, params=params, secret=key)
        return organic(results, "organic_results", self.max_results, self.max_snippet_length)


class SerpAPI(SearchTool):
    key = "SerpAPI"
    display_name = "Serp Search API"
    display_names = {"en": "Serp Search API"}
    description = "Call Serp Search API with result limiting"
    icon = "SerpSearch"
    tool_name = "serp_search_api"
    tool_description = "Searches the web with SerpApi and returns result titles, links and snippets."
    inputs = [
        SecretStrInput("serpapi_api_key", "SerpAPI API Key", "", required=True),
        MessageTextInput("input_value", "Input", "", tool_mode=True),
        DictInput("search_params", "Parameters", {}, advanced=True, is_list=True),
        IntInput("max_results", "Max Results", 5, advanced=True),
        IntInput("max_snippet_length", "Max Snippet Length", 100, advanced=True),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        key = require(self.serpapi_api_key, "The SerpAPI API key")
        params = {"engine": "google", **(self.search_params or {}), "q": query, "api_key": key, "output": "json"}
        results = get_json(self, SERPAPI_URL, params=params, secret=key)
        return organic(results, "organic_results", self.max_results, self.max_snippet_length)


class GoogleSearchAPI(SearchTool):
    key = "GoogleSearchAPI"
    display_name = "Google Search API [DEPRECATED]"
    display_names = {"en": "Google Search API [DEPRECATED]"}
    description = "Call Google Search API."
    icon = "Google"
    tool_name = "google_search"
    tool_description = "Searches Google (Custom Search JSON API) and returns result titles, links and snippets."
    inputs = [
        SecretStrInput("google_api_key", "Google API Key", "", required=True),
        SecretStrInput("google_cse_id", "Google CSE ID", "", required=True),
        MessageTextInput("input_value", "Input", "", tool_mode=True),
        IntInput("k", "Number of results", 4, required=True),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        key = require(self.google_api_key, "The Google API key")
        cse = require(self.google_cse_id, "The Google CSE ID")
        num = min(max(1, self.k), 10)  # the API serves at most 10 results per call
        results = get_json(self, GOOGLE_CSE_URL, params={"key": key, "cx": cse, "q": query, "num": num}, secret=key)
        return organic(results, "items", num, 0)


class GoogleSerperAPI(SearchTool):
    key = "GoogleSerperAPI"
    display_name = "Google Serper API [DEPRECATED]"
    display_names = {"en": "Google Serper API [DEPRECATED]"}
    description = "Call the Serper.dev Google Search API."
    icon = "Serper"
    query_field = "query"
    tool_name = "google_serper"
    tool_description = "Searches Google through Serper.dev and returns result titles, links and snippets."
    inputs = [
        SecretStrInput("serper_api_key", "Serper API Key", "", required=True),
        MessageTextInput("query", "Query", "", tool_mode=True),
        IntInput("k", "Number of results", 4, required=True),
        DropdownInput("query_type", "Query Type", "search", options=["news", "search"]),
        DictInput("query_params", "Query Params", {"gl": "us", "hl": "en"}, is_list=True),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        key = require(self.serper_api_key, "The Serper API key")
        if self.query_type not in ("news", "search"):
            raise ValueError(f"Invalid query type '{self.query_type}'. Use search or news.")
        body = {**(self.query_params or {}), "q": query, "num": self.k}
        results = get_json(
            self, f"{SERPER_URL}/{self.query_type}", method="POST", headers={"X-API-KEY": key}, body=body, secret=key
        )
        # the reference's rows: Serper's own fields (position, date, source...), the snippet renamed ``text``
        items = results.get("news" if self.query_type == "news" else "organic") if isinstance(results, dict) else None
        rows = []
        for item in (items or [])[: max(0, self.k)]:
            if isinstance(item, dict):
                row = {str(k): v for k, v in item.items() if k != "snippet"}
                row["text"] = to_text(item.get("snippet"))
                rows.append(Data(row))
        return rows


COMPONENTS = [SearXNGTool, SearchAPI, SerpAPI, GoogleSearchAPI, GoogleSerperAPI]
