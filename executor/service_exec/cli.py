"""``service-exec``: run one exported flow, or serve several, with the engine alone.

    service-exec run FLOW.json --input "hello" [--tweaks '{"ChatInput-1": {...}}'] [--stream]
    service-exec serve FLOW.json [FLOW.json ...] [--host 0.0.0.0] [--port 7860] [--workers 2]

``run`` prints the v1 simplified run response (or, with ``--stream``, the v1 run stream: one
``{"event", "data"}`` object per event) and exits 0, or 1 when the run failed, 2 on bad input.
``serve`` needs ``SERVICE_EXEC_API_KEY``. argparse rather than click: the standard library
keeps ``run`` as light to start as possible.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="service-exec", description="Run exported flows without the service.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one flow and print its result")
    run.add_argument("flow", help="exported flow JSON file")
    run.add_argument("--input", default=None, help="the input value (chat message; empty when not given)")
    run.add_argument("--input-type", default="chat", help="chat (default), text or any")
    run.add_argument("--output-type", default="chat", help="chat (default), text, any or debug")
    run.add_argument("--tweaks", default=None, help='JSON object {"<component id>": {"<field>": value}}')
    run.add_argument("--session-id", default=None)
    run.add_argument("--stream", action="store_true", help="print the events as they come")
    serve = sub.add_parser("serve", help="serve the simplified run and v2 workflow endpoints for the flows")
    serve.add_argument("flows", nargs="+", help="exported flow JSON files")
    serve.add_argument("--host", default=os.environ.get("SERVICE_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("SERVICE_PORT", "7860")))
    serve.add_argument("--workers", type=int, default=int(os.environ.get("SERVICE_WORKERS", "2")))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from core.engine import RunEvent, simplified_run_response
    from core.engine.errors import RunRefused
    from core.engine.execution import failure_text
    from service_exec import telemetry, wire
    from service_exec.engine import Executor, FlowError, InvalidRun, Refused, read_flow

    tweaks: Any = None
    if args.tweaks:
        try:
            tweaks = json.loads(args.tweaks)
        except ValueError as exc:
            print(f"error: --tweaks is not JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(tweaks, dict):
            print("error: --tweaks must be a JSON object", file=sys.stderr)
            return 2
    try:
        executor = Executor.from_files([])
        flow = read_flow(args.flow)
        # an input given twice (--input and a tweak of the input component) is refused, as the service does
        graph = executor.build(flow, tweaks, [(args.input, args.input_type)])
    except (FlowError, InvalidRun, Refused, RunRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        telemetry.configure()  # OTEL_*: the run's span continues TRACEPARENT when the caller set it
    except telemetry.TelemetryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    value = args.input if args.input is not None else ""

    def emit(event: RunEvent) -> None:
        if event.name in wire.RUN_STREAM_EVENTS:
            out.write(wire.event_frame(event))
            out.flush()

    result = executor.run(
        flow,
        value,
        graph=graph,
        input_type=args.input_type,
        session_id=args.session_id,
        emit=emit if args.stream else None,
        api="cli",
        carrier=telemetry.env_carrier(),
    )
    telemetry.shutdown()  # exports the run's spans before the process ends
    body = simplified_run_response(result, input_value=value, output_type=args.output_type)
    if args.stream:
        out.write(
            wire.frame("end", {"result": body}) if result.ok else wire.frame("error", {"error": failure_text(result)})
        )
    elif result.ok:
        out.write(json.dumps(body, indent=2) + "\n")
    else:
        print(failure_text(result), file=sys.stderr)
    out.flush()
    return 0 if result.ok else 1


def _serve(args: argparse.Namespace) -> int:
    from gevent import monkey

    monkey.patch_all()  # before the engine's thread pools and sockets exist, as the full service does

    from service_exec import telemetry
    from service_exec.engine import Executor, FlowError
    from service_exec.server import create_app, serve

    try:
        executor = Executor.from_files(args.flows)
        telemetry.configure()
    except (FlowError, telemetry.TelemetryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not executor.settings.api_key:
        print("error: set SERVICE_EXEC_API_KEY (the key every request must send as x-api-key)", file=sys.stderr)
        return 2
    print(f"serving {len(executor.flows)} flow(s) on http://{args.host}:{args.port}", file=sys.stderr)
    for flow in executor.flows.values():
        print(f"  {flow.id}  {flow.name}", file=sys.stderr)
    serve(lambda: create_app(executor), f"{args.host}:{args.port}", args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
