"""core.sandbox (issue 26, #3 and the disk quota): nothing of the host is readable inside the sandbox,
not even through ``/proc/1/environ`` (bubblewrap's own environment), and its temp space has a total quota."""

from __future__ import annotations

import glob
import os
import tempfile
import uuid

import pytest

from core import sandbox
from core.sandbox import SandboxLimits, run_python

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"sandbox unavailable: {sandbox.available()}")

LIMITS = SandboxLimits(cpu_seconds=5, wall_seconds=20, memory_mb=128, output_bytes=200_000, processes=16)

PROBE = r"""
import os, sys
def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"<{type(exc).__name__}>"
def listing(path):
    try:
        return repr(sorted(os.listdir(path)))
    except OSError as exc:
        return f"<{type(exc).__name__}>"
print("PROC1", read("/proc/1/environ"))
print("PROC1CMD", read("/proc/1/cmdline"))
print("SELF", read("/proc/self/environ"))
print("ENV", dict(os.environ))
print("PASSWD", read("/etc/passwd"))
for pid in os.listdir("/proc"):
    if pid.isdigit():
        print("PID", pid, read(f"/proc/{pid}/environ"))
for path in sys.argv[1:] if len(sys.argv) > 1 else []:
    pass
"""


@pytest.fixture
def host_secrets(monkeypatch, tmp_path):
    """Fake secrets in the parent's environment, a config dir and a working dir holding them."""
    secret = f"fake-secret-{uuid.uuid4().hex}"
    password = f"pw-{uuid.uuid4().hex}"
    monkeypatch.setenv("SERVICE_SECRET_KEY", secret)
    monkeypatch.setenv("SERVICE_SUPERUSER_PASSWORD", password)
    monkeypatch.setenv("SERVICE_DATABASE_URL", f"postgresql://svc:{password}@127.0.0.1/db")
    config = tmp_path / "config"
    config.mkdir()
    (config / "secret_key").write_text(secret)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"SERVICE_SECRET_KEY={secret}\n")
    monkeypatch.chdir(work)
    return {"secret": secret, "password": password, "config": str(config), "work": str(work)}


def test_nothing_of_the_host_is_readable(host_secrets):
    code = PROBE + (
        f"print('CONFIG', listing({host_secrets['config']!r}), read({host_secrets['config'] + '/secret_key'!r}))\n"
        f"print('WORK', listing({host_secrets['work']!r}), read({host_secrets['work'] + '/.env'!r}))\n"
        "print('CWD', os.getcwd(), listing('.'))\n"
        "print('ROOT', listing('/'))\n"
    )
    result = run_python(code, limits=LIMITS)
    assert result.ok, result.stderr
    out = result.stdout
    assert "PROC1 " in out and "SELF " in out and "ENV " in out  # the probe ran
    for value in (host_secrets["secret"], host_secrets["password"], "SERVICE_SECRET_KEY", "SERVICE_DATABASE_URL"):
        assert value not in out, f"{value} leaked into the sandbox"
    line = {ln.split(" ", 1)[0]: ln for ln in out.splitlines() if ln}
    assert line["PROC1"].strip() == "PROC1", line["PROC1"]  # bwrap's own environment is empty
    assert "root:" not in line["PASSWD"]  # no /etc at all
    assert line["CONFIG"].count("FileNotFoundError") == 2 and line["WORK"].count("FileNotFoundError") == 2
    assert "'etc'" not in line["ROOT"] and "'work'" not in line["ROOT"] and "'root'" not in line["ROOT"]


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "service-sandbox-*")))


# After writing, the code keeps its files 5 s before it says so: a quota watched from outside (polling)
# may let a fast disk finish the writes between two polls, but must kill the run while it holds them.
WRITER = """
import os, time
os.makedirs('/tmp/d', exist_ok=True)
chunk = b'x' * 65536
for i in range(3200):  # 200 MB in 64 KB files
    with open(f'/tmp/d/f{i}', 'wb') as f:
        f.write(chunk)
time.sleep(5)
print('wrote everything')
"""


@pytest.mark.parametrize("mode", ["tmpfs", "watch"])
def test_disk_quota_stops_a_flood_of_small_files(mode, monkeypatch):
    if mode == "tmpfs" and not sandbox.tmpfs_size_supported():
        pytest.skip("this bwrap has no --size for tmpfs")
    if mode == "watch":
        monkeypatch.setattr(sandbox, "tmpfs_size_supported", lambda: False)
    before = _leftovers()
    limits = SandboxLimits(cpu_seconds=10, wall_seconds=30, memory_mb=128, disk_mb=64)
    result = run_python(WRITER, limits=limits)
    assert result.killed == "disk limit", (result.killed, result.stderr[-500:])
    assert "wrote everything" not in result.stdout
    assert _leftovers() - before == set(), "the host temp dir was not removed"


def test_disk_quota_leaves_room_below_it():
    code = "open('/tmp/f', 'wb').write(b'x' * 4_000_000); print(len(open('/tmp/f', 'rb').read()))"
    result = run_python(code, limits=SandboxLimits(wall_seconds=20, disk_mb=64))
    assert result.ok and result.stdout.strip() == "4000000", result.stderr
