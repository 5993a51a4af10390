"""Frozen typed records for what crosses a plugin boundary through a hook.

A plugin that answers a lookup hook (``find_flow``, the MCP plugin's ``find_project``, ...) returns
one of these records, and every caller reads its attributes: renaming a field is a change the type
checker follows into every plugin. They live in the core's public API because both sides of a
contract import them while plugins never import each other. ``core.records`` holds the other kind
of record: what a plugin contributes from a ``register_*`` hook.

A record is a slotted frozen dataclass. A flow's graph (``data``) and a project's
``auth_settings`` stay JSON mappings inside their records (the reference's formats, read by the
engine and the editor); treat them as read-only. ``as_dict()`` gives a record's JSON shape where a
wire format or a job payload needs one, and ``from_dict()`` reads it back.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "AuditEntry",
    "FileRecord",
    "FlowRecord",
    "FlowUsage",
    "McpServerConfig",
    "McpToolSettings",
    "MessageRecord",
    "NodeRef",
    "ProjectRecord",
    "PublishedVersion",
    "ResourceRef",
    "RunEnded",
    "RunObserver",
    "RunStarted",
    "SessionCookie",
    "SignedIn",
    "SsoIdentity",
    "VertexRecord",
]

#: ``FlowRecord`` fields that are not members of the reference's flow JSON (``as_dict`` leaves them out)
_FLOW_EXTRA = ("auth_type",)


@dataclass(frozen=True, slots=True)
class FlowRecord:
    """A stored flow as a lookup hook answers it (``find_flow``, ``published_agents``, ...).

    The fields are the reference's FlowRead members, with JSON values (ids and ``updated_at`` as
    strings). ``data`` is the graph (None when a lookup leaves it out, as ``published_agents``
    does); for ``find_flow`` it may be the same object for every lookup of one stored version:
    never change it in place. ``auth_type`` is the flow's project's ``auth_settings.auth_type``,
    filled only by the lookups that say so (the A2A plugin's ``find_agent_flow``), else None.
    """

    id: str
    name: str | None = None
    user_id: str | None = None
    folder_id: str | None = None
    data: Mapping[str, Any] | None = None
    description: str | None = None
    endpoint_name: str | None = None
    updated_at: str | None = None
    icon: str | None = None
    icon_bg_color: str | None = None
    gradient: str | None = None
    is_component: bool | None = None
    webhook: bool | None = None
    tags: tuple[str, ...] = ()
    locked: bool | None = None
    access_type: str | None = None
    flow_type: str | None = None
    workspace_id: str | None = None
    mcp_enabled: bool | None = None
    action_name: str | None = None
    action_description: str | None = None
    a2a_enabled: bool | None = None
    a2a_card_overrides: Mapping[str, Any] | None = None
    auth_type: str | None = None
    #: the token of the stored graph's version (issue 31): rotated by every save that changes ``data``
    version_token: str | None = None
    #: the published version this record's ``data`` is (None: the draft, as last saved)
    published_version: int | None = None

    def replace(self, **changes: Any) -> FlowRecord:
        """A copy with ``changes`` (for example an unsaved editor graph as ``data``)."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The reference's flow JSON (``FlowReadSchema`` members and order; ``auth_type`` left out)."""
        return {
            "name": self.name,
            "description": self.description,
            "icon": self.icon,
            "icon_bg_color": self.icon_bg_color,
            "gradient": self.gradient,
            "data": self.data,
            "is_component": self.is_component,
            "updated_at": self.updated_at,
            "webhook": self.webhook,
            "endpoint_name": self.endpoint_name,
            "tags": list(self.tags),
            "locked": self.locked,
            "mcp_enabled": self.mcp_enabled,
            "action_name": self.action_name,
            "action_description": self.action_description,
            "access_type": self.access_type,
            "flow_type": self.flow_type,
            "a2a_enabled": self.a2a_enabled,
            "a2a_card_overrides": self.a2a_card_overrides,
            "id": self.id,
            "user_id": self.user_id,
            "folder_id": self.folder_id,
            "workspace_id": self.workspace_id,
            "name_key": None,
            "version_token": self.version_token,
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> FlowRecord:
        """A record from the flow JSON of :meth:`as_dict` (a job payload); unknown members are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        fields = {k: v for k, v in value.items() if k in names}
        fields["id"] = str(value.get("id") or "")
        if fields.get("tags") is not None:
            fields["tags"] = tuple(str(t) for t in fields["tags"])
        else:
            fields.pop("tags", None)
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class PublishedVersion:
    """The version of a flow that API callers run (the flows plugin's ``published_version`` hook).

    ``data`` is the version's graph, the same read-only object for every lookup of one version in a
    process; ``saved_at`` is when that version was saved (ISO 8601), which names it in the run
    service's graph cache like a draft's ``updated_at``.
    """

    flow_id: str
    version_id: str
    version_number: int
    data: Mapping[str, Any]
    saved_at: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One change for the audit log (the core's ``on_audit`` hook; :func:`core.audit.record`).

    ``action`` is ``<resource_type>:<verb>`` (``flow:write``, ``variable:create``...), ``operation``
    one of create/replace/patch/delete, ``user_id`` the account whose thing changed (what owner
    scoping filters on), ``actor_type``/``actor_id`` who did it (a user or an API key). ``details``
    holds names and ids only, never a secret value.
    """

    id: str
    timestamp: str
    action: str
    operation: str
    resource_type: str
    resource_id: str | None
    resource_name: str | None
    user_id: str | None
    actor_type: str
    actor_id: str | None
    request_id: str
    result: str = "succeeded"
    error_code: str | None = None
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    """A project (folder) as the MCP plugin's ``find_project`` answers it.

    ``auth_settings`` is the project's MCP authentication JSON without secrets (an OAuth client
    secret is never stored there), or None.
    """

    id: str
    name: str
    user_id: str
    description: str | None = None
    auth_settings: Mapping[str, Any] | None = None

    @property
    def auth_type(self) -> str | None:
        """``auth_settings.auth_type`` (None without auth settings)."""
        value = self.auth_settings.get("auth_type") if isinstance(self.auth_settings, Mapping) else None
        return str(value) if value else None


@dataclass(frozen=True, slots=True)
class McpToolSettings:
    """One flow's MCP tool settings for the MCP plugin's ``update_project_mcp``.

    Only the fields named in ``given`` are written (None there clears an action name or
    description); the others keep their stored values.
    """

    id: str
    mcp_enabled: bool = False
    action_name: str | None = None
    action_description: str | None = None
    given: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> McpToolSettings:
        """From a request's tool item: its members among the three fields are the ones ``given``."""
        names = ("mcp_enabled", "action_name", "action_description")
        return cls(
            id=str(item.get("id")),
            mcp_enabled=bool(item.get("mcp_enabled")),
            action_name=item.get("action_name"),
            action_description=item.get("action_description"),
            given=frozenset(n for n in names if n in item),
        )


@dataclass(frozen=True, slots=True)
class NodeRef:
    """One node of a stored flow: its id and component type."""

    id: str
    type: str


@dataclass(frozen=True, slots=True)
class FlowUsage:
    """A stored flow that uses some components (the extensions plugin's ``flows_using_components``)."""

    flow_id: str
    name: str
    user_id: str | None
    nodes: tuple[NodeRef, ...]


#: the members of a stored chat message, in the reference's order
_MESSAGE_FIELDS = (
    "id",
    "flow_id",
    "run_id",
    "timestamp",
    "sender",
    "sender_name",
    "session_id",
    "context_id",
    "text",
    "files",
    "edit",
    "error",
    "duration",
    "properties",
    "category",
    "content_blocks",
    "session_metadata",
)


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """A chat message a run keeps (``on_messages``) or reads back (``message_history``).

    The reference's message members; ids may be UUIDs or strings and ``timestamp`` a datetime or
    an ISO string, as the producing component or the store gives them. ``as_dict()`` is the
    message JSON the engine's memory components read.
    """

    id: uuid.UUID | str | None = None
    flow_id: uuid.UUID | str | None = None
    run_id: uuid.UUID | str | None = None
    timestamp: dt.datetime | str | None = None
    sender: str = ""
    sender_name: str = ""
    session_id: str = ""
    context_id: str = ""
    text: str = ""
    files: tuple[Any, ...] = ()
    edit: bool = False
    error: bool = False
    duration: int | float | None = None
    properties: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    category: str = "message"
    content_blocks: tuple[Any, ...] = ()
    session_metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> MessageRecord:
        """A record from a message dict (a component's output); missing members take their defaults."""
        return cls(
            id=m.get("id"),
            flow_id=m.get("flow_id"),
            run_id=m.get("run_id"),
            timestamp=m.get("timestamp"),
            sender=str(m.get("sender") or ""),
            sender_name=str(m.get("sender_name") or ""),
            session_id=str(m.get("session_id") or ""),
            context_id=str(m.get("context_id") or ""),
            text=str(m.get("text") or ""),
            files=tuple(m.get("files") or ()),
            edit=bool(m.get("edit")),
            error=bool(m.get("error")),
            duration=m.get("duration"),
            properties=dict(m.get("properties") or {}),
            category=str(m.get("category") or "message"),
            content_blocks=tuple(m.get("content_blocks") or ()),
            session_metadata=dict(m.get("session_metadata") or {}),
        )

    def as_dict(self) -> dict[str, Any]:
        """The message JSON (lists and dicts copied, so the reader may change them)."""
        out = {name: getattr(self, name) for name in _MESSAGE_FIELDS}
        out["files"] = list(self.files)
        out["content_blocks"] = list(self.content_blocks)
        out["properties"] = dict(self.properties)
        out["session_metadata"] = dict(self.session_metadata)
        return out


@dataclass(frozen=True, slots=True)
class VertexRecord:
    """A vertex that finished in a build or run (``on_vertex_built``): a vertex build and/or a transaction.

    ``build`` is True when the run keeps its vertex builds (editor builds), False for a run that
    records its transactions only. ``data``, ``artifacts``, ``params``, ``inputs`` and ``outputs``
    are the vertex's JSON payloads as the build wire format carries them. ``timestamp`` is when the
    vertex finished; None (what a run sends) means when the record is written.
    """

    user_id: str
    flow_id: str
    job_id: str | None
    vertex_id: str | None
    valid: bool
    outputs: Mapping[str, Any]
    error: str | None = None
    target_id: str | None = None
    build: bool = True
    data: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    artifacts: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    params: Any = None
    inputs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    timestamp: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """A user's stored MCP server as a component connects to it (``mcp_server_config``), secrets decrypted.

    HTTP and SSE servers have ``url`` and ``headers``; a ``stdio`` server has ``command``, ``args``
    and ``env``. Never answered to a client.
    """

    name: str
    transport: str
    url: str | None = None
    headers: Mapping[str, str] | None = None
    command: str | None = None
    args: tuple[str, ...] | None = None
    env: Mapping[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The connection JSON the engine's MCP client reads (the members of this transport only)."""
        out: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.transport == "stdio":
            out.update(command=self.command, args=list(self.args or ()), env=dict(self.env or {}))
        else:
            out.update(url=self.url, headers=dict(self.headers or {}))
        return out


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A file a run saved for its user (``write_user_file``)."""

    id: str
    name: str
    path: str
    size: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "path": self.path, "size": self.size}


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run of a flow begins (``observe_run``): every surface, in the process and thread that executes it.

    ``run_id`` names the run everywhere (the engine's run id, the id a surface may have chosen and
    answered its caller with: ``RunRequest.run_id``). ``user_id`` is whom the run acts as (an anonymous
    visitor's principal for public runs), ``owner_id`` the flow owner a public run is accounted to.
    ``surface`` is the run surface (``run``, ``webhook``, ``build``, ``workflows``, ``responses``, ``mcp``,
    ``a2a``...). ``request`` is the run request's JSON (``RunRequest.to_json()``: inputs, tweaks,
    session), enough to run it again. ``started_at`` is ``time.time()``.
    """

    run_id: str
    flow_id: str
    flow_name: str | None
    user_id: str
    owner_id: str | None
    surface: str
    session_id: str | None
    job_id: str | None
    public: bool
    started_at: float
    request: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RunQueued:
    """A run of a flow was put on the job queue (``on_run_queued``); a worker starts it later.

    ``run_id`` is the id the run will have when it starts (``RunStarted.run_id``), ``job_id`` its job's;
    ``surface`` the run surface (``webhook``, ``workflows``, ``a2a``...); ``flow_name`` None when the
    surface did not resolve the flow; ``request`` the run request's JSON (read it, never change it);
    ``queued_at`` is ``time.time()``.
    """

    run_id: str
    flow_id: str
    flow_name: str | None
    user_id: str
    surface: str
    job_id: str
    queued_at: float
    request: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RunEnded:
    """How a run ended (``RunObserver.end``).

    ``status`` is the reference's span status: ``ok``, ``error``, ``paused`` (waiting for a human
    answer; a resume is a new run) or ``cancelled``. ``error`` is the user-facing failure text (never an
    exception's own message). ``outputs`` is each input's primary text output, as run responses give
    it (None where an input produced no text). ``duration_s`` is wall-clock seconds.
    """

    run: RunStarted
    status: str
    duration_s: float
    error: str | None = None
    outputs: tuple[str | None, ...] = ()


class RunObserver(Protocol):
    """What an ``observe_run`` implementation returns to hear how the run it was told about ends.

    ``end`` is called exactly once, in the thread that called ``observe_run``, also when the run
    raised; it must not raise and must not block (queue writes, as ``on_vertex_built`` does).

    Optional (an observer without them costs the run nothing more): ``component(vertex_id, display_name,
    component_type)``, called as each component starts, returns ``end(status, error)``, called once when it
    ends; ``model_call(call)`` hears each model call (:class:`core.engine.observe.ModelCall`: provider,
    model, token counts from the provider's ``usage``, duration, error); ``before_model_call(provider, model)``,
    which may raise :class:`core.engine.ComponentError` to refuse the next call (a budget). All in the
    thread running the component (a sub-flow's components included); see :mod:`core.engine.observe`.
    """

    def end(self, ended: RunEnded) -> None: ...


# --- single sign-on (the SSO plugin asks, the accounts plugin answers) -------------------------------
@dataclass(frozen=True, slots=True)
class SsoIdentity:
    """A person an identity provider vouched for, after the ID token was checked and claims mapped.

    ``user_id`` is the account the SSO plugin already linked to this ``(provider, subject)`` (None on a
    first sign-in). ``is_superuser`` is None when no admin group is configured (leave the flag as is).
    """

    provider: str
    subject: str
    username: str
    email: str | None = None
    name: str | None = None
    groups: tuple[str, ...] = ()
    is_superuser: bool | None = None
    user_id: str | None = None


@dataclass(frozen=True, slots=True)
class SessionCookie:
    """A cookie to set (or, with ``max_age`` 0 and an empty value, to delete) on the response."""

    name: str
    value: str
    max_age: int | None
    secure: bool
    httponly: bool
    samesite: str
    domain: str | None = None
    path: str = "/"


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The account an SSO sign-in landed on and the service's own session for it."""

    user_id: str
    username: str
    is_superuser: bool
    created: bool
    access_token: str
    refresh_token: str
    cookies: tuple[SessionCookie, ...] = ()


# --- access to shared resources (every plugin asks ``core.auth.check_access``) ----------------------------
@dataclass(frozen=True, slots=True)
class ResourceRef:
    """A resource a caller acts on: its kind (``flow``, ``project``, ``file``, ``knowledge_base``...),
    id, owner and project (a flow's folder; a project's own id). ``permission_allowed`` receives it with
    the action ``"<kind>:<verb>"`` (``flow:read``, ``project:write``, ``flow:execute``...)."""

    kind: str
    id: str
    owner_id: str
    project_id: str | None = None
