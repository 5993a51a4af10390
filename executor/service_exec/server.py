"""``service-exec serve``: the simplified run and v2 workflow endpoints for a fixed set of flows.

A plain Flask app (the project's web framework) without the plugin host, flask-smorest,
SQLAlchemy or sessions: three routes over :class:`service_exec.engine.Executor`, one API key
from ``SERVICE_EXEC_API_KEY`` (compared in constant time), nothing kept between requests.
Served by gunicorn with gevent workers, as the full service is.

Routes:

* ``POST /api/v1/run/<flow id or endpoint name>`` (``?stream=true``): the v1 simplified run;
* ``POST /api/v2/workflows``: ``mode`` ``sync`` or ``stream`` (protocol ``service``); ``background``
  is 422 (a stateless executor keeps no jobs);
* ``GET /health``: ``{"status": "ok", "flows": n}``.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from core.engine import RunEvent, RunResult, simplified_run_response
from core.engine.errors import RunRefused
from core.engine.execution import failure_text
from service_exec import telemetry, wire
from service_exec.engine import Executor, Flow, InvalidRun, Refused

log = logging.getLogger(__name__)

GLOBAL_VAR_HEADER = "x-service-global-var-"
V2_FIELDS = {
    "flow_id",
    "input_value",
    "tweaks",
    "session_id",
    "mode",
    "stream_protocol",
    "data",
    "files",
    "start_component_id",
    "stop_component_id",
    "output_ids",
    "globals",
    "idempotency_key",
}


class Problem(Exception):
    def __init__(self, status: int, detail: Any):
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _invalid(loc: list[str], msg: str, type_: str = "value_error") -> Problem:
    return Problem(422, [{"loc": loc, "msg": msg, "type": type_}])


def create_app(executor: Executor) -> Flask:
    app = Flask("service_exec")
    app.json.sort_keys = False  # type: ignore[attr-defined]
    telemetry.configure()  # OTEL_* (TelemetryError when this install cannot export as asked)
    telemetry.install_http(app)
    key = executor.settings.api_key

    @app.errorhandler(Problem)
    def _problem(exc: Problem):
        return jsonify({"detail": exc.detail}), exc.status

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        return jsonify({"detail": exc.description if exc.code != 404 else "Not Found"}), exc.code

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return jsonify({"detail": "Internal Server Error"}), 500

    @app.before_request
    def _authenticate() -> None:
        if request.path == "/health":
            return
        given = request.headers.get("x-api-key") or request.args.get("x-api-key") or ""
        if key is None or not hmac.compare_digest(given.encode(), key.encode()):
            raise Problem(403, "An API key must be passed as query or header" if not given else "Invalid API key")

    @app.get("/health")
    def health():
        return {"status": "ok", "flows": len(executor.flows)}

    @app.post("/api/v1/run/<flow_id_or_name>")
    def simplified_run(flow_id_or_name: str):
        flow = executor.find(flow_id_or_name)
        if flow is None:
            raise Problem(404, f"Flow identifier {flow_id_or_name} not found")
        body = _json_object()
        input_value = body.get("input_value")
        if input_value is not None and not isinstance(input_value, str):
            raise _invalid(["body", "input_value"], "Input should be a valid string", "string_type")
        tweaks = _tweaks(body.get("tweaks"))
        output_type = str(body.get("output_type") or "chat")
        output_component = str(body.get("output_component") or "")
        input_type = str(body.get("input_type") or "chat")
        graph = _build(executor, flow, tweaks, [(input_value, input_type)])
        options: dict[str, Any] = {
            "input_type": input_type,
            "session_id": body.get("session_id"),
            "request_vars": _request_vars(),
            "api": "run",
            "carrier": request.headers,
        }

        def respond(result: RunResult) -> dict[str, Any]:
            return simplified_run_response(
                result, input_value=input_value, output_type=output_type, output_component=output_component
            )

        if request.args.get("stream", "").lower() in ("1", "true"):
            items = executor.stream(flow, input_value, graph=graph, keep=wire.RUN_STREAM_EVENTS, **options)

            def v1() -> Iterator[str]:
                for item in items:
                    if isinstance(item, RunEvent):
                        yield wire.event_frame(item)
                    elif isinstance(item, RunResult):
                        if item.ok:
                            yield wire.frame("end", {"result": respond(item)})
                        else:
                            yield wire.frame("error", {"error": failure_text(item)})
                    else:
                        yield wire.frame("error", {"error": "Internal Server Error"})

            return Response(v1(), mimetype="text/event-stream")
        result = executor.run(flow, input_value, graph=graph, **options)
        if not result.ok:
            raise Problem(500, failure_text(result))
        return respond(result)

    @app.post("/api/v2/workflows")
    def workflows():
        body = _json_object()
        extra = sorted(set(body) - V2_FIELDS)
        forbidden = "Extra inputs are not permitted"
        if extra:
            raise Problem(
                422,
                [{"loc": ["body", k], "msg": forbidden, "type": "extra_forbidden"} for k in extra],
            )
        flow_id = body.get("flow_id")
        if not isinstance(flow_id, str) or not flow_id:
            raise _invalid(["body", "flow_id"], "Field required", "missing")
        mode = body.get("mode") or "sync"
        if mode not in ("sync", "stream", "background"):
            raise _invalid(["body", "mode"], "Input should be 'sync', 'stream' or 'background'", "enum")
        if mode == "background":
            raise _invalid(
                ["body", "mode"], "background runs need a job store: the stateless executor runs sync or stream"
            )
        protocol = body.get("stream_protocol") or "service"
        if protocol != "service":
            raise Problem(
                422,
                {
                    "error": f"Unknown stream protocol: {protocol}",
                    "code": "UNKNOWN_STREAM_PROTOCOL",
                    "available": ["service"],
                },
            )
        flow = executor.find(flow_id)
        if flow is None:
            raise Problem(
                404,
                {
                    "error": "Flow not found",
                    "code": "FLOW_NOT_FOUND",
                    "message": f"Flow {flow_id} not found",
                    "flow_id": flow_id,
                },
            )
        input_value = body.get("input_value") or ""
        if not isinstance(input_value, str):
            raise _invalid(["body", "input_value"], "Input should be a valid string", "string_type")
        tweaks = _tweaks(body.get("tweaks"))
        session_id = body.get("session_id")
        graph = _build(executor, flow, tweaks, [(input_value, "chat")])
        options: dict[str, Any] = {
            "session_id": session_id,
            "request_vars": _request_vars(),
            "api": "workflows",
            "carrier": request.headers,
        }
        if mode == "stream":
            items = executor.stream(flow, input_value, graph=graph, keep=wire.V2_STREAM_EVENTS, **options)

            def v2() -> Iterator[str]:
                seq = 0
                for item in items:
                    if isinstance(item, RunEvent):
                        yield wire.sse(item.name, item.payload(), seq)
                        seq += 1
                    elif isinstance(item, RunResult):
                        for out in wire.output_events(item):
                            yield wire.sse("output", out, seq)
                            seq += 1
                        if not item.ok:
                            yield wire.sse("error", {"error": failure_text(item)}, seq)
                            seq += 1
                        else:
                            yield wire.sse("end", {"build_duration": None}, seq)
                            seq += 1
                    else:
                        yield wire.sse("error", {"error": "Internal Server Error"}, seq)

            return Response(
                v2(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
            )
        result = executor.run(flow, input_value, graph=graph, **options)
        return wire.v2_response(result, flow.id, session_id, None if result.ok else failure_text(result))

    return app


def _json_object() -> dict[str, Any]:
    body = request.get_json(silent=True) if request.get_data() else {}
    if not isinstance(body, dict):
        raise _invalid(["body"], "Input should be a valid JSON object", "model_attributes_type")
    return body


def _tweaks(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _invalid(["body", "tweaks"], "Input should be a valid dictionary", "dict_type")
    return dict(value)


def _build(
    executor: Executor, flow: Flow, tweaks: Mapping[str, Any] | None, inputs: list[tuple[str | None, str]]
) -> Any:
    """The run's graph, or the answer the full service gives: 403 (catalog policy), 422/400 (tweak policy,
    answered as the run service answers it: ``{"detail": {"code": "TWEAKS_REFUSED", ...}}``), 422 (invalid)."""
    try:
        return executor.build(flow, tweaks, inputs)
    except InvalidRun as exc:
        raise Problem(422, exc.items) from None
    except Refused as exc:
        raise Problem(403, str(exc)) from None
    except RunRefused as exc:
        raise Problem(exc.status, exc.detail) from None


def _request_vars() -> dict[str, str]:
    return {
        k[len(GLOBAL_VAR_HEADER) :].upper().replace("-", "_"): v
        for k, v in request.headers.items()
        if k.lower().startswith(GLOBAL_VAR_HEADER)
    }


def serve(app_factory: Callable[[], Flask], bind: str, workers: int) -> None:
    """gunicorn with gevent workers, the full service's server, around ``app_factory()``."""
    from gunicorn.app.base import BaseApplication

    class Server(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for k, v in {
                "bind": bind,
                "workers": workers,
                "worker_class": "gevent",
                "worker_connections": 1000,
                "preload_app": True,
                "timeout": 120,
                "keepalive": 5,
                "errorlog": "-",
                "control_socket_disable": True,
            }.items():
                if k in self.cfg.settings:
                    self.cfg.set(k, v)

        def load(self) -> Flask:
            return app_factory()

    Server().run()
