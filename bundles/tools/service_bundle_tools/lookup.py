"""Lookup tools: Wikipedia (MediaWiki action API), Wikidata (``wbsearchentities``) and Yahoo! Finance
(the public ``query1/query2.finance.yahoo.com`` endpoints the ``yfinance`` library uses)."""

from __future__ import annotations

import pprint
import re
from typing import Any
from urllib.parse import quote

from core.engine import ComponentError, Data
from core.engine.inputs import BoolInput, DropdownInput, IntInput, MessageTextInput, MultilineInput
from core.engine.types import to_text
from service_bundle_tools.api import SearchTool, get_json, require, tool_outputs

WIKIPEDIA_URL = "https://{lang}.wikipedia.org/w/api.php"
WIKIDATA_URL = "https://www.wikidata.org/w/api.php"
YAHOO_QUERY1 = "https://query1.finance.yahoo.com"
YAHOO_QUERY2 = "https://query2.finance.yahoo.com"
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z]+)?$")


class WikipediaAPI(SearchTool):
    key = "WikipediaAPI"
    display_name = "Wikipedia API"
    display_names = {"en": "Wikipedia API", "fr": "API Wikipédia", "de": "Wikipedia-API"}
    description = "Call Wikipedia API."
    icon = "Wikipedia"
    tool_name = "wikipedia"
    tool_description = "Searches Wikipedia and returns the plain-text extracts of the best matching pages."
    inputs = [
        MultilineInput("input_value", "Input", "", tool_mode=True),
        MessageTextInput("lang", "Language", "en"),
        IntInput("k", "Number of results", 4, required=True),
        BoolInput("load_all_available_meta", "Load all available meta", False, advanced=True),
        IntInput("doc_content_chars_max", "Document content characters max", 4000, advanced=True),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        lang = (to_text(self.lang) or "en").strip().lower()
        if not _LANG.match(lang):
            raise ValueError(f"Invalid Wikipedia language code '{lang}'")
        url = WIKIPEDIA_URL.format(lang=lang)
        found = get_json(
            self,
            url,
            params={
                "action": "query",
                "list": "search",
                "srsearch": query,
                "srlimit": max(1, self.k),
                "format": "json",
            },
        )
        titles = [h.get("title") for h in ((found or {}).get("query") or {}).get("search", []) if h.get("title")]
        if not titles:
            return []
        out = []
        for title in titles[: max(1, self.k)]:
            # one page per call: TextExtracts returns a single full extract per request (several need exintro)
            found_page = get_json(
                self,
                url,
                params={
                    "action": "query",
                    "prop": "extracts|info",
                    "inprop": "url",
                    "explaintext": 1,
                    "redirects": 1,
                    "titles": title,
                    "format": "json",
                },
            )
            pages = list((((found_page or {}).get("query") or {}).get("pages") or {}).values())
            page = pages[0] if pages else None
            if not page or "missing" in page:
                continue
            text = to_text(page.get("extract"))[: max(0, self.doc_content_chars_max)]
            # the reference's document fields: text, title, summary (the lead section), source
            meta: dict[str, Any] = {
                "title": page.get("title", title),
                "summary": _lead_section(to_text(page.get("extract"))),
                "source": page.get("fullurl", ""),
            }
            if self.load_all_available_meta:
                meta.update({k: v for k, v in page.items() if k not in ("extract", "title")})
            out.append(Data({"text": text, **meta}))
        return out


class WikidataAPI(SearchTool):
    key = "WikidataAPI"
    display_name = "Wikidata API"
    display_names = {"en": "Wikidata API", "fr": "API Wikidata", "de": "Wikidata-API"}
    description = "Performs a search using the Wikidata API."
    icon = "Wikipedia"
    query_field = "query"
    tool_name = "wikidata"
    tool_description = "Searches Wikidata entities and returns their labels, descriptions and URLs."
    inputs = [MultilineInput("query", "Query", "", required=True, tool_mode=True, info="The text query.")]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        found = get_json(
            self,
            WIKIDATA_URL,
            params={"action": "wbsearchentities", "format": "json", "search": query, "language": "en"},
        )
        out = []
        for hit in (found or {}).get("search") or []:
            if isinstance(hit, dict):
                # the reference's row: the label as text, the entity as Wikidata returns it under metadata
                out.append(Data({"text": to_text(hit.get("label")), "metadata": hit}))
        if not out:
            raise ComponentError("No search results found.")
        return out


#: method -> quoteSummary modules (the rest use the chart or search endpoints)
SUMMARY_MODULES = {
    "get_info": "assetProfile,summaryDetail,price",
    "get_analysis": "earningsTrend",
    "get_balance_sheet": "balanceSheetHistory",
    "get_calendar": "calendarEvents",
    "get_cashflow": "cashflowStatementHistory",
    "get_institutional_holders": "institutionOwnership",
    "get_recommendations": "recommendationTrend",
    "get_sustainability": "esgScores",
    "get_major_holders": "majorHoldersBreakdown",
    "get_mutualfund_holders": "fundOwnership",
    "get_insider_purchases": "netSharePurchaseActivity",
    "get_insider_transactions": "insiderTransactions",
    "get_insider_roster_holders": "insiderHolders",
    "get_shares": "defaultKeyStatistics",
    "get_fast_info": "price",
    "get_sec_filings": "secFilings",
    "get_recommendations_summary": "recommendationTrend",
    "get_upgrades_downgrades": "upgradeDowngradeHistory",
    "get_earnings": "earnings",
    "get_income_stmt": "incomeStatementHistory",
}
CHART_EVENTS = {
    "get_actions": "div,splits",
    "get_dividends": "div",
    "get_splits": "splits",
    "get_capital_gains": "capitalGains",
}
YAHOO_METHODS = ["get_info", "get_news", "get_actions", *[m for m in SUMMARY_MODULES if m != "get_info"]]
YAHOO_METHODS += [m for m in CHART_EVENTS if m not in YAHOO_METHODS]
_SYMBOL = re.compile(r"^[A-Za-z0-9.^=\-]{1,15}$")


class YahooFinanceTool(SearchTool):
    key = "YahooFinanceTool"
    display_name = "Yahoo! Finance"
    display_names = {"en": "Yahoo! Finance"}
    description = "Uses Yahoo! Finance to access financial data and market information."
    icon = "trending-up"
    query_field = "symbol"
    tool_name = "yahoo_finance"
    tool_description = "Looks up a stock symbol on Yahoo! Finance (news, profile, prices, statements)."
    inputs = [
        MessageTextInput("symbol", "Stock Symbol", "", tool_mode=True, info="The stock symbol to retrieve data for."),
        DropdownInput(
            "method", "Data Method", "get_news", options=list(YAHOO_METHODS), info="The type of data to retrieve."
        ),
        IntInput("num_news", "Number of News", 5, info="The number of news articles to retrieve."),
    ]
    outputs = tool_outputs()

    def search(self, query: str) -> list[Data]:
        symbol = require(query, "A stock symbol").upper()
        if not _SYMBOL.match(symbol):
            raise ValueError(f"Invalid stock symbol '{symbol}'")
        method = self.method
        if method == "get_news":
            found = get_json(
                self,
                f"{YAHOO_QUERY1}/v1/finance/search",
                params={"q": symbol, "newsCount": max(0, self.num_news), "quotesCount": 0},
            )
            # the reference's rows: each article as Yahoo! returns it (title, link, publisher...)
            news = ((found or {}).get("news") or [])[: max(0, self.num_news)]
            return [Data(dict(n)) for n in news if isinstance(n, dict)]
        if method in CHART_EVENTS:
            found = get_json(
                self,
                f"{YAHOO_QUERY1}/v8/finance/chart/{quote(symbol)}",
                params={"range": "max", "interval": "1mo", "events": CHART_EVENTS[method]},
            )
            result = (((found or {}).get("chart") or {}).get("result") or [{}])[0] or {}
            events = result.get("events") or {}
            rows = [
                {"type": kind, **value}
                for kind, items in events.items()
                for value in (items or {}).values()
                if isinstance(value, dict)
            ]
            rows.sort(key=lambda r: r.get("date", 0))
            return [Data({"result": pprint.pformat(rows)})]
        if method not in SUMMARY_MODULES:
            raise ValueError(f"Invalid method '{method}'. Use one of: {', '.join(YAHOO_METHODS)}")
        found = get_json(
            self,
            f"{YAHOO_QUERY2}/v10/finance/quoteSummary/{quote(symbol)}",
            params={"modules": SUMMARY_MODULES[method]},
        )
        summary = (found or {}).get("quoteSummary") or {}
        if summary.get("error"):
            raise ComponentError(f"Yahoo! Finance: {to_text((summary['error'] or {}).get('description'))}")
        result = (summary.get("result") or [{}])[0] or {}
        # the reference's row: one ``result`` field holding the pretty-printed answer
        return [Data({"result": pprint.pformat(result)})]


def _lead_section(text: str) -> str:
    """The extract up to its first section heading (``== ... ==``), as a page summary."""
    return re.split(r"\n+==[^=\n].*?==\s*\n", text, maxsplit=1)[0].strip()


COMPONENTS = [WikipediaAPI, WikidataAPI, YahooFinanceTool]
