"""Python REPL (reference key ``PythonREPLTool``, legacy): the agent tool that runs Python, only in the sandbox.

``run_model`` runs ``python_code``; ``build_tool`` offers an agent the tool ``name`` (argument
``code``). Both go through :func:`run_sandboxed` of the Python Interpreter: a bubblewrap process
without network or a view of the host, with CPU, memory, output and wall-clock limits. The
hardening switches (``SERVICE_ALLOW_CUSTOM_COMPONENTS``, ``SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS``)
and the governance catalog policy (block ``PythonREPLTool``) refuse it like any code component.
"""

from __future__ import annotations

from typing import ClassVar

from core.engine import Component, ComponentError, Data, Output
from core.engine.inputs import Input, StrInput
from core.engine.tools import Tool, tool_name
from core.engine.types import to_text
from service_bundle_sandbox.python_interpreter import parse_imports, run_sandboxed

DESCRIPTION = (
    "A Python shell. Use this to execute python commands. Input should be a valid python command. "
    "If you want to see the output of a value, you should print it out with `print(...)`."
)


class PythonREPLTool(Component):
    key = "PythonREPLTool"
    display_name = "Python REPL"
    description = "A tool for running Python code in a REPL environment."
    icon = "Python"
    category = "tools"
    legacy = True
    executes_code = True
    inputs: ClassVar[list[Input]] = [
        StrInput("name", "Tool Name", "python_repl", info="The name of the tool."),
        StrInput("description", "Tool Description", DESCRIPTION, info="A description of the tool."),
        StrInput(
            "global_imports",
            "Global Imports",
            "math",
            info="A comma-separated list of modules to import globally, e.g. 'math,json'.",
        ),
        StrInput("python_code", "Python Code", "print('Hello, World!')", info="The Python code to execute."),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("api_run_model", "Data", "run_model", ["JSON"]),
        Output("api_build_tool", "Tool", "build_tool", ["Tool"]),
    ]

    def _run(self, code: str) -> str:
        """The code's output, or its error text (as the reference's REPL answers)."""
        imports = parse_imports(to_text(self.global_imports))
        result = run_sandboxed(self, code, imports, what="The Python REPL")
        if result.killed:
            return f"Execution stopped: {result.killed} exceeded\n{result.stdout.strip()}".strip()
        if result.returncode != 0:
            return result.stderr.strip() or f"exit status {result.returncode}"
        return result.stdout.strip()

    def run_model(self) -> Data:
        code = to_text(self.python_code)
        if not code.strip():
            raise ComponentError("The Python REPL has no code to run.")
        data = Data({"result": self._run(code)})
        self.status = data
        return data

    def build_tool(self) -> Tool:
        # refuse at build time too, so an agent never advertises a tool that cannot run
        self.context.hardening.check_code_execution()
        parse_imports(to_text(self.global_imports))

        def run(code: str) -> str:
            if not to_text(code).strip():
                raise ValueError("No code given.")
            return self._run(to_text(code))

        return Tool(
            name=tool_name(to_text(self.name) or "python_repl"),
            description=to_text(self.description) or DESCRIPTION,
            func=run,
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python code to execute."}},
                "required": ["code"],
            },
            source=self.vertex.id,
        )


COMPONENTS = [PythonREPLTool]
