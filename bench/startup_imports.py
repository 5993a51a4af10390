# ruff: noqa: S603  (runs this interpreter on a fixed script: no shell)
"""``python -m bench.startup_imports [--code DIR] [--runs N]``: what building the app costs, in one process.

Each run is a fresh interpreter that imports ``core.app`` and calls ``create_app()`` with every installed
plugin on a SQLite database: ``cold`` on a new config directory (migrations), ``warm`` on the directory a
cold run left (a restart). It reports the modules imported, the heavy ones among them
(``tests/core/test_import_budget.py``'s list), the import and ``create_app`` CPU times and the process's
RSS. ``--code DIR`` counts another checkout the same way (a ``git archive`` of an older commit), run
alternately with this one so both see the same machine; the module counts do not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import json, sys, time
HEAVY = json.loads(sys.argv[2])
c0 = time.process_time()
from core.app import create_app
c1 = time.process_time()
import importlib.metadata, pathlib
root = pathlib.Path.cwd()  # this checkout's plugins and bundles only (the environment may hold others)
ours = {p.name for d in ("plugins", "bundles") for p in (root / d).glob("*/service_*")}
names = [ep.name for g in ("service.plugins", "service.bundles") for ep in importlib.metadata.entry_points(group=g)
         if ep.value.split(".")[0].split(":")[0] in ours]
create_app({"SERVICE_CONFIG_DIR": sys.argv[1], "SERVICE_DATABASE_URL": f"sqlite:///{sys.argv[1]}/service.db"}, names)
c2 = time.process_time()
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS"))
heavy = sorted(h for h in HEAVY if h in sys.modules)
print(json.dumps({"import_s": c1 - c0, "create_app_s": c2 - c1, "rss_mib": rss / 1024,
                  "modules": len(sys.modules), "heavy": heavy}))
"""


def heavy_list() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.core.test_import_budget import HEAVY

    return sorted(HEAVY)


def probe(code: Path, config_dir: str, heavy: list[str]) -> dict:
    paths = [code, code / "executor", *sorted((code / "plugins").iterdir()), *sorted((code / "bundles").iterdir())]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(PYTHONPATH=os.pathsep.join(map(str, paths)), SERVICE_ENV_FILE=os.devnull)
    out = subprocess.run(
        [sys.executable, "-c", PROBE, config_dir, json.dumps(heavy)],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, help="another checkout, measured alternately with this one")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    heavy = heavy_list()
    codes = {"now": ROOT, **({"other": args.code.resolve()} if args.code else {})}
    results: dict[str, dict[str, list]] = {name: {} for name in codes}
    for _ in range(args.runs):
        for name, code in codes.items():
            cfg = tempfile.mkdtemp(prefix="startup-imports-")
            for kind in ("cold", "warm"):
                for key, value in probe(code, cfg, heavy).items():
                    results[name].setdefault(f"{kind}_{key}", []).append(value)
    for name, figures in results.items():
        print(f"== {name} ({codes[name]})")
        for key, values in figures.items():
            if key.endswith("heavy"):
                print(f"  {key}: {values[-1]}")
            else:
                print(f"  {key}: median {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f})")


if __name__ == "__main__":
    main()
