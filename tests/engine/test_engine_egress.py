"""SSRF protection of the egress helper, attacked with loopback addresses only."""

from __future__ import annotations

import http.server
import threading

import pytest
from service_bundle_standard.http import APIRequest

from core.engine import RunContext
from core.engine.egress import EgressBlocked, EgressError, EgressPolicy, is_public_address, parse_host_ip, request


class _Handler(http.server.BaseHTTPRequestHandler):
    redirect_to: str | None = None

    def do_GET(self):
        if self.path.startswith("/redirect") and self.server.redirect_to:  # type: ignore[attr-defined]
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to)  # type: ignore[attr-defined]
            self.end_headers()
            return
        body = b'{"ok": true, "host": "%s"}' % self.headers.get("Host", "").encode()
        if self.path.startswith("/big"):
            body = b"x" * 5000
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback_server():
    servers = []

    def start(host="127.0.0.1", redirect_to=None):
        srv = http.server.ThreadingHTTPServer((host, 0), _Handler)
        srv.redirect_to = redirect_to  # type: ignore[attr-defined]
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv.server_address[1]

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_server_reachable_when_protection_off(loopback_server):
    port = loopback_server()
    resp = request("GET", f"http://127.0.0.1:{port}/", policy=EgressPolicy(enabled=False))
    assert resp.status_code == 200 and b'"ok": true' in resp.content


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "2130706433",  # decimal
        "0177.0.0.1",  # octal
        "0x7f.0.0.1",  # hex
        "0x7f000001",
        "017700000001",
        "127.1",  # short form
        "127.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
        "0.0.0.0",  # noqa: S104 - an attack spelling, nothing binds to it
        "0",
        "127.0.0.1.",
        "LOCALHOST",
    ],
)
def test_loopback_spellings_are_blocked(loopback_server, host):
    port = loopback_server()
    with pytest.raises(EgressBlocked):
        request("GET", f"http://{host}:{port}/", policy=EgressPolicy())


def test_userinfo_and_schemes(loopback_server):
    port = loopback_server()
    with pytest.raises(EgressBlocked):
        request("GET", f"http://example.com@127.0.0.1:{port}/", policy=EgressPolicy())
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/", "gopher://127.0.0.1:70/", "//127.0.0.1/"):
        with pytest.raises(EgressBlocked):
            request("GET", url, policy=EgressPolicy())


def test_address_classification():
    for text in (
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "64:ff9b::7f00:1",
        "2002:7f00:1::",
        "::127.0.0.1",
        "255.255.255.255",
    ):
        assert not is_public_address(parse_host_ip(text)), text  # type: ignore[arg-type]
    for text in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"):
        assert is_public_address(parse_host_ip(text)), text  # type: ignore[arg-type]
    assert parse_host_ip("2130706433") == parse_host_ip("127.0.0.1")
    assert parse_host_ip("0x7f.1") == parse_host_ip("127.0.0.1")
    assert parse_host_ip("example.com") is None
    assert parse_host_ip("1.2.3.256") is None


def test_allow_list_forms(loopback_server):
    port = loopback_server()
    for entry in ("127.0.0.1", "127.0.0.0/8", "localhost", "local*"):
        policy = EgressPolicy(allowed_hosts=(entry,))
        host = "localhost" if "local" in entry else "127.0.0.1"
        assert request("GET", f"http://{host}:{port}/", policy=policy).status_code == 200
    assert EgressPolicy.from_settings(True, "a.example, 10.0.0.0/8").allowed_hosts == ("a.example", "10.0.0.0/8")
    with pytest.raises(EgressBlocked):
        request("GET", f"http://127.0.0.1:{port}/", policy=EgressPolicy(allowed_hosts=("127.0.0.2", "*.example.com")))


def test_redirects_are_rechecked(loopback_server):
    inner = loopback_server("127.0.0.1")
    outer = loopback_server("127.0.0.2", redirect_to=f"http://127.0.0.1:{inner}/")
    policy = EgressPolicy(allowed_hosts=("127.0.0.2",))
    with pytest.raises(EgressBlocked):
        request("GET", f"http://127.0.0.2:{outer}/redirect", policy=policy, follow_redirects=True)
    # without following, the 302 itself is returned
    assert request("GET", f"http://127.0.0.2:{outer}/redirect", policy=policy).status_code == 302
    # an allowed target is followed
    policy2 = EgressPolicy(allowed_hosts=("127.0.0.0/8",))
    resp = request("GET", f"http://127.0.0.2:{outer}/redirect", policy=policy2, follow_redirects=True)
    assert resp.status_code == 200 and resp.redirects


def test_redirect_loop_and_size_cap(loopback_server):
    port = loopback_server("127.0.0.3")
    loop = loopback_server("127.0.0.3", redirect_to=f"http://127.0.0.3:{port}/redirect")
    policy = EgressPolicy(allowed_hosts=("127.0.0.3",), max_redirects=2, max_bytes=1000)
    # the second server redirects to the first, which has no redirect target: fine
    assert request("GET", f"http://127.0.0.3:{loop}/redirect", policy=policy, follow_redirects=True).status_code == 200
    with pytest.raises(EgressError, match="larger than"):
        request("GET", f"http://127.0.0.3:{port}/big", policy=policy)


def test_api_request_component_blocks_loopback(loopback_server):
    port = loopback_server()
    comp = APIRequest.build(url_input=f"http://127.0.0.1:{port}/")
    with pytest.raises(Exception, match="blocked"):
        comp.make_api_request()
    allow = RunContext(egress=EgressPolicy(allowed_hosts=("127.0.0.1",)))
    comp = APIRequest({"url_input": f"http://127.0.0.1:{port}/x", "include_httpx_metadata": True}, context=allow)
    data = comp.make_api_request()
    assert data.data["ok"] is True and data.data["status_code"] == 200
    curl = APIRequest({"mode": "cURL", "curl_input": f"curl -H 'X-A: b' http://127.0.0.1:{port}/c"}, context=allow)
    assert curl.make_api_request().data["ok"] is True
