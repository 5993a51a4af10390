"""Issue 27 #3: the field names of our components' outputs are the reference's (langflow-base 1.12.8),
so a downstream Parser/template written on the reference (``{result}``, ``{summary}``...) reads them.

Table-driven: (component, output method, inputs, loopback routes) -> the keys the reference's output
carries (``Data.data`` keys, Table columns, or the keys beside a Message's text).
"""

from __future__ import annotations

from typing import Any

import pytest
from service_bundle_data.mock import MockDataGenerator
from service_bundle_standard.http import APIRequest, URLComponent
from service_bundle_standard.processing import SplitText
from service_bundle_tools import lookup
from service_bundle_tools.lookup import WikidataAPI, WikipediaAPI, YahooFinanceTool

from core.engine import Data, DataFrame, Message
from tests.catalog.apiserver import allowlisted, recorded_api

HTML = "<html lang='en'><head><title>T</title></head><body><p>Hello</p></body></html>"
WIKI_PAGE = {"pageid": 1, "title": "Graph", "extract": "A graph is...\n\n== History ==\nOld.", "fullurl": "https://g"}
WIKIDATA_HIT = {"id": "Q42", "label": "Douglas Adams", "description": "author", "concepturi": "http://w/Q42"}

#: (case id, component, method, inputs ({base} is the loopback server), routes, expected keys)
CASES: list[tuple[str, type, str, dict[str, Any], list[tuple[str, str, Any, str]], list[str]]] = [
    (
        "APIRequest.data",
        APIRequest,
        "make_api_request",
        {"url_input": "{base}/x"},
        [("GET", "/x", {"ok": True}, "application/json")],
        # the reference's keys, plus the JSON object's own keys (kept for our stored example flow)
        ["source", "status_code", "response_headers", "result", "ok"],
    ),
    (
        "APIRequest.data (text body)",
        APIRequest,
        "make_api_request",
        {"url_input": "{base}/t"},
        [("GET", "/t", "plain", "text/plain")],
        ["source", "status_code", "response_headers", "result"],
    ),
    (
        "URLComponent.page_results",
        URLComponent,
        "fetch_content",
        {"urls": ["{base}/p"]},
        [("GET", "/p", HTML, "text/html")],
        ["text", "url", "title", "description", "content_type", "language"],
    ),
    (
        "URLComponent.raw_results",
        URLComponent,
        "fetch_content_as_message",
        {"urls": ["{base}/p"]},
        [("GET", "/p", HTML, "text/html")],
        ["text", "data"],
    ),
    (
        "MockDataGenerator.dataframe_output",
        MockDataGenerator,
        "generate_dataframe_output",
        {},
        [],
        [
            *("customer_id", "first_name", "last_name", "email", "age", "city", "country", "product"),
            *("order_date", "order_value", "quantity", "discount", "is_premium", "satisfaction_score"),
            *("last_contact", "full_name", "discounted_value", "total_value", "age_group"),
        ],
    ),
    (
        "SplitText.dataframe (text_key=body)",
        SplitText,
        "split_text",
        {
            "data_inputs": Data({"body": "aaaa bbbb", "source": "s"}),
            "text_key": "body",
            "chunk_size": 4,
            "chunk_overlap": 0,
        },
        [],
        ["text", "source"],
    ),
    ("MockDataGenerator.data_output", MockDataGenerator, "generate_data_output", {}, [], ["records", "summary"]),
    (
        "WikipediaAPI.api_run_model",
        WikipediaAPI,
        "run_model",
        {"input_value": "graph", "k": 1},
        [("GET", "/en/w/api.php", {"query": {"search": [{"title": "Graph"}], "pages": {"1": WIKI_PAGE}}}, "")],
        ["text", "title", "summary", "source"],
    ),
    (
        "WikidataAPI.api_run_model",
        WikidataAPI,
        "run_model",
        {"query": "adams"},
        [("GET", "/wikidata/w/api.php", {"search": [WIKIDATA_HIT]}, "")],
        ["text", "metadata"],
    ),
    (
        "YahooFinanceTool.api_run_model (get_news)",
        YahooFinanceTool,
        "run_model",
        {"symbol": "AAPL", "method": "get_news", "num_news": 1},
        [("GET", "/v1/finance/search", {"news": [{"uuid": "u", "title": "Up", "link": "l", "publisher": "Y"}]}, "")],
        ["uuid", "title", "link", "publisher"],
    ),
    (
        "YahooFinanceTool.api_run_model (get_info)",
        YahooFinanceTool,
        "run_model",
        {"symbol": "AAPL", "method": "get_info"},
        [("GET", "/v10/finance/quoteSummary/AAPL", {"quoteSummary": {"result": [{"price": {}}], "error": None}}, "")],
        ["result"],
    ),
]


def _keys(value: Any) -> list[str]:
    if isinstance(value, list):
        assert value, "no rows"
        value = value[0]
    if isinstance(value, DataFrame):
        return list(value.columns)
    if isinstance(value, Message):
        return list(value.data)
    assert isinstance(value, Data), type(value)
    return list(value.data)


@pytest.mark.parametrize(("case", "cls", "method", "inputs", "routes", "expected"), CASES, ids=[c[0] for c in CASES])
def test_output_fields_are_the_references(monkeypatch, case, cls, method, inputs, routes, expected):
    with recorded_api() as api:
        monkeypatch.setattr(lookup, "WIKIPEDIA_URL", api.base + "/{lang}/w/api.php")
        monkeypatch.setattr(lookup, "WIKIDATA_URL", f"{api.base}/wikidata/w/api.php")
        monkeypatch.setattr(lookup, "YAHOO_QUERY1", api.base)
        monkeypatch.setattr(lookup, "YAHOO_QUERY2", api.base)
        for verb, path, body, ctype in routes:
            api.route(verb, path, body, ctype=ctype or "application/json")
        params = {
            k: ([x.format(base=api.base) for x in v] if isinstance(v, list) else v.format(base=api.base))
            if isinstance(v, str | list)
            else v
            for k, v in inputs.items()
        }
        out = getattr(cls(params, context=allowlisted()), method)()
    assert sorted(_keys(out)) == sorted(expected), case


def test_mock_json_record_and_summary_fields():
    data = MockDataGenerator({}).generate_data_output().data
    assert sorted(data["records"][0]) == sorted(
        [
            *("id", "name", "company", "department", "status", "category", "value", "quantity", "rating"),
            *("is_active", "created_date", "tags"),
        ]
    )
    assert sorted(data["summary"]) == sorted(
        ["total_count", "active_count", "total_value", "average_rating", "categories", "companies"]
    )


def test_wikipedia_summary_is_the_lead_section():
    assert lookup._lead_section(WIKI_PAGE["extract"]) == "A graph is..."
