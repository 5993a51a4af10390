"""The OpenID Connect relying party: discovery, the authorization request, the code exchange and the
ID token check.

Protocol pieces come from Authlib (PKCE's S256 challenge, random tokens, the OpenID ``CodeIDToken``
claim rules: ``iss``, ``aud``, ``exp``/``iat`` with leeway, ``nonce``, ``azp``, ``at_hash``) and its
JOSE library joserfc (signature against the provider's published keys). Authlib's own HTTP clients
(requests/httpx sessions) are not used: every call to the provider (discovery, keys, token, user
info) goes through the core egress helper (:func:`core.engine.egress.request`), which pins the
checked address and caps sizes and times. The provider is a deployment setting, not a user's input,
so the discovery URL's host (and ``SERVICE_SSO_ALLOWED_HOSTS``) are the egress policy's allowed hosts:
an identity provider on the company network works, while any other host the discovery document
might name is held to the public-address rule.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from core.engine.egress import EgressError, EgressPolicy, request
from service_sso.config import SsoConfig

#: signature algorithms accepted on ID tokens (never ``none``; no HMAC with the client secret)
SAFE_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
TIMEOUT = 10.0
WELL_KNOWN = "/.well-known/openid-configuration"


class SsoError(Exception):
    """A sign-in that cannot go on; ``code`` is what the browser is told (``?sso_error=<code>``)."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(detail or code)
        self.code = code


def new_secret() -> str:
    """A random state, nonce or PKCE verifier (48 characters of Authlib's unreserved alphabet)."""
    return str(generate_token(48))


def discovery_url(cfg: SsoConfig) -> str:
    url = (cfg.discovery_url or "").strip()
    return url if url.endswith(WELL_KNOWN) else url.rstrip("/") + WELL_KNOWN


def policy(cfg: SsoConfig) -> EgressPolicy:
    hosts = [urlsplit(discovery_url(cfg)).hostname or ""]
    hosts += [h.strip() for h in cfg.allowed_hosts.split(",") if h.strip()]
    return EgressPolicy(allowed_hosts=tuple(h for h in hosts if h), timeout=TIMEOUT, max_bytes=1024 * 1024)


def _json(method: str, url: str, cfg: SsoConfig, **kwargs: Any) -> dict[str, Any]:
    try:
        answer = request(method, url, policy=policy(cfg), **kwargs)
    except EgressError as exc:
        raise SsoError("provider_unreachable", str(exc)) from None
    try:
        body = json.loads(answer.content or b"null")
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise SsoError("provider_error", f"{url} answered {answer.status_code} without a JSON object")
    if answer.status_code >= 400:
        raise SsoError("provider_error", f"{url} answered {answer.status_code}: {body.get('error', '')}")
    return body


class _Cache:
    """The provider's discovery document and keys, per process, reused for ``metadata_cache_seconds``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: dict[str, tuple[float, dict[str, Any]]] = {}

    def get(self, key: str, max_age: float, load: Any, *, fresh: bool = False) -> dict[str, Any]:
        with self.lock:
            found = self.entries.get(key)
        if found is not None and not fresh and time.monotonic() - found[0] < max_age:
            return found[1]
        value: dict[str, Any] = load()
        with self.lock:
            self.entries[key] = (time.monotonic(), value)
        return value

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


CACHE = _Cache()


def metadata(cfg: SsoConfig) -> dict[str, Any]:
    """The provider's discovery document (checked for the members a code flow needs)."""
    url = discovery_url(cfg)

    def load() -> dict[str, Any]:
        doc = _json("GET", url, cfg, headers={"Accept": "application/json"})
        for member in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(doc.get(member), str) or not doc[member]:
                raise SsoError("provider_error", f"the discovery document has no {member}")
        return doc

    return CACHE.get(f"meta:{url}", cfg.metadata_cache_seconds, load)


def keys(cfg: SsoConfig, *, fresh: bool = False) -> KeySet:
    uri = str(metadata(cfg)["jwks_uri"])
    doc = CACHE.get(f"jwks:{uri}", cfg.metadata_cache_seconds, lambda: _json("GET", uri, cfg), fresh=fresh)
    try:
        return KeySet.import_key_set(doc)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError):
        raise SsoError("provider_error", "the provider's keys could not be read") from None


def authorization_url(cfg: SsoConfig, redirect_uri: str, state: str, nonce: str, verifier: str) -> str:
    meta = metadata(cfg)
    params = {
        "response_type": "code",
        "client_id": cfg.client_id,
        "redirect_uri": redirect_uri,
        "scope": cfg.scopes,
        "state": state,
        "nonce": nonce,
        "code_challenge": create_s256_code_challenge(verifier),
        "code_challenge_method": "S256",
    }
    endpoint = str(meta["authorization_endpoint"])
    return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)


def exchange(cfg: SsoConfig, code: str, redirect_uri: str, verifier: str) -> dict[str, Any]:
    """Trade the authorization code (and the PKCE verifier) for tokens at the token endpoint."""
    meta = metadata(cfg)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier}
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    methods = meta.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if "client_secret_basic" in methods:
        pair = f"{_form_quote(cfg.client_id or '')}:{_form_quote(cfg.client_secret or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form.update(client_id=cfg.client_id or "", client_secret=cfg.client_secret or "")
    tokens = _json("POST", str(meta["token_endpoint"]), cfg, headers=headers, body=urlencode(form))
    if not isinstance(tokens.get("id_token"), str):
        raise SsoError("provider_error", "the token response has no ID token")
    return tokens


def _form_quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")  # RFC 6749 2.3.1: client credentials are form-encoded before Basic


def validate_id_token(cfg: SsoConfig, id_token: str, nonce: str, access_token: str | None) -> dict[str, Any]:
    """The ID token's claims once its signature (the provider's keys), issuer, audience, times and
    nonce are checked; :class:`SsoError` ``invalid_id_token`` otherwise."""
    meta = metadata(cfg)
    offered = meta.get("id_token_signing_alg_values_supported") or ["RS256"]
    algorithms = [a for a in offered if a in SAFE_ALGORITHMS] or ["RS256"]
    try:
        try:
            token = jwt.decode(id_token, keys(cfg), algorithms=algorithms)
        except JoseError:  # maybe the provider rotated its keys since we fetched them: once more
            token = jwt.decode(id_token, keys(cfg, fresh=True), algorithms=algorithms)
        claims = CodeIDToken(
            token.claims,
            token.header,
            options={
                "iss": {"essential": True, "value": str(meta["issuer"])},
                "aud": {"essential": True, "value": cfg.client_id},
            },
            params={"nonce": nonce, "client_id": cfg.client_id, "access_token": access_token},
        )
        claims.validate(leeway=cfg.leeway_seconds)
    except (JoseError, ValueError, KeyError, TypeError) as exc:
        raise SsoError("invalid_id_token", type(exc).__name__) from None
    return dict(claims)


def userinfo(cfg: SsoConfig, access_token: str) -> dict[str, Any]:
    """The user info endpoint's claims (empty when the provider has none)."""
    endpoint = metadata(cfg).get("userinfo_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return {}
    return _json(
        "GET", endpoint, cfg, headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
    )


def end_session_url(cfg: SsoConfig, id_token_hint: str | None) -> str | None:
    """The provider's sign-out URL (RP-initiated logout), when its discovery document offers one."""
    try:
        endpoint = metadata(cfg).get("end_session_endpoint")
    except SsoError:
        return None
    if not isinstance(endpoint, str) or not endpoint:
        return None
    params = {"client_id": cfg.client_id or ""}
    if id_token_hint:
        params["id_token_hint"] = id_token_hint
    if cfg.post_logout_redirect_uri:
        params["post_logout_redirect_uri"] = cfg.post_logout_redirect_uri
    return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
