"""Anonymous public runs: who the visitor is, where their conversation lives, and when it expires.

The public-visitor rule, once for every public surface (the public build, ``POST
/api/v2/workflows/public``), so a visitor's runs, jobs and messages line up whichever surface they used:

* **which flows are public**: a run request with ``public=True`` (``core.runs.resolve``) looks the flow
  up through ``find_flow(public=True)``, the flows plugin's effective anonymous grant (a canonical
  share, or a legacy grant), never by owner;
* **who the visitor is**: :func:`visitor` reads the ``client_id`` cookie (400 ``No client_id cookie
  found`` without one) and notices a signed-in caller (:class:`Visitor`);
* **how often**: :func:`rate_limited` limits each public run endpoint to
  ``public_flow_rate_limit_per_minute`` calls per minute per client address;

and the names it gives:

* :func:`principal`: the stable non-user id the run acts as (nobody's variables, files or keys);
* :func:`job_owner`: the owner of the visitor's jobs (``public:<principal>``, never a user id);
* :func:`virtual_flow_id`: the flow id the visitor's messages are kept under (client + flow);
* :func:`session`: a session id namespaced under that virtual flow id.

:func:`touch` records when a principal last ran something (the run service calls it for every
public run) and :func:`expire` deletes the rows of principals idle for longer than
``public_flow_expiration`` through the ``on_user_deleted`` hook (a principal is a pseudo-user:
every plugin keeping rows for it removes them), which the public-session cleanup job calls.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, request

from core import limits
from core.appstate import state
from core.auth import resolve_actor
from core.errors import ApiError

__all__ = [
    "JOB_OWNER_PREFIX",
    "NO_CLIENT_ID",
    "SHARED_NAMESPACE",
    "Visitor",
    "client_id",
    "expire",
    "job_owner",
    "principal",
    "rate_limited",
    "session",
    "shared_flow_id",
    "touch",
    "virtual_flow_id",
    "visitor",
]

F = TypeVar("F", bound=Callable[..., Any])
JOB_OWNER_PREFIX = "public:"
NO_CLIENT_ID = "No client_id cookie found"
_NS = uuid.UUID("5a4c6d1e-8f0b-4c1e-9a57-3d2b1f0e7c11")  # anonymous principals of public runs
_SEEN = "runs:public-seen:"


SHARED_NAMESPACE = uuid.UUID("5c3f3f1e-6f0a-4bb5-9a8e-6f5d2d8f3a10")


def shared_flow_id(user_id: uuid.UUID | str, source_flow_id: uuid.UUID | str) -> uuid.UUID:
    """The virtual flow id a user's messages with someone's shared flow are kept under (user id + flow id)."""
    return uuid.uuid5(SHARED_NAMESPACE, f"{user_id}:{source_flow_id}")


def principal(client_id: str) -> str:
    """The anonymous principal of a ``client_id`` cookie: a stable uuid, never a user's id."""
    return str(uuid.uuid5(_NS, f"client:{client_id}"))


def job_owner(client_id: str) -> str:
    return JOB_OWNER_PREFIX + principal(client_id)


def virtual_flow_id(client_id: str, flow_id: str) -> str:
    """The flow id a public visitor's messages live under (the reference's ``uuid5(DNS, client_id + "_" + id)``)."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{client_id}_{flow_id}"))


def session(virtual_id: str, session_id: str | None) -> str | None:
    """``session_id`` namespaced under the virtual flow id (idempotent); None stays None."""
    if not session_id:
        return None
    prefix = f"{virtual_id}:"
    return session_id if session_id.startswith(prefix) else prefix + session_id


@dataclass(frozen=True)
class Visitor:
    """The anonymous visitor of a public flow: its ``client_id`` cookie, and the signed-in user, if any.

    The run always acts as :attr:`principal` (nobody's variables, files or keys), whoever calls.
    """

    client_id: str
    #: the signed-in caller's user id (valid credentials sent along), else None
    signed_in: str | None = None

    @property
    def principal(self) -> str:
        return principal(self.client_id)

    @property
    def job_owner(self) -> str:
        return job_owner(self.client_id)

    def conversation(self, flow_id: str) -> tuple[str, str | None]:
        """``(virtual flow id, messages_as)``: where the visitor's messages with ``flow_id`` are kept.

        A signed-in visitor's conversation is theirs: kept in their own messages under the virtual
        flow id of (visitor, flow), which the shared-messages endpoints read. An anonymous one's
        lives under the virtual flow id of (client, flow), in the principal's store.
        """
        if self.signed_in is not None:
            return str(shared_flow_id(self.signed_in, flow_id)), self.signed_in
        return virtual_flow_id(self.client_id, flow_id), None


def client_id() -> str:
    """The request's ``client_id`` cookie; 400 without one."""
    found = request.cookies.get("client_id")
    if not found:
        raise ApiError(400, NO_CLIENT_ID)
    return found


def visitor() -> Visitor:
    """The visitor of this request: its ``client_id`` (400 without one) and a signed-in caller, if any
    (bad or missing credentials: anonymous, never a 401 on a public endpoint)."""
    cid = client_id()
    try:
        actor = resolve_actor("user")
    except ApiError:
        actor = None
    return Visitor(cid, str(actor.id) if actor is not None else None)


def rate_limited(scope: str) -> Callable[[F], F]:
    """A public run endpoint's limit: ``public_flow_rate_limit_per_minute`` calls per client address."""
    return limits.rate_limited(lambda s: s.public_flow_rate_limit_per_minute, scope=scope)


def touch(principal_id: str, app: Flask | None = None) -> None:
    """Remember that ``principal_id`` ran something now (read by :func:`expire`)."""
    st = state(app)
    ttl = max(float(st.settings.public_flow_expiration) * 2, 60.0)
    st.shared.put(_SEEN + principal_id, repr(time.time()), ttl=ttl)


def expire(app: Flask | None = None, *, now: float | None = None) -> list[str]:
    """Delete every row kept for principals idle longer than ``public_flow_expiration``; their ids.

    Each principal goes in its own transaction (``on_user_deleted``), and its mark is removed
    only after its rows are gone, so a failure leaves it for the next pass.
    """
    from core import db

    st = state(app)
    cutoff = (time.time() if now is None else now) - float(st.settings.public_flow_expiration)
    gone: list[str] = []
    for key, value in st.shared.scan(_SEEN).items():
        try:
            seen = float(value)
        except ValueError:
            seen = 0.0
        if seen > cutoff:
            continue
        principal_id = key[len(_SEEN) :]
        with db.transaction():
            st.host.hooks.on_user_deleted(user_id=principal_id)
        st.shared.delete(key)
        gone.append(principal_id)
    return gone
