"""Real jq (the ``jq`` binding of libjq 1.8) for the JSON operations, with our own limits around it.

Flow authors write the expression, so it is untrusted code in a small language. What jq itself
would hand them, and what we do about it:

- the process environment (``env``, ``$ENV``): the expression runs in a child process started
  with an *empty* environment, ``env`` is redefined to fail, and ``$ENV`` is refused;
- other inputs and files (``input``, ``inputs``, ``import``/``include`` of modules, ``modulemeta``,
  ``input_filename``, ``get_search_list``, ...): redefined to fail or to return nothing, and the
  program is wrapped in parentheses so module directives are syntax errors;
- the server's stderr (``debug``, ``stderr``, ``halt_error``): redefined as no-ops or errors;
- ``$__loc__`` (the wrapper's own position): refused;
- time and memory: libjq has no step or memory limit and the binding holds the GIL while it
  runs (a thread could neither stop it nor let the gevent hub run), so every evaluation runs in
  a short-lived child process with a CPU limit, an address-space limit and a wall-clock timeout;
- output: at most :data:`MAX_OUTPUTS` results and :data:`MAX_OUTPUT_BYTES` of JSON.

The child is ``python -I jq_child.py`` (isolated mode, no environment); it costs one process
start (about 30-60 ms) per evaluation, which is small next to a flow run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["JQError", "compile_jq", "jq_all"]

#: seconds of CPU one evaluation may use (the child is killed past it)
CPU_SECONDS = 2
#: seconds of wall-clock time one evaluation may take, process start included
WALL_SECONDS = 5.0
#: bytes of address space the child may map (libjq aborts past it)
MEMORY_BYTES = 512 * 1024 * 1024
#: results one expression may produce
MAX_OUTPUTS = 10_000
#: total size of the results, as JSON
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
MAX_EXPRESSION_LENGTH = 10_000

_CHILD = Path(__file__).with_name("jq_child.py")

# Builtins that reach outside the input value, redefined before the author's program. A
# definition shadows the builtin of the same name and arity for the rest of the program.
_PRELUDE = (
    'def env: error("env is not available in flows");'
    ' def input: error("input is not available in flows");'
    " def inputs: empty;"
    " def debug: .; def debug(msg): .; def stderr: .;"
    " def input_filename: null; def input_line_number: 0;"
    " def get_search_list: []; def get_jq_origin: null; def get_prog_origin: null;"
    ' def modulemeta: error("modules are not available in flows");'
    " def halt_error: error(.); def halt_error(code): error(.);"
    "\n{} as $ENV | (\n"
)
_PRELUDE_LINES = _PRELUDE.count("\n")
_REFUSED = re.compile(r"\$(ENV|__loc__)\b")
_LOCATION = re.compile(r" at <top-level>, line (\d+), column (\d+):?$")

Filter = Callable[[Any], list[Any]]


class JQError(ValueError):
    """The expression does not compile, fails on the input, or goes past a limit."""


def _clean(message: str, lines: int) -> str:
    """jq's first error line, with the location moved into the author's program of ``lines`` lines."""
    first = message.strip().splitlines()[0] if message.strip() else "jq failed"
    first = first.removeprefix("jq: error: ")
    match = _LOCATION.search(first)
    if match:
        line, column = int(match.group(1)) - _PRELUDE_LINES, match.group(2)
        first = first[: match.start()]
        if line > lines:  # our closing parenthesis: the author's expression stopped short
            first = first.replace("unexpected ')'", "unexpected end of the expression")
        elif line >= 1:
            first += f" (line {line}, column {column})" if lines > 1 else f" (column {column})"
    return f"jq: {first}"


def _check(expression: str) -> str:
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise JQError(f"jq expression is too long (over {MAX_EXPRESSION_LENGTH} characters)")
    refused = _REFUSED.search(expression)
    if refused:
        raise JQError(f"jq: ${refused.group(1)} is not available in flows")
    if not expression.strip():
        raise JQError("jq expression is empty")
    return _PRELUDE + expression + "\n)"


def _run(program: str, value: Any, lines: int) -> list[Any]:
    request = json.dumps(
        {
            "program": program,
            "input": value,
            "max_outputs": MAX_OUTPUTS,
            "max_bytes": MAX_OUTPUT_BYTES,
            "cpu_seconds": CPU_SECONDS,
            "memory_bytes": MEMORY_BYTES,
        },
        default=str,
    ).encode()
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv: this interpreter and our own script
            [sys.executable, "-I", str(_CHILD)],
            input=request,
            capture_output=True,
            env={},
            timeout=WALL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise JQError(f"jq expression took longer than {WALL_SECONDS:g} s; simplify it") from None
    if done.returncode != 0:
        if done.returncode in (-9, -24):  # SIGKILL / SIGXCPU: the CPU limit
            raise JQError(f"jq expression used more than {CPU_SECONDS} s of CPU; simplify it")
        if done.returncode == -6:  # SIGABRT: libjq could not allocate
            raise JQError(f"jq expression needed more than {MEMORY_BYTES // 2**20} MB of memory")
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise JQError(f"jq evaluation failed ({detail[-1] if detail else done.returncode})")
    reply = json.loads(done.stdout)
    if "error" in reply:
        raise JQError(_clean(reply["error"], lines) if reply.get("jq") else reply["error"])
    return reply["results"]  # type: ignore[no-any-return]


def compile_jq(expression: str) -> Filter:
    """Check ``expression`` and return a function that evaluates it on one value (a list of results).

    Raises :class:`JQError` (a ``ValueError``) for refused names here, and for syntax errors,
    runtime errors and limits when the function is called.
    """
    program = _check(expression)
    lines = expression.count("\n") + 1
    return lambda value: _run(program, value, lines)


def jq_all(expression: str, value: Any) -> list[Any]:
    """Every result of ``expression`` on ``value``, as jq would print them."""
    return compile_jq(expression)(value)
