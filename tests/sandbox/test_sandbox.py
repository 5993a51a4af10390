"""core.sandbox: user code runs contained, and each abuse is stopped within its limit."""

from __future__ import annotations

import os
import threading
import time

import pytest

from core import sandbox
from core.sandbox import SandboxLimits, run_python

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"sandbox unavailable: {sandbox.available()}")

LIMITS = SandboxLimits(cpu_seconds=2, wall_seconds=6, memory_mb=128, output_bytes=10_000, processes=16)


def test_runs_code_with_imports_and_returns_output():
    result = run_python("print(math.sqrt(16)); print(json.dumps([1]))", imports=["math", "json"], limits=LIMITS)
    assert result.ok and result.stdout.split() == ["4.0", "[1]"]


def test_exceptions_are_reported_not_raised():
    result = run_python("1/0", limits=LIMITS)
    assert result.returncode == 1 and result.killed is None
    assert "ZeroDivisionError: division by zero" in result.stderr


def test_no_network():
    code = (
        "import socket\n"
        "for host in ('1.1.1.1', '127.0.0.1'):\n"
        "    try:\n"
        "        socket.create_connection((host, 80), timeout=2)\n"
        "        print('connected', host)\n"
        "    except OSError as exc:\n"
        "        print('refused', host, exc.errno)\n"
    )
    result = run_python(code, limits=LIMITS)
    assert result.ok and "connected" not in result.stdout
    assert result.stdout.count("refused") == 2


def test_read_only_root_and_own_temp_dir(tmp_path):
    marker = tmp_path / "secret.txt"
    marker.write_text("top secret")
    code = (
        "import os\n"
        f"print(os.path.exists({str(marker)!r}))\n"
        "print(sorted(os.listdir('/')))\n"
        "for path in ('/usr/evil', '/etc/evil', '/evil'):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', path)\n"
        "open('/tmp/mine', 'w').write('ok')\n"
        "print(open('/tmp/mine').read())\n"
    )
    result = run_python(code, limits=LIMITS)
    assert result.ok, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "False"  # the host's files are not visible at all
    assert "'work'" not in lines[1] and "'home'" not in lines[1] and "'root'" not in lines[1]
    assert "wrote" not in result.stdout and result.stdout.count("refused") == 3
    assert lines[-1] == "ok"
    assert not os.path.exists("/usr/evil") and not os.path.exists("/evil")


def test_environment_is_empty():
    os.environ["SERVICE_SECRET_PROBE"] = "leak"
    try:
        result = run_python("import os; print(sorted(os.environ))", limits=LIMITS)
    finally:
        del os.environ["SERVICE_SECRET_PROBE"]
    assert "SERVICE_SECRET_PROBE" not in result.stdout


def test_infinite_loop_is_killed_by_the_cpu_limit():
    start = time.monotonic()
    result = run_python("while True: pass", limits=LIMITS)
    assert result.killed in ("CPU time limit", "time limit")
    assert time.monotonic() - start < LIMITS.wall_seconds + 2


def test_sleeping_code_is_killed_by_the_wall_clock_limit():
    start = time.monotonic()
    result = run_python("import time; time.sleep(60)", limits=SandboxLimits(wall_seconds=1))
    assert result.killed == "time limit" and time.monotonic() - start < 3


def test_memory_hog_is_stopped():
    result = run_python("x = bytearray(1024 * 1024 * 1024); print('allocated')", limits=LIMITS)
    assert "allocated" not in result.stdout
    assert result.killed == "memory limit" or "MemoryError" in result.stderr


def test_output_flood_is_capped_and_killed():
    result = run_python("while True: print('x' * 1000)", limits=LIMITS)
    assert result.killed == "output limit" and len(result.stdout) <= LIMITS.output_bytes


def test_fork_bomb_is_contained_and_killed():
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    start = time.monotonic()
    result = run_python(code, limits=SandboxLimits(cpu_seconds=2, wall_seconds=3, processes=16))
    assert result.killed is not None
    assert time.monotonic() - start < 6
    # nothing of it survives: the kernel reaps the whole PID namespace once bwrap is killed
    deadline = time.monotonic() + 3
    leftovers = ["?"]
    while leftovers and time.monotonic() < deadline:
        leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _uid(p) == result.uid]
        time.sleep(0.1)
    assert leftovers == [] or result.uid is None


def test_cancel_kills_the_run():
    flag = threading.Event()
    threading.Timer(0.5, flag.set).start()
    start = time.monotonic()
    result = run_python("import time; time.sleep(30)", limits=LIMITS, cancelled=flag.is_set)
    assert result.killed == "cancelled" and time.monotonic() - start < 2


def test_the_server_process_is_unaffected():
    """The code kills its sandbox's pid 1 and its parent: this process, its parent and its threads live on.
    (Not a count of this process's threads: other tests' background threads end whenever they do.)"""
    before = os.getpid(), os.getppid()
    mine = threading.Event()
    watcher = threading.Thread(target=mine.wait, daemon=True)
    watcher.start()
    run_python("import os; os.kill(1, 9); os.kill(os.getppid(), 9)", limits=LIMITS)
    assert (os.getpid(), os.getppid()) == before and watcher.is_alive()
    mine.set()
    watcher.join(timeout=5)
    assert not watcher.is_alive()


def test_unavailable_sandbox_is_refused_clearly(monkeypatch):
    monkeypatch.setattr(sandbox, "_AVAILABLE", None)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap"):
        run_python("print(1)")
    monkeypatch.setattr(sandbox, "_AVAILABLE", None)  # the next test probes again


def _uid(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
