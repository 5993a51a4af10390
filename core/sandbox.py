"""Run untrusted Python in a separate, contained process (bubblewrap).

Nothing user-written is ever executed in a web or worker process: components
that run code (the Python Interpreter, custom component code) call
:func:`run_python`, which starts ``bwrap`` (Debian package ``bubblewrap``) with:

* every namespace unshared (``--unshare-all``): no network at all (only an
  unconfigured loopback), its own PID namespace (so killing ``bwrap`` kills
  every process the code started), no view of other processes;
* a read-only root made of ``/usr`` alone (plus the ``/lib``, ``/bin`` links),
  so the service's config dir, database, secrets and ``/work`` are not even
  visible; ``/proc`` and a minimal ``/dev`` of its own;
* its own writable temp dir (a fresh host directory bound at ``/tmp``, size
  capped by ``RLIMIT_FSIZE``, removed afterwards); an empty environment;
* resource limits set in the child before ``exec`` (``setrlimit``: CPU time,
  address space, file size, open files, and processes when it can drop to an
  unprivileged uid of its own, which it does when the service runs as root);
* a wall-clock limit, an output cap and a ``cancelled()`` callback: when any of
  them trips the whole process group is killed (``SIGKILL``).

Hand-written on purpose: no maintained Python library drives bubblewrap, and
the subprocess/rlimit plumbing is small. ``available()`` says why the sandbox
cannot run (no ``bwrap``, no user namespaces); callers refuse with that reason.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxLimits", "SandboxResult", "SandboxUnavailable", "available", "run_python"]

#: When the service runs as root each sandboxed run drops to its own unprivileged uid/gid from this
#: range (no account needed), so ``RLIMIT_NPROC`` (counted per uid) is that run's alone.
UID_BASE = 200_000
UID_SPAN = 50_000
_uid_counter = itertools.count()


def _run_uid() -> int:
    return UID_BASE + (os.getpid() * 7919 + next(_uid_counter)) % UID_SPAN


# Runs inside the sandbox: read {imports, code} on stdin, import the modules into the
# globals, execute the code there. Exceptions are printed (as the reference's REPL does).
_RUNNER = r"""
import importlib, json, sys, traceback
spec = json.loads(sys.stdin.read())
g = {"__name__": "__main__", "__builtins__": __builtins__}
for name in spec.get("imports", []):
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        print(f"ImportError: cannot import {name}: {exc}", file=sys.stderr)
        sys.exit(3)
    g[name.split(".")[0]] = importlib.import_module(name.split(".")[0])
try:
    exec(compile(spec["code"], "<python_code>", "exec"), g)
except SystemExit:
    raise
except BaseException as exc:
    print("".join(traceback.format_exception_only(type(exc), exc)).strip(), file=sys.stderr)
    sys.exit(1)
"""


_SIGNAL_LIMITS = {
    int(signal.SIGXCPU): "CPU time limit",
    int(signal.SIGKILL): "CPU time limit",
    int(signal.SIGXFSZ): "file size limit",
    int(signal.SIGSEGV): "memory limit",
}


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here (the message says why); the caller must refuse, never fall back."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandboxed run (``SERVICE_SANDBOX_*`` settings)."""

    cpu_seconds: int = 5
    wall_seconds: float = 10.0
    memory_mb: int = 256
    output_bytes: int = 1_000_000
    file_mb: int = 16
    processes: int = 16
    open_files: int = 64


@dataclass
class SandboxResult:
    """What a sandboxed run produced. ``killed`` names the limit that stopped it, if any."""

    returncode: int
    stdout: str
    stderr: str
    killed: str | None = None
    duration: float = 0.0
    truncated: bool = False
    uid: int | None = None  #: the uid the run had (root deployments), for audits and tests

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.killed is None


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (("/usr/bin/bwrap") if os.path.exists("/usr/bin/bwrap") else None)


def python_path() -> str:
    """A Python interpreter that lives under ``/usr`` (the only tree the sandbox sees)."""
    real = os.path.realpath(sys.executable)
    if real.startswith("/usr/"):
        return real
    return "/usr/bin/python3"


_AVAILABLE: tuple[float, str | None] | None = None


def available() -> str | None:
    """None when the sandbox works here, else the reason it does not (checked once, then cached)."""
    global _AVAILABLE
    if _AVAILABLE is not None:
        return _AVAILABLE[1]
    reason: str | None = None
    if bwrap_path() is None:
        reason = "the sandbox tool 'bwrap' (Debian package bubblewrap) is not installed"
    elif not os.path.exists(python_path()):
        reason = f"no Python interpreter at {python_path()} for the sandbox"
    else:
        try:
            probe = run_python("print('ok')", limits=SandboxLimits(wall_seconds=10), _probe=True)
            if probe.stdout.strip() != "ok":
                reason = f"the sandbox does not start here: {probe.stderr.strip()[:300] or probe.killed}"
        except (OSError, SandboxUnavailable) as exc:
            reason = f"the sandbox does not start here: {exc}"
    _AVAILABLE = (time.monotonic(), reason)
    return reason


def _command(tmp: str) -> list[str]:
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable("the sandbox tool 'bwrap' (Debian package bubblewrap) is not installed")
    cmd = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for name in ("lib", "lib64", "bin", "sbin", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), f"/{name}"]
    inner_tmp = "/tmp"  # noqa: S108 - the path *inside* the sandbox, bound to a fresh private host dir
    cmd += ["--proc", "/proc", "--dev", "/dev", "--bind", tmp, inner_tmp, "--chdir", inner_tmp, "--clearenv"]
    cmd += ["--setenv", "HOME", inner_tmp, "--setenv", "TMPDIR", inner_tmp, "--setenv", "PATH", "/usr/bin:/bin"]
    cmd += ["--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "LANG", "C.UTF-8", "--remount-ro", "/"]
    cmd += ["--", python_path(), "-I", "-c", _RUNNER]
    return cmd


def _preexec(limits: SandboxLimits, uid: int | None) -> Callable[[], None]:
    def apply() -> None:  # runs in the child between fork and exec
        mem = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * 1024 * 1024,) * 2)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid is not None:
            # RLIMIT_NPROC counts per real uid and is ignored for root: drop to this run's own uid first
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return apply


def run_python(
    code: str,
    *,
    imports: list[str] | None = None,
    limits: SandboxLimits | None = None,
    cancelled: Callable[[], bool] | None = None,
    _probe: bool = False,
) -> SandboxResult:
    """Run ``code`` (after importing ``imports``) in the sandbox; never raises for what the code does.

    Raises :class:`SandboxUnavailable` when the sandbox cannot run here.
    """
    if not _probe:
        reason = available()
        if reason is not None:
            raise SandboxUnavailable(reason)
    limits = limits or SandboxLimits()
    uid = _run_uid() if os.geteuid() == 0 else None
    tmp = tempfile.mkdtemp(prefix="service-sandbox-")
    try:
        if uid is not None:
            os.chown(tmp, uid, uid)
        os.chmod(tmp, 0o700)
        return _run(_command(tmp), json.dumps({"imports": imports or [], "code": code}), limits, uid, cancelled)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(
    cmd: list[str], stdin: str, limits: SandboxLimits, uid: int | None, cancelled: Callable[[], bool] | None
) -> SandboxResult:
    start = time.monotonic()
    proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_preexec(limits, uid),
        start_new_session=True,
        close_fds=True,
    )
    out: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    over = threading.Event()

    def pump(name: str) -> None:
        stream = getattr(proc, name)
        buf = out[name]
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                return
            room = limits.output_bytes - len(buf)
            if room > 0:
                buf += chunk[:room]
            if len(chunk) > room:
                over.set()

    readers = [threading.Thread(target=pump, args=(n,), daemon=True) for n in ("stdout", "stderr")]
    for t in readers:
        t.start()
    try:
        assert proc.stdin is not None
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    killed: str | None = None
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() - start > limits.wall_seconds:
            killed = "time limit"
        elif over.is_set():
            killed = "output limit"
        elif cancelled is not None and cancelled():
            killed = "cancelled"
        if killed:
            _kill(proc)
            break
    for t in readers:
        t.join(timeout=2)
    if killed is None and over.is_set():
        killed = "output limit"
    rc = proc.returncode if proc.returncode is not None else -9
    if killed is None:
        # bwrap reports a child killed by a signal as 128 + signal; a direct kill as -signal
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 else 0)
        if sig:
            killed = _SIGNAL_LIMITS.get(sig, f"signal {sig}")
    stderr = out["stderr"].decode("utf-8", "replace")
    if killed is None and rc != 0 and "MemoryError" in stderr:
        killed = "memory limit"
    return SandboxResult(
        returncode=rc,
        stdout=out["stdout"].decode("utf-8", "replace"),
        stderr=stderr,
        killed=killed,
        duration=time.monotonic() - start,
        truncated=over.is_set(),
        uid=uid,
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
        proc.kill()
