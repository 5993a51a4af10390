"""Timing figures (printed, never asserted): a 1,000-node linear flow, per-vertex overhead, import time.

Run with ``-s`` to see them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.engine import Graph, RunContext, run_flow
from tests.flowkit import standard_registry

ROOT = Path(__file__).resolve().parents[2]


def linear_flow(n: int) -> dict:
    nodes, edges = [], []
    for i in range(n):
        nid = f"Pass-{i}"
        nodes.append(
            {
                "id": nid,
                "type": "genericNode",
                "data": {
                    "id": nid,
                    "type": "Pass",
                    "node": {
                        "template": {"input_message": {"type": "str", "show": True, "value": "x" if i == 0 else ""}}
                    },
                },
            }
        )
        if i:
            edges.append(
                {
                    "source": f"Pass-{i - 1}",
                    "target": nid,
                    "data": {
                        "sourceHandle": {"id": f"Pass-{i - 1}", "name": "output_message", "output_types": ["Message"]},
                        "targetHandle": {
                            "id": nid,
                            "fieldName": "input_message",
                            "inputTypes": ["Message"],
                            "type": "str",
                        },
                    },
                }
            )
    return {"nodes": nodes, "edges": edges}


def test_thousand_node_linear_flow():
    reg = standard_registry()
    data = linear_flow(1000)
    best = {"plain": float("inf"), "events": float("inf"), "build": float("inf")}
    for _ in range(3):
        t0 = time.perf_counter()
        result = run_flow(data, reg, RunContext())
        best["plain"] = min(best["plain"], time.perf_counter() - t0)
        assert result.ok and result.output("Pass-999").text == "x" and len(result.order) == 1000
        events = []
        t0 = time.perf_counter()
        result = run_flow(data, reg, RunContext(emit=lambda e, log=events: log.append(e.name)))
        best["events"] = min(best["events"], time.perf_counter() - t0)
        assert events.count("end_vertex") == 1000 and events[-1] == "end"
        t0 = time.perf_counter()
        Graph.build(data, reg)
        best["build"] = min(best["build"], time.perf_counter() - t0)
    print(
        f"\n1000-node flow: build+run {best['plain'] * 1000:.1f} ms, with events {best['events'] * 1000:.1f} ms, "
        f"build only {best['build'] * 1000:.1f} ms, per vertex {best['plain'] * 1000:.1f} us"
    )


def test_import_time_printed():
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import core.engine"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    )
    total = [line for line in out.stderr.splitlines() if line.rstrip().endswith("| core.engine")]
    assert total
    assert "pandas" not in out.stderr
    print("\nimport core.engine (cumulative us):", total[-1].split("|")[1].strip())
