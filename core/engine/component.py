"""The :class:`Component` base class and :class:`Output` descriptor for bundle authors.

A component is a class with a registry ``key`` (the flow JSON ``data.type``),
declarative ``inputs`` and ``outputs``, and one method per output. The engine
instantiates it once per vertex run, sets every input as an attribute and calls
the methods of the outputs that are needed. Components never see flow-provided
code: the ``code`` template field is ignored.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from core.engine.errors import SuspendRun
from core.engine.events import MessageAdded, TokenChunk
from core.engine.inputs import Input
from core.engine.types import Message, new_id

if TYPE_CHECKING:  # pragma: no cover
    from core.engine.run_context import RunContext
    from core.engine.tools import Tool

__all__ = ["Component", "Output", "VertexInfo"]

_UNDEFINED = "__UNDEFINED__"


class Output:
    """One output handle: ``name`` -> ``method`` producing a value of ``types``."""

    def __init__(
        self,
        name: str,
        display_name: str,
        method: str,
        types: list[str],
        *,
        selected: str | None = None,
        cache: bool = True,
        allows_loop: bool = False,
        group_outputs: bool = False,
        tool_mode: bool = True,
        hidden: bool | None = None,
        display_names: dict[str, str] | None = None,
    ):
        self.name = name
        self.display_name = display_name
        self.method = method
        self.types = list(types)
        self.selected = selected if selected is not None else (self.types[0] if self.types else None)
        self.cache = cache
        self.allows_loop = allows_loop
        self.group_outputs = group_outputs
        self.tool_mode = tool_mode
        self.hidden = hidden
        self.display_names = display_names or {}

    def to_dict(self, locale: str = "en") -> dict[str, Any]:
        out: dict[str, Any] = {
            "allows_loop": self.allows_loop,
            "cache": self.cache,
            "display_name": self.display_names.get(locale, self.display_name),
            "group_outputs": self.group_outputs,
            "method": self.method,
            "name": self.name,
            "selected": self.selected,
            "tool_mode": self.tool_mode,
            "types": list(self.types),
            "value": _UNDEFINED,
        }
        if self.hidden is not None:
            out["hidden"] = self.hidden
        return out


class VertexInfo:
    """What a component may know about the vertex it runs as."""

    __slots__ = ("display_name", "id", "key", "source_of_chat_input")

    def __init__(self, id: str, key: str, display_name: str, source_of_chat_input: bool = False):
        self.id = id
        self.key = key
        self.display_name = display_name
        self.source_of_chat_input = source_of_chat_input


def _normalise_locale(locale: str | None) -> str:
    if not locale:
        return "en"
    return locale.split(",")[0].split(";")[0].strip().replace("_", "-").split("-")[0].lower() or "en"


class Component:
    """Base class of every component.

    Class attributes a subclass sets: ``key`` (registry key), ``display_name``,
    ``description``, ``icon``, ``category``, ``inputs``, ``outputs``; optionally
    ``display_names`` (locale -> name), ``aliases`` (legacy keys), ``legacy``,
    ``beta``, ``documentation``, ``is_input``/``is_output`` (chat/text I/O
    vertices), ``io_bound`` (may run concurrently with its layer),
    ``executes_code`` (runs user code in the sandbox; governed by the hardening
    switches), ``accepts_dynamic_fields`` (template fields not declared in ``inputs``, such
    as prompt variables, are passed in :attr:`extra_params`).
    """

    key: ClassVar[str] = ""
    display_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    icon: ClassVar[str] = ""
    category: ClassVar[str] = "custom"
    documentation: ClassVar[str] = ""
    display_names: ClassVar[dict[str, str]] = {}
    descriptions: ClassVar[dict[str, str]] = {}
    aliases: ClassVar[tuple[str, ...]] = ()
    legacy: ClassVar[bool] = False
    beta: ClassVar[bool] = False
    minimized: ClassVar[bool] = False
    is_input: ClassVar[bool] = False
    is_output: ClassVar[bool] = False
    is_loop: ClassVar[bool] = False
    io_bound: ClassVar[bool] = False
    accepts_dynamic_fields: ClassVar[bool] = False
    #: runs user-supplied code (in :mod:`core.sandbox`); blocked by SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS
    #: and unless SERVICE_ALLOW_CUSTOM_COMPONENTS is true
    executes_code: ClassVar[bool] = False
    inputs: ClassVar[list[Input]] = []
    outputs: ClassVar[list[Output]] = []
    #: names of the outputs the catalog node shows (dynamic components); None = all
    frontend_outputs: ClassVar[tuple[str, ...] | None] = None
    #: outputs may be declared per node in the flow JSON (``build_dynamic_output(name)``)
    dynamic_outputs: ClassVar[bool] = False
    #: named run signals: ``("notify", field)`` or ``("listen", field)``; a listener runs after the
    #: notifiers whose ``field`` value matches its own (Notify / Listen), even without an edge
    signal: ClassVar[tuple[str, str] | None] = None

    _input_map: ClassVar[dict[str, Input]]
    _output_map: ClassVar[dict[str, Output]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._input_map = {i.name: i for i in cls.inputs}
        cls._output_map = {o.name: o for o in cls.outputs}

    # -- class level ------------------------------------------------------
    @classmethod
    def input_map(cls) -> dict[str, Input]:
        return cls._input_map

    @classmethod
    def output_map(cls) -> dict[str, Output]:
        return cls._output_map

    @classmethod
    def localized_name(cls, locale: str | None = "en") -> str:
        return cls.display_names.get(_normalise_locale(locale), cls.display_name)

    @classmethod
    def to_frontend_node(cls, locale: str | None = "en") -> dict[str, Any]:
        """The node dict served by ``GET /api/v1/all`` (no ``code`` field: we never run flow code)."""
        loc = _normalise_locale(locale)
        template: dict[str, Any] = {"_type": "Component"}
        for inp in cls.inputs:
            template[inp.name] = inp.to_dict(loc)
        shown = [o for o in cls.outputs if cls.frontend_outputs is None or o.name in cls.frontend_outputs]
        outputs = [o.to_dict(loc) for o in shown]
        base_classes: list[str] = []
        for o in shown:
            for t in o.types:
                if t not in base_classes:
                    base_classes.append(t)
        return {
            "template": template,
            "description": cls.descriptions.get(loc, cls.description),
            "icon": cls.icon,
            "base_classes": base_classes,
            "display_name": cls.localized_name(loc),
            "documentation": cls.documentation,
            "minimized": cls.minimized,
            "custom_fields": {},
            "output_types": [],
            "pinned": False,
            "conditional_paths": [],
            "frozen": False,
            "outputs": outputs,
            "field_order": [i.name for i in cls.inputs],
            "beta": cls.beta,
            "legacy": cls.legacy,
            "edited": False,
            "metadata": {"module": f"{cls.__module__}.{cls.__name__}", "key": cls.key},
            "tool_mode": False,
        }

    # -- instance (one per vertex run) -------------------------------------
    def __init__(
        self,
        params: dict[str, Any] | None = None,
        *,
        context: RunContext | None = None,
        vertex: VertexInfo | None = None,
        extra_params: dict[str, Any] | None = None,
    ):
        from core.engine.run_context import RunContext

        self.context = context if context is not None else RunContext()
        self.vertex = vertex or VertexInfo(self.key or type(self).__name__, self.key, self.display_name)
        self.extra_params = extra_params or {}
        self.status: Any = None
        self.logs: list[dict[str, Any]] = []
        self.messages: list[Message] = []
        self._stopped: set[str] = set()
        params = params or {}
        for name, inp in self._input_map.items():
            if name in params:
                value = params[name]
            else:
                value = inp.value
                if isinstance(value, (dict, list)):
                    value = copy.deepcopy(value)
            setattr(self, name, value)

    @classmethod
    def build(cls, **params: Any) -> Component:
        """Convenience for tests: instantiate with coerced params and a default context."""
        coerced = {k: (cls._input_map[k].coerce(v) if k in cls._input_map else v) for k, v in params.items()}
        extra = {k: v for k, v in params.items() if k not in cls._input_map}
        return cls(coerced, extra_params=extra)

    # helpers for component code
    def log(self, message: Any, name: str = "") -> None:
        self.logs.append({"name": name, "message": message, "type": "text"})

    def stop(self, output_name: str) -> None:
        """Deactivate ``output_name``: vertices fed only by it are not run (routing)."""
        if output_name not in self._output_map:
            msg = f"Unknown output '{output_name}'"
            raise ValueError(msg)
        self._stopped.add(output_name)

    @property
    def stopped_outputs(self) -> set[str]:
        return self._stopped

    def active_outputs(self) -> list[str] | None:
        """Names of the outputs currently shown (dynamic outputs); ``None`` means all."""
        return None

    def send_message(self, message: Message) -> Message:
        """Store (through the run context) and announce a chat message (``add_message``)."""
        ctx = self.context
        if message.id is None:
            message.id = new_id()
        if not message.flow_id:
            message.flow_id = ctx.flow_id
        message.run_id = ctx.run_id
        if message.session_metadata is None:
            message.session_metadata = {"graph_run_id": ctx.run_id}
        source = message.properties.get("source") or {}
        if not source.get("id"):
            message.properties["source"] = {
                "id": self.vertex.id,
                "display_name": self.vertex.display_name,
                "source": self.vertex.display_name,
            }
        payload = message.to_dict()
        if ctx.store_message is not None:
            stored = ctx.store_message(payload)
            if isinstance(stored, dict) and stored.get("id"):
                message.id = stored["id"]
                payload["id"] = stored["id"]
                payload["data"]["id"] = stored["id"]
        ctx.send_event(MessageAdded(payload))
        self.messages.append(message)
        return message

    def emit_token(self, chunk: str, message_id: str) -> None:
        self.context.send_event(TokenChunk(chunk, message_id))

    # -- human in the loop ------------------------------------------------------
    def suspend(self, request: dict[str, Any], state: dict[str, Any] | None = None) -> NoReturn:
        """Pause the run until someone answers ``request``; the run resumes by building this vertex again.

        ``state`` is handed back through :meth:`resumed` with the answer. Never returns.
        """
        raise SuspendRun(request, state)

    def as_tools(self) -> list[Tool]:
        """The tools this component offers an agent (:class:`core.engine.tools.Tool`); none by default.

        Called on a built component (its inputs set, ``context`` given) by an agent that has it
        connected to its ``tools`` input; a component with one tool may also put it on a ``Tool``
        output (``api_build_tool``).
        """
        return []

    def resumed(self) -> dict[str, Any] | None:
        """``{"request_id", "answer", "state"}`` when this vertex is being built again after a suspension."""
        return self.context.resume.get(self.vertex.id)

    def check_egress_deadline(self) -> float | None:
        return self.context.remaining_time()
