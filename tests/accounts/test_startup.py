"""Start-up rules: auto-login on/off, the superuser password, the legacy password, no default credentials."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from core.app import state
from core.errors import StartupError
from tests.accounts.helpers import STRONG, rows
from tests.conftest import login

SERVICE = str(Path(sys.executable).parent / "service")
WHOAMI = "/api/v1/users/whoami"


def test_auto_login_off_requires_a_superuser_password(make_app):
    with pytest.raises(StartupError, match="SERVICE_SUPERUSER_PASSWORD"):
        make_app(auto_login=False)
    with pytest.raises(StartupError, match="SERVICE_SUPERUSER_PASSWORD"):
        make_app(auto_login=False, superuser_password="")


@pytest.mark.parametrize("auto_login", [True, False])
def test_legacy_password_is_refused_in_both_modes(make_app, auto_login):
    with pytest.raises(StartupError, match=r"SERVICE_SUPERUSER_PASSWORD.*legacy"):
        make_app(auto_login=auto_login, superuser_password="service")


def test_empty_superuser_name_is_refused(make_app):
    with pytest.raises(StartupError, match="SERVICE_SUPERUSER"):
        make_app(superuser="  ")


@pytest.mark.parametrize("name", ["access_token_expire_seconds", "refresh_token_expire_seconds"])
def test_zero_token_lifetime_is_refused(make_app, name):
    # Flask-JWT-Extended treats a zero lifetime as "no expiry": such tokens would never expire
    with pytest.raises(StartupError, match=f"SERVICE_{name.upper()}"):
        make_app(**{name: 0})


def test_auto_login_off_creates_the_configured_superuser(strict_app, strict_client):
    response = login(strict_client, "admin", STRONG)
    assert response.status_code == 200
    me = strict_client.get(WHOAMI).get_json()
    assert me["username"] == "admin" and me["is_superuser"] is True and me["is_active"] is True
    assert login(strict_client, "service", "service").status_code == 401  # no default account exists
    assert [r["username"] for r in rows(strict_app, "SELECT username FROM accounts_user")] == ["admin"]


def test_auto_login_without_a_password_uses_an_unknown_bootstrap_password(app, client):
    (row,) = rows(app, "SELECT username, password_hash, is_superuser, is_active FROM accounts_user")
    assert row["username"] == "service" and row["is_superuser"] and row["is_active"]
    for guess in ("service", "", "admin", "password"):
        response = login(client, "service", guess)
        assert response.status_code in (401, 422), guess
    assert login(client, "service", "service").get_json() == {"detail": "Incorrect username or password"}


def test_auto_login_with_a_password_lets_the_superuser_sign_in(make_app):
    client = make_app(superuser_password=STRONG).test_client()
    assert login(client, "service", STRONG).status_code == 200
    assert client.get("/api/v1/auto_login").status_code == 200


def test_restart_keeps_the_existing_superuser_and_reactivates_it(make_app):
    settings = {"auto_login": False, "superuser": "admin", "superuser_password": STRONG}
    first = make_app(**settings)
    (before,) = rows(first, "SELECT id FROM accounts_user")
    with state(first).engine.begin() as conn:
        conn.execute(sa.text("UPDATE accounts_user SET is_active = false"))
    second = make_app(**settings)
    (after,) = rows(second, "SELECT id, is_active FROM accounts_user")
    assert after["id"] == before["id"] and after["is_active"]
    assert login(second.test_client(), "admin", STRONG).status_code == 200


def test_an_ordinary_account_with_the_superuser_name_is_never_promoted(make_app):
    """Someone who registers the configured name (after the real superuser was renamed) gains nothing."""
    first = make_app(auto_login=False, superuser="admin", superuser_password=STRONG)
    client = first.test_client()
    token = login(client, "admin", STRONG).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    me = client.get(WHOAMI, headers=headers).get_json()
    assert client.patch(f"/api/v1/users/{me['id']}", json={"username": "root"}, headers=headers).status_code == 200
    assert client.post("/api/v1/users/", json={"username": "admin", "password": "squatter-pass"}).status_code == 201
    with pytest.raises(StartupError, match="SERVICE_SUPERUSER"):
        make_app(auto_login=False, superuser="admin", superuser_password=STRONG)
    (squatter,) = rows(first, "SELECT is_superuser, is_active FROM accounts_user WHERE username = 'admin'")
    assert not squatter["is_superuser"] and not squatter["is_active"]


def test_legacy_password_never_signs_in_a_superuser(app, client, admin):
    # even if a superuser sets it through the API, which is refused too
    response = client.patch(f"/api/v1/users/{admin.id}", json={"password": "service"}, headers=admin.bearer)
    assert response.status_code == 400
    assert response.get_json() == {"detail": "This password is not allowed"}
    # and a database that already holds it (an old install) still refuses it at sign-in
    from service_accounts import security

    with state(app).engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE accounts_user SET password_hash = :h WHERE username = 'service'"),
            {"h": security.hash_password("service")},
        )
    refused = login(client, "service", "service")
    assert refused.status_code == 401
    assert refused.get_json() == {"detail": "Incorrect username or password"}


def test_unknown_users_cost_a_password_check_too(client, monkeypatch):
    from service_accounts import security

    checked = []
    original = security.verify_password
    monkeypatch.setattr(security, "verify_password", lambda h, p: checked.append(h) or original(h, p))
    assert login(client, "nobody-here", "whatever").status_code == 401
    assert checked == [security.dummy_hash()]


# --- the real command ---------------------------------------------------------------------------------------
def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update({"SERVICE_CONFIG_DIR": str(tmp_path / "cli-config"), "SERVICE_ENV_FILE": os.devnull})
    env.update(extra)
    return env


@pytest.mark.parametrize(
    "extra,needle",
    [
        ({"SERVICE_AUTO_LOGIN": "false"}, "SERVICE_SUPERUSER_PASSWORD"),
        ({"SERVICE_SUPERUSER_PASSWORD": "service"}, "SERVICE_SUPERUSER_PASSWORD"),
    ],
)
def test_command_exits_3_naming_the_variable(tmp_path, extra, needle):
    out = subprocess.run(
        [SERVICE, "plugins", "list"],
        env=_env(tmp_path, **extra),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 3, (out.stdout, out.stderr)
    assert needle in out.stderr
    assert "Traceback" not in out.stderr


def test_superuser_name_with_surrounding_spaces(make_app):
    first = make_app(superuser=" root ")
    token = first.test_client().get("/api/v1/auto_login")
    assert token.status_code == 200
    # a restart finds the same (trimmed) account instead of failing to create it again
    second = make_app(superuser=" root ")
    client = second.test_client()
    me = client.get(
        WHOAMI, headers={"Authorization": f"Bearer {client.get('/api/v1/auto_login').get_json()['access_token']}"}
    )
    assert me.get_json()["username"] == "root"
    assert [r["username"] for r in rows(second, "SELECT username FROM accounts_user")] == ["root"]
