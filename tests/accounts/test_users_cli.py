"""``service users ...``."""

from __future__ import annotations

import json

from tests.accounts.helpers import STRONG
from tests.conftest import login


def run(app, *args, **kwargs):
    return app.test_cli_runner().invoke(args=list(args), **kwargs)


def test_users_commands_under_auto_login(app, client):
    created = run(app, "users", "create", "dora", "--password", "Dora-Password-1")
    assert created.exit_code == 0, created.output
    assert json.loads(created.output)["username"] == "dora"
    assert login(client, "dora", "Dora-Password-1").status_code == 200
    promoted = run(app, "users", "set-superuser", "dora")
    assert promoted.exit_code == 0 and json.loads(promoted.output)["is_superuser"] is True
    listed = [json.loads(line) for line in run(app, "users", "list", "--search", "dor").output.splitlines()]
    assert [(u["username"], u["is_superuser"]) for u in listed] == [("dora", True)]
    off = run(app, "users", "set-active", "dora", "--no")
    assert off.exit_code == 0 and json.loads(off.output)["is_active"] is False
    assert login(client, "dora", "Dora-Password-1").status_code in (400, 401)
    generated = run(app, "users", "create", "eli")
    password = generated.output.splitlines()[1].removeprefix("password: ")
    assert login(client, "eli", password).status_code == 200
    assert run(app, "users", "delete", "eli", "--yes").exit_code == 0
    assert login(client, "eli", password).status_code == 401
    assert run(app, "users", "delete", "nobody", "--yes").exit_code == 1


def test_users_commands_need_a_superuser_when_auto_login_is_off(strict_app):
    refused = run(strict_app, "users", "list", "--auth-username", "admin", "--auth-password", "wrong-password")
    assert refused.exit_code == 1 and "authentication failed" in refused.output
    allowed = run(strict_app, "users", "list", "--auth-username", "admin", "--auth-password", STRONG)
    assert allowed.exit_code == 0 and "admin" in allowed.output
