"""Helpers of the extension tests: bundles written into a temporary site directory with a dist-info.

A fixture bundle is a real installed distribution as far as ``importlib.metadata`` can tell: a
package directory plus ``<dist>-<version>.dist-info`` with ``METADATA`` and ``entry_points.txt``
(group ``service.bundles``), in a directory on ``sys.path`` (or ``PYTHONPATH`` for servers), so
nothing is installed into the shared venv. Rewriting the package's files and reloading is what
``pip install --upgrade`` and ``POST .../reload`` do.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

COMPONENT = """
class {cls}(Component):
    key = "{key}"
    display_name = "{name}"
    description = "Extension test component."
    category = "{category}"
    inputs = [MessageTextInput("input_value", "Input", ""){extra_inputs}]
    outputs = [Output("message", "Message", "run", ["Message"])]

    def run(self) -> Message:
        {body}
        return Message(text=f"{{to_text(self.input_value)}}|{tag}|pid={{os.getpid()}}")
"""

HEADER = """
from __future__ import annotations

import os
import time

from core import hookimpl
from core.engine import Component, Message, Output
from core.engine.inputs import FloatInput, MessageTextInput
from core.engine.types import to_text
"""


def component(
    key: str, tag: str = "v1", *, extra_input: bool = False, sleep: float = 0.0, category: str = "exttest"
) -> str:
    """Source of one component class: answers ``<input>|<tag>|pid=<pid>`` after ``sleep`` seconds."""
    body = f"time.sleep({sleep})" if sleep else "pass"
    extra = ', FloatInput("extra", "Extra", 1.0)' if extra_input else ""
    return COMPONENT.format(
        cls=key, key=key, name=key.replace("_", " "), category=category, extra_inputs=extra, body=body, tag=tag
    )


def write_bundle(
    site: Path,
    dist: str,
    name: str,
    package: str,
    components: list[str],
    *,
    prelude: str = "",
    declared_name: str | None = None,
    module_missing: bool = False,
) -> Path:
    """Write (or rewrite) bundle ``name`` of distribution ``dist`` as package ``package`` under ``site``."""
    pkg = site / package
    if pkg.exists():
        shutil.rmtree(pkg)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[service.bundles]\n{name} = {package}.bundle\n")
    if module_missing:
        return pkg
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    classes = [c.split("class ", 1)[1].split("(", 1)[0] for c in components]
    source = HEADER + textwrap.dedent(prelude) + "\n".join(components)
    if declared_name:
        source += f"\nBUNDLE_NAME = {declared_name!r}\n"
    source += f"\n\n@hookimpl\ndef register_components():\n    return [{', '.join(classes)}]\n"
    (pkg / "bundle.py").write_text(source)
    return pkg


def remove_bundle(site: Path, dist: str, package: str) -> None:
    shutil.rmtree(site / package, ignore_errors=True)
    shutil.rmtree(site / f"{dist.replace('-', '_')}-1.0.dist-info", ignore_errors=True)


def flow_of(key: str, registry, node_id: str = "N-1") -> dict:
    """Chat Input -> ``key`` -> Chat Output, as the editor saves it (``key`` from ``registry``)."""
    from tests.flowkit import edge, flow, node

    chat_in = node("ChatInput", "ChatInput-AAAAA")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    middle = node(key, node_id, registry=registry)
    return flow(
        [chat_in, middle, chat_out],
        [edge(chat_in, "message", middle, "input_value"), edge(middle, "message", chat_out, "input_value")],
    )
