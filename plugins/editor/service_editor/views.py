"""Serve the built single-page app.

* ``/assets/<file>``: hashed build outputs, cached for a year (``immutable``), gzip when accepted.
* ``/`` and every other GET path that is not reserved (``/flow/<id>``, ``/login``, ``/settings``...) and accepts
  HTML: ``index.html`` with ``Cache-Control: no-cache`` so a new release is picked up at once.
* Reserved paths (``/api``, ``/health*``, ``/docs``, ``/openapi.json``, ``/logs*``) never match here, so unknown
  API paths keep their JSON ``404 {"detail": "Not Found"}`` and other methods keep their own answers.
"""

from __future__ import annotations

import gzip
import mimetypes
import threading
from pathlib import Path

from flask import Blueprint, Response, abort, request
from werkzeug.routing import BaseConverter

STATIC_DIR = Path(__file__).parent / "static"
ASSETS_DIR = STATIC_DIR / "assets"

LONG_CACHE = "public, max-age=31536000, immutable"
NO_CACHE = "no-cache"
SHORT_CACHE = "public, max-age=3600"
COMPRESSIBLE = {
    "text/html",
    "text/css",
    "application/javascript",
    "text/javascript",
    "image/svg+xml",
    "application/json",
}
# React Flow positions nodes with inline styles; scripts come only from this origin.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'self'"
)


class SpaPathConverter(BaseConverter):
    """A path whose first segment is not reserved for the API, health probes or the API docs."""

    regex = r"(?!(?:api|docs|openapi\.json|logs|logs-stream|assets|health[^/]*)(?:/|$))[^/].*?"
    part_isolating = False
    weight = 300  # after every other rule


editor_bp = Blueprint("editor", __name__)


@editor_bp.record_once
def _register_converter(state) -> None:
    state.app.url_map.converters.setdefault("spa", SpaPathConverter)


class _Files:
    """Raw and gzip bytes of the built files, read once per modification time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[float, bytes, bytes | None]] = {}

    def get(self, path: Path, compress: bool) -> tuple[bytes, bytes | None]:
        mtime = path.stat().st_mtime
        with self._lock:
            hit = self._cache.get(path)
        if hit and hit[0] == mtime:
            return hit[1], hit[2]
        raw = path.read_bytes()
        packed = gzip.compress(raw, compresslevel=9, mtime=0) if compress and len(raw) > 1024 else None
        with self._lock:
            self._cache[path] = (mtime, raw, packed)
        return raw, packed


_files = _Files()


def _mimetype(path: Path) -> str:
    if path.suffix == ".js":
        return "application/javascript"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _send(path: Path, cache_control: str) -> Response:
    mimetype = _mimetype(path)
    raw, packed = _files.get(path, mimetype in COMPRESSIBLE)
    use_gzip = packed is not None and "gzip" in request.headers.get("Accept-Encoding", "").lower()
    body = packed if use_gzip else raw
    response = Response(body if request.method != "HEAD" else b"", mimetype=mimetype)
    response.content_length = len(body)  # type: ignore[arg-type]
    if use_gzip:
        response.headers["Content-Encoding"] = "gzip"
    if packed is not None:
        response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = cache_control
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.set_etag(f"{int(path.stat().st_mtime_ns)}-{len(raw)}{'-gz' if use_gzip else ''}")
    response.make_conditional(request)  # in place: a 304 (or 206) when the request's validators match
    return response


def _safe_file(base: Path, name: str) -> Path | None:
    try:
        target = (base / name).resolve()
        target.relative_to(base.resolve())
    except (ValueError, OSError):
        return None
    return target if target.is_file() else None


def _index() -> Response:
    index = STATIC_DIR / "index.html"
    if not index.is_file():
        response = Response(
            "<!doctype html><title>Editor not built</title><p>The editor assets are missing. Build them with "
            "<code>npm install &amp;&amp; npm run build</code> in <code>plugins/editor/frontend</code>.</p>",
            status=503,
            mimetype="text/html",
        )
        response.headers["Cache-Control"] = NO_CACHE
        return response
    response = _send(index, NO_CACHE)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


def _wants_html() -> bool:
    """A browser navigation names text/html explicitly (scripts and fetches send ``*/*``)."""
    return any(mime in ("text/html", "application/xhtml+xml") and q > 0 for mime, q in request.accept_mimetypes)


@editor_bp.route("/assets/<path:filename>", methods=["GET"])
def asset(filename: str) -> Response:
    path = _safe_file(ASSETS_DIR, filename)
    if path is None:
        abort(404)
    return _send(path, LONG_CACHE)


@editor_bp.route("/", methods=["GET"])
def root() -> Response:
    return _index()


@editor_bp.route("/<spa:path>", methods=["GET"])
def page(path: str) -> Response:
    # files at the top of the build (favicon.svg...), never index.html itself under another name
    if "/" not in path and path != "index.html":
        static = _safe_file(STATIC_DIR, path)
        if static is not None:
            return _send(static, SHORT_CACHE)
    if not _wants_html():
        abort(404)
    return _index()
