"""``auth_type: oauth`` projects: the server is an OAuth resource server. Callers are admitted with the
owner's credentials or a token the project's authorization server vouches for (RFC 7662 introspection,
found through its RFC 8414 metadata); refusals are 401 pointing at the RFC 9728 metadata.

The authorization server is a small real HTTP server started by the test (like tests/openai_server.py
for the LLM tests): metadata, and an introspection endpoint that checks the client's credentials."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from tests.mcp.conftest import PLUGINS
from tests.mcp.mcpkit import project_with_tools, rpc, sse_messages

CLIENT_ID, CLIENT_SECRET = "mcp-client", "client-secret-value"


class AuthorizationServer:
    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.tokens: dict[str, dict] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                if self.path == "/.well-known/oauth-authorization-server":
                    self._send(
                        200,
                        {
                            "issuer": outer.base,
                            "token_endpoint": f"{outer.base}/token",
                            "introspection_endpoint": f"{outer.base}/introspect",
                        },
                    )
                else:
                    self._send(404, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                outer.seen.append({"authorization": self.headers.get("Authorization", ""), **form})
                expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                if self.path != "/introspect" or self.headers.get("Authorization") != expected:
                    self._send(401, {"error": "invalid_client"})
                    return
                self._send(200, outer.tokens.get(form.get("token", ""), {"active": False}))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def auth_server():
    server = AuthorizationServer()
    yield server
    server.stop()


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS, ssrf_allowed_hosts=("127.0.0.1",))


def _oauth_project(client, caller, auth_server) -> dict:
    made = project_with_tools(client, caller, "apikey")
    auth = {
        "auth_type": "oauth",
        "oauth_server_url": auth_server.base,
        "oauth_client_id": CLIENT_ID,
        "oauth_client_secret": CLIENT_SECRET,
        "oauth_mcp_scope": "mcp",
    }
    pid = made["project"]["id"]
    patched = client.patch(
        f"/api/v1/mcp/project/{pid}", json={"settings": [], "auth_settings": auth}, headers=caller.bearer
    )
    assert patched.status_code == 200 and "error_message" not in patched.get_json()
    return made


def test_oauth_admission(client, alice, bob, auth_server):
    made = _oauth_project(client, alice, auth_server)
    pid = made["project"]["id"]
    path = f"/api/v1/mcp/project/{pid}/streamable"
    now = time.time()
    auth_server.tokens.update(
        {
            "good": {"active": True, "scope": "mcp profile", "exp": now + 300, "client_id": CLIENT_ID},
            "for-us": {"active": True, "scope": "mcp", "aud": f"http://localhost{path}"},
            "no-scope": {"active": True, "scope": "profile"},
            "expired": {"active": True, "scope": "mcp", "exp": now - 5},
            "elsewhere": {"active": True, "scope": "mcp", "aud": "https://other.example/mcp"},
        }
    )
    metadata = f"http://localhost/.well-known/oauth-protected-resource{path}"
    # no credentials: 401 pointing at the protected resource metadata, which names the authorization server
    none = rpc(client, path, "tools/list", {})
    assert none.status_code == 401
    assert none.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata}"'
    doc = client.get(metadata.removeprefix("http://localhost"))
    assert doc.status_code == 200 and doc.get_json() == {
        "resource": f"http://localhost{path}",
        "authorization_servers": [auth_server.base],
        "scopes_supported": ["mcp"],
        "bearer_methods_supported": ["header"],
    }
    # a token the authorization server vouches for: admitted, the tools run as the owner
    for token in ("good", "for-us"):
        listed = rpc(client, path, "tools/list", {}, {"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200, (token, listed.data)
    called = rpc(
        client,
        path,
        "tools/call",
        {"name": "echo_one", "arguments": {"input_value": "oauth"}},
        {"Authorization": "Bearer good"},
    )
    assert sse_messages(called.data)[-1]["result"]["content"][0]["text"] == "oauth"
    # introspection used the project's client credentials (the secret decrypted for that request only)
    assert auth_server.seen and auth_server.seen[0]["token"] == "good"
    assert auth_server.seen[0]["authorization"].startswith("Basic ")
    # refused tokens: 401 invalid_token, saying why
    for token, why in (
        ("unknown", "not active"),
        ("no-scope", "lacks the scope mcp"),
        ("expired", "expired"),
        ("elsewhere", "another audience"),
    ):
        refused = rpc(client, path, "tools/list", {}, {"Authorization": f"Bearer {token}"})
        assert refused.status_code == 401, token
        challenge = refused.headers["WWW-Authenticate"]
        assert (
            'error="invalid_token"' in challenge and why in challenge and f'resource_metadata="{metadata}"' in challenge
        )
    # the owner's own credentials still work; another user's are a 404 as for any foreign project
    assert rpc(client, path, "tools/list", {}, {"x-api-key": alice.api_key}).status_code == 200
    assert rpc(client, path, "tools/list", {}, alice.bearer).status_code == 200
    assert rpc(client, path, "tools/list", {}, {"x-api-key": bob.api_key}).status_code == 404
    # the legacy SSE transport is admitted the same way
    assert client.get(f"/api/v1/mcp/project/{pid}/sse").status_code == 401


def test_metadata_only_for_oauth_projects_and_ssrf_rules_apply(make_app, auth_server):
    from tests.conftest import make_user, superuser

    app = make_app(plugins=PLUGINS)  # no allowed hosts: the authorization server on loopback is private
    client = app.test_client()
    owner = make_user(client, superuser(client))
    keyed = project_with_tools(client, owner, "apikey", names=("Solo",))
    kid = keyed["project"]["id"]
    assert client.get(f"/.well-known/oauth-protected-resource/api/v1/mcp/project/{kid}/streamable").status_code == 404
    made = _oauth_project(client, owner, auth_server)
    auth_server.tokens["good"] = {"active": True, "scope": "mcp"}
    path = f"/api/v1/mcp/project/{made['project']['id']}/streamable"
    refused = rpc(client, path, "tools/list", {}, {"Authorization": "Bearer good"})
    assert refused.status_code == 401 and "publishes no metadata" in refused.headers["WWW-Authenticate"]
    assert auth_server.seen == []  # nothing reached the private address
