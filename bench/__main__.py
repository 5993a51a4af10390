"""``python -m bench [scenario ...] [--scale-out]`` (figures, results.json, RESULTS.md); ``python -m bench profile``;
``python -m bench sessions`` (the cost of the session revocation check, bench/sessions.json).

Scenarios: startup, run, ceiling, workflows, flows, build, datascale, memory, webhook, catalog, agent, responses,
otel (default: all of them).
``--scale-out`` adds PostgreSQL (a fresh ``service_bench`` database on 127.0.0.1:5432), Redis
(db 9 on 127.0.0.1:6379, our keys deleted after) and RQ ``service worker`` processes: builds on RQ
and webhooks.
"""

from __future__ import annotations

import argparse


def main() -> None:
    from bench.runner import ALL

    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"profile, sessions, all (default) or any of: {', '.join(ALL)}")
    parser.add_argument("--scale-out", action="store_true", help="add PostgreSQL, Redis and RQ workers")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measured load step (5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up per load step (1)")
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto", help="load generator")
    parser.add_argument("--memory-runs", type=int, default=10_000, help="runs for the RSS growth figure (10000)")
    parser.add_argument("--runs", type=int, default=2000, help="profile: runs to profile (2000)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    names = tuple(args.scenarios) or ("all",)
    if names == ("profile",):
        from bench.profile import main as profile_main

        print(profile_main(runs=args.runs))
        return
    if names == ("sessions",):
        from bench.sessions import main as sessions_main

        print(sessions_main())
        return
    if "all" in names:
        names = ALL
    unknown = [n for n in names if n not in ALL]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    from bench.runner import main as run_main

    run_main(
        names,
        scale_out=args.scale_out,
        tool=args.tool,
        duration=args.duration,
        warmup=args.warmup,
        memory_runs=args.memory_runs,
        write=not args.no_write,
    )


if __name__ == "__main__":
    main()
