"""Hooks the variables plugin publishes (docs/hooks.md).

The variables plugin calls them from ``service secret-key rotate``; a plugin that keeps secrets of
its own (the MCP plugin) answers with ``@hookimpl(optionalhook=True)`` (the variables plugin may be
absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cryptography.fernet import MultiFernet

__all__ = ["reencrypt_secrets"]


@hookspec
def reencrypt_secrets(cipher: MultiFernet) -> int | None:
    """Re-encrypt this plugin's stored secrets under a rotated secret key; return how many tokens.

    Called by ``service secret-key rotate`` inside its one transaction (``core.db.session()``),
    after the variables: ``cipher`` is a ``MultiFernet`` whose first key is the new one and which
    also reads the old one, so ``cipher.rotate(token)`` gives each token under the new key (a token
    already under it is kept readable). Update the rows in that session and do not commit; raise
    to roll back the whole rotation (a token no key reads: nothing is changed anywhere).
    """
