"""``python -m bench run`` (figures, results.json, RESULTS.md) and ``python -m bench profile`` (hot path)."""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run-surface benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start `service run`, load it, write bench/RESULTS.md and results.json")
    run.add_argument("--duration", type=float, default=10.0, help="seconds per measured step (10)")
    run.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up per step (2)")
    run.add_argument(
        "--tool",
        choices=["auto", "wrk", "python"],
        default="auto",
        help="load generator: wrk when installed (auto), or the Python one",
    )
    run.add_argument("--rss-runs", type=int, default=10_000, help="runs for the RSS growth figure (10000)")
    run.add_argument("--no-write", action="store_true", help="print only")
    prof = sub.add_parser("profile", help="cProfile the simplified run in process")
    prof.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    if args.command == "run":
        from bench.runner import main as run_main

        run_main(
            duration=args.duration,
            warmup=args.warmup,
            tool=args.tool,
            runs_for_rss=args.rss_runs,
            write=not args.no_write,
        )
    else:
        from bench.profile import main as profile_main

        print(profile_main(runs=args.runs))


if __name__ == "__main__":
    main()
