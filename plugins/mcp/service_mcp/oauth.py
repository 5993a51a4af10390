"""OAuth admission to a project's MCP server (``auth_type: oauth``), as MCP's authorization spec has it:
the server is an OAuth 2.1 *resource server*; it does not issue tokens.

* Protected Resource Metadata (RFC 9728) at ``/.well-known/oauth-protected-resource<server path>``
  names the project's authorization server (``oauth_server_url``, its issuer) and scope
  (``oauth_mcp_scope``); a refused request's 401 points at it (``WWW-Authenticate: Bearer
  resource_metadata="..."``), which is how MCP clients find where to get a token.
* A bearer token that is not one of this service's own credentials is checked with the
  authorization server's token introspection (RFC 7662): the endpoint from its metadata (RFC 8414
  ``/.well-known/oauth-authorization-server``, else ``/.well-known/openid-configuration``), called
  with the project's ``oauth_client_id`` / client secret (HTTP Basic). Admitted when the answer is
  ``active``, not expired, carries every scope of ``oauth_mcp_scope`` (when set), and, when it names
  an audience (``aud``), names this server's URL or the client id. Any other answer, or an
  unreachable server, is a 401 ``invalid_token``.
* Every outbound request goes through the core egress helper (SSRF rules, ``SERVICE_SSRF_*``).
  Metadata is cached 5 minutes, an introspection verdict until the token expires, at most 60 s.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

from cryptography.fernet import InvalidToken

from core import appstate, db, secrets
from core.engine.egress import EgressError, EgressPolicy, request
from service_mcp.models import ProjectSecret

METADATA_TTL = 300.0
VERDICT_TTL = 60.0
TIMEOUT = 10.0
_lock = threading.Lock()
_metadata: dict[str, tuple[float, dict[str, Any]]] = {}
_verdicts: dict[str, tuple[float, bool]] = {}
_MAX = 10_000


class Refused(Exception):
    """The token is not admitted (the message says why, for the 401's ``error_description``)."""


def _policy() -> EgressPolicy:
    settings = appstate.settings()
    return EgressPolicy.from_settings(settings.ssrf_protection_enabled, settings.ssrf_allowed_hosts, timeout=TIMEOUT)


def client_secret(project_id: str) -> str | None:
    """The project's OAuth client secret, decrypted (only ever sent to its authorization server)."""
    import uuid

    try:
        row = db.session().get(ProjectSecret, uuid.UUID(project_id))
    except ValueError:
        return None
    if row is None:
        return None
    try:
        return secrets.fernet(appstate.settings()).decrypt(row.oauth_client_secret.encode()).decode()
    except InvalidToken:
        return None


def issuer(auth: dict[str, Any]) -> str | None:
    """The project's authorization server: ``oauth_server_url``, else the origin of its token/auth URL."""
    if auth.get("oauth_server_url"):
        return str(auth["oauth_server_url"]).rstrip("/")
    for key in ("oauth_token_url", "oauth_auth_url"):
        if auth.get(key):
            parts = urlsplit(str(auth[key]))
            if parts.scheme and parts.netloc:
                return f"{parts.scheme}://{parts.netloc}"
    return None


def scopes(auth: dict[str, Any]) -> list[str]:
    return [s for s in str(auth.get("oauth_mcp_scope") or "").replace(",", " ").split() if s]


def resource_metadata(auth: dict[str, Any], resource: str) -> dict[str, Any]:
    """The RFC 9728 document of a project server at ``resource``."""
    out: dict[str, Any] = {"resource": resource, "bearer_methods_supported": ["header"]}
    found = issuer(auth)
    if found:
        out["authorization_servers"] = [found]
    if scopes(auth):
        out["scopes_supported"] = scopes(auth)
    return out


def _well_known(base: str, name: str) -> str:
    """RFC 8414 section 3: the well-known segment goes between the origin and the issuer's path."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}/.well-known/{name}{path}"


def server_metadata(base: str) -> dict[str, Any]:
    now = time.monotonic()
    with _lock:
        hit = _metadata.get(base)
    if hit is not None and now - hit[0] < METADATA_TTL:
        return hit[1]
    found: dict[str, Any] | None = None
    for name in ("oauth-authorization-server", "openid-configuration"):
        try:
            answer = request("GET", _well_known(base, name), policy=_policy(), headers={"Accept": "application/json"})
        except EgressError:
            continue
        if answer.status_code == 200:
            try:
                doc = json.loads(answer.content)
            except ValueError:
                continue
            if isinstance(doc, dict):
                found = doc
                break
    if found is None:
        raise Refused("the project's authorization server publishes no metadata")
    with _lock:
        if len(_metadata) >= _MAX:
            _metadata.clear()
        _metadata[base] = (now, found)
    return found


def admit(project_id: str, auth: dict[str, Any], client_secret: str | None, token: str, resources: list[str]) -> None:
    """Return when the authorization server vouches for ``token`` on this project; raise :class:`Refused`."""
    key = hashlib.sha256(f"{project_id}\0{json.dumps(auth, sort_keys=True)}\0{token}".encode()).hexdigest()
    now = time.time()
    with _lock:
        hit = _verdicts.get(key)
    if hit is not None and hit[0] > now:
        if hit[1]:
            return
        raise Refused("the token is not active")
    base = issuer(auth)
    if base is None:
        raise Refused("the project has no authorization server (oauth_server_url)")
    endpoint = server_metadata(base).get("introspection_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise Refused("the project's authorization server offers no token introspection")
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    client_id = str(auth.get("oauth_client_id") or "")
    if client_id:
        pair = f"{client_id}:{client_secret or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    body = urlencode({"token": token, "token_type_hint": "access_token"})
    try:
        answer = request("POST", endpoint, policy=_policy(), headers=headers, body=body)
        info = json.loads(answer.content) if answer.status_code == 200 else None
    except (EgressError, ValueError):
        info = None
    if not isinstance(info, dict):
        raise Refused("the authorization server did not answer the introspection")
    verdict, why = _judge(info, auth, client_id, resources, now)
    exp = info.get("exp")
    until = min(now + VERDICT_TTL, float(exp)) if isinstance(exp, (int, float)) else now + VERDICT_TTL
    with _lock:
        if len(_verdicts) >= _MAX:
            _verdicts.clear()
        _verdicts[key] = (until, verdict)
    if not verdict:
        raise Refused(why)


def _judge(
    info: dict[str, Any], auth: dict[str, Any], client_id: str, resources: list[str], now: float
) -> tuple[bool, str]:
    if info.get("active") is not True:
        return False, "the token is not active"
    exp = info.get("exp")
    if isinstance(exp, (int, float)) and exp <= now:
        return False, "the token has expired"
    granted = set(str(info.get("scope") or "").split())
    missing = [s for s in scopes(auth) if s not in granted]
    if missing:
        return False, f"the token lacks the scope {' '.join(missing)}"
    aud = info.get("aud")
    if aud is not None:
        audiences = {str(a).rstrip("/") for a in (aud if isinstance(aud, list) else [aud])}
        accepted = {r.rstrip("/") for r in resources} | ({client_id} if client_id else set())
        if not audiences & accepted:
            return False, "the token is for another audience"
    return True, ""
