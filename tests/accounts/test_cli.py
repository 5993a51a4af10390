"""``service superuser`` and ``service api-key create``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.accounts.helpers import STRONG, rows
from tests.conftest import PASSWORD, login, make_user

WHOAMI = "/api/v1/users/whoami"
SERVICE = str(Path(sys.executable).parent / "service")


def run(app, *args, **kwargs):
    return app.test_cli_runner().invoke(args=list(args), **kwargs)


def whoami_with_key(client, key):
    return client.get(WHOAMI, headers={"x-api-key": key})


# --- service superuser ------------------------------------------------------------------------------------
def test_superuser_command_under_auto_login(app, client):
    result = run(app, "superuser", "--username", "root", "--password", "Root-Password-123")
    assert result.exit_code == 0, result.output
    assert "superuser root created" in result.output
    (row,) = rows(app, "SELECT is_superuser, is_active FROM accounts_user WHERE username = 'root'")
    assert row["is_superuser"] and row["is_active"]
    token = login(client, "root", "Root-Password-123").get_json()["access_token"]
    assert client.get("/api/v1/users/", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_superuser_command_prompts_for_a_confirmed_password(app):
    result = run(app, "superuser", "--username", "typed", input="Typed-Pass-1\nTyped-Pass-1\n")
    assert result.exit_code == 0, result.output
    assert rows(app, "SELECT username FROM accounts_user WHERE username = 'typed'")


def test_superuser_command_can_be_disabled(make_app):
    app = make_app(enable_superuser_cli=False)
    result = run(app, "superuser", "--username", "root", "--password", "Root-Password-123")
    assert result.exit_code == 1
    assert "SERVICE_ENABLE_SUPERUSER_CLI" in result.output
    assert not rows(app, "SELECT id FROM accounts_user WHERE username = 'root'")


def test_superuser_command_refuses_the_legacy_password(app):
    result = run(app, "superuser", "--username", "root", "--password", "service")
    assert result.exit_code == 1 and "legacy" in result.output
    assert not rows(app, "SELECT id FROM accounts_user WHERE username = 'root'")


def test_superuser_command_refuses_a_taken_name(app):
    result = run(app, "superuser", "--username", "service", "--password", "Root-Password-123")
    assert result.exit_code == 1 and "This username is unavailable." in result.output


def test_superuser_command_needs_superuser_credentials_without_auto_login(strict_app, strict_client):
    args = ["superuser", "--username", "root", "--password", "Root-Password-123"]
    # no credentials: it asks, and an empty answer aborts
    asked = run(strict_app, *args, input="")
    assert asked.exit_code != 0 and "Superuser username" in asked.output
    wrong = run(strict_app, *args, "--auth-username", "admin", "--auth-password", "wrong")
    assert wrong.exit_code == 1
    assert "authentication failed: Incorrect username or password" in wrong.output
    assert not rows(strict_app, "SELECT id FROM accounts_user WHERE username = 'root'")
    ok = run(strict_app, *args, "--auth-username", "admin", "--auth-password", STRONG)
    assert ok.exit_code == 0, ok.output
    assert login(strict_client, "root", "Root-Password-123").status_code == 200


def test_superuser_command_credentials_from_the_environment(strict_app):
    env = {"SERVICE_CLI_AUTH_USERNAME": "admin", "SERVICE_CLI_AUTH_PASSWORD": STRONG}
    result = run(strict_app, "superuser", "--username", "root", "--password", "Root-Password-123", env=env)
    assert result.exit_code == 0, result.output


def test_superuser_command_refuses_an_ordinary_user_as_authority(strict_app, strict_client):
    admin_token = login(strict_client, "admin", STRONG).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {admin_token}"}
    created = strict_client.post("/api/v1/users/", json={"username": "plain", "password": PASSWORD}, headers=headers)
    strict_client.patch(f"/api/v1/users/{created.get_json()['id']}", json={"is_active": True}, headers=headers)
    result = run(
        strict_app,
        "superuser",
        "--username",
        "root",
        "--password",
        "Root-Password-123",
        "--auth-username",
        "plain",
        "--auth-password",
        PASSWORD,
    )
    assert result.exit_code == 1 and "not a superuser" in result.output
    assert not rows(strict_app, "SELECT id FROM accounts_user WHERE username = 'root'")


# --- service api-key create ---------------------------------------------------------------------------------
def _printed_key(output: str) -> str:
    keys = re.findall(r"sk-[A-Za-z0-9_-]{43}", output)
    assert len(keys) == 1, output
    return keys[0]


def test_api_key_create_for_the_superuser_under_auto_login(app, client):
    result = run(app, "api-key", "create")
    assert result.exit_code == 0, result.output
    key = _printed_key(result.output)
    me = whoami_with_key(client, key)
    assert me.status_code == 200 and me.get_json()["username"] == "service"
    (row,) = rows(app, "SELECT name FROM accounts_api_key")
    assert row["name"] == "cli"


def test_api_key_create_for_a_named_user(app, client, admin):
    alice = make_user(client, admin, username="alice")
    result = run(app, "api-key", "create", "--username", "alice", "--name", "deploy")
    key = _printed_key(result.output)
    assert whoami_with_key(client, key).get_json()["id"] == alice.id
    names = {k["name"] for k in client.get("/api/v1/api_key/", headers=alice.bearer).get_json()["api_keys"]}
    assert "deploy" in names


def test_api_key_create_for_an_unknown_user(app):
    result = run(app, "api-key", "create", "--username", "ghost")
    assert result.exit_code == 1 and "no user named ghost" in result.output


def test_api_key_create_needs_the_password_without_auto_login(strict_app, strict_client):
    wrong = run(strict_app, "api-key", "create", "--password", "nope")
    assert wrong.exit_code == 1
    assert "authentication failed" in wrong.output and "sk-" not in wrong.output
    prompted = run(strict_app, "api-key", "create", input=STRONG + "\n")
    assert prompted.exit_code == 0, prompted.output
    key = _printed_key(prompted.output)
    me = whoami_with_key(strict_client, key)
    assert me.status_code == 200 and me.get_json()["username"] == "admin"


def test_api_key_create_for_a_user_waiting_for_approval(strict_app, strict_client):
    strict_client.post("/api/v1/users/", json={"username": "waiting", "password": PASSWORD})
    result = run(strict_app, "api-key", "create", "--username", "waiting", "--password", PASSWORD)
    assert result.exit_code == 1 and "Waiting for approval" in result.output


def test_api_key_create_through_the_real_command(tmp_path, make_app):
    """Backend-only mode: the command line is the way to get the first key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    config = tmp_path / "config"  # the directory make_app uses, so both see the same database
    env.update(
        {
            "SERVICE_CONFIG_DIR": str(config),
            "SERVICE_ENV_FILE": os.devnull,
            "SERVICE_AUTO_LOGIN": "false",
            "SERVICE_SUPERUSER": "admin",
            "SERVICE_SUPERUSER_PASSWORD": STRONG,
        }
    )
    if os.environ.get("SERVICE_TEST_DATABASE_URL"):
        from core.app import state

        app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG)
        env["SERVICE_DATABASE_URL"] = state(app).settings.database_url
    out = subprocess.run(
        [SERVICE, "api-key", "create", "--name", "backend"],
        env=env,
        cwd=tmp_path,
        input=STRONG + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    key = _printed_key(out.stdout)
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG)
    me = whoami_with_key(app.test_client(), key)
    assert me.status_code == 200 and me.get_json()["username"] == "admin"


def test_superuser_command_refuses_a_blank_name(app):
    result = run(app, "superuser", "--username", "   ", "--password", "Root-Password-123")
    assert result.exit_code == 1 and "Username must not be blank." in result.output
    assert not rows(app, "SELECT id FROM accounts_user WHERE username = ''")
