"""Who is calling, may they do this, and "my rows only".

The core does not know how callers authenticate: it asks the
``actor_from_request`` hook (the accounts plugin answers for users, JWTs and
API keys; later plugins add public and MCP principals). Views declare what
they accept with :func:`authenticated`; services scope every lookup by owner
with :func:`owned` / :func:`owned_select`, which answer another user's row
with 404, exactly as a missing one.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from flask import g, has_request_context, request

from core import appstate
from core.contracts import ResourceRef
from core.errors import ApiError

F = TypeVar("F", bound=Callable[..., Any])

#: OpenAPI security requirements per scheme (names as the reference publishes them).
SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "user": [{"OAuth2PasswordBearerCookie": []}, {"API key query": []}, {"API key header": []}],
    "api_key": [{"API key query": []}, {"API key header": []}],
    "superuser": [{"OAuth2PasswordBearerCookie": []}, {"API key query": []}, {"API key header": []}],
    "optional": [{}, {"OAuth2PasswordBearerCookie": []}, {"API key query": []}, {"API key header": []}],
}
NO_CREDENTIALS = "No authentication credentials provided"
NOT_ENOUGH_PRIVILEGES = "The user doesn't have enough privileges"


@dataclass(frozen=True)
class Actor:
    """The caller of a request or the owner of a job.

    ``kind`` is ``"user"`` for accounts; other plugins define principals such
    as ``"public"`` (anonymous public-flow visitors) with ``id`` set to a
    stable derived UUID so jobs and messages still have an owner.
    """

    id: uuid.UUID
    kind: str = "user"
    username: str = ""
    is_superuser: bool = False
    is_active: bool = True
    via: str = ""  # "bearer", "cookie", "api_key", "env_api_key", "auto_login"
    api_key_id: uuid.UUID | None = None

    @functools.cached_property
    def owner_id(self) -> str:
        """``str(id)``, computed once per actor (every permission check compares it)."""
        return str(self.id)


def resolve_actor(scheme: str = "user") -> Actor | None:
    """Ask the plugins who is calling (cached for the request). May raise 401/403."""
    cache = g.setdefault("_service_actors", {})
    if scheme not in cache:
        cache[scheme] = appstate.hooks().actor_from_request(request=request, scheme=scheme)
    return cache[scheme]


def current_actor() -> Actor:
    """The actor set by :func:`authenticated` for this request."""
    actor = g.get("actor")
    if actor is None:
        raise ApiError(403, NO_CREDENTIALS)
    return actor


def authenticated(scheme: str = "user") -> Callable[[F], F]:
    """Require a caller: ``user`` (any credential), ``api_key``, ``superuser`` or ``optional``.

    Sets ``flask.g.actor`` (None for anonymous ``optional`` callers) and
    documents the security requirement in the OpenAPI document.
    """
    lookup = "user" if scheme == "superuser" else scheme

    def decorator(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            actor = resolve_actor(lookup)
            if actor is None and scheme != "optional":
                raise ApiError(403, NO_CREDENTIALS)
            if actor is not None and scheme == "superuser" and not allowed(actor, "admin"):
                raise ApiError(403, NOT_ENOUGH_PRIVILEGES)
            g.actor = actor
            return func(*args, **kwargs)

        doc = dict(getattr(wrapper, "_apidoc", {}))
        manual = dict(doc.get("manual_doc", {}))
        manual["security"] = SECURITY[scheme]
        doc["manual_doc"] = manual
        wrapper._apidoc = doc  # type: ignore[attr-defined]  # read by flask-smorest
        return wrapper  # type: ignore[return-value]

    return decorator


def allowed(actor: Actor | None, action: str, resource: Any = None) -> bool:
    """Ask every plugin; any deny wins, and no allow at all means deny."""
    verdicts = [v for v in appstate.hooks().permission_allowed(actor=actor, action=action, resource=resource) if v]
    return bool(verdicts) and all(v.allow for v in verdicts)


#: the verbs of ``check_access``: ``read`` (see), ``execute`` (run, read results), ``write`` (edit),
#: ``create`` (add inside a project), ``delete``, ``share`` (grant others access)
VERBS = ("read", "execute", "write", "create", "delete", "share")


def can(actor: Actor | None, verb: str, resource: ResourceRef) -> bool:
    """May ``actor`` do ``verb`` on ``resource``? Its owner may, others when a plugin allows; any deny wins.

    Every plugin is asked through ``permission_allowed`` with the action ``"<kind>:<verb>"`` (the teams
    plugin answers for team shares and role assignments). Answers are cached for the request.
    """
    cache: dict[tuple[Any, ...], bool] = g.setdefault("_service_access", {}) if has_request_context() else {}
    caller = actor.owner_id if actor is not None else None
    key = (caller, verb, resource.kind, resource.id)
    found = cache.get(key)
    if found is not None:
        return found
    verdicts = [
        v
        for v in appstate.hooks().permission_allowed(actor=actor, action=f"{resource.kind}:{verb}", resource=resource)
        if v
    ]
    owner = caller is not None and caller == str(resource.owner_id)
    result = all(v.allow for v in verdicts) and (owner or any(v.allow for v in verdicts))
    cache[key] = result
    return result


def check_access(actor: Actor | None, verb: str, resource: ResourceRef, *, not_found: str = "Not found") -> None:
    """Raise unless :func:`can`: 404 when the caller may not even read it (no existence leak), else 403."""
    if can(actor, verb, resource):
        return
    if verb != "read" and can(actor, "read", resource):
        raise ApiError(403, NOT_ENOUGH_PRIVILEGES)
    raise ApiError(404, not_found)


def flow_ref(flow: Any) -> ResourceRef:
    """The :class:`ResourceRef` of a flow record (``FlowRecord`` or a row with id, user_id, folder_id)."""
    folder = getattr(flow, "folder_id", None)
    return ResourceRef("flow", str(flow.id), str(flow.user_id), str(folder) if folder else None)


def flow_access(actor: Actor, flow_id: Any, verb: str, *, draft: bool = True, not_found: str = "Flow not found") -> Any:
    """The flow ``flow_id`` (a ``FlowRecord``: its draft, or with ``draft`` False its published version)
    when ``actor`` may ``verb`` it: their own, or one a plugin lets them (teams' shares). 404 (``not_found``)
    when they may not even read it, 403 when they may read but not ``verb`` it. For the plugins' flow-scoped
    routes (versions, schedules, webhooks, executions, messages), and for another user's row of a flow
    (a schedule, an execution, a message: ``not_found`` names the row): one rule, :func:`check_access`."""
    try:
        key = flow_id if isinstance(flow_id, uuid.UUID) else uuid.UUID(str(flow_id))
    except ValueError:
        raise ApiError(404, not_found) from None
    found = appstate.hooks().find_flow(user_id=None, flow_id_or_name=str(key), public=False, draft=draft)
    if found is None or found.id != str(key):
        raise ApiError(404, not_found)
    if str(found.user_id) != actor.owner_id:
        check_access(actor, verb, flow_ref(found), not_found=not_found)
    return found


def foreign_flow(actor: Actor, flow_id: Any, verb: str) -> Any:
    """For the rows a caller keeps of a flow (messages, traces), filtered by ``flow_id``: None when it names
    no stored flow or one of the caller's own (their own rows, as before); the flow (a ``FlowRecord``) when it
    is another user's that the caller may ``verb``, whose rows of every user they may then see; 404 when they
    may not even read it, 403 when they may read but not ``verb`` it (:func:`check_access`)."""
    try:
        key = flow_id if isinstance(flow_id, uuid.UUID) else uuid.UUID(str(flow_id))
    except ValueError:
        return None
    found = appstate.hooks().find_flow(user_id=None, flow_id_or_name=str(key), public=False, draft=True)
    if found is None or found.id != str(key) or str(found.user_id) == actor.owner_id:
        return None
    check_access(actor, verb, flow_ref(found), not_found="Flow not found")
    return found


#: the built-in role a caller's verbs on a shared resource amount to, strongest first (the editor's badge)
ROLE_BY_VERB = (("share", "admin"), ("write", "developer"), ("execute", "run-only"), ("read", "viewer"))


def shared_role(actor: Actor, ref: ResourceRef) -> str | None:
    """``admin``, ``developer``, ``run-only`` or ``viewer`` for another user's resource (None: not shared)."""
    return next((role for verb, role in ROLE_BY_VERB if can(actor, verb, ref)), None)


def shared_ids(user_id: Any, kind: str) -> list[str]:
    """Ids of other users' resources of ``kind`` shared with ``user_id`` (the ``shared_with`` hook; the teams
    plugin answers). A candidate list: check each with :func:`can` (or :func:`shared_role`) before showing it."""
    return appstate.hooks().shared_with(user_id=str(user_id), kind=kind)


def shared_rows(s: Any, actor: Actor, model: Any, kind: str, ref_of: Callable[[Any], ResourceRef]) -> list[Any]:
    """Other users' rows of ``model`` (an owned table with ``id``, ``user_id`` and ``name``) shared with the caller
    as ``kind``, by name, each as ``(row, role)`` with the caller's role on it (:func:`shared_role`)."""
    keys = []
    for found in shared_ids(actor.id, kind):
        try:
            keys.append(uuid.UUID(found))
        except ValueError:
            continue
    if not keys:
        return []
    query = sa.select(model).where(model.id.in_(keys), model.user_id != actor.id).order_by(model.name, model.id)
    return [(row, role) for row in s.scalars(query) if (role := shared_role(actor, ref_of(row))) is not None]


def forget_access() -> None:
    """Drop this request's cached answers (after a change of shares or memberships in the request)."""
    if has_request_context():
        g.pop("_service_access", None)


def require(
    action: str,
    resource: Any = None,
    *,
    actor: Actor | None = None,
    status: int = 403,
    detail: str = NOT_ENOUGH_PRIVILEGES,
) -> None:
    """Raise ``status`` unless :func:`allowed`."""
    if not allowed(actor if actor is not None else g.get("actor"), action, resource):
        raise ApiError(status, detail)


# --- owner scoping -------------------------------------------------------------------
M = TypeVar("M")


def owned_select(model: type[M], actor: Actor, *, column: str = "user_id") -> sa.Select[Any]:
    """``SELECT model WHERE model.<column> = actor.id``: the start of every "my rows" query."""
    return sa.select(model).where(getattr(model, column) == actor.id)


def owned(model: type[M], row_id: Any, actor: Actor, *, column: str = "user_id", detail: str = "Not found") -> M:
    """Load ``row_id`` if ``actor`` owns it; otherwise 404 (never 403: no existence leak)."""
    from core import db

    try:
        key = row_id if isinstance(row_id, uuid.UUID) else uuid.UUID(str(row_id))
    except ValueError:
        raise ApiError(404, detail) from None
    query = owned_select(model, actor, column=column).where(model.id == key)  # type: ignore[attr-defined]
    row: M | None = db.session().scalar(query)
    if row is None:
        raise ApiError(404, detail)
    return row
