"""The editor blueprint: index and deep links, hashed assets, cache headers, and no API path shadowed."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
import service_editor.views as views

STATIC = Path(views.__file__).parent / "static"
HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture
def client(make_app):
    return make_app().test_client()


def _index_assets() -> list[str]:
    text = (STATIC / "index.html").read_text()
    return re.findall(r'(?:src|href)="(/assets/[^"]+)"', text)


def test_root_serves_the_app_uncached(client):
    response = client.get("/", headers=HTML)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert response.headers["Cache-Control"] == "no-cache"
    assert b'<div id="root">' in response.data
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/flow/3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "/login",
        "/settings",
        "/settings/api-keys",
        "/projects/abc",
        "/some/unknown/page",
        "/xhealth",
    ],
)
def test_deep_links_serve_index(client, path):
    response = client.get(path, headers=HTML)
    assert response.status_code == 200, path
    assert response.headers["Cache-Control"] == "no-cache"
    assert b'<div id="root">' in response.data


def test_deep_link_without_html_accept_is_a_json_404(client):
    response = client.get("/flow/abc", headers={"Accept": "*/*"})
    assert response.status_code == 404
    assert response.get_json() == {"detail": "Not Found"}
    missing_script = client.get("/missing.js", headers={"Accept": "*/*"})
    assert missing_script.status_code == 404


def test_other_methods_on_pages_are_not_allowed(client):
    assert client.post("/flow/abc", headers=HTML).status_code == 405


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/api/v1/definitely-not-here"),
        ("POST", "/api/v1/definitely-not-here"),
        ("DELETE", "/api/v2/nothing/here"),
        ("GET", "/api"),
        ("GET", "/api/"),
        ("GET", "/healthz-nope"),
        ("GET", "/docs/nothing"),
        ("GET", "/logs-stream/x"),
        ("GET", "/assets/not-built.js"),
    ],
)
def test_reserved_paths_keep_their_json_404(client, method, path):
    response = client.open(path, method=method, headers=HTML)
    assert response.status_code == 404, path
    assert response.get_json() == {"detail": "Not Found"}


def test_existing_endpoints_still_answer(client):
    assert client.get("/health", headers=HTML).get_json() == {"status": "ok"}
    assert client.get("/health_check", headers=HTML).is_json
    assert client.get("/openapi.json", headers=HTML).is_json
    assert b"swagger" in client.get("/docs", headers=HTML).data.lower()
    assert client.get("/api/v1/version", headers=HTML).is_json
    flows = client.get("/api/v1/flows/", headers=HTML)
    assert flows.status_code == 403 and flows.is_json


def test_no_registered_route_is_shadowed(make_app):
    """Every other plugin's rule still matches its own endpoint, whatever the Accept header."""
    app = make_app()
    adapter = app.url_map.bind("localhost")
    checked = 0
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("editor.") or rule.arguments or rule.endpoint == "static":
            continue
        method = sorted((rule.methods or {"GET"}) - {"HEAD", "OPTIONS"})[0]
        endpoint, _ = adapter.match(rule.rule, method=method)
        assert endpoint == rule.endpoint, rule.rule
        checked += 1
    assert checked > 10


def test_assets_are_hashed_and_cached_for_a_year(client):
    assets = _index_assets()
    assert assets, "index.html references no built asset"
    for path in assets:
        assert re.search(r"-[A-Za-z0-9_-]{8}\.(js|css)$", path), path
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.mimetype in ("application/javascript", "text/css")


def test_assets_are_gzipped_when_accepted(client):
    path = next(p for p in _index_assets() if p.endswith(".js"))
    plain = client.get(path)
    packed = client.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.data) == plain.data
    assert len(packed.data) < len(plain.data) / 2


def test_conditional_requests_get_304(client):
    path = _index_assets()[0]
    first = client.get(path)
    again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    index = client.get("/", headers=HTML)
    assert client.get("/", headers={**HTML, "If-None-Match": index.headers["ETag"]}).status_code == 304


def test_head_requests(client):
    response = client.head("/", headers=HTML)
    assert response.status_code == 200
    assert response.data == b""


def test_no_path_traversal(client):
    for path in ["/assets/../plugin.py", "/assets/..%2fplugin.py", "/assets/%2e%2e/views.py", "/..%2fplugin.py"]:
        response = client.get(path, headers=HTML)
        assert b"hookimpl" not in response.data, path
        assert b"import" not in response.data[:200], path


def test_top_level_build_files(client):
    response = client.get("/favicon.svg")
    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    assert "max-age=3600" in response.headers["Cache-Control"]


def test_initial_javascript_fits_the_budget():
    """The JS that index.html loads up front stays under 400 KB gzipped (the canvas loads on demand)."""
    total = 0
    for path in _index_assets():
        if path.endswith(".js"):
            total += len(gzip.compress((STATIC / path.lstrip("/")).read_bytes(), compresslevel=9))
    assert 0 < total < 400 * 1024, total


def test_missing_build_says_how_to_build(client, monkeypatch, tmp_path):
    monkeypatch.setattr(views, "STATIC_DIR", tmp_path)
    response = client.get("/", headers=HTML)
    assert response.status_code == 503
    assert b"npm install" in response.data


def test_editor_can_be_disabled(make_app):
    app = make_app(plugins=["accounts"])
    response = app.test_client().get("/", headers=HTML)
    assert response.status_code == 404
    assert response.get_json() == {"detail": "Not Found"}


FRONTEND = Path(views.__file__).parents[1] / "frontend"
_INPUTS = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "public", "src"]


def _source_digest() -> str:
    """The digest vite.config.ts writes into build-info.json (tests and fixtures excluded)."""
    import hashlib

    paths: list[str] = []
    for name in _INPUTS:
        p = FRONTEND / name
        items = [q for q in p.rglob("*") if q.is_file()] if p.is_dir() else [p]
        paths += [q.relative_to(FRONTEND).as_posix() for q in items]
    paths = sorted(p for p in paths if not p.endswith(".test.ts") and "__fixtures__/" not in p)
    h = hashlib.sha256()
    for rel in paths:
        h.update(rel.encode() + b"\0")
        h.update((FRONTEND / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def test_committed_build_matches_the_frontend_source():
    """Rebuild (``npm install && npm run build`` in plugins/editor/frontend) after changing the frontend."""
    import json

    info = json.loads((STATIC / "build-info.json").read_text())
    assert info["source_sha256"] == _source_digest(), "service_editor/static is stale: run npm run build"


def test_node_modules_are_not_shipped():
    assert not (STATIC / "node_modules").exists()
    ignore = (FRONTEND.parent / ".gitignore").read_text()
    assert "node_modules" in ignore
