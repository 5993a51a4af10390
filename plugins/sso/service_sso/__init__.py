"""Single sign-on plugin: OpenID Connect sign-in (authorization code + PKCE), users created on first sign-in."""

__version__ = "0.1.0"
