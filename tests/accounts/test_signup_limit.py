"""Anonymous sign-up is rate-limited per client address like login (``SERVICE_SIGNUP_RATE_LIMIT_PER_MINUTE``).

Issue 26 (low): ``POST /api/v1/users/`` without credentials had no limit, so one address could create
accounts (and spend a password hash each) as fast as it could send.
"""

from __future__ import annotations

from tests.accounts.helpers import STRONG
from tests.accounts.test_login import _ip, assert_too_many, post_login
from tests.conftest import PASSWORD

USERS = "/api/v1/users/"


def _signup(client, name: str, ip: str):
    return client.post(USERS, json={"username": name, "password": PASSWORD}, environ_base={"REMOTE_ADDR": ip})


def test_anonymous_signup_is_limited_per_address(strict_client):
    ip = _ip()
    for n in range(5):  # the default: 5 a minute, as login
        assert _signup(strict_client, f"new{n}", ip).status_code == 201
    refused = _signup(strict_client, "new5", ip)
    assert_too_many(refused)
    # nothing was created by the refused call; another address still signs up
    assert _signup(strict_client, "new5", _ip()).status_code == 201
    admin = post_login(strict_client, "admin", STRONG, ip=_ip()).get_json()["access_token"]
    listed = strict_client.get(f"{USERS}?limit=100", headers={"Authorization": f"Bearer {admin}"}).get_json()
    assert sorted(u["username"] for u in listed["users"] if u["username"].startswith("new")) == [
        f"new{n}" for n in range(6)
    ]


def test_the_limit_is_a_setting_and_superusers_are_not_limited(make_app):
    app = make_app(auto_login=False, superuser="admin", superuser_password=STRONG, signup_rate_limit_per_minute=2)
    client = app.test_client()
    ip = _ip()
    assert _signup(client, "a1", ip).status_code == 201
    assert _signup(client, "a2", ip).status_code == 201
    assert_too_many(_signup(client, "a3", ip))
    token = post_login(client, "admin", STRONG, ip=_ip()).get_json()["access_token"]
    for n in range(4):  # an admin creating accounts from the same address is not a sign-up
        made = client.post(
            USERS,
            json={"username": f"made{n}", "password": PASSWORD},
            headers={"Authorization": f"Bearer {token}"},
            environ_base={"REMOTE_ADDR": ip},
        )
        assert made.status_code == 201, made.get_json()
