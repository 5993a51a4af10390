"""The typed call facade over pluggy's hook relay, in tox's style (``tox/plugin/manager.py``).

pluggy's relay (``pm.hook.find_flow(...)``) is typed ``Any``: a misspelt argument or a renamed
record field goes unnoticed until the call runs. Call sites call hooks through :class:`Hooks`
instead (``appstate.hooks()``, the host's ``hooks``):

* a core hook (:mod:`core.hookspecs`) has a method of the same name and keyword arguments, typed
  with the spec's records, so ``hooks.find_flow(user_id=..., flow_id_or_name=..., public=False)`` is
  a ``FlowRecord | None`` to the type checker;
* a hook a plugin publishes (its ``hookspecs.py``) is called through :meth:`Hooks.first`,
  :meth:`Hooks.each` or :meth:`Hooks.notify`, keyed on the spec function itself:
  ``hooks.first(hookspecs.find_project, user_id=..., project_id=...)``. The spec's parameters and
  return type flow through a ``ParamSpec``, so the arguments and the result are checked exactly as
  for a core hook. The publisher is the plugin that calls the hook, so it imports its own spec
  module; the plugins that answer it import nothing of it (pluggy matches by name), and the records
  both sides share live in :mod:`core.contracts`. When the publisher's hooks are not loaded (a
  bare host in a test), the call answers as if nobody implemented the hook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import pluggy

from core import PROJECT_NAME

if TYPE_CHECKING:  # pragma: no cover - typing only
    from flask import Flask, Request

    from core.auth import Actor
    from core.contracts import (
        AuditEntry,
        FileRecord,
        FlowRecord,
        McpServerConfig,
        MessageRecord,
        RunObserver,
        RunQueued,
        RunStarted,
        VertexRecord,
    )
    from core.records import Permission

P = ParamSpec("P")
R = TypeVar("R")

_SPEC_ATTR = f"{PROJECT_NAME}_spec"  # where pluggy's HookspecMarker keeps a spec's options


def _firstresult(spec: Callable[..., Any]) -> bool:
    opts = getattr(spec, _SPEC_ATTR, None)
    if opts is None:
        raise TypeError(f"{getattr(spec, '__name__', spec)!r} is not a hook specification")
    return bool(opts.get("firstresult"))


class Hooks:
    """One typed method per core hook, and typed calls of published hooks keyed on their spec."""

    __slots__ = ("_relay",)

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._relay = pm.hook

    # --- published hooks, keyed on their spec function ----------------------------------------------
    def _caller(self, spec: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        if args:
            raise TypeError(f"hook {spec.__name__!r} takes keyword arguments only")
        caller = getattr(self._relay, spec.__name__, None)
        if caller is None or caller.spec is None:
            return None  # the publisher is not loaded: nobody can have answered
        return caller

    def first(self, spec: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the ``firstresult`` hook ``spec``: the first answer that is not None, or None."""
        if not _firstresult(spec):
            raise TypeError(f"hook {spec.__name__!r} is not firstresult: call it with each() or notify()")
        caller = self._caller(spec, args)
        return cast(R, None if caller is None else caller(**kwargs))

    def each(self, spec: Callable[P, R | None], *args: P.args, **kwargs: P.kwargs) -> list[R]:
        """Call the hook ``spec`` and collect every implementation's answer (None answers left out)."""
        if _firstresult(spec):
            raise TypeError(f"hook {spec.__name__!r} is firstresult: call it with first()")
        caller = self._caller(spec, args)
        return [] if caller is None else list(caller(**kwargs))

    def notify(self, spec: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """Call the notification hook ``spec`` (every implementation; answers are ignored)."""
        self.each(spec, *args, **kwargs)

    # --- the core's hooks (core.hookspecs), one method each -----------------------------------------------
    def actor_from_request(self, *, request: Request, scheme: str) -> Actor | None:
        return cast("Actor | None", self._relay.actor_from_request(request=request, scheme=scheme))

    def permission_allowed(self, *, actor: Actor | None, action: str, resource: Any) -> list[Permission]:
        return list(self._relay.permission_allowed(actor=actor, action=action, resource=resource))

    def extend_config(self, *, actor: Actor | None, public: bool) -> list[Mapping[str, object]]:
        return list(self._relay.extend_config(actor=actor, public=public))

    def find_flow(
        self, *, user_id: str | None, flow_id_or_name: str, public: bool, draft: bool = False
    ) -> FlowRecord | None:
        return cast(
            "FlowRecord | None",
            self._relay.find_flow(user_id=user_id, flow_id_or_name=flow_id_or_name, public=public, draft=draft),
        )

    def check_run(self, *, user_id: str | None, flow: FlowRecord, surface: str) -> None:
        self._relay.check_run(user_id=user_id, flow=flow, surface=surface)

    def get_variable(self, *, user_id: str, name: str) -> str | None:
        return cast("str | None", self._relay.get_variable(user_id=user_id, name=name))

    def message_history(
        self, *, user_id: str, flow_id: str | None, session_id: str, limit: int
    ) -> list[MessageRecord] | None:
        return cast(
            "list[MessageRecord] | None",
            self._relay.message_history(user_id=user_id, flow_id=flow_id, session_id=session_id, limit=limit),
        )

    def user_names(self, *, user_ids: Sequence[str]) -> dict[str, str]:
        """``{id: username}`` for the known ids (empty when no plugin answers)."""
        if not user_ids:
            return {}
        return cast("dict[str, str] | None", self._relay.user_names(user_ids=list(user_ids))) or {}

    def shared_with(self, *, user_id: str, kind: str) -> list[str]:
        """Every answer's ids, merged (empty when no plugin answers)."""
        answers = cast("list[list[str] | None]", self._relay.shared_with(user_id=user_id, kind=kind))
        return sorted({str(i) for answer in answers for i in answer or ()})

    def on_messages(self, *, user_id: str, messages: Sequence[MessageRecord]) -> None:
        self._relay.on_messages(user_id=user_id, messages=messages)

    def on_vertex_built(self, *, record: VertexRecord) -> None:
        self._relay.on_vertex_built(record=record)

    def observing_runs(self) -> bool:
        """Whether any plugin observes runs now (the run path builds no record otherwise).

        A plugin implementing ``observe_run`` observes, unless it also has a plain ``observing_runs()``
        function (not a hook) that answers False: a plugin switched off by its settings costs nothing.
        """
        for impl in self._relay.observe_run.get_hookimpls():
            check = getattr(impl.plugin, "observing_runs", None)
            if check is None or check():
                return True
        return False

    def observe_run(self, *, run: RunStarted) -> list[RunObserver]:
        return list(self._relay.observe_run(run=run))

    def on_audit(self, *, entry: AuditEntry) -> None:
        self._relay.on_audit(entry=entry)

    def settings_export(self) -> list[dict[str, Any]]:
        return [a for a in self._relay.settings_export() if a is not None]

    def settings_apply(self, *, sections: Mapping[str, Any], dry_run: bool) -> list[list[str]]:
        return [a for a in self._relay.settings_apply(sections=sections, dry_run=dry_run) if a is not None]

    def queueing(self) -> bool:
        """Whether any plugin implements ``on_run_queued`` (nothing is built or told otherwise)."""
        return bool(self._relay.on_run_queued.get_hookimpls())

    def on_run_queued(self, *, run: RunQueued) -> None:
        self._relay.on_run_queued(run=run)

    def propagating(self) -> bool:
        """Whether any plugin implements ``propagation_headers`` (nothing is asked otherwise)."""
        return bool(self._relay.propagation_headers.get_hookimpls())

    def propagation_headers(self) -> dict[str, str]:
        """Every plugin's trace-context headers, merged (the first answer of a name wins)."""
        merged: dict[str, str] = {}
        for answer in reversed(self._relay.propagation_headers()):
            merged.update(answer or {})
        return merged

    def on_app_created(self, *, app: Flask) -> None:
        self._relay.on_app_created(app=app)

    def on_user_deleted(self, *, user_id: str) -> None:
        self._relay.on_user_deleted(user_id=user_id)

    def model_provider_allowed(self, *, provider_id: str) -> list[bool]:
        """Every opinion (None answers left out): the provider is refused when one is False."""
        return list(self._relay.model_provider_allowed(provider_id=provider_id))

    def blocked_components(self) -> frozenset[str]:
        """The union of every ``blocked_components`` answer (empty without the policies plugin)."""
        return frozenset(k for answer in self._relay.blocked_components() if answer for k in answer)

    def blocked_templates(self) -> frozenset[str]:
        """The union of every ``blocked_templates`` answer."""
        return frozenset(k for answer in self._relay.blocked_templates() if answer for k in answer)

    def mcp_server_config(self, *, user_id: str, name: str) -> McpServerConfig | None:
        return cast("McpServerConfig | None", self._relay.mcp_server_config(user_id=user_id, name=name))

    def read_user_file(self, *, user_id: str, ref: str) -> bytes | None:
        return cast("bytes | None", self._relay.read_user_file(user_id=user_id, ref=ref))

    def write_user_file(self, *, user_id: str, name: str, content: bytes, append: bool) -> FileRecord | None:
        return cast(
            "FileRecord | None",
            self._relay.write_user_file(user_id=user_id, name=name, content=content, append=append),
        )
