"""The accounts plugin's ``users`` section of ``service settings`` (core.settings_file): each account's
``username``, ``id``, ``is_active`` and ``is_superuser``, sorted by name; never a password or a key.

Applying matches accounts by ``username``: flags are updated (a deactivation ends the account's sessions, as
in the API); a missing account is created active-or-not as listed, with a random password nobody knows (it
signs in through SSO, or a superuser sets one); an account absent from the file is kept (deleting accounts
deletes their flows: that stays an explicit ``service users delete``)."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from typing import Any

import click
import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.auth import Actor
from service_accounts import services
from service_accounts.models import User

SETTINGS_ACTOR = Actor(id=uuid.UUID(int=0), username="settings-file", is_superuser=True, via="cli")


def export(s: Session) -> dict[str, Any]:
    fields = ("username", "id", "is_active", "is_superuser")
    users = s.scalars(sa.select(User).order_by(User.username))
    return {"users": [{k: getattr(u, k) if k != "id" else str(u.id) for k in fields} for u in users]}


def apply(s: Session, sections: Mapping[str, Any], dry_run: bool) -> list[str]:
    if "users" not in sections:
        return []
    items = sections["users"]
    named = isinstance(items, list) and all(isinstance(i, dict) and isinstance(i.get("username"), str) for i in items)
    if not named:
        raise click.ClickException("users: a list of objects, each with a 'username' string")
    lines = []
    for item in sorted(items, key=lambda i: i["username"]):
        name = item["username"].strip()
        flags = {k: bool(item.get(k, d)) for k, d in (("is_active", True), ("is_superuser", False))}
        user = services.user_by_name(s, name)
        if user is None:
            lines.append(f"users: add {name} ({', '.join(k for k, v in flags.items() if v) or 'inactive'})")
            if not dry_run:
                services.create_user(s, name, secrets.token_urlsafe(32), enforce_policy=False,
                                     is_active=flags["is_active"], is_superuser=flags["is_superuser"])  # fmt: skip
            continue
        changed = {k: v for k, v in flags.items() if bool(getattr(user, k)) != v}
        if changed:
            lines.append(f"users: change {name} ({', '.join(f'{k} {v}' for k, v in sorted(changed.items()))})")
            if not dry_run:
                services.update_user(s, SETTINGS_ACTOR, user.id, changed)
    return lines
