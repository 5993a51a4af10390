"""``service secret-key rotate``: re-encrypt every stored variable, and every other plugin's stored secret
(hook ``reencrypt_secrets``), with a new secret key."""

from __future__ import annotations

import os
from pathlib import Path

import click
from flask.cli import with_appcontext

from core import appstate, db, secrets


@click.group("secret-key", help="Manage the secret key that encrypts stored secrets.")
def secret_key_group() -> None:
    pass


def _write_private(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)


@secret_key_group.command(
    "rotate",
    help=(
        "Re-encrypt every stored variable and every plugin's stored secrets (MCP server headers and environment, "
        "OAuth client secrets...) with a new key, in one transaction: if anything fails, nothing changes "
        "and the old key still reads every value. Stop the service first; afterwards set SERVICE_SECRET_KEY to the "
        "new key (when the key lives in the config directory, the file is replaced for you)."
    ),
)
@click.option(
    "--old-key",
    envvar="SERVICE_OLD_SECRET_KEY",
    default=None,
    help="The key the values are encrypted with now (default: the configured secret key).",
)
@click.option(
    "--new-key", envvar="SERVICE_NEW_SECRET_KEY", default=None, help="The new key (prompted for, hidden, when absent)."
)
@with_appcontext
def rotate_command(old_key: str | None, new_key: str | None) -> None:
    from service_variables import services

    settings = appstate.settings()
    old = old_key or secrets.secret_key(settings)
    new = new_key or click.prompt("New secret key", hide_input=True, confirmation_prompt=True)
    if not new.strip():
        raise click.ClickException("the new key must not be empty")
    if new == old:
        raise click.ClickException("the new key is the same as the old key")
    key_file = None if settings.secret_key else settings.resolved_config_dir / secrets.SECRET_FILE
    pending = key_file.with_name(key_file.name + ".new") if key_file else None
    if pending is not None:  # kept next to the old key until the database holds the new ciphertexts
        _write_private(pending, new)
    try:
        count = services.rotate(db.session(), old, new)
    except Exception as exc:
        if pending is not None:
            pending.unlink(missing_ok=True)
        raise click.ClickException(f"rotation failed, nothing was changed: {exc}") from None
    if pending is not None and key_file is not None:
        os.replace(pending, key_file)
        click.echo(f"re-encrypted {count} secret(s); the new key is stored in {key_file}")
    else:
        click.echo(
            f"re-encrypted {count} secret(s); now set SERVICE_SECRET_KEY to the new key and restart every process"
        )
