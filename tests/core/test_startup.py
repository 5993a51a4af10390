"""Start-up as a new operator meets it: one line and exit 3 per failure class, warnings, a summary."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from core import startup
from core.errors import StartupError
from core.settings import Settings, SettingsError

SERVICE = str(Path(sys.executable).parent / "service")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def _run(tmp_path, **extra) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update({"SERVICE_CONFIG_DIR": str(tmp_path / "cfg"), "SERVICE_ENV_FILE": os.devnull, **extra})
    return subprocess.run([SERVICE, "run"], env=env, capture_output=True, text=True, timeout=90)


def _error_line(out: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert "Traceback" not in out.stderr, out.stderr
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1, out.stderr
    return errors[0]


def test_unreachable_database_is_one_line_with_the_host_and_no_password(tmp_path):
    port = _closed_port()
    out = _run(tmp_path, SERVICE_DATABASE_URL=f"postgresql+psycopg://bob:s3cret-pw@127.0.0.1:{port}/nodb")
    assert out.returncode == 3
    line = _error_line(out)
    assert line.startswith("Error: SERVICE_DATABASE_URL: cannot connect to")
    assert f"bob:***@127.0.0.1:{port}/nodb" in line
    assert "s3cret-pw" not in out.stderr + out.stdout


def test_a_sqlite_database_in_a_new_config_dir_starts(make_app, tmp_path):
    """The config dir is created before the start-up connection check (a SQLite file may be named inside it)."""
    config_dir = tmp_path / "new" / "config"
    app = make_app(config_dir=config_dir, database_url=f"sqlite:///{config_dir / 'service.db'}")
    assert (config_dir / "service.db").exists()
    assert app.test_client().get("/health").status_code == 200


def test_unreachable_redis_is_one_line_when_the_rq_backend_needs_it(tmp_path):
    port = _closed_port()
    out = _run(tmp_path, SERVICE_JOB_BACKEND="rq", SERVICE_REDIS_URL=f"redis://:hunter2@127.0.0.1:{port}/5")
    assert out.returncode == 3
    line = _error_line(out)
    assert f"SERVICE_REDIS_URL: cannot connect to Redis at redis://:***@127.0.0.1:{port}/5" in line
    assert "hunter2" not in out.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SERVICE_WORKERS", "0", "SERVICE_WORKERS: must be between 1 and 64, got 0"),
        ("SERVICE_PORT", "70000", "SERVICE_PORT: must be between 1 and 65535, got 70000"),
        # plugins' sections (accounts, editor) stop start-up the same way
        ("SERVICE_RATE_LIMIT_PER_MINUTE", "0", "SERVICE_RATE_LIMIT_PER_MINUTE: must be at least 1, got 0"),
        (
            "SERVICE_EVENT_DELIVERY",
            "carrier-pigeon",
            "SERVICE_EVENT_DELIVERY: must be one of streaming, polling, direct, got 'carrier-pigeon'",
        ),
    ],
)
def test_out_of_range_numbers_stop_start_up(tmp_path, name, value, message):
    out = _run(tmp_path, **{name: value})
    assert out.returncode == 3
    assert _error_line(out) == f"Error: {message}"


def test_bounds_apply_to_overrides_too():
    with pytest.raises(SettingsError, match="SERVICE_RUN_TIME_LIMIT_SECONDS: must be at least 1"):
        Settings.load({"run_time_limit_seconds": 0})
    assert Settings.load({"workers": 64}).workers == 64


def test_check_redis_is_silent_when_nothing_needs_redis():
    startup.check_redis(Settings.load({"redis_url": "redis://127.0.0.1:1/0"}))  # in-process jobs: not required
    with pytest.raises(StartupError, match="SERVICE_RATE_LIMIT_STORAGE_URI"):
        startup.check_redis(Settings.load({"rate_limit_storage_uri": f"redis://127.0.0.1:{_closed_port()}/0"}))


def test_safe_url_hides_only_the_password():
    assert startup.safe_url("postgresql://u:p@db.example:5432/x") == "postgresql://u:***@db.example:5432/x"
    assert startup.safe_url("redis://:p@h/0") == "redis://:***@h/0"
    assert startup.safe_url("sqlite:////tmp/a.db") == "sqlite:////tmp/a.db"
    assert startup.safe_url("postgresql://u@h/x") == "postgresql://u@h/x"


def test_unknown_names_are_warned_with_the_closest_known_name(make_app, monkeypatch, caplog):
    app = make_app()
    sections = app.extensions["service"].host.collect("register_settings")
    known = startup.known_names(app, sections)
    assert "SERVICE_BUILD_POLLING_TIMEOUT_SECONDS" in known  # a plugin's section
    assert "SERVICE_CLI_AUTH_PASSWORD" in known  # a CLI option's variable
    environ = {
        "SERVICE_AUTOLOGIN": "false",
        "SERVICE_BUILD_POLING_TIMEOUT_SECONDS": "3",
        "SERVICE_NOTHING_LIKE_IT_AT_ALL": "1",
        "SERVICE_AUTO_LOGIN": "true",
        "SERVICE_TEST_DATABASE_URL": "x",
        "HOME": "/root",
    }
    with caplog.at_level(logging.WARNING, logger="service.startup"):
        messages = startup.warn_unknown_names(environ, known)
    assert messages == [
        "SERVICE_AUTOLOGIN is not a setting of this service and is ignored; did you mean SERVICE_AUTO_LOGIN?",
        "SERVICE_BUILD_POLING_TIMEOUT_SECONDS is not a setting of this service and is ignored;"
        " did you mean SERVICE_BUILD_POLLING_TIMEOUT_SECONDS?",
        "SERVICE_NOTHING_LIKE_IT_AT_ALL is not a setting of this service and is ignored",
    ]
    assert "did you mean SERVICE_AUTO_LOGIN?" in caplog.text


def test_create_app_warns_about_a_misspelled_variable(make_app, monkeypatch, caplog):
    monkeypatch.setenv("SERVICE_SUPERUSR", "admin")
    with caplog.at_level(logging.WARNING, logger="service.startup"):
        make_app()
    assert "SERVICE_SUPERUSR is not a setting of this service and is ignored; did you mean SERVICE_SUPERUSER?" in (
        caplog.text
    )


def test_summary_says_what_runs_where(make_app, tmp_path):
    app = make_app()
    lines = startup.summary(app)
    assert lines[0] == f"config dir: {tmp_path / 'config'}"
    assert lines[1].startswith("database: ")
    assert lines[2].startswith("plugins: ") and "accounts" in lines[2] and "standard" in lines[2]
    assert lines[3].startswith("auth: auto-login as 'service'")
    assert "jobs: in-process (jobs run in the web process)" in lines[4:]  # after any plugin's own line
    strict = make_app(auto_login=False, superuser="admin", superuser_password="A-strong-passw0rd!")
    assert startup.summary(strict)[3].startswith("auth: sign-in required")


def test_summary_hides_the_database_password():
    class Host:
        failures = {"broken": "ImportError: x"}

        def list(self):
            return []

    class State:
        settings = Settings.load({"database_url": "postgresql://u:topsecret@db:5432/x", "config_dir": "/tmp/cfg"})
        host = Host()
        plugin_settings: dict = {}  # no plugin section adds a line

    class App:
        extensions = {"service": State()}

    lines = startup.summary(App())  # type: ignore[arg-type]
    assert lines[1] == "database: postgresql://u:***@db:5432/x"
    assert "not loaded: broken (ImportError: x)" in lines[2]
    assert "topsecret" not in "\n".join(lines)
