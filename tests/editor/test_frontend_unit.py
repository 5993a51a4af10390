"""Run the Vitest unit tests of the frontend when Node and its dependencies are present (else skip, saying why)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "plugins" / "editor" / "frontend"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed (the built editor needs no Node)")
@pytest.mark.skipif(
    not (FRONTEND / "node_modules" / ".bin" / "vitest").exists(),
    reason="frontend dependencies missing: run `npm install` in plugins/editor/frontend",
)
def test_vitest_suite_passes():
    result = subprocess.run(
        [str(FRONTEND / "node_modules" / ".bin" / "vitest"), "run", "--reporter=dot"],
        cwd=FRONTEND,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
