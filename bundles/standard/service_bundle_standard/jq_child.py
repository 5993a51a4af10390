"""The child process of ``jq_lite``: evaluate one jq program on one value, within limits.

Run as ``python -I jq_child.py`` with an empty environment; reads one JSON request on stdin
(program, input, limits) and writes one JSON reply on stdout: ``{"results": [...]}`` or
``{"error": "...", "jq": true}``. Only the standard library and ``jq`` are imported.
"""

from __future__ import annotations

import json
import resource
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    import jq  # before the address-space limit: loading the library maps memory

    cpu = int(request["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = int(request["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    max_outputs = int(request["max_outputs"])
    max_bytes = int(request["max_bytes"])

    results: list[object] = []
    size = 0
    try:
        program = jq.compile(request["program"])
        for item in program.input_value(request["input"]):
            results.append(item)
            size += len(json.dumps(item))
            if len(results) > max_outputs:
                reply: dict[str, object] = {"error": f"jq expression produced more than {max_outputs} results"}
                break
            if size > max_bytes:
                reply = {"error": f"jq results are larger than {max_bytes // 2**20} MB"}
                break
        else:
            reply = {"results": results}
    except ValueError as exc:
        reply = {"error": str(exc), "jq": True}
    except MemoryError:
        reply = {"error": f"jq expression needed more than {memory // 2**20} MB of memory"}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
