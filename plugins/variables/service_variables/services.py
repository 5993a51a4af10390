"""Variable logic: encryption at rest, owner scoping, lookups by name, key rotation.

Values are Fernet tokens (AES-128-CBC + HMAC-SHA256) under a key derived from
``SERVICE_SECRET_KEY`` with HKDF (:func:`core.secrets.fernet`). Credential
values never leave the service through the API; Generic values are shown to
their owner, as the reference does.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core import appstate, audit, db, secrets
from core.auth import Actor, can, check_access, shared_rows
from core.contracts import ResourceRef
from core.errors import ApiError
from service_variables import hookspecs
from service_variables.models import Variable

log = logging.getLogger(__name__)
CREDENTIAL, GENERIC = "Credential", "Generic"
NOT_FOUND = "Variable not found"
DUPLICATE = "Variable name already exists"


def _cipher() -> MultiFernet:
    return secrets.fernet(appstate.settings())


def encrypt(value: str) -> str:
    return _cipher().encrypt(value.encode()).decode()


def decrypt(token: str) -> str | None:
    """The clear value, or None (logged) when the token is not readable with the current key."""
    try:
        return _cipher().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        log.warning("a stored variable cannot be decrypted with the current secret key")
        return None


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    return value.replace(tzinfo=dt.UTC) if value is not None and value.tzinfo is None else value


def variable_out(variable: Variable) -> dict[str, Any]:
    clear = decrypt(variable.value) if variable.type == GENERIC else None
    return {
        "id": variable.id,
        "name": variable.name,
        "type": variable.type,
        "value": clear,
        "has_value": bool(variable.value),
        "default_fields": variable.default_fields,
        "is_owner": True,
        "can_manage_shares": False,
        "validation_error": None,
        "is_valid": True,
        "created_at": _aware(variable.created_at),
        "updated_at": _aware(variable.updated_at),
    }


def variable_ref(variable: Variable) -> ResourceRef:
    """The :class:`ResourceRef` a share names (``resource_type: variable``, the variable's id)."""
    return ResourceRef("variable", str(variable.id), str(variable.user_id), None)


def shared_out(actor: Actor, variable: Variable, role: str) -> dict[str, Any]:
    """Another user's variable shared with the caller: a Credential's value is never shown (not even to its
    team: their runs use it), a Generic one's is; ``shared_role`` is the caller's role on it."""
    return {
        **variable_out(variable),
        "is_owner": False,
        "can_manage_shares": can(actor, "share", variable_ref(variable)),
        "shared_role": role,
    }


def shared_variables(s: Session, actor: Actor) -> list[tuple[Variable, str]]:
    """Other users' variables shared with the caller (a team share or one to them), by name, with the role."""
    return shared_rows(s, actor, Variable, "variable", variable_ref)


def reach(s: Session, actor: Actor, variable_id: Any, verb: str) -> Variable:
    """The caller's variable, or another user's shared with them that lets them ``verb`` it (404 when they may
    not see it, 403 when they may see but not ``verb`` it: ``core.auth.check_access``)."""
    try:
        key = variable_id if isinstance(variable_id, uuid.UUID) else uuid.UUID(str(variable_id))
    except ValueError:
        raise ApiError(404, NOT_FOUND) from None
    row = s.get(Variable, key)
    if row is None:
        raise ApiError(404, NOT_FOUND)
    if row.user_id != actor.id:
        check_access(actor, verb, variable_ref(row), not_found=NOT_FOUND)
    return row


def _own(s: Session, user_id: uuid.UUID, variable_id: Any) -> Variable:
    try:
        key = variable_id if isinstance(variable_id, uuid.UUID) else uuid.UUID(str(variable_id))
    except ValueError:
        raise ApiError(404, NOT_FOUND) from None
    row = s.scalar(sa.select(Variable).where(Variable.user_id == user_id, Variable.id == key))
    if row is None:
        raise ApiError(404, NOT_FOUND)
    return row


def _name_taken(s: Session, user_id: uuid.UUID, name: str, exclude: uuid.UUID | None = None) -> bool:
    query = sa.select(Variable.id).where(Variable.user_id == user_id, Variable.name == name)
    if exclude is not None:
        query = query.where(Variable.id != exclude)
    return s.scalar(query.limit(1)) is not None


def _flush(s: Session) -> None:
    try:
        with s.begin_nested():
            s.flush()
    except IntegrityError:  # a concurrent create with the same name
        raise ApiError(400, DUPLICATE) from None


def list_variables(s: Session, user_id: uuid.UUID) -> list[Variable]:
    return list(s.scalars(sa.select(Variable).where(Variable.user_id == user_id).order_by(Variable.name, Variable.id)))


def create_variable(s: Session, user_id: uuid.UUID, body: dict[str, Any]) -> Variable:
    name = body["name"].strip()
    if _name_taken(s, user_id, name):
        raise ApiError(400, DUPLICATE)
    now = db.utcnow()
    variable = Variable(
        user_id=user_id,
        name=name,
        value=encrypt(body["value"]),
        type=body.get("type") or CREDENTIAL,
        default_fields=body.get("default_fields") or [],
        created_at=now,
        updated_at=now,
    )
    s.add(variable)
    _flush(s)
    # names only: a variable's value never reaches the audit log
    audit.record("variable:create", "variable", variable.id, name=name, user_id=user_id,
                 details={"type": variable.type})  # fmt: skip
    return variable


def update_variable(s: Session, user_id: uuid.UUID, variable_id: Any, body: dict[str, Any]) -> Variable:
    variable = _own(s, user_id, variable_id)
    if body.get("name") is not None:
        name = body["name"].strip()
        if _name_taken(s, user_id, name, variable.id):
            raise ApiError(400, DUPLICATE)
        variable.name = name
    if body.get("value") is not None:
        variable.value = encrypt(body["value"])
    if body.get("default_fields") is not None:
        variable.default_fields = body["default_fields"]
    variable.updated_at = db.utcnow()
    _flush(s)
    written = [k for k in ("name", "value", "default_fields") if body.get(k) is not None]
    audit.record("variable:write", "variable", variable.id, name=variable.name, user_id=user_id,
                 details={"fields": written})  # fmt: skip
    return variable


def delete_variable(s: Session, user_id: uuid.UUID, variable_id: Any) -> None:
    variable = _own(s, user_id, variable_id)
    s.delete(variable)
    s.flush()
    audit.record("variable:delete", "variable", variable.id, name=variable.name, user_id=user_id)


def get_value(s: Session, user_id: str, name: str) -> str | None:
    """The ``get_variable`` hook: ``user_id``'s variable ``name``, decrypted, or None."""
    try:
        owner = uuid.UUID(str(user_id))
    except ValueError:
        return None
    token = s.scalar(sa.select(Variable.value).where(Variable.user_id == owner, Variable.name == name))
    if token is None:
        token = _shared_value(s, owner, name)
    return decrypt(token) if token is not None else None


def _shared_value(s: Session, user_id: uuid.UUID, name: str) -> str | None:
    """A variable ``name`` another user shared with ``user_id`` for running (``execute``: run-only, developer,
    admin), when they have none of that name: a team's runs use the team's credentials, whose values no route
    shows. Asked only when the run's own lookup found nothing (the owner's path is one read, as before)."""
    actor = Actor(id=user_id)
    for variable, _role in shared_variables(s, actor):
        if variable.name == name and can(actor, "execute", variable_ref(variable)):
            return variable.value
    return None


def delete_user_rows(s: Session, user_id: str) -> None:
    try:
        owner = uuid.UUID(str(user_id))
    except ValueError:
        return
    s.execute(sa.delete(Variable).where(Variable.user_id == owner))


# --- key rotation -------------------------------------------------------------------------------------
def reencrypt(cipher: MultiFernet, token: str) -> str:
    """One token under the new key (the first of ``cipher``); raises if no key reads it."""
    return cipher.rotate(token.encode()).decode()


def rotate(s: Session, old_secret: str, new_secret: str, progress: Callable[[int], None] | None = None) -> int:
    """Re-encrypt every stored variable, then every plugin's secrets (hook ``reencrypt_secrets``), with
    ``new_secret`` in one transaction; return the count of tokens.

    Tokens already under the new key are accepted (a re-run is harmless). A
    token neither key can read, or any failure, rolls everything back: the
    database is then exactly as before, every value readable with the old key.
    """
    cipher = MultiFernet([Fernet(secrets.fernet_key(new_secret)), Fernet(secrets.fernet_key(old_secret))])
    count = 0
    try:
        rows = s.scalars(sa.select(Variable).order_by(Variable.id).with_for_update()).all()
        for row in rows:
            try:
                row.value = reencrypt(cipher, row.value)
            except InvalidToken:
                raise RuntimeError(
                    f"variable {row.id} cannot be decrypted with the old key; nothing was changed"
                ) from None
            count += 1
            if progress is not None:
                progress(count)
        # the other plugins' secrets (MCP server headers, OAuth client secrets...), in this transaction
        for more in appstate.hooks().each(hookspecs.reencrypt_secrets, cipher=cipher):
            count += int(more or 0)
        s.flush()
        s.commit()
    except BaseException:
        s.rollback()
        raise
    return count
