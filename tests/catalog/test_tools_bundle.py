"""The tools bundle against a loopback server answering each API's recorded response shape;
the SSRF allowlist admitting 127.0.0.1 is set by the test, as a deployment would."""

from __future__ import annotations

import json

import pytest
from service_bundle_tools import lookup, search
from service_bundle_tools.lookup import WikidataAPI, WikipediaAPI, YahooFinanceTool
from service_bundle_tools.search import GoogleSearchAPI, GoogleSerperAPI, SearchAPI, SearXNGTool, SerpAPI

from core.engine import ComponentError, RunContext
from core.engine.tools import Tool
from tests.catalog.apiserver import allowlisted, recorded_api

ORGANIC = [
    {"position": 1, "title": "Flow builders", "link": "https://example.com/1", "snippet": "A" * 150},
    {"position": 2, "title": "Graphs", "link": "https://example.com/2", "snippet": "Nodes and edges"},
]


@pytest.fixture
def api(monkeypatch):
    with recorded_api() as rec:
        monkeypatch.setattr(search, "SEARCHAPI_URL", f"{rec.base}/api/v1/search")
        monkeypatch.setattr(search, "SERPAPI_URL", f"{rec.base}/search")
        monkeypatch.setattr(search, "GOOGLE_CSE_URL", f"{rec.base}/customsearch/v1")
        monkeypatch.setattr(search, "SERPER_URL", rec.base)
        monkeypatch.setattr(lookup, "WIKIPEDIA_URL", rec.base + "/{lang}/w/api.php")
        monkeypatch.setattr(lookup, "WIKIDATA_URL", f"{rec.base}/wikidata/w/api.php")
        monkeypatch.setattr(lookup, "YAHOO_QUERY1", rec.base)
        monkeypatch.setattr(lookup, "YAHOO_QUERY2", rec.base)
        yield rec


def run(cls, **params):
    return cls(params, context=allowlisted())


def test_searxng(api):
    api.route("GET", "/search", {"query": "q", "results": [{"title": "T", "url": "https://x/1", "content": "C"}]})
    tool = run(SearXNGTool, url=api.base, max_results=3, categories=["general"], language="en").build_tool()
    assert isinstance(tool, Tool) and tool.name == "searxng_search_tool"
    # the reference answers with SearXNG's own result objects (the earlier title/link/snippet rows were ours)
    assert json.loads(tool.run("flows")) == [{"title": "T", "url": "https://x/1", "content": "C"}]
    assert api.last()["query"] == {"q": "flows", "format": "json", "categories": "general", "language": "en"}
    with pytest.raises(ValueError, match="search query"):
        tool.run("")


def test_search_api(api):
    api.route("GET", "/api/v1/search", {"search_metadata": {"status": "Success"}, "organic_results": ORGANIC})
    out = run(SearchAPI, api_key="k-123", input_value="flows", max_results=1, max_snippet_length=10).run_model()
    # the reference's rows: title and snippet cut at the limit (no ellipsis), the snippet again as ``text``
    assert [d.data for d in out] == [
        {"title": "Flow build", "link": "https://example.com/1", "snippet": "AAAAAAAAAA", "text": "AAAAAAAAAA"}
    ]
    assert out[0].text == "AAAAAAAAAA"
    assert api.last()["query"]["engine"] == "google" and api.last()["query"]["api_key"] == "k-123"
    with pytest.raises(ValueError, match="API key"):
        run(SearchAPI, input_value="x").run_model()
    with pytest.raises(ValueError, match="search query"):
        run(SearchAPI, api_key="k").run_model()


def test_serpapi_error_hides_the_key(api):
    api.route("GET", "/search", {"error": "Invalid API key. key=bad-key"}, status=401)
    with pytest.raises(ComponentError) as exc:
        run(SerpAPI, serpapi_api_key="bad-key", input_value="x").run_model()
    assert "HTTP 401" in str(exc.value) and "bad-key" not in str(exc.value)
    api.route("GET", "/search", {"search_metadata": {}, "organic_results": ORGANIC})
    out = run(SerpAPI, serpapi_api_key="good", input_value="x", search_params={"gl": "fr"}).run_model()
    assert len(out) == 2 and api.last()["query"]["gl"] == "fr" and api.last()["query"]["engine"] == "google"
    assert out[1].data == {
        "title": "Graphs",
        "link": "https://example.com/2",
        "snippet": "Nodes and edges",
        "text": "Nodes and edges",
    }


def test_google_search_and_serper(api):
    api.route("GET", "/customsearch/v1", {"kind": "customsearch#search", "items": ORGANIC})
    out = run(GoogleSearchAPI, google_api_key="g", google_cse_id="cx", input_value="x", k=1).run_model()
    assert len(out) == 1 and api.last()["query"] == {"key": "g", "cx": "cx", "q": "x", "num": "1"}
    api.route("POST", "/news", {"searchParameters": {}, "news": [{"title": "N", "link": "https://n", "snippet": "S"}]})
    out = run(GoogleSerperAPI, serper_api_key="s", query="x", query_type="news", k=4).run_model()
    assert out[0].data["title"] == "N"
    assert api.last()["headers"]["X-API-KEY"] == "s" and api.last()["body"] == {
        "gl": "us",
        "hl": "en",
        "q": "x",
        "num": 4,
    }
    with pytest.raises(ValueError, match="Invalid query type"):
        run(GoogleSerperAPI, serper_api_key="s", query="x", query_type="images").run_model()


def test_wikipedia(api):
    api.route("GET", "/fr/w/api.php", {"batchcomplete": "", "query": {"search": [{"title": "Graphe"}]}})
    tool = run(WikipediaAPI, lang="fr", k=2, doc_content_chars_max=5).build_tool()
    # the search answer also answers the page call: no pages there, so no documents
    assert json.loads(tool.run("graphe")) == []
    api.route(
        "GET",
        "/fr/w/api.php",
        {
            "query": {
                "search": [{"title": "Graphe"}, {"title": "Absent"}],
                "pages": {"1": {"pageid": 1, "title": "Graphe", "extract": "Un graphe est...", "fullurl": "https://g"}},
            }
        },
    )
    out = run(WikipediaAPI, input_value="graphe", lang="fr", k=2, doc_content_chars_max=5).run_model()
    assert [d.data for d in out] == [
        {"text": "Un gr", "title": "Graphe", "summary": "Un graphe est...", "source": "https://g"},
        {"text": "Un gr", "title": "Graphe", "summary": "Un graphe est...", "source": "https://g"},
    ]
    searches = [r["query"] for r in api.requests if r["query"].get("list") == "search"]
    pages = [r["query"] for r in api.requests if r["query"].get("prop") == "extracts|info"]
    assert searches[-1]["srsearch"] == "graphe" and searches[-1]["srlimit"] == "2"
    assert [p["titles"] for p in pages[-2:]] == ["Graphe", "Absent"]  # one page per call
    meta = run(WikipediaAPI, input_value="g", lang="fr", k=1, load_all_available_meta=True).run_model()
    assert meta[0].data["pageid"] == 1
    with pytest.raises(ValueError, match="language code"):
        run(WikipediaAPI, input_value="x", lang="../etc").run_model()


def test_wikidata(api):
    api.route(
        "GET",
        "/wikidata/w/api.php",
        {
            "search": [
                {
                    "id": "Q42",
                    "label": "Douglas Adams",
                    "description": "English author",
                    "concepturi": "http://www.wikidata.org/entity/Q42",
                }
            ]
        },
    )
    out = run(WikidataAPI, query="adams").run_model()
    assert out[0].data["text"] == "Douglas Adams" and out[0].data["metadata"]["id"] == "Q42"
    api.route("GET", "/wikidata/w/api.php", {"search": []})
    with pytest.raises(ComponentError, match="No search results"):
        run(WikidataAPI, query="zzzz").run_model()


def test_yahoo_finance(api):
    api.route("GET", "/v1/finance/search", {"news": [{"title": "Up", "link": "https://y/1", "publisher": "Y"}] * 3})
    out = run(YahooFinanceTool, symbol="aapl", num_news=2).run_model()
    assert len(out) == 2 and out[0].data["title"] == "Up" and api.last()["query"]["q"] == "AAPL"
    api.route(
        "GET",
        "/v8/finance/chart/AAPL",
        {"chart": {"result": [{"meta": {}, "events": {"dividends": {"1": {"amount": 0.2, "date": 1}}}}]}},
    )
    out = run(YahooFinanceTool, symbol="AAPL", method="get_dividends").run_model()
    assert "'amount': 0.2" in out[0].data["result"] and api.last()["query"]["events"] == "div"
    api.route(
        "GET",
        "/v10/finance/quoteSummary/AAPL",
        {"quoteSummary": {"result": [{"price": {"regularMarketPrice": {"raw": 190.1}}}], "error": None}},
    )
    out = run(YahooFinanceTool, symbol="AAPL", method="get_fast_info").run_model()
    assert "'raw': 190.1" in out[0].data["result"]
    api.route(
        "GET",
        "/v10/finance/quoteSummary/AAPL",
        {"quoteSummary": {"result": None, "error": {"code": "Not Found", "description": "Quote not found"}}},
    )
    with pytest.raises(ComponentError, match="Quote not found"):
        run(YahooFinanceTool, symbol="AAPL", method="get_info").run_model()
    with pytest.raises(ValueError, match="Invalid stock symbol"):
        run(YahooFinanceTool, symbol="A/../B").run_model()
    with pytest.raises(ValueError, match="Invalid method"):
        run(YahooFinanceTool, symbol="AAPL", method="get_everything").run_model()


def test_tools_refuse_loopback_without_the_allowlist(api):
    api.route("GET", "/api/v1/search", {"organic_results": ORGANIC})
    with pytest.raises(ComponentError, match="blocked"):
        SearchAPI({"api_key": "k", "input_value": "x"}, context=RunContext()).run_model()
