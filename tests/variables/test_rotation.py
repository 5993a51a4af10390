"""``service secret-key rotate``: every value re-encrypted in one transaction; an interruption changes nothing."""

from __future__ import annotations

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken
from service_variables import services

from core import secrets
from core.app import state
from tests.variables.conftest import SECRET

NEW = "the-brand-new-secret-key-for-rotation-0123456789"
URL = "/api/v1/variables/"


def seed(client, caller, n=3):
    for i in range(n):
        body = {"name": f"V{i}", "value": f"value-{i}", "type": "Credential", "default_fields": []}
        assert client.post(URL, json=body, headers=caller.bearer).status_code == 201


def tokens(app):
    with state(app).engine.connect() as conn:
        return dict(conn.execute(sa.text("SELECT name, value FROM variables_variable")).all())


def readable_with(secret, token):
    try:
        return Fernet(secrets.fernet_key(secret)).decrypt(token.encode()).decode()
    except InvalidToken:
        return None


def test_rotate_reencrypts_every_value(make_app, app, client, alice, bob):
    seed(client, alice)
    seed(client, bob, 2)
    before = tokens(app)
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code == 0, result.output
    assert "re-encrypted 5 secret(s)" in result.output
    after = tokens(app)
    assert set(after) == set(before)
    for name, token in after.items():
        assert token != before[name]
        assert readable_with(SECRET, token) is None
        assert readable_with(NEW, token) == f"value-{name[1:]}"
    rotated = make_app(plugins=["accounts", "variables"], secret_key=NEW)
    with rotated.app_context():
        assert state(rotated).host.hook.get_variable(user_id=alice.id, name="V2") == "value-2"


def test_interrupted_rotation_leaves_every_secret_readable(monkeypatch, app, client, alice):
    seed(client, alice, 4)
    before = tokens(app)
    calls = {"n": 0}
    real = services.reencrypt

    def flaky(cipher, token):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("power cut in the middle")
        return real(cipher, token)

    monkeypatch.setattr(services, "reencrypt", flaky)
    with app.app_context():
        from core import db

        try:
            services.rotate(db.session(), SECRET, NEW)
        except KeyboardInterrupt:
            pass
        else:  # pragma: no cover - the interruption must propagate
            raise AssertionError("rotation did not stop")
    assert calls["n"] == 3
    after = tokens(app)
    assert after == before
    for name, token in after.items():
        assert readable_with(SECRET, token) == f"value-{name[1:]}"
    with app.app_context():
        assert state(app).host.hook.get_variable(user_id=alice.id, name="V3") == "value-3"


def test_cli_failure_reports_and_changes_nothing(monkeypatch, app, client, alice):
    seed(client, alice, 3)
    before = tokens(app)

    def broken(cipher, token):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "reencrypt", broken)
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code != 0
    assert "nothing was changed" in result.output
    assert tokens(app) == before


def test_rotate_refuses_an_unreadable_row_and_a_same_key(app, client, alice):
    seed(client, alice, 2)
    with state(app).engine.begin() as conn:
        foreign = Fernet(Fernet.generate_key()).encrypt(b"x").decode()
        conn.execute(sa.text("UPDATE variables_variable SET value = :v WHERE name = 'V1'"), {"v": foreign})
    before = tokens(app)
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code != 0
    assert "cannot be decrypted with the old key" in result.output
    assert tokens(app) == before
    same = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", SECRET])
    assert same.exit_code != 0 and "same as the old key" in same.output


def test_rotate_with_a_generated_key_file_replaces_the_file(make_app, tmp_path):
    app = make_app(plugins=["accounts", "variables"])  # no SERVICE_SECRET_KEY: generated into the config dir
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    seed(client, admin, 2)
    key_file = state(app).settings.resolved_config_dir / secrets.SECRET_FILE
    old = key_file.read_text().strip()
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code == 0, result.output
    assert key_file.read_text().strip() == NEW
    assert (key_file.stat().st_mode & 0o777) == 0o600
    assert not key_file.with_name("secret_key.new").exists()
    for token in tokens(app).values():
        assert readable_with(NEW, token) is not None and readable_with(old, token) is None
