"""Who a project's ``auth_type`` admits on a run surface, and as whom the flow runs: one rule for MCP and A2A.

A project's ``auth_settings.auth_type`` says how its exposed flows (MCP tools, A2A agents) admit
callers. Each surface reads the caller's credentials in its own way (MCP: a bearer token, a bearer
API key or ``x-api-key``; A2A: the ``x-api-key`` of the owner) and renders a refusal in its own wire
format; :func:`admit` decides, for both:

==================  ==============================  ==============================================
``auth_type``       caller                          decision
==================  ==============================  ==============================================
``none``            the owner's credentials         run as the owner
``none``            anyone else, or nobody          run as the flow's anonymous principal
``apikey``/unset    the owner's credentials         run as the owner
``apikey``/unset    none presented                  refused: :data:`CREDENTIALS_REQUIRED`
``apikey``/unset    presented but not valid         refused: :data:`INVALID_CREDENTIALS`
``apikey``/unset    a member the roles let run      run as the owner (``member``: see :func:`admit`)
``apikey``/unset    someone else's                  refused: :data:`NOT_OWNER`
``oauth``           as ``apikey``, and also a token the surface's authorization server vouched for
anything else       anyone                          refused: :data:`UNSUPPORTED` (fail closed)
==================  ==============================  ==============================================

Why ``none`` runs as an anonymous principal (and not as the owner): ``auth_type`` ``none`` lets anyone
who has the URL call the flows the owner exposed there; it does not hand out the owner's identity. A run
acting as the owner would resolve the owner's global variables, API keys, files and MCP server
configurations for a caller who proved nothing, and through a tweak (a model's base URL, a prompt)
could send them anywhere. So an uncredentialed caller gets exactly what the owner exposed, and no more:

* the exposed flows only (the surface's listing: ``mcp_enabled`` flows of the project, published
  agents), looked up under the owner, refused by ``check_run`` as the owner's would be;
* run as a stable non-user principal per flow (:func:`anonymous_principal`, the naming rule of
  :mod:`core.runs.public`): nobody's variables, keys, files or knowledge bases, its own message store;
* no tweaks and no flow data (MCP offers no argument beyond the message and the session).

This is the interface spec's rule for anonymous public-flow access (a stable non-user principal; the
owner's credentials, variables, files and knowledge bases unavailable; for A2A, ``auth_type=none``
applies it to execution), which the reference's A2A follows too (its public agents run as an isolated
anonymous principal that never resolves a connection). The reference's MCP runs a ``none`` project as
its configured superuser only under ``AUTO_LOGIN``, where every caller is that superuser anyway, and
turns ``none`` into ``apikey`` at start-up otherwise: it never lets an uncredentialed caller use an
owner's keys once authentication is on. Here the same holds through the first row: a caller whose
credentials are the owner's (including the auto-login superuser when the deployment skips
authentication) runs as the owner, so the owner's own clients keep their variables. A flow whose
model needs a key it reads from the owner's variables is exposed keylessly by giving the project
``apikey`` (callers send the owner's key) instead of ``none``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.auth import Actor
from core.runs import public

__all__ = [
    "CREDENTIALS_REQUIRED",
    "INVALID_CREDENTIALS",
    "KEYED",
    "NONE",
    "NOT_OWNER",
    "UNSUPPORTED",
    "Admission",
    "Refused",
    "admit",
    "anonymous_job_owner",
    "anonymous_principal",
    "auth_type_of",
]

NONE = "none"
#: auth types whose flows run only for the owner's credentials (``oauth``: or a vouched-for token)
KEYED = ("apikey", "oauth")
#: the auth type of a project without settings (the reference's default once authentication is on)
DEFAULT = "apikey"

# refusal reasons (each surface renders them in its wire format)
CREDENTIALS_REQUIRED = "credentials_required"
INVALID_CREDENTIALS = "invalid_credentials"
NOT_OWNER = "not_owner"
UNSUPPORTED = "unsupported"


class Refused(Exception):
    """The caller is not admitted; ``reason`` is one of the refusal constants."""

    def __init__(self, reason: str, auth_type: str) -> None:
        super().__init__(f"{reason} ({auth_type})")
        self.reason = reason
        self.auth_type = auth_type


@dataclass(frozen=True)
class Admission:
    """An admitted call: whose flows it reaches, and whether it acts as their owner or anonymously."""

    owner_id: str  # the project's owner: flows are looked up (and ``check_run`` asked) as theirs
    anonymous: bool  # admitted by ``auth_type`` none without the owner's credentials
    auth_type: str

    def principal(self, flow_id: str) -> str:
        """The user id a run of ``flow_id`` acts as: the owner, or the flow's anonymous principal."""
        return anonymous_principal(flow_id) if self.anonymous else self.owner_id

    def run_principal(self, flow_id: str) -> str | None:
        """``RunRequest.principal`` for a run of ``flow_id`` (None: the owner, ``user_id`` itself)."""
        return anonymous_principal(flow_id) if self.anonymous else None

    def job_owner(self, flow_id: str) -> str:
        """Who owns the run's jobs: the owner, or the anonymous principal's ``public:`` owner."""
        return anonymous_job_owner(flow_id) if self.anonymous else self.owner_id


def auth_type_of(auth_settings: Mapping[str, Any] | None) -> str:
    """The project's auth type (``apikey`` when it has no settings or names none)."""
    found = auth_settings.get("auth_type") if isinstance(auth_settings, Mapping) else None
    return str(found) if found else DEFAULT


def anonymous_principal(flow_id: str) -> str:
    """The stable non-user principal uncredentialed callers of ``flow_id`` act as (nobody's variables)."""
    return public.principal(f"flow:{flow_id}")


def anonymous_job_owner(flow_id: str) -> str:
    return public.job_owner(f"flow:{flow_id}")


def admit(
    auth_settings: Mapping[str, Any] | None,
    owner_id: str,
    actor: Actor | None,
    *,
    presented: bool,
    vouched: bool = False,
    member: bool = False,
) -> Admission:
    """Admit a call to a project's exposed flows, or raise :class:`Refused`.

    ``actor``: the caller the surface resolved from the request's credentials (None: none, or not
    valid). ``presented``: the request carried credentials of the surface's kind (so a None actor means
    they were not valid). ``vouched``: an ``oauth`` project's authorization server vouched for the
    caller's token (the surface checked it). ``member``: the caller is not the owner but the project's
    roles let them run its flows (``core.auth.can(actor, "execute", project)``, the teams plugin's shares):
    admitted like the owner's own credentials (the team's runs use the project's credentials, whose
    values these surfaces never show; they take no tweaks).
    """
    kind = auth_type_of(auth_settings)
    owner = str(owner_id)
    is_owner = actor is not None and str(actor.owner_id) == owner
    if kind == NONE:
        return Admission(owner, anonymous=not is_owner, auth_type=kind)
    if kind not in KEYED:
        raise Refused(UNSUPPORTED, kind)
    if is_owner or member or (kind == "oauth" and vouched):
        return Admission(owner, anonymous=False, auth_type=kind)
    if actor is not None:
        raise Refused(NOT_OWNER, kind)
    raise Refused(INVALID_CREDENTIALS if presented else CREDENTIALS_REQUIRED, kind)
