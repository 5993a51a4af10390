"""Modules imported on first use, so that building the app does not pay for what a request may never need.

``name = lazy_import("package.module")`` binds a stand-in module; the first attribute read imports the
real module (through the import system's own per-module lock, so two threads or greenlets asking at once
get one import) and every read after that is delegated to it. Type checkers see the real module when the
binding is written so::

    if TYPE_CHECKING:
        from service_mcp import protocol
    else:
        protocol = lazy_import("service_mcp.protocol")

Only what is measured as heavy and cheap enough to pay on first use is deferred this way; the list, with
each module's import cost and who pays it, is in docs/performance.md, and tests/core/test_import_budget.py
fails when building the app imports one of them. It lives in the engine so that bundles (and the
executor, which ships the engine alone) can use it too.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _LazyModule(types.ModuleType):
    """A stand-in that imports its module on the first attribute read."""

    def __getattr__(self, attr: str) -> Any:
        name = object.__getattribute__(self, "__name__")
        module = sys.modules.get(name)
        if module is None or module is self:
            module = importlib.import_module(name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def lazy_import(name: str) -> Any:
    """The module ``name``, imported when one of its attributes is first read (already imported: itself)."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    return _LazyModule(name)
