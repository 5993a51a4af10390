"""A real OpenID Connect provider for the SSO tests: ``oidc-provider`` (npm, OpenID-certified) run by Node.

Installed by ``.ci/run`` from ``tests/sso/provider/package-lock.json`` (``npm ci``); without node or the
package the tests skip and say how to install it. ``provider.mjs`` is the provider's start script (the
sign-in form oidc-provider leaves to its host, and a switch that makes the next ID token a bad one).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests

HERE = Path(__file__).parent / "provider"
PACKAGE = HERE / "node_modules" / "oidc-provider" / "package.json"
CLIENT_ID = "service-editor"
CLIENT_SECRET = "a-long-client-secret-for-the-tests-0123456789"
CALLBACK = "http://localhost/api/v1/sso/oidc/callback"
AFTER_LOGOUT = "http://localhost/login"
STRONG = "Another-strong-passphrase-42"
SECRET = "test-secret-key-that-is-long-enough-for-hs256-0123456789"

ACCOUNTS = {
    "alice": {
        "email": "alice@example.com",
        "name": "Alice Admin",
        "preferred_username": "alice",
        "groups": ["eng", "svc-admins"],
    },
    "bob": {
        "email": "bob@example.com",
        "name": "Bob Builder",
        "preferred_username": "bob",
        "groups": ["eng", "support"],
    },
    "carol": {"email": "carol@example.com", "name": "Carol", "preferred_username": "carol", "groups": []},
    "dave": {"email": "dave@example.com", "name": "Dave Support", "preferred_username": "dave", "groups": ["support"]},
    "admin": {"email": "impostor@example.com", "name": "Not the superuser", "preferred_username": "admin"},
}


@dataclass
class Provider:
    issuer: str

    def next_id_token(self, mode: str) -> None:
        """Make the next token response carry a bad ID token (``expired``, ``badsig``, ``nonce``, ``iss``)."""
        answer = requests.post(f"{self.issuer}/__test/next_id_token", params={"mode": mode}, timeout=10)
        assert answer.status_code == 200, answer.text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def start_provider(config: dict[str, Any], directory: Path, port: int | None = None) -> Iterator[Provider]:
    """Run ``provider.mjs`` with this client/accounts config; skip when node or the package is missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the SSO tests need Node.js 20+")
    if not PACKAGE.exists():
        pytest.skip("npm package oidc-provider is not installed: run `npm ci` in tests/sso/provider")
    path = directory / "provider.json"
    path.write_text(json.dumps({"accounts": ACCOUNTS, **config}))
    proc = subprocess.Popen(
        [node, str(HERE / "provider.mjs"), str(port or free_port()), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY "), f"the provider did not start: {line!r}"
        yield Provider(issuer=line.split()[1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    config = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uris": [CALLBACK],
        "post_logout_redirect_uris": [AFTER_LOGOUT],
    }
    with start_provider(config, tmp_path_factory.mktemp("oidc")) as provider:
        yield provider


def sso_settings(provider: Provider, **extra: Any) -> dict[str, Any]:
    return {
        "auto_login": False,
        "superuser": "admin",
        "superuser_password": STRONG,
        "secret_key": SECRET,
        "sso_enabled": True,
        "sso_discovery_url": provider.issuer,
        "sso_client_id": CLIENT_ID,
        "sso_client_secret": CLIENT_SECRET,
        "sso_scopes": "openid email profile groups",
        "sso_admin_group": "svc-admins",
        "sso_post_logout_redirect_uri": AFTER_LOGOUT,
        **extra,
    }


@pytest.fixture
def sso_app(make_app: Any, oidc_provider: Provider) -> Any:
    from service_sso import oidc

    oidc.CACHE.clear()
    return make_app(**sso_settings(oidc_provider))


def provider_callback(client: Any, provider: Provider, login: str, *, next_path: str | None = None) -> str:
    """Start a sign-in on the service and sign ``login`` in at the provider, as a browser would; the
    URL the provider sends the browser back to (the service's callback, not yet visited)."""
    started = client.get("/api/v1/sso/oidc/login" + (f"?next={next_path}" if next_path else ""))
    assert started.status_code == 302, started.get_data(as_text=True)
    browser = requests.Session()
    to_interaction = browser.get(started.location, allow_redirects=False, timeout=10)
    assert to_interaction.status_code in (302, 303), to_interaction.text
    page = browser.get(urljoin(provider.issuer, to_interaction.headers["location"]), timeout=10)
    action = re.search(r'action="([^"]+)"', page.text)
    assert action, page.text
    signed = browser.post(
        urljoin(provider.issuer, action.group(1)), data={"login": login}, allow_redirects=False, timeout=10
    )
    assert signed.status_code in (302, 303), signed.text
    back = browser.get(urljoin(provider.issuer, signed.headers["location"]), allow_redirects=False, timeout=10)
    assert back.status_code in (302, 303), back.text
    location: str = back.headers["location"]
    assert location.startswith(CALLBACK), location
    return location


def visit(client: Any, url: str) -> Any:
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}")


def sign_in(client: Any, provider: Provider, login: str) -> Any:
    return visit(client, provider_callback(client, provider, login))
