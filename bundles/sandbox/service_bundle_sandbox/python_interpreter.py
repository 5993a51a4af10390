"""Python Interpreter (reference key ``PythonREPLComponent``): user code, run only in the core sandbox.

The code never runs in the web or worker process: :func:`core.sandbox.run_python`
starts a bubblewrap process without network, on a read-only root of ``/usr``,
with its own temp dir and CPU, memory, process, output and wall-clock limits;
a cancelled or timed-out run kills it. Where the sandbox is unavailable, or
the hardening switches forbid code execution, the component refuses clearly.
"""

from __future__ import annotations

import dataclasses
import re

from core.engine import Component, ComponentError, Data, Output
from core.engine.inputs import MultilineInput, StrInput
from core.engine.types import to_text
from core.sandbox import SandboxResult, SandboxUnavailable, run_python

_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def parse_imports(text: str) -> list[str]:
    """``"math, json"`` -> ``["math", "json"]``; a name that is not a module path is an error."""
    names = [part.strip() for part in (text or "").replace("\n", ",").split(",") if part.strip()]
    for name in names:
        if not _MODULE.match(name):
            raise ComponentError(f"'{name}' is not a module name (global imports are comma-separated module names)")
    return names


def run_sandboxed(component: Component, code: str, imports: list[str], *, what: str) -> SandboxResult:
    """Run ``code`` in the sandbox for ``component``: hardening checked, run deadline and cancel honoured."""
    ctx = component.context
    ctx.hardening.check_code_execution()
    limits = ctx.hardening.sandbox
    remaining = ctx.remaining_time()
    if remaining is not None:
        limits = dataclasses.replace(limits, wall_seconds=max(0.1, min(limits.wall_seconds, remaining)))
    try:
        result = run_python(code, imports=imports, limits=limits, cancelled=ctx.cancelled)
    except SandboxUnavailable as exc:
        raise ComponentError(f"{what} cannot run here: {exc}") from None
    ctx.check()  # a cancelled or expired run stops here, whatever the sandbox printed
    return result


class PythonREPLComponent(Component):
    key = "PythonREPLComponent"
    display_name = "Python Interpreter"
    display_names = {"en": "Python Interpreter", "fr": "Interpréteur Python", "de": "Python-Interpreter"}
    description = (
        "Run Python code with optional imports. Use print() to see the output. "
        "The code runs in an isolated sandbox without network access."
    )
    icon = "square-terminal"
    category = "utilities"
    executes_code = True
    inputs = [
        StrInput(
            "global_imports",
            "Global Imports",
            "math",
            info="A comma-separated list of modules to import globally, e.g. 'math,numpy,pandas'.",
            required=True,
        ),
        MultilineInput(
            "python_code",
            "Python Code",
            "print('Hello, World!')",
            info="The Python code to execute. Only modules specified in Global Imports can be used.",
            required=True,
            tool_mode=True,
        ),
    ]
    outputs = [Output("results", "Results", "run_python_repl", ["JSON"])]

    def run_python_repl(self) -> Data:
        imports = parse_imports(to_text(self.global_imports))
        result = run_sandboxed(self, to_text(self.python_code), imports, what="The Python Interpreter")
        if result.killed:
            data = Data({"error": f"Execution stopped: {result.killed} exceeded", "output": result.stdout.strip()})
        elif result.returncode != 0:
            data = Data({"error": result.stderr.strip() or f"exit status {result.returncode}"})
        else:
            data = Data({"result": result.stdout.strip()})
        self.status = data
        return data


COMPONENTS = [PythonREPLComponent]
