# ruff: noqa: S603, S607  (starts the service under valgrind, pgrep and callgrind_control: fixed argv, no shell)
"""``python -m bench.served_instructions [--code DIR] [--runs N]``: instructions per served simplified run.

Wall-clock figures on a shared VM move by 10-30% from minute to minute; instruction counts do not.
This starts ``service run`` with one gevent worker under ``valgrind --tool=callgrind`` (Debian's
``valgrind``), signs in, makes the Chat Input -> Chat Output flow, sends 80 warm-up runs, then counts
the worker's instructions over ``--runs`` runs sent by 8 keep-alive clients: gunicorn, gevent, the
monitor's recorder thread and the group commit included.

``--code DIR``: a checkout of other code to count (a ``git worktree``; see ``bench.common.Service``).
``--set NAME=VALUE`` (repeatable): a setting of the counted service (``SERVICE_`` is added when missing),
e.g. ``--set DISABLED_PLUGINS=observability`` or ``--set NATIVE_TRACING=false``.
``--keep DIR``: copy the counted worker's callgrind output to DIR (``callgrind_annotate --inclusive=yes``).
``--published``: publish the flow first (the versions plugin, issue 31), so every counted run resolves
its published version. About a minute per count.
"""

from __future__ import annotations

import argparse
import glob
import http.client
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench import common


def count(
    code: Path | None,
    runs: int,
    clients: int = 8,
    published: bool = False,
    settings: dict[str, str] | None = None,
    keep: Path | None = None,
) -> float:
    """Millions of instructions per served run."""
    out = Path(tempfile.mkdtemp(prefix="served-cg-"))
    wrap = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--trace-children=yes"]
    wrap.append(f"--callgrind-out-file={out}/cg.%p")
    svc = common.Service(out, workers=1, wrap=wrap, code=code, **(settings or {}))
    try:
        svc.wait(timeout=600)
        svc.setup()
        if published:
            status, answer = svc.api.call("POST", f"/api/v1/flows/{svc.echo}/publish", {}, svc.bearer)
            if status != 200:
                raise RuntimeError(f"publish answered {status}: {answer}")
        path = f"/api/v1/run/{svc.echo}"
        headers = {**svc.key, "Content-Type": "application/json"}

        def client(n: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=120)
            for _ in range(n):
                conn.request("POST", path, body=svc.body, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"run answered {response.status}")

        def load(total: int) -> None:
            threads = [threading.Thread(target=client, args=(total // clients,)) for _ in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        load(80)
        worker = subprocess.run(["pgrep", "-P", str(svc.proc.pid)], capture_output=True, text=True).stdout.split()[0]
        subprocess.run(["callgrind_control", "-i", "on", worker], capture_output=True, check=True)
        load(runs - runs % clients)
        subprocess.run(["callgrind_control", "-i", "off", worker], capture_output=True, check=True)
        subprocess.run(["callgrind_control", "-d", worker], capture_output=True, check=True)
        time.sleep(2)
        total = 0
        for name in glob.glob(f"{out}/cg.{worker}*"):
            with open(name, errors="replace") as handle:
                total += next((int(line.split()[1]) for line in handle if line.startswith("totals:")), 0)
        if keep is not None:  # for ``callgrind_annotate``: where the instructions went, by C function
            keep.mkdir(parents=True, exist_ok=True)
            for name in glob.glob(f"{out}/cg.{worker}*"):
                shutil.copy(name, keep)
        return total / (runs - runs % clients) / 1e6
    finally:
        common.stop(svc.proc)
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.served_instructions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, help="a checkout of other code to count (default: this one)")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--published", action="store_true", help="publish the flow first (a published version runs)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a service setting")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="copy the counted worker's callgrind output here")
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    label = (str(args.code) if args.code else "this checkout") + (", published flow" if args.published else "")
    label += "".join(f" {k}={v}" for k, v in settings.items())
    figure = count(
        args.code.resolve() if args.code else None,
        args.runs,
        published=args.published,
        settings=settings,
        keep=args.keep,
    )
    print(f"{label}: {figure:.2f} M instructions per served run ({args.runs} runs, 8 clients)")


if __name__ == "__main__":
    main()
