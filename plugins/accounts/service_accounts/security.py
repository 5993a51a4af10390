"""Password hashing, JWT settings and keys, API key material and cookies."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask import Flask, Response

from core.errors import StartupError
from core.secrets import read_or_create, secret_key
from core.settings import Settings
from service_accounts.sessions import AccountsConfig

#: Argon2id with OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): ~20 ms a hash here,
#: where argon2-cffi's defaults (64 MiB, 3 passes, 4 lanes) took ~350 ms on two busy cores.
_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
ACCESS_COOKIE = "access_token_svc"
REFRESH_COOKIE = "refresh_token_svc"
STORE_KEY_COOKIE = "apikey_tkn_svc"
API_KEY_PREFIX = "sk-"


def hash_password(password: str) -> str:
    return _hasher.hash(password)


_dummy_hash: str | None = None


def dummy_hash() -> str:
    """A hash of a random password, verified when the user is unknown so both paths cost the same."""
    global _dummy_hash
    if _dummy_hash is None:
        _dummy_hash = hash_password(secrets.token_urlsafe(16))
    return _dummy_hash


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def new_api_key() -> str:
    """``sk-`` followed by 43 url-safe characters (256 random bits), as the reference issues."""
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def same_secret(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def mask_api_key(prefix: str) -> str:
    return prefix + "*" * 8


# --- JWT configuration -------------------------------------------------------------------
def _rsa_keys(settings: AccountsConfig, config_dir: Path) -> tuple[str, str]:
    """The RSA key pair: given in settings, or generated once (2048 bits) and kept in the config dir."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private_pem = settings.private_key
    if not private_pem:

        def make() -> str:
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            return key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ).decode()

        private_pem = read_or_create(config_dir / "private_key.pem", make)
    private_pem = private_pem.replace("\\n", "\n")  # PEMs pasted into .env files often carry escaped newlines
    try:
        private = serialization.load_pem_private_key(private_pem.encode(), password=None)
    except (ValueError, TypeError):
        raise StartupError("SERVICE_PRIVATE_KEY: not an unencrypted PEM private key") from None
    if not isinstance(private, rsa.RSAPrivateKey):
        raise StartupError(f"SERVICE_PRIVATE_KEY: {settings.algorithm} needs an RSA key")
    derived = private.public_key()
    if settings.public_key:
        public_pem = settings.public_key.replace("\\n", "\n")
        try:
            given = serialization.load_pem_public_key(public_pem.encode())
        except (ValueError, TypeError):
            raise StartupError("SERVICE_PUBLIC_KEY: not a PEM public key") from None
        if not isinstance(given, rsa.RSAPublicKey) or given.public_numbers() != derived.public_numbers():
            raise StartupError("SERVICE_PUBLIC_KEY does not belong to the private key (tokens could not be verified)")
        return private_pem, public_pem
    derived_pem = derived.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_pem, derived_pem.decode()


def configure_jwt(app: Flask, core: Settings, settings: AccountsConfig) -> None:
    """Configure Flask-JWT-Extended from the ``SERVICE_*`` settings."""
    from flask_jwt_extended import JWTManager

    config: dict[str, Any] = {
        "JWT_ALGORITHM": settings.algorithm,
        "JWT_DECODE_ALGORITHMS": [settings.algorithm],
        "JWT_ACCESS_TOKEN_EXPIRES": dt.timedelta(seconds=settings.access_token_expire_seconds),
        "JWT_REFRESH_TOKEN_EXPIRES": dt.timedelta(seconds=settings.refresh_token_expire_seconds),
        "JWT_TOKEN_LOCATION": ["headers", "cookies"],
        "JWT_ACCESS_COOKIE_NAME": ACCESS_COOKIE,
        "JWT_REFRESH_COOKIE_NAME": REFRESH_COOKIE,
        "JWT_COOKIE_CSRF_PROTECT": False,
        "JWT_IDENTITY_CLAIM": "sub",
    }
    if settings.algorithm == "HS256":
        config["JWT_SECRET_KEY"] = secret_key(core)
    else:
        private_pem, public_pem = _rsa_keys(settings, core.resolved_config_dir)
        config["JWT_PRIVATE_KEY"] = private_pem
        config["JWT_PUBLIC_KEY"] = public_pem
    app.config.update(config)
    JWTManager(app)


def make_tokens(user_id: str, version: int, sid: str, refresh_jti: str | None = None) -> dict[str, str]:
    """An access and a refresh token of session ``sid`` at the user's token ``version`` (see ``sessions``);
    ``refresh_jti``: the refresh token's id when rotation chose it (``services.rotate_refresh``)."""
    from flask_jwt_extended import create_access_token, create_refresh_token

    claims: dict[str, Any] = {"ver": version, "sid": sid}
    refresh_claims = {**claims, "jti": refresh_jti} if refresh_jti else claims
    return {
        "access_token": create_access_token(identity=user_id, additional_claims=claims),
        "refresh_token": create_refresh_token(identity=user_id, additional_claims=refresh_claims),
        "token_type": "bearer",
    }


# --- cookies --------------------------------------------------------------------------------
def _same_site(value: str) -> str:
    return {"lax": "Lax", "strict": "Strict", "none": "None"}[value]


def cookie_options(settings: AccountsConfig, which: str) -> dict[str, Any]:
    """The attributes of one cookie, each from its own ``SERVICE_<WHICH>_*`` variables.

    ``SameSite=None`` is only honoured by browsers together with ``Secure``,
    so ``none`` implies the secure flag.
    """
    same_site = getattr(settings, f"{which}_same_site")
    return {
        "secure": getattr(settings, f"{which}_secure") or same_site == "none",
        "httponly": getattr(settings, f"{which}_httponly"),
        "samesite": _same_site(same_site),
        "domain": settings.cookie_domain,
        "path": "/",
    }


def set_auth_cookies(
    response: Response, settings: AccountsConfig, tokens: dict[str, str], *, session_access_cookie: bool = False
) -> None:
    access_age = None if session_access_cookie else settings.access_token_expire_seconds
    response.set_cookie(ACCESS_COOKIE, tokens["access_token"], max_age=access_age, **cookie_options(settings, "access"))
    response.set_cookie(
        REFRESH_COOKIE,
        tokens["refresh_token"],
        max_age=settings.refresh_token_expire_seconds,
        **cookie_options(settings, "refresh"),
    )


def delete_auth_cookies(response: Response, settings: AccountsConfig) -> None:
    """Expire the cookies with the attributes they were set with (or browsers keep them)."""
    for name, which in ((ACCESS_COOKIE, "access"), (REFRESH_COOKIE, "refresh"), (STORE_KEY_COOKIE, "access")):
        opts = cookie_options(settings, which)
        response.delete_cookie(
            name,
            path=opts["path"],
            domain=opts["domain"],
            secure=opts["secure"],
            httponly=opts["httponly"],
            samesite=opts["samesite"],
        )
