"""Anonymous public runs: who the visitor is, where their conversation lives, and when it expires.

Every public surface (the public build, ``POST /api/v2/workflows/public``) names the anonymous
visitor of a ``client_id`` cookie the same way, so a visitor's runs, jobs and messages line up
whichever surface they used:

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

from flask import Flask

from core.app import state

__all__ = ["JOB_OWNER_PREFIX", "expire", "job_owner", "principal", "session", "touch", "virtual_flow_id"]

JOB_OWNER_PREFIX = "public:"
_NS = uuid.UUID("5a4c6d1e-8f0b-4c1e-9a57-3d2b1f0e7c11")  # anonymous principals of public runs
_SEEN = "runs:public-seen:"


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
