"""docs/components.md cannot drift: every native component's entry matches its class, every table key is listed."""

from __future__ import annotations

from pathlib import Path

import pytest
from service_bundle_a2a.bundle import all_components as a2a_components
from service_bundle_data.bundle import all_components as data_components
from service_bundle_documents import local, write_file
from service_bundle_models import guardrails, llm_ops, transform
from service_bundle_sandbox.python_repl_tool import PythonREPLTool
from service_bundle_standard.bundle import all_components as standard_components
from service_bundle_tools.bundle import all_components as tools_components
from service_knowledge.components import MemoryBase

from core.engine.catalog import COMPONENT_BUNDLES
from tests.catalog.docs_render import render

DOC = (Path(__file__).resolve().parents[2] / "docs" / "components.md").read_text(encoding="utf-8")
CLASSES = [
    *standard_components(),
    *data_components(),
    *tools_components(),
    *a2a_components(),
    *llm_ops.COMPONENTS,
    *transform.COMPONENTS,
    *guardrails.COMPONENTS,
    PythonREPLTool,
    *local.COMPONENTS,
    *write_file.COMPONENTS,
    MemoryBase,
]  # the Python Interpreter: its own hand-written entry


@pytest.mark.parametrize("klass", CLASSES, ids=lambda k: k.key)
def test_entry_matches_class(klass):
    assert render(klass) in DOC, f"docs/components.md: the entry of {klass.key} differs from the class"


def test_not_installed_table_lists_every_key():
    for key, info in COMPONENT_BUNDLES.items():
        assert f"| `{key}` | {info.display_name} | `{info.bundle}` | {info.status} |" in DOC
