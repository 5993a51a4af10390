"""Run untrusted Python in a separate, contained process (bubblewrap).

Nothing user-written is ever executed in a web or worker process: components that run code (the Python
Interpreter, custom component code) call :func:`run_python`, which starts ``bwrap`` (Debian package
``bubblewrap``) with:

* every namespace unshared (``--unshare-all``): no network at all (only an unconfigured loopback), its own
  PID namespace (so killing ``bwrap`` kills every process the code started), no view of other processes;
* a read-only root made of ``/usr`` alone (plus the ``/lib``, ``/bin`` links), so the service's config dir,
  database, secrets and ``/work`` are not even visible; ``/proc`` and a minimal ``/dev`` of its own;
* its own writable temp dir at ``/tmp`` with a total quota (``SandboxLimits.disk_mb``,
  ``SERVICE_SANDBOX_DISK_MB``, default 64): a size-capped tmpfs when this ``bwrap`` has ``--size``
  (kernel-enforced: writes past it fail with ENOSPC); else a fresh host directory whose total size the
  parent's wait loop watches, killing the run ("disk limit") when it passes the quota, removed
  afterwards. Each file is also capped by ``RLIMIT_FSIZE``;
* an empty environment, bwrap's own included (``env={}`` on ``Popen``: inside the sandbox
  ``/proc/1/environ`` is bwrap's, so a ``--clearenv`` alone would still show the worker's secrets);
* resource limits set in the child before ``exec`` (``setrlimit``: CPU time, address space, file size, open
  files, and processes when it can drop to an unprivileged uid of its own, as it does when run as root);
* a wall-clock limit, an output cap and a ``cancelled()`` callback: when any of them trips the whole
  process group is killed (``SIGKILL``).

Stdio MCP servers start in the same kind of sandbox through :func:`sandboxed_command` (an argv and an
environment for whoever spawns the process, here the MCP SDK) and :func:`stdio_server` (the temp dir,
its quota watch and clean-up around one connection); :class:`StdioSandbox` holds the admin's settings
(``SERVICE_SANDBOX_STDIO_BINDS``, ``SERVICE_SANDBOX_STDIO_NETWORK``, ``SERVICE_SANDBOX_STDIO_UNSANDBOXED``).

Hand-written on purpose: no maintained Python library drives bubblewrap, and the subprocess/rlimit plumbing
is small. ``available()`` says why the sandbox cannot run (no ``bwrap``, no user namespaces).
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "StdioSandbox",
    "available",
    "run_python",
    "sandboxed_command",
    "stdio_server",
    "tmpfs_size_supported",
]

#: as root, each sandboxed run drops to its own uid/gid from this range: ``RLIMIT_NPROC`` is that run's alone
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
    disk_mb: int = 64  #: total of the temp dir (``SERVICE_SANDBOX_DISK_MB``)


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


MB = 1024 * 1024
INNER_TMP = "/tmp"  # noqa: S108 - the path *inside* the sandbox: a private tmpfs or a fresh private host dir
_TMPFS_SIZE: bool | None = None


def tmpfs_size_supported() -> bool:
    """Whether this ``bwrap`` takes ``--size`` for a tmpfs (a kernel-enforced quota); checked once."""
    global _TMPFS_SIZE
    if _TMPFS_SIZE is None:
        bwrap = bwrap_path()
        _TMPFS_SIZE = False
        if bwrap is not None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                shown = subprocess.run(  # noqa: S603 - fixed argv
                    [bwrap, "--help"], capture_output=True, text=True, env={}, timeout=10, check=False
                )
                _TMPFS_SIZE = "--size" in shown.stdout + shown.stderr
    return _TMPFS_SIZE


def _mounts(tmp: str | None, disk_mb: int) -> list[str]:
    """The sandbox's file system: read-only ``/usr`` (+ lib links), its own ``/proc`` and ``/dev``, and
    ``/tmp``: a tmpfs of ``disk_mb`` when ``tmp`` is None, else the private host dir ``tmp``."""
    cmd = ["--ro-bind", "/usr", "/usr"]
    for name in ("lib", "lib64", "bin", "sbin", "lib32"):
        path = Path("/") / name
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), f"/{name}"]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    if tmp is None:
        cmd += ["--size", str(disk_mb * MB), "--tmpfs", INNER_TMP]
    else:
        cmd += ["--bind", tmp, INNER_TMP]
    return cmd


def _command(tmp: str | None, disk_mb: int) -> list[str]:
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable("the sandbox tool 'bwrap' (Debian package bubblewrap) is not installed")
    cmd = [bwrap, "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session", *_mounts(tmp, disk_mb)]
    cmd += ["--chdir", INNER_TMP, "--clearenv"]
    cmd += ["--setenv", "HOME", INNER_TMP, "--setenv", "TMPDIR", INNER_TMP, "--setenv", "PATH", "/usr/bin:/bin"]
    cmd += ["--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "LANG", "C.UTF-8", "--remount-ro", "/"]
    cmd += ["--", python_path(), "-I", "-c", _RUNNER]
    return cmd


def _make_tmp(uid: int | None) -> str:
    tmp = tempfile.mkdtemp(prefix="service-sandbox-")
    if uid is not None:
        os.chown(tmp, uid, uid)
    os.chmod(tmp, 0o700)
    return tmp


def _remove(tmp: str) -> None:
    """Remove a sandbox's host temp dir, whatever modes the code left on its entries."""

    def retry(func: Callable[..., Any], path: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            func(path)

    if sys.version_info >= (3, 12):  # onerror is deprecated there (and warnings are errors in the tests)
        shutil.rmtree(tmp, onexc=retry)
    else:
        shutil.rmtree(tmp, onerror=retry)


def disk_usage(root: str, stop_above: int | None = None) -> int:
    """Bytes the tree under ``root`` occupies (allocated blocks, each inode once); stops counting early
    once past ``stop_above``. Hand-written: ``du`` per poll would cost a process, and no library has it."""
    total, seen, stack = 0, set(), [root]
    while stack:
        path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except PermissionError:  # the code chmod-ed a directory: the owner (us, or root) takes it back
            try:
                os.chmod(path, 0o700)
                entries = list(os.scandir(path))
            except OSError:
                continue
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
        if stop_above is not None and total > stop_above:
            return total
    return total


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
    # a kernel-enforced tmpfs quota when bwrap can size it, else a host dir watched from the wait loop
    tmp = None if tmpfs_size_supported() else _make_tmp(uid)
    try:
        spec = json.dumps({"imports": imports or [], "code": code})
        return _run(_command(tmp, limits.disk_mb), spec, limits, uid, cancelled, tmp)
    finally:
        if tmp is not None:
            _remove(tmp)


def _run(
    cmd: list[str],
    stdin: str,
    limits: SandboxLimits,
    uid: int | None,
    cancelled: Callable[[], bool] | None,
    tmp: str | None = None,
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
        env={},  # bwrap's own environment is /proc/1/environ inside the sandbox: nothing of the worker's
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
    disk_limit, next_disk_check = limits.disk_mb * MB, 0.0
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if tmp is not None and now >= next_disk_check:
            next_disk_check = now + 0.1
            if disk_usage(tmp, disk_limit) > disk_limit:
                killed = "disk limit"
        if killed:
            pass
        elif now - start > limits.wall_seconds:
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
    if killed is None and rc != 0 and "No space left on device" in stderr:
        killed = "disk limit"  # the tmpfs quota refused a write and the code stopped on it
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


# --- stdio MCP servers -------------------------------------------------------------------------
#: login variables the MCP SDK adds to a child's environment: removed with ``env -u`` before ``bwrap`` starts
_LOGIN_VARS = ("LOGNAME", "SHELL", "TERM", "USER", "USERNAME")
STDIO_PATH = "/usr/local/bin:/usr/bin:/bin"
#: read-only host files a server with network needs for names and TLS (only with ``network``)
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl/certs", "/etc/ca-certificates")


@dataclass(frozen=True)
class StdioSandbox:
    """How stdio MCP servers start (core settings ``SERVICE_SANDBOX_STDIO_*``, ``SERVICE_SANDBOX_DISK_MB``)."""

    #: host paths bound read-only at the same place (a virtualenv, ``/opt/tool``); nothing else of the host
    binds: tuple[str, ...] = ()
    #: the host's network (loopback services included): off gives the server no network at all
    network: bool = False
    #: start servers without the sandbox (the worker's own user and files; only the SDK's login variables)
    unsandboxed: bool = False
    disk_mb: int = 64
    memory_mb: int = 2048  # RLIMIT_AS (MB) of every server process
    cpu_seconds: int = 300  # RLIMIT_CPU over the server's life (one connection)

    @classmethod
    def from_settings(cls, settings: object) -> StdioSandbox:
        """From :class:`core.settings.Settings` (duck-typed)."""
        return cls(
            binds=tuple(getattr(settings, "sandbox_stdio_binds", ()) or ()),
            network=bool(getattr(settings, "sandbox_stdio_network", False)),
            unsandboxed=bool(getattr(settings, "sandbox_stdio_unsandboxed", False)),
            disk_mb=int(getattr(settings, "sandbox_disk_mb", 64)),
            memory_mb=int(getattr(settings, "sandbox_stdio_memory_mb", 2048)),
            cpu_seconds=int(getattr(settings, "sandbox_stdio_cpu_seconds", 300)),
        )

    def limited(self, argv: list[str]) -> list[str]:
        """``argv`` under the limits, set by util-linux ``prlimit`` (the MCP SDK spawns it: no preexec_fn)."""
        prlimit = shutil.which("prlimit", path=f"/usr/bin:/bin:{os.environ.get('PATH', '')}")
        if prlimit is None:
            raise SandboxUnavailable("the resource-limit tool 'prlimit' (Debian package util-linux) is not installed")
        mb = 1024 * 1024
        limits = [
            f"--as={self.memory_mb * mb}",
            f"--cpu={self.cpu_seconds}",
            "--core=0",
            f"--fsize={self.disk_mb * mb}",
        ]
        return [prlimit, *limits, "--", *argv]


def sandboxed_command(
    argv: list[str],
    env: dict[str, str],
    *,
    binds: tuple[str, ...] | list[str] = (),
    network: bool = False,
    tmp: str | None = None,
    disk_mb: int = 64,
) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` that start ``argv`` inside the sandbox, for whoever spawns the process.

    The program sees ``env`` plus a minimal ``PATH``/``HOME``/``TMPDIR``/``LANG`` and nothing of the
    host's environment (bwrap passes its own environment on; the returned ``argv`` starts with ``env -u``
    for the login variables a spawner such as the MCP SDK adds). Its own PID namespace and ``/proc``; of the
    host's files only a read-only ``/usr`` (+ lib links) and ``binds``; ``/tmp`` is a ``disk_mb`` tmpfs, or
    the host dir ``tmp`` (then the caller watches its size: :func:`stdio_server`); no network unless
    ``network`` (which also shares loopback: the host's database and Redis become reachable).
    Raises :class:`SandboxUnavailable` when ``bwrap`` is missing or a bind does not exist.
    """
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable("the sandbox tool 'bwrap' (Debian package bubblewrap) is not installed")
    if not argv:
        raise ValueError("no command to sandbox")
    for path in binds:
        if not os.path.isabs(path) or not os.path.exists(path):
            raise SandboxUnavailable(
                f"SERVICE_SANDBOX_STDIO_BINDS names {path!r}, which is not an existing absolute path"
            )
    cmd = [shutil.which("env") or "/usr/bin/env"]
    for name in _LOGIN_VARS:
        if name not in env:
            cmd += ["-u", name]
    # --cap-drop ALL: started by root, bwrap leaves the program every capability (of its own user namespace)
    cmd += [bwrap, "--unshare-all", "--cap-drop", "ALL"] + (["--share-net"] if network else [])
    cmd += ["--die-with-parent", "--new-session", *_mounts(tmp, disk_mb)]
    for path in binds:
        cmd += ["--ro-bind", path, path]
    if network:
        for path in _NETWORK_FILES:
            cmd += ["--ro-bind-try", path, path]
    cmd += ["--chdir", INNER_TMP, "--", *argv]
    base = {"HOME": INNER_TMP, "TMPDIR": INNER_TMP, "PATH": STDIO_PATH, "LANG": "C.UTF-8"}
    return cmd, {**base, **env}


@dataclass
class StdioLaunch:
    """What to spawn for one stdio server: ``command`` + ``args`` with ``env``; ``killed`` names the limit
    that stopped it ("disk limit"), if any."""

    argv: list[str]
    env: dict[str, str]
    sandboxed: bool = True
    killed: str | None = None

    @property
    def command(self) -> str:
        return self.argv[0]

    @property
    def args(self) -> list[str]:
        return self.argv[1:]


@contextlib.contextmanager
def stdio_server(argv: list[str], env: dict[str, str], policy: StdioSandbox) -> Iterator[StdioLaunch]:
    """The launch of one stdio server for the length of one connection (the caller spawns it inside the
    ``with``). Refuses with :class:`SandboxUnavailable` when the sandbox cannot run, unless the admin set
    ``SERVICE_SANDBOX_STDIO_UNSANDBOXED``. Without a tmpfs quota the host temp dir is watched from a
    thread: past ``disk_mb`` the server's process group is killed; the dir is removed afterwards."""
    if policy.unsandboxed:  # no sandbox, but the resource limits still hold
        yield StdioLaunch(policy.limited(list(argv)), dict(env), sandboxed=False)
        return
    reason = available()
    if reason is not None:
        raise SandboxUnavailable(
            f"stdio MCP servers run only in the sandbox, and it cannot run here: {reason}"
            " (an admin may set SERVICE_SANDBOX_STDIO_UNSANDBOXED to run them without it)"
        )
    tmp = None if tmpfs_size_supported() else _make_tmp(None)
    try:
        cmd, cmd_env = sandboxed_command(
            argv, env, binds=policy.binds, network=policy.network, tmp=tmp, disk_mb=policy.disk_mb
        )
        launch = StdioLaunch(policy.limited(cmd), cmd_env)
        done = threading.Event()
        if tmp is not None:
            watcher = threading.Thread(target=_watch_disk, args=(tmp, policy.disk_mb * MB, launch, done), daemon=True)
            watcher.start()
        try:
            yield launch
        finally:
            done.set()
    finally:
        if tmp is not None:
            _remove(tmp)


def _watch_disk(tmp: str, limit: int, launch: StdioLaunch, done: threading.Event) -> None:
    """Kill the server whose bwrap binds ``tmp`` once ``tmp`` holds more than ``limit`` bytes."""
    while not done.wait(0.2):
        if disk_usage(tmp, limit) <= limit:
            continue
        launch.killed = "disk limit"
        for pid in _pids_with_arg(tmp):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the SDK starts each server in its own session
        return


def _pids_with_arg(arg: str) -> list[int]:
    """Our child processes whose command line holds ``arg`` (the unique temp dir path of one server)."""
    me, needle, found = os.getpid(), arg.encode(), []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != me:
                continue
            if needle in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found
