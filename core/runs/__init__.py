"""The run service: every surface runs flows through here (see :mod:`core.runs.service`).

* :mod:`core.runs.service`: ``RunRequest`` -> ``prepare`` -> ``execute`` | ``stream``
* :mod:`core.runs.jobs`: the same in the background (``enqueue``), and ``resume`` from a checkpoint
* :mod:`core.runs.checkpoints`: suspended runs in the database
* :mod:`core.runs.wire`: the typed events in the reference's wire framings
* :mod:`core.runs.tweaks`: ``SERVICE_TWEAKS_POLICY`` (:mod:`core.engine.tweaks`) answered as ``ApiError``
* :mod:`core.runs.hook_ports`: the engine's run ports (:mod:`core.engine.ports`) over the plugins' hooks
* :mod:`core.runs.admission`: who a project's ``auth_type`` admits on MCP and A2A, and as whom
* :mod:`core.runs.public`: the anonymous visitor of a public flow (``client_id``, rate limit, names)
* :mod:`core.runs.sse`: the ``text/event-stream`` response of every streaming surface
"""

from core.runs.hook_ports import GLOBAL_VAR_HEADER, make_context, registry, request_variables
from core.runs.public import shared_flow_id
from core.runs.service import (
    FlowNotFound,
    PreparedRun,
    Resume,
    RunInput,
    RunOutcome,
    RunRequest,
    build,
    execute,
    failure_text,
    prepare,
    resolve,
    stream,
    trace_context,
)

__all__ = [
    "GLOBAL_VAR_HEADER",
    "FlowNotFound",
    "PreparedRun",
    "Resume",
    "RunInput",
    "RunOutcome",
    "RunRequest",
    "build",
    "execute",
    "failure_text",
    "make_context",
    "prepare",
    "registry",
    "request_variables",
    "resolve",
    "shared_flow_id",
    "stream",
    "trace_context",
]
