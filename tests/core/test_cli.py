"""The ``service`` command as a user runs it: a real process, a real server."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.serverkit import free_port as _free_port

SERVICE = str(Path(sys.executable).parent / "service")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update({"SERVICE_CONFIG_DIR": str(tmp_path / "cfg"), "SERVICE_ENV_FILE": os.devnull})
    if os.environ.get("SERVICE_TEST_DATABASE_URL"):
        env["SERVICE_DATABASE_URL"] = os.environ["SERVICE_TEST_DATABASE_URL"]
    env.update(extra)
    return env


def test_plugins_list_and_db_upgrade(tmp_path):
    out = subprocess.run([SERVICE, "plugins", "list"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("core ") and any(line.startswith("accounts ") for line in lines)
    assert "actor_from_request" in next(line for line in lines if line.startswith("accounts "))
    up = subprocess.run([SERVICE, "db", "upgrade"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    assert "accounts" in up.stdout


def test_invalid_setting_stops_start_up_naming_the_variable(tmp_path):
    out = subprocess.run(
        [SERVICE, "plugins", "list"],
        env=_env(tmp_path, SERVICE_AUTO_LOGIN="perhaps"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 3
    assert "SERVICE_AUTO_LOGIN" in out.stderr


@pytest.mark.slow
def test_service_run_serves_with_gunicorn_and_refuses_bad_start(tmp_path):
    port = _free_port()
    started = time.monotonic()
    proc = subprocess.Popen(
        [SERVICE, "run", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        body = None
        while time.monotonic() - started < 30:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    body = r.read()
                    break
            except OSError:
                time.sleep(0.05)
        assert body is not None, "the server never answered /health"
        assert json.loads(body) == {"status": "ok"}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/version", timeout=5) as r:
            assert r.status == 200
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    # auto-login off without a superuser password: refused, exit code 3
    bad = subprocess.run(
        [SERVICE, "run", "--port", str(port)],
        env=_env(tmp_path, SERVICE_AUTO_LOGIN="false"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 3
    assert "SERVICE_SUPERUSER_PASSWORD" in bad.stderr


def test_help_shows_only_the_service_commands(tmp_path):
    out = subprocess.run([SERVICE, "--help"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    commands = out.stdout.split("Commands:", 1)[1].split()
    names = {line.split()[0] for line in out.stdout.split("Commands:", 1)[1].splitlines() if line.strip()}
    assert {"run", "db", "worker", "plugins", "superuser", "api-key", "dev"} <= names
    assert not names & {"routes", "shell", "limiter", "openapi"}, commands
    for flask_option in ("--app", "-A,", "--debug", "--env-file", "-e,"):
        assert flask_option not in out.stdout
    dev = subprocess.run([SERVICE, "dev", "--help"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    dev_names = {line.split()[0] for line in dev.stdout.split("Commands:", 1)[1].splitlines() if line.strip()}
    assert dev_names == {"routes", "shell", "limiter", "openapi"}
    routes = subprocess.run([SERVICE, "dev", "routes"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert routes.returncode == 0 and "/api/v1/flows/" in routes.stdout
