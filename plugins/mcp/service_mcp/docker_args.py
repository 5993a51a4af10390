"""``SERVICE_MCP_SERVER_DOCKER_HARDENING``: the argument policy for stdio MCP servers run with
``docker run`` (or ``podman run``). Each argument is checked; the first risky one is named.

Refused classes: host mounts (``-v``/``--volume``/``--mount`` of a host path or bind), shared
namespaces (``--pid``/``--ipc``/``--uts``/``--userns``/``--cgroupns`` ``host``, ``--network
container:...``), non-default networks (``--network``/``--net`` other than ``bridge``/``none``
/``default``), privilege flags (``--privileged``, ``--cap-add``, ``--device``, ``--user
root``/``0``), and disabled security options (``--security-opt`` ``seccomp=unconfined``,
``apparmor=unconfined``, ``label=disable``, ``no-new-privileges=false``).
"""

from __future__ import annotations

import os

RUNTIMES = ("docker", "podman")
_NAMESPACE_FLAGS = ("--pid", "--ipc", "--uts", "--userns", "--cgroupns")
_NETWORK_FLAGS = ("--network", "--net")
_SAFE_NETWORKS = ("bridge", "none", "default")
_PRIVILEGE_FLAGS = ("--privileged", "--cap-add", "--device", "--device-cgroup-rule")
_UNSAFE_SECURITY = (
    "seccomp=unconfined",
    "apparmor=unconfined",
    "label=disable",
    "label:disable",
    "no-new-privileges=false",
)
#: docker's boolean flags; every other flag takes a value (``--flag value`` or ``--flag=value``), so a
#: value is never mistaken for the image (``-e X=1 --privileged image`` is checked to the image)
_BOOLEAN_FLAGS = (
    "-i",
    "-t",
    "-d",
    "-P",
    "--rm",
    "--init",
    "--interactive",
    "--tty",
    "--detach",
    "--read-only",
    "--publish-all",
    "--no-healthcheck",
    "--sig-proxy",
    "--quiet",
    "-q",
    "--privileged",
    "--oom-kill-disable",
)


def _split(args: list[str], i: int) -> tuple[str, str | None, int, str]:
    """(flag, value, next index, as written) for ``--flag=value``, ``--flag value``, ``-v value``,
    ``-vvalue`` and combined booleans (``-it``)."""
    arg = args[i]
    if arg.startswith("--"):
        if "=" in arg:
            flag, value = arg.split("=", 1)
            return flag, value, i + 1, arg
        if arg in _BOOLEAN_FLAGS:
            return arg, None, i + 1, arg
        value = args[i + 1] if i + 1 < len(args) else ""
        return arg, value, i + 2, f"{arg} {value}"
    if all(f"-{c}" in _BOOLEAN_FLAGS for c in arg[1:]):
        return arg, None, i + 1, arg
    if len(arg) > 2:  # -vVALUE
        return arg[:2], arg[2:].lstrip("="), i + 1, arg
    value = args[i + 1] if i + 1 < len(args) else ""
    return arg, value, i + 2, f"{arg} {value}"


def check(command: list[str]) -> str | None:
    """None when allowed, else the refusal naming the offending argument."""
    if not command or os.path.basename(command[0]) not in RUNTIMES:
        return None
    try:
        run = command.index("run")
    except ValueError:
        return None
    args = command[run + 1 :]
    i = 0
    while i < len(args):
        if not args[i].startswith("-"):
            break  # the image: what follows is the container's own command
        flag, value, nxt, written = _split(args, i)
        problem = _judge(flag, value)
        if problem:
            return f"Refused by SERVICE_MCP_SERVER_DOCKER_HARDENING: argument '{written}' {problem}"
        i = nxt
    return None


def _judge(flag: str, value: str | None) -> str | None:
    v = (value or "").strip().lower()
    if flag in ("-v", "--volume", "--volumes-from"):
        return "mounts a host path (host mounts are not allowed)"
    if flag == "--mount" and ("type=bind" in v or "source=/" in v or "src=/" in v or "type=volume" not in v):
        return "mounts a host path (host mounts are not allowed)"
    if flag in _NAMESPACE_FLAGS and (v == "host" or v.startswith("container:")):
        return "shares a host namespace"
    if flag in _NETWORK_FLAGS:
        if v == "host" or v.startswith("container:"):
            return "shares a host namespace"
        if v not in _SAFE_NETWORKS:
            return "joins a non-default network"
    if flag in _PRIVILEGE_FLAGS or flag.startswith("--privileged"):
        return "grants privileges"
    if flag in ("-u", "--user") and v.split(":")[0] in ("root", "0"):
        return "grants privileges (runs as root)"
    if flag == "--security-opt" and v.replace(" ", "") in _UNSAFE_SECURITY:
        return "disables a security option"
    return None
