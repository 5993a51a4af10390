"""Settings of the SSO plugin (``SERVICE_SSO_<FIELD>``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class SsoConfig:
    """Single sign-on with one OpenID Connect provider (read with ``appstate.settings_of(SsoConfig)``)."""

    enabled: bool = False
    #: the provider's discovery document (``.../.well-known/openid-configuration``) or its issuer URL
    discovery_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    #: where the provider sends the browser back; default ``<this server>/api/v1/sso/oidc/callback``
    redirect_uri: str | None = None
    scopes: str = "openid email profile"
    #: the label of the sign-in button
    display_name: str = "Single sign-on"
    username_claim: str = "preferred_username"
    email_claim: str = "email"
    name_claim: str = "name"
    #: a claim listing the person's groups: each group is a team of the same name (teams plugin)
    groups_claim: str = "groups"
    #: members of this group are superusers, others are not (unset: the flag is left as it is)
    admin_group: str | None = None
    #: local passwords off: only the break-glass superuser signs in with a password, and no sign-up
    only: bool = False
    #: the one superuser who keeps a password in SSO-only mode (unset: any superuser)
    break_glass_user: str | None = None
    #: where the provider sends the browser after its own sign-out (must be registered there)
    post_logout_redirect_uri: str | None = None
    #: clock skew tolerated on ``exp``/``iat`` of ID tokens
    leeway_seconds: int = 60
    #: how long a started sign-in (state, nonce, PKCE verifier) stays valid
    pending_seconds: int = 600
    #: how long the discovery document and the provider's keys are reused before being fetched again
    metadata_cache_seconds: int = 300
    #: further hosts (besides the discovery URL's) the provider's endpoints may be on
    allowed_hosts: str = ""
    #: the browser's path after a sign-in (when the sign-in named none) and on errors (``?sso_error=``)
    home_path: str = "/"
    login_path: str = "/login"

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "leeway_seconds": (0, 600),
        "pending_seconds": (30, 3600),
        "metadata_cache_seconds": (0, None),
    }

    def summary(self) -> str:
        if not self.enabled:
            return "sso: off"
        mode = "SSO only (break-glass superuser keeps a password)" if self.only else "SSO and passwords"
        return f"sso: OpenID Connect via {self.discovery_url}; {mode}"
