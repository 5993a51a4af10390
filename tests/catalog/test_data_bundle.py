"""The data bundle: SQL Database on the real SQLite, PostgreSQL and MariaDB servers; RSS Reader, News Search
and Web Search against a loopback server speaking the real feed/search formats; Mock Data."""

from __future__ import annotations

import contextlib
import socket
import uuid

import pytest
from service_bundle_data import web
from service_bundle_data.mock import MOCK_COLUMNS, MOCK_ROWS, MockDataGenerator
from service_bundle_data.sql import SQLComponent
from service_bundle_data.web import NewsSearch, RSSReaderSimple, UnifiedWebSearch

from core.engine import ComponentError, RunContext
from core.engine.egress import EgressPolicy
from core.engine.host_access import Hardening
from tests.catalog.apiserver import allowlisted, recorded_api

PG_URL = "postgresql://postgres@127.0.0.1:5432/catalog_sql"
MARIADB_URL = "mysql://root@127.0.0.1:3306/catalog_test"


def _up(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _ensure_database(port: int, name: str) -> None:
    """Create the test's database on the server if it is missing (a fresh CI machine has only `test`)."""
    if port == 5432:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                # another xdist worker may create it first
                with contextlib.suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    conn.execute(f'CREATE DATABASE "{name}"')
    else:
        import pymysql

        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
        try:
            with conn.cursor() as cursor:
                cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{name}`")
        finally:
            conn.close()


#: the run context of these tests: user u1 with a workspace (file databases live there since issue 26) and
#: loopback connectors opened by the admin (the test servers listen on 127.0.0.1)
_CONTEXT: dict[str, RunContext] = {}


@pytest.fixture(autouse=True)
def _workspace_context(tmp_path):
    config = tmp_path / "config"
    _CONTEXT["ctx"] = RunContext(
        user_id="u1",
        hardening=Hardening(config_dir=config, private_dir=config),
        egress=EgressPolicy(connector_allow_loopback=True),
    )
    yield
    _CONTEXT.clear()


def sql(url: str, query: str, **kw) -> SQLComponent:
    return SQLComponent({"database_url": url, "query": query, **kw}, context=_CONTEXT["ctx"])


@pytest.fixture
def sqlite_url(tmp_path):
    import sqlite3

    path = _CONTEXT["ctx"].hardening.workspace("u1") / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        conn.executemany("INSERT INTO items (name, price) VALUES (?, ?)", [("pen", 1.5), ("ink", 3.0)])
    return f"sqlite:///{path}"


def test_sqlite_query_read_only_and_writes(sqlite_url):
    frame = sql(sqlite_url, "SELECT name, price FROM items ORDER BY id").run_sql_query()
    assert frame.columns == ["name", "price"] and frame.rows == [
        {"name": "pen", "price": 1.5},
        {"name": "ink", "price": 3.0},
    ]
    assert sql(sqlite_url, "SELECT name FROM items", include_columns=False).run_sql_query().rows[0] == {"0": "pen"}
    with pytest.raises(ComponentError, match=r"readonly|read-only|query_only"):
        sql(sqlite_url, "DELETE FROM items").run_sql_query()
    with pytest.raises(ComponentError, match="one statement at a time"):
        sql(sqlite_url, "SELECT 1; DELETE FROM items").run_sql_query()
    with pytest.raises(ComponentError, match="not authorized"):
        sql(sqlite_url, "PRAGMA query_only = OFF").run_sql_query()
    assert sql(sqlite_url, "PRAGMA table_info(items)").run_sql_query().rows[0]["name"] == "id"
    assert len(sql(sqlite_url, "SELECT * FROM items").run_sql_query()) == 2  # nothing was deleted
    sql(sqlite_url, "INSERT INTO items (name, price) VALUES ('cap', 2)", allow_writes=True).run_sql_query()
    assert len(sql(sqlite_url, "SELECT * FROM items").run_sql_query()) == 3


def test_sql_empty_and_bad_inputs(sqlite_url):
    with pytest.raises(ValueError, match="SQL Query is required"):
        sql(sqlite_url, "  ").run_sql_query()
    with pytest.raises(ValueError, match="Database URL is required"):
        sql("", "SELECT 1").run_sql_query()
    with pytest.raises(ValueError, match="Invalid database URL"):
        sql("not a url", "SELECT 1").run_sql_query()
    with pytest.raises(ComponentError, match="no such table"):
        sql(sqlite_url, "SELECT * FROM nope").run_sql_query()
    frame = sql(sqlite_url, "SELECT * FROM nope", add_error=True).run_sql_query()
    assert frame.rows[0]["query"] == "SELECT * FROM nope" and "no such table" in frame.rows[0]["error"]
    with pytest.raises(ComponentError, match="Read-only mode cannot be enforced"):
        sql("oracle://u:p@127.0.0.1/x", "SELECT 1").run_sql_query()
    with pytest.raises(ComponentError) as exc:
        sql("postgresql://postgres:s3cret@127.0.0.1:1/x", "SELECT 1").run_sql_query()
    assert "s3cret" not in str(exc.value)


def test_file_databases_refused_when_local_files_are_restricted(sqlite_url, tmp_path):
    # outside the run user's workspace, or with no user or config directory to hold one, a file is refused
    outside = tmp_path / "outside.db"
    other = _CONTEXT["ctx"].hardening.workspace("u2") / "theirs.db"
    no_workspace = RunContext(hardening=Hardening(restrict_local_files=True))
    for url, context in (
        (f"sqlite:///{outside}", _CONTEXT["ctx"]),
        (f"sqlite:///{other}", _CONTEXT["ctx"]),
        (sqlite_url, no_workspace),
        ("sqlite+pysqlite:///x.db", no_workspace),
    ):
        with pytest.raises(ComponentError, match="SERVICE_RESTRICT_LOCAL_FILE_ACCESS"):
            SQLComponent({"database_url": url, "query": "SELECT 1"}, context=context).run_sql_query()
    assert not outside.exists()
    # unrestricted, SQL still cannot open another file (ATTACH, VACUUM INTO), whatever the mode
    target = sqlite_url.removeprefix("sqlite:///")
    for statement in (f"ATTACH DATABASE '{target}' AS other", f"VACUUM INTO '{target}.copy'"):
        for writes in (False, True):
            with pytest.raises(ComponentError, match=r"not authorized|authorization denied"):
                sql("sqlite://", statement, allow_writes=writes).run_sql_query()


@pytest.mark.skipif(not _up(5432), reason="PostgreSQL is not running on 127.0.0.1:5432")
def test_postgresql():
    _ensure_database(5432, "catalog_sql")
    table = f"t_{uuid.uuid4().hex[:8]}"
    sql(PG_URL, f"CREATE TABLE {table} (id int, label text)", allow_writes=True).run_sql_query()
    try:
        sql(PG_URL, f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')", allow_writes=True).run_sql_query()
        assert sql(PG_URL, f"SELECT * FROM {table} ORDER BY id").run_sql_query().rows == [
            {"id": 1, "label": "a"},
            {"id": 2, "label": "b"},
        ]
        with pytest.raises(ComponentError, match="read-only transaction"):
            sql(PG_URL, f"DELETE FROM {table}").run_sql_query()
        with pytest.raises(ComponentError, match="multiple commands"):
            sql(PG_URL, f"COMMIT; DELETE FROM {table}").run_sql_query()
        assert len(sql(PG_URL, f"SELECT * FROM {table}").run_sql_query()) == 2
        strict = RunContext(egress=EgressPolicy(connector_allow_loopback=False))
        with pytest.raises(ComponentError, match="Database host is not allowed"):
            SQLComponent({"database_url": PG_URL, "query": "SELECT 1"}, context=strict).run_sql_query()
        allowlisted = RunContext(egress=EgressPolicy(connector_allow_loopback=False, allowed_hosts=("127.0.0.1",)))
        assert SQLComponent({"database_url": PG_URL, "query": "SELECT 1 AS one"}, context=allowlisted).run_sql_query()
    finally:
        sql(PG_URL, f"DROP TABLE {table}", allow_writes=True).run_sql_query()


@pytest.mark.skipif(not _up(3306), reason="MariaDB is not running on 127.0.0.1:3306")
def test_mariadb():
    _ensure_database(3306, "catalog_test")
    table = f"t_{uuid.uuid4().hex[:8]}"
    sql(MARIADB_URL, f"CREATE TABLE {table} (id int, label varchar(10))", allow_writes=True).run_sql_query()
    try:
        sql(MARIADB_URL, f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')", allow_writes=True).run_sql_query()
        assert sql(MARIADB_URL, f"SELECT label FROM {table} ORDER BY id").run_sql_query().rows == [
            {"label": "a"},
            {"label": "b"},
        ]
        with pytest.raises(ComponentError, match=r"READ ONLY|read only|read-only"):
            sql(MARIADB_URL, f"DELETE FROM {table}").run_sql_query()
        with pytest.raises(ComponentError, match="SQL syntax"):
            sql(MARIADB_URL, f"COMMIT; DELETE FROM {table}").run_sql_query()
        assert len(sql(MARIADB_URL, f"SELECT * FROM {table}").run_sql_query()) == 2
    finally:
        sql(MARIADB_URL, f"DROP TABLE {table}", allow_writes=True).run_sql_query()


RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>News</title>
<item><title>First &amp; best</title><link>https://example.com/1</link>
<pubDate>Sun, 22 Nov 2026 10:00:00 GMT</pubDate><description>&lt;b&gt;Bold&lt;/b&gt; summary</description></item>
<item><title>Second</title><link>https://example.com/2</link><pubDate>Sun, 22 Nov 2026 11:00:00 GMT</pubDate>
<description>Plain</description></item>
</channel></rss>"""


def test_rss_reader():
    with recorded_api() as api:
        api.route("GET", "/feed.xml", RSS, ctype="application/rss+xml")
        api.route("GET", "/page.html", b"<html><body>not a feed</body></html>", ctype="text/html")
        c = RSSReaderSimple({"rss_url": f"{api.base}/feed.xml"}, context=allowlisted())
        frame = c.read_rss()
        assert frame.columns == ["title", "link", "published", "summary"]
        assert frame.rows[0] == {
            "title": "First & best",
            "link": "https://example.com/1",
            "published": "Sun, 22 Nov 2026 10:00:00 GMT",
            "summary": "Bold  summary",
        }
        with pytest.raises(ComponentError, match="HTTP 404"):
            RSSReaderSimple({"rss_url": f"{api.base}/missing"}, context=allowlisted()).read_rss()
        with pytest.raises(ComponentError, match="Not a valid RSS"):
            RSSReaderSimple({"rss_url": f"{api.base}/page.html"}, context=allowlisted()).read_rss()
        # without the allowlist the loopback server is refused by the SSRF rules
        with pytest.raises(ComponentError, match="blocked"):
            RSSReaderSimple({"rss_url": f"{api.base}/feed.xml"}, context=RunContext()).read_rss()
    with pytest.raises(ValueError, match="Empty RSS URL"):
        RSSReaderSimple.build().read_rss()


def test_news_search_speaks_google_news_rss(monkeypatch):
    with recorded_api() as api:
        monkeypatch.setattr(web, "GOOGLE_NEWS", api.base)
        api.route("GET", "/rss/search", RSS, ctype="application/rss+xml")
        api.route("GET", "/rss/headlines/section/topic/TECHNOLOGY", RSS, ctype="application/rss+xml")
        frame = NewsSearch({"query": "flows", "hl": "fr", "gl": "FR"}, context=allowlisted()).search_news()
        assert len(frame) == 2
        assert api.last()["query"] == {"q": "flows", "hl": "fr", "gl": "FR", "ceid": "US:en"}
        NewsSearch({"query": "", "topic": "technology"}, context=allowlisted()).search_news()
        assert api.last()["path"] == "/rss/headlines/section/topic/TECHNOLOGY"
        with pytest.raises(ValueError, match="search query"):
            NewsSearch({"query": ""}, context=allowlisted()).search_news()


DDG = """<html><body>
<div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg={base}%2Fa.html&rut=x">Result A</a></h2>
<a class="result__snippet" href="#">Snippet <b>A</b></a></div>
<div class="result"><h2><a class="result__a" href="{base}/b.html">Result B</a></h2>
<a class="result__snippet" href="#">Snippet B</a></div>
</body></html>"""


def test_web_search_modes(monkeypatch):
    with recorded_api() as api:
        monkeypatch.setattr(web, "DUCKDUCKGO_HTML", f"{api.base}/html/")
        monkeypatch.setattr(web, "GOOGLE_NEWS", api.base)
        api.routes[("GET", "/html/")] = (200, "text/html", DDG.format(base=api.base).encode())
        api.route("GET", "/a.html", b"<html><body><p>Page   A text</p></body></html>", ctype="text/html")
        api.route("GET", "/rss/search", RSS, ctype="application/rss+xml")
        api.route("GET", "/feed.xml", RSS, ctype="application/rss+xml")
        frame = UnifiedWebSearch(
            {"query": "flows", "max_results": 5, "max_content_length": 8}, context=allowlisted()
        ).perform_search()
        assert [r["title"] for r in frame.rows] == ["Result A", "Result B"]
        assert frame.rows[0]["snippet"] == "Snippet A" and frame.rows[0]["content"] == "Page A t"
        assert frame.rows[1]["content"] == "(content"  # /b.html is a 404
        news = UnifiedWebSearch({"search_mode": "News", "query": "x"}, context=allowlisted()).perform_search()
        assert len(news) == 2
        rss = UnifiedWebSearch({"search_mode": "RSS", "query": f"{api.base}/feed.xml"}, context=allowlisted())
        assert rss.perform_search().rows[1]["title"] == "Second"
    with pytest.raises(ValueError, match="Invalid search mode"):
        UnifiedWebSearch({"search_mode": "Maps", "query": "x"}, context=allowlisted()).perform_search()
    with pytest.raises(ValueError, match="search query"):
        UnifiedWebSearch({"query": ""}, context=allowlisted()).perform_search()


def test_mock_data():
    c = MockDataGenerator.build()
    frame = c.generate_dataframe_output()
    assert frame.columns == MOCK_COLUMNS and len(frame) == MOCK_ROWS
    assert all(1 <= r["quantity"] <= 10 and r["email"].endswith("@example.com") for r in frame.rows)
    assert c.generate_message_output().text
    data = c.generate_data_output().data
    assert data["summary"]["total_count"] == len(data["records"]) == 1
