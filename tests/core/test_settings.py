from pathlib import Path

import pytest
from service_accounts.sessions import AccountsConfig
from service_run.config import RunSettings

from core.settings import Settings, SettingsError, load_section


def accounts(environ=None, overrides=None):
    """The accounts plugin's section, parsed as the core parses it (``SERVICE_AUTO_LOGIN``, tokens...)."""
    return load_section(AccountsConfig, "SERVICE_", overrides, environ or {})


@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ("True", True), ("1", True), ("false", False), ("False", False), ("0", False)]
)
def test_booleans_accept_the_documented_spellings(raw, expected):
    assert accounts({"SERVICE_AUTO_LOGIN": raw}).auto_login is expected
    assert Settings.load(environ={"SERVICE_RATE_LIMIT_ENABLED": raw}).rate_limit_enabled is expected


def test_an_invalid_value_names_the_variable():
    with pytest.raises(SettingsError, match="SERVICE_AUTO_LOGIN"):
        accounts({"SERVICE_AUTO_LOGIN": "maybe"})
    with pytest.raises(SettingsError, match="SERVICE_PORT: expected an integer"):
        Settings.load(environ={"SERVICE_PORT": "eighty"})
    with pytest.raises(SettingsError, match="SERVICE_ALGORITHM: must be one of HS256, RS256, RS512"):
        accounts({"SERVICE_ALGORITHM": "none"})
    with pytest.raises(SettingsError, match="SERVICE_ACCESS_TOKEN_EXPIRE_SECONDS: must not be negative"):
        accounts({"SERVICE_ACCESS_TOKEN_EXPIRE_SECONDS": "-5"})


def test_types_lists_choices_and_paths():
    environ = {
        "SERVICE_CORS_ORIGINS": "https://a.example, https://b.example",
        "SERVICE_ALGORITHM": "rs512",
        "SERVICE_CONFIG_DIR": "~/svc",
        "SERVICE_REFRESH_TOKEN_EXPIRE_SECONDS": "60",
        "SERVICE_DATABASE_URL": "",
    }
    s = Settings.load(environ=environ)
    assert s.cors_origins == ("https://a.example", "https://b.example")
    assert s.config_dir == Path("~/svc").expanduser()
    assert s.database_url is None
    a = accounts(environ)
    assert a.algorithm == "RS512"
    assert a.refresh_token_expire_seconds == 60


def test_defaults_follow_the_spec():
    s, a = Settings.load(environ={}), accounts()
    assert (a.auto_login, a.enable_signup, a.new_user_is_active) == (True, True, False)
    assert load_section(RunSettings, "SERVICE_", environ={}).webhook_auth_enable is True
    assert (a.access_token_expire_seconds, a.refresh_token_expire_seconds) == (3600, 604800)
    assert (a.rate_limit_per_minute, s.public_flow_rate_limit_per_minute) == (5, 20)
    assert a.superuser == "service" and a.superuser_password is None
    assert s.cors_origins == ("*",) and a.access_same_site == "lax"


def test_env_file_then_environment_then_overrides(tmp_path):
    env_file = tmp_path / "svc.env"
    env_file.write_text("SERVICE_PORT=8000\nSERVICE_HOST=0.0.0.0\nOTHER=1\n")
    environ = {"SERVICE_ENV_FILE": str(env_file), "SERVICE_HOST": "10.0.0.1"}
    s = Settings.load(environ=environ)
    assert (s.port, s.host) == (8000, "10.0.0.1")
    s = Settings.load({"port": 9000, "SERVICE_HOST": "::1"}, environ=environ)
    assert (s.port, s.host) == (9000, "::1")
    with pytest.raises(SettingsError, match="unknown setting"):
        Settings.load({"no_such_thing": 1}, environ={})
    with pytest.raises(SettingsError, match="SERVICE_JOB_BACKEND"):
        Settings.load({"job_backend": "celery"}, environ={})


def test_config_dir_defaults_to_a_per_user_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    s = Settings.load(environ={})
    assert s.resolved_config_dir == tmp_path / "data" / "service"
    assert s.resolved_database_url == f"sqlite:///{tmp_path / 'data' / 'service' / 'service.db'}"


def test_as_env_round_trips():
    s = Settings.load({"rate_limit_enabled": False, "cors_origins": ("https://x",), "port": 1234}, environ={})
    again = Settings.load(environ=s.as_env())
    assert again == s


def test_plugin_settings_sections_parse_like_core_settings(make_app, monkeypatch):
    import dataclasses
    import types

    from core import hookimpl
    from core.app import plugin_settings, settings_of
    from core.records import SettingsSection

    @dataclasses.dataclass(frozen=True)
    class Probe:
        timeout_seconds: float = 1.5
        enabled: bool = False
        mode: str = dataclasses.field(default="a", metadata={"choices": ("a", "b")})

    module = types.ModuleType("probe")

    @hookimpl
    def register_settings():
        return [SettingsSection("probe", Probe, "SERVICE_PROBE_")]

    module.register_settings = register_settings
    plugin = ("probe", module)
    assert plugin_settings("probe", make_app(plugins=[plugin])) == Probe()
    monkeypatch.setenv("SERVICE_PROBE_TIMEOUT_SECONDS", "0.25")
    app = make_app(plugins=[plugin], SERVICE_PROBE_MODE="b", probe_enabled=True)
    assert plugin_settings("probe", app) == Probe(timeout_seconds=0.25, enabled=True, mode="b")
    assert settings_of(Probe, app) is plugin_settings("probe", app)  # the typed accessor
    with pytest.raises(LookupError):
        settings_of(AccountsConfig, app)  # the accounts plugin is not loaded
    monkeypatch.setenv("SERVICE_PROBE_TIMEOUT_SECONDS", "soon")
    with pytest.raises(SettingsError, match="SERVICE_PROBE_TIMEOUT_SECONDS: expected a number"):
        make_app(plugins=[plugin])
    monkeypatch.delenv("SERVICE_PROBE_TIMEOUT_SECONDS")
    with pytest.raises(SettingsError, match="SERVICE_PROBE_MODE: must be one of a, b"):
        make_app(plugins=[plugin], SERVICE_PROBE_MODE="c")
    with pytest.raises(SettingsError, match="SERVICE_NOPE: unknown setting"):
        make_app(plugins=[plugin], SERVICE_NOPE=1)
