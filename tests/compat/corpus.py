"""The reference's starter projects, fetched at test time (never committed: they carry the reference's code).

``langflow-base`` wheels are fetched with ``pip download --no-deps`` into a cache directory outside the
repository (``SERVICE_COMPAT_CACHE``, default ``~/.cache/service-compat``) and the starters are read from
the wheel in memory. A version that cannot be fetched is reported as such (the tests skip naming it).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

#: the latest wheel of each release line the service implements (1.12, and the 0.11 / 0.10 wheels that
#: pair with 1.11 / 1.10)
VERSIONS = ("1.12.8", "0.11.6", "0.10.3")
STARTERS_DIR = "langflow/initial_setup/starter_projects/"


def cache_dir() -> Path:
    return Path(os.environ.get("SERVICE_COMPAT_CACHE") or Path.home() / ".cache" / "service-compat")


@functools.cache
def wheel(version: str) -> Path | str:
    """The cached wheel of ``langflow-base==version`` (downloaded once), or why it could not be had."""
    found = sorted(cache_dir().glob(f"langflow_base-{version}-*.whl"))
    if found:
        return found[0]
    cache_dir().mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(cache_dir()),
             f"langflow-base=={version}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"pip download langflow-base=={version} failed: {exc}"
    found = sorted(cache_dir().glob(f"langflow_base-{version}-*.whl"))
    if done.returncode != 0 or not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        return f"pip download langflow-base=={version} failed: {tail[0]}"
    return found[0]


@functools.cache
def starters(version: str) -> dict[str, dict[str, Any]] | str:
    """``{name: flow document}`` of the version's starter projects, or why there are none."""
    path = wheel(version)
    if isinstance(path, str):
        return path
    out: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith(STARTERS_DIR) and name.endswith(".json"):
                out[name[len(STARTERS_DIR) : -len(".json")]] = json.loads(archive.read(name))
    return out or f"langflow-base=={version} has no starter projects"
