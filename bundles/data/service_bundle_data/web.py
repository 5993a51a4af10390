"""RSS Reader, News Search and Web Search: feeds and search pages fetched through the core egress helper.

Feeds are parsed by ``feedparser`` (imported lazily) from the bytes the egress helper
fetched, so feedparser never opens a connection itself. Endpoints are module constants
(``GOOGLE_NEWS``, ``DUCKDUCKGO_HTML``): deployments and tests point them elsewhere.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from core.engine import Component, ComponentError, DataFrame, Output
from core.engine.egress import EgressError, request
from core.engine.inputs import IntInput, MessageTextInput, StrInput, TabInput
from core.engine.types import to_text

GOOGLE_NEWS = "https://news.google.com"
DUCKDUCKGO_HTML = "https://html.duckduckgo.com/html/"
ARTICLE_COLUMNS = ["title", "link", "published", "summary"]
_TAG = re.compile(r"<[^>]+>")


def fetch(component: Component, url: str, *, params: dict[str, Any] | None = None, timeout: float = 5) -> bytes:
    """GET ``url`` through the egress helper (SSRF rules, run deadline, size cap); raise on HTTP errors."""
    ctx = component.context
    try:
        resp = request(
            "GET",
            url,
            policy=ctx.egress,
            params=params,
            timeout=float(timeout) if timeout and timeout > 0 else None,
            follow_redirects=True,
            deadline=ctx.deadline,
        )
    except EgressError as exc:
        raise ComponentError(f"Request to {url} failed: {exc}") from None
    if resp.status_code >= 400:
        raise ComponentError(f"Request to {url} failed with HTTP {resp.status_code}")
    return resp.content


def strip_html(text: str) -> str:
    return html.unescape(_TAG.sub(" ", text or "")).replace("\xa0", " ").strip()


def parse_feed(content: bytes) -> DataFrame:
    """Feed entries as rows ``title, link, published, summary``; a document that is not a feed is an error."""
    import feedparser

    feed = feedparser.parse(content)
    if not feed.get("entries") and (feed.get("bozo") or not feed.get("version")):
        reason = feed.get("bozo_exception") or "no RSS or Atom document found"
        raise ComponentError(f"Not a valid RSS/Atom feed: {reason}")
    rows = [
        {
            "title": strip_html(entry.get("title", "")),
            "link": entry.get("link", ""),
            # "updated" only when there is no "published" (feedparser warns on the reverse fallback)
            "published": entry["published"] if "published" in entry else entry.get("updated", ""),
            "summary": strip_html(entry.get("summary", "")),
        }
        for entry in feed.get("entries", [])
    ]
    return DataFrame(rows, columns=ARTICLE_COLUMNS)


def _timeout_input(default: int = 5) -> IntInput:
    return IntInput("timeout", "Timeout", default, advanced=True, info="Timeout for the request in seconds.")


def _news_inputs() -> list[Any]:
    return [
        StrInput("hl", "Language (hl)", "", advanced=True, info="Language code, e.g. en-US, fr, de. Default: en-US."),
        StrInput("gl", "Country (gl)", "", advanced=True, info="Country code, e.g. US, FR, DE. Default: US."),
        StrInput("ceid", "Country:Language (ceid)", "US:en", advanced=True, info="e.g. US:en, FR:fr. Default: US:en."),
        StrInput(
            "topic",
            "Topic",
            "",
            advanced=True,
            info="One of: WORLD, NATION, BUSINESS, TECHNOLOGY, ENTERTAINMENT, SCIENCE, SPORTS, HEALTH.",
        ),
        StrInput("location", "Location (Geo)", "", advanced=True, info="City, state, or country for location news."),
        _timeout_input(),
    ]


def news_search(component: Component, query: str) -> DataFrame:
    """Google News RSS: by ``topic``, else by ``location``, else a search for ``query``."""
    hl = to_text(getattr(component, "hl", "")) or "en-US"
    gl = to_text(getattr(component, "gl", "")) or "US"
    ceid = to_text(getattr(component, "ceid", "")) or f"{gl}:{hl.split('-')[0]}"
    topic = to_text(getattr(component, "topic", "")).strip().upper()
    location = to_text(getattr(component, "location", "")).strip()
    params = {"hl": hl, "gl": gl, "ceid": ceid}
    if topic:
        url = f"{GOOGLE_NEWS}/rss/headlines/section/topic/{quote(topic)}"
    elif location:
        url = f"{GOOGLE_NEWS}/rss/headlines/section/geo/{quote(location)}"
    elif query:
        url = f"{GOOGLE_NEWS}/rss/search"
        params["q"] = query
    else:
        raise ValueError("Enter a search query, a topic or a location.")
    return parse_feed(fetch(component, url, params=params, timeout=getattr(component, "timeout", 5)))


class RSSReaderSimple(Component):
    key = "RSSReaderSimple"
    display_name = "RSS Reader"
    display_names = {"en": "RSS Reader", "fr": "Lecteur RSS", "de": "RSS-Leser", "es": "Lector RSS"}
    description = "Fetches and parses an RSS feed."
    icon = "rss"
    category = "data_source"
    legacy = True
    io_bound = True
    inputs = [
        MessageTextInput(
            "rss_url",
            "RSS Feed URL",
            "",
            required=True,
            tool_mode=True,
            info="URL of the RSS feed to parse.",
        ),
        _timeout_input(),
    ]
    outputs = [Output("articles", "Articles", "read_rss", ["Table"])]

    def read_rss(self) -> DataFrame:
        url = to_text(self.rss_url).strip()
        if not url:
            raise ValueError("Empty RSS URL provided.")
        frame = parse_feed(fetch(self, url, timeout=self.timeout))
        self.status = frame
        return frame


class NewsSearch(Component):
    key = "NewsSearch"
    display_name = "News Search"
    display_names = {"en": "News Search", "fr": "Recherche d'actualités", "de": "Nachrichtensuche"}
    description = (
        "Searches Google News via RSS. Returns a table of article titles, links, publication dates, summaries."
    )
    icon = "newspaper"
    category = "data_source"
    legacy = True
    io_bound = True
    inputs = [
        MessageTextInput(
            "query",
            "Search Query",
            "",
            required=True,
            tool_mode=True,
            info="Search keywords for news articles.",
        ),
        *_news_inputs(),
    ]
    outputs = [Output("articles", "News Articles", "search_news", ["Table"])]

    def search_news(self) -> DataFrame:
        frame = news_search(self, to_text(self.query).strip())
        self.status = frame
        return frame


class _DuckDuckGoResults(HTMLParser):
    """Result links (``a.result__a``) and snippets (``.result__snippet``) of DuckDuckGo's HTML page.

    Hand-written on the standard library's HTMLParser: the page needs two classes read, which
    does not justify an HTML-parsing dependency in the bundle.
    """

    def __init__(self) -> None:
        super().__init__()
        self.results: list[dict[str, str]] = []
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self.results.append({"title": "", "link": _ddg_link(dict(attrs).get("href") or ""), "snippet": ""})
            self._field = "title"
        elif "result__snippet" in classes and self.results:
            self._field = "snippet"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("a", "td", "div"):
            self._field = None

    def handle_data(self, data: str) -> None:
        if self._field and self.results:
            self.results[-1][self._field] += data


def _ddg_link(href: str) -> str:
    """DuckDuckGo wraps result links as ``//duckduckgo.com/l/?uddg=<url>``."""
    parts = urlsplit(href)
    target = parse_qs(parts.query).get("uddg")
    if target:
        return target[0]
    return ("https:" + href) if href.startswith("//") else href


def web_search(component: Component, query: str, max_results: int, max_content_length: int) -> DataFrame:
    if not query:
        raise ValueError("Enter a search query.")
    page = fetch(component, DUCKDUCKGO_HTML, params={"q": query}, timeout=getattr(component, "timeout", 5))
    parser = _DuckDuckGoResults()
    parser.feed(page.decode("utf-8", "replace"))
    rows = []
    for found in parser.results[: max(0, max_results)]:
        content = ""
        if found["link"].startswith(("http://", "https://")):
            try:
                body = fetch(component, found["link"], timeout=getattr(component, "timeout", 5))
                content = re.sub(r"\s+", " ", strip_html(body.decode("utf-8", "replace")))
            except ComponentError as exc:  # one unreachable result page does not fail the search
                content = f"(content unavailable: {exc})"
        rows.append(
            {
                "title": found["title"].strip(),
                "link": found["link"],
                "snippet": found["snippet"].strip(),
                "content": content[: max(0, max_content_length)],
            }
        )
    return DataFrame(rows, columns=["title", "link", "snippet", "content"])


class UnifiedWebSearch(Component):
    key = "UnifiedWebSearch"
    display_name = "Web Search"
    display_names = {"en": "Web Search", "fr": "Recherche web", "de": "Websuche", "es": "Búsqueda web"}
    description = "Search the web, news, or RSS feeds."
    icon = "search"
    category = "data_source"
    io_bound = True
    inputs = [
        TabInput(
            "search_mode",
            "Search Mode",
            "Web",
            options=["Web", "News", "RSS"],
            info="Web: DuckDuckGo results; News: Google News; RSS: the feed at the URL given as query.",
        ),
        MessageTextInput(
            "query",
            "Search Query",
            "",
            required=True,
            tool_mode=True,
            info="Keywords for Web and News; the feed URL for RSS.",
        ),
        *_news_inputs(),
        IntInput("max_results", "Max Results", 5, advanced=True, info="Maximum number of web results."),
        IntInput(
            "max_content_length",
            "Max Content Length",
            2000,
            advanced=True,
            info="Maximum characters of page content kept per web result.",
        ),
    ]
    outputs = [Output("results", "Results", "perform_search", ["Table"])]

    def perform_search(self) -> DataFrame:
        query = to_text(self.query).strip()
        if self.search_mode == "Web":
            frame = web_search(self, query, self.max_results, self.max_content_length)
        elif self.search_mode == "News":
            frame = news_search(self, query)
        elif self.search_mode == "RSS":
            if not query:
                raise ValueError("Enter the RSS feed URL as the query.")
            frame = parse_feed(fetch(self, query, timeout=self.timeout))
        else:
            raise ValueError(f"Invalid search mode '{self.search_mode}'. Use Web, News or RSS.")
        self.status = frame
        return frame


COMPONENTS = [NewsSearch, RSSReaderSimple, UnifiedWebSearch]
