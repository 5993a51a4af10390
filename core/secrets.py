"""The service's secret key and the symmetric encryption derived from it.

``SERVICE_SECRET_KEY`` signs HS256 tokens and keys the encryption of stored
secrets. When unset, a random key is generated once and persisted (mode 0600)
in the config directory, so every process and restart shares it. The Fernet
key is derived from the secret with HKDF-SHA256 (any length works; nothing is
padded or truncated), or used as-is when it already is a Fernet key.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets as _secrets
from collections.abc import Callable
from pathlib import Path

from cryptography.fernet import Fernet, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from core.settings import Settings

SECRET_FILE = "secret_key"  # noqa: S105 - a file name, not a secret


def read_or_create(path: Path, make: Callable[[], str]) -> str:
    """Read ``path``, or create it atomically with ``make()`` (mode 0600) if absent."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    value = make()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race: use its value
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value


def secret_key(settings: Settings) -> str:
    if settings.secret_key:
        return settings.secret_key
    return read_or_create(settings.resolved_config_dir / SECRET_FILE, lambda: _secrets.token_urlsafe(48))


def fernet_key(secret: str) -> bytes:
    """A Fernet key for ``secret``: itself if it is one, else HKDF-SHA256 of it."""
    try:
        if len(base64.urlsafe_b64decode(secret.encode())) == 32 and len(secret) == 44:
            return secret.encode()
    except (binascii.Error, ValueError):
        pass
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"service-secrets-v1").derive(secret.encode())
    return base64.urlsafe_b64encode(raw)


def fernet(settings: Settings, *older: str) -> MultiFernet:
    """Encrypt with the current key; decrypt with it or any of ``older`` (rotation)."""
    keys = [Fernet(fernet_key(secret_key(settings)))] + [Fernet(fernet_key(s)) for s in older]
    return MultiFernet(keys)
