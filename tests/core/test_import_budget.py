"""Building the app imports nothing heavy: the SDKs a request may never need load on first use.

Each name below was measured (``python -X importtime``, docs/performance.md) as costing tens to hundreds
of milliseconds at start-up and memory in every worker. A fresh interpreter builds the app with every
installed plugin on a database that is already current (a restart); none of them may be imported then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: module -> what it cost at start-up (import time on the bench machine) and who now imports it lazily
HEAVY = {
    "mcp": "MCP SDK, 0.45 s with mcp_types: service_mcp.protocol on the first MCP message",
    "mcp_types": "MCP SDK types: as above",
    "a2a": "A2A SDK, 0.2 s: service_a2a (cards, rpc, tasks) and the A2A Agent component on first use",
    "google.protobuf": "protobuf, through the A2A SDK's v1.0 types: as above",
    "pydantic": "pydantic, 80 ms: the MCP, A2A and AG-UI SDKs' models",
    "ag_ui": "AG-UI SDK, 45 ms: service_workflows.agui on the first AG-UI stream",
    "numpy": "NumPy, 35 ms: the knowledge plugin's embeddings on the first ingestion or search",
    "anyio": "anyio, 25 ms: the MCP clients when they first talk to a server",
    "starlette": "Starlette, through the SDKs: never needed by this WSGI service",
    "uvicorn": "uvicorn, through the MCP SDK (with multiprocessing): never needed",
    "jsonschema": "jsonschema, 40 ms: an MCP tool's argument check on its first call",
    "redis": "Redis client, 50 ms: only when a Redis is configured",
    "alembic": "Alembic, 0.2 s with Mako and Pygments: only when the schema is not current",
    "mako": "Mako (Alembic's templates): as above",
    "torch": "PyTorch: the knowledge plugin's optional backend, on first use only",
    "tokenizers": "the local embedding model's tokenizer: on first use",
}

# every plugin and bundle of this checkout (the shared environment may hold other checkouts' too)
PROBE = """
import importlib.metadata, json, pathlib, sys
root = pathlib.Path(sys.argv[2])
ours = {p.name for d in ("plugins", "bundles") for p in (root / d).glob("*/service_*")}
names = [ep.name for g in ("service.plugins", "service.bundles") for ep in importlib.metadata.entry_points(group=g)
         if ep.value.split(".")[0].split(":")[0] in ours]
from core.app import create_app
cfg = sys.argv[1]
create_app({"SERVICE_CONFIG_DIR": cfg, "SERVICE_DATABASE_URL": "sqlite:///" + cfg + "/service.db"}, names)
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after_create_app(config_dir: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env["SERVICE_ENV_FILE"] = os.devnull
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(config_dir), str(ROOT)], env=env, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def restart_modules(tmp_path_factory) -> tuple[set[str], set[str]]:
    """The modules of a first start (migrations) and of a restart on the same directory, all plugins."""
    config_dir = tmp_path_factory.mktemp("import-budget")
    first = _modules_after_create_app(config_dir)
    return first, _modules_after_create_app(config_dir)


def test_a_restart_imports_no_heavy_module(restart_modules):
    _first, again = restart_modules
    plugins = {m.split(".")[0] for m in again if m.startswith("service_") and "." not in m}
    assert {"service_mcp", "service_a2a", "service_workflows", "service_knowledge"} <= plugins  # all of them built
    loaded = {name: why for name, why in HEAVY.items() if name in again}
    assert not loaded, f"heavy modules imported while building the app: {loaded}"


def test_only_the_first_start_runs_alembic(restart_modules):
    """The migrations import Alembic on an empty database; a current one is recognised in one query."""
    first, again = restart_modules
    assert "alembic" in first
    assert "alembic" not in again


def test_a_lazy_module_imports_on_its_first_attribute_read():
    """The stand-in imports the real module once, on the first read, and answers with its attributes."""
    import importlib

    from core.engine import lazy

    name = "json.tool"  # any module not imported yet by this process
    sys.modules.pop(name, None)
    stand_in = lazy.lazy_import(name)
    assert name not in sys.modules
    main = stand_in.main
    assert name in sys.modules
    assert main is importlib.import_module(name).main
    assert lazy.lazy_import(name) is sys.modules[name]  # already imported: the module itself


def test_the_lazily_imported_modules_import(restart_modules):
    """What the plugins defer still imports (the first use pays it, nothing else changes)."""
    import importlib

    for name in ("service_mcp.protocol", "service_a2a.rpc", "service_workflows.agui", "service_knowledge.vectors"):
        assert importlib.import_module(name).__name__ == name
