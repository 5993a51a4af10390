"""``service secret-key rotate`` re-encrypts the MCP plugin's secrets too (hook ``reencrypt_secrets``):
MCP server headers and environment, and projects' OAuth client secrets; all or nothing."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken

from core.app import state
from tests.mcp.conftest import PLUGINS

OLD = "the-old-secret-key-of-the-mcp-rotation-test-0123"
NEW = "the-new-secret-key-of-the-mcp-rotation-test-4567"


def _tokens(app) -> dict[str, str]:
    with state(app).engine.connect() as conn:
        servers = dict(conn.execute(sa.text("SELECT name, secret FROM mcp_server")).all())
        oauth = conn.execute(sa.text("SELECT oauth_client_secret FROM mcp_project_secret")).scalars().all()
        variables = conn.execute(sa.text("SELECT value FROM variables_variable")).scalars().all()
    return {
        **servers,
        **{f"oauth{i}": t for i, t in enumerate(oauth)},
        **{f"var{i}": t for i, t in enumerate(variables)},
    }


def _seed(client, caller) -> str:
    http = {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer hdr-secret"}}
    assert client.post("/api/v2/mcp/servers/remote", json=http, headers=caller.bearer).status_code == 200
    stdio = {"command": "python", "args": ["x.py"], "env": {"TOKEN": "env-secret"}}
    assert client.post("/api/v2/mcp/servers/local", json=stdio, headers=caller.bearer).status_code == 200
    project = client.post("/api/v1/projects/", json={"name": "OAuth"}, headers=caller.bearer).get_json()
    auth = {"auth_type": "oauth", "oauth_client_id": "cid", "oauth_client_secret": "oauth-secret"}
    patched = client.patch(
        f"/api/v1/mcp/project/{project['id']}", json={"settings": [], "auth_settings": auth}, headers=caller.bearer
    )
    assert patched.status_code == 200
    variable = {"name": "V", "value": "var-secret", "type": "Credential", "default_fields": []}
    assert client.post("/api/v1/variables/", json=variable, headers=caller.bearer).status_code == 201
    return str(project["id"])


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS, secret_key=OLD, mcp_stdio_allowed_commands=("python",))


def test_rotation_reencrypts_mcp_secrets(make_app, app, client, alice):
    _seed(client, alice)
    before = _tokens(app)
    assert len(before) == 4
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code == 0, result.output
    assert "re-encrypted 4 secret(s)" in result.output
    after = _tokens(app)
    old, new = Fernet(_key(OLD)), Fernet(_key(NEW))
    for name, token in after.items():
        assert token != before[name], name
        new.decrypt(token.encode())  # readable with the new key, and not with the old one
        with pytest.raises(InvalidToken):
            old.decrypt(token.encode())
    rotated = make_app(plugins=PLUGINS, secret_key=NEW, mcp_stdio_allowed_commands=("python",))
    with rotated.app_context():
        hooks = state(rotated).host.hooks
        remote = hooks.mcp_server_config(user_id=alice.id, name="remote")
        local = hooks.mcp_server_config(user_id=alice.id, name="local")
    assert remote is not None and remote.headers == {"Authorization": "Bearer hdr-secret"}
    assert local is not None and local.env == {"TOKEN": "env-secret"}
    assert new.decrypt(after["oauth0"].encode()) == b"oauth-secret"


def test_an_unreadable_mcp_secret_rolls_the_whole_rotation_back(app, client, alice):
    _seed(client, alice)
    with state(app).engine.begin() as conn:
        foreign = Fernet(Fernet.generate_key()).encrypt(b"{}").decode()
        conn.execute(sa.text("UPDATE mcp_server SET secret = :v WHERE name = 'local'"), {"v": foreign})
    before = _tokens(app)
    result = app.test_cli_runner().invoke(args=["secret-key", "rotate", "--new-key", NEW])
    assert result.exit_code != 0 and "nothing was changed" in result.output
    assert _tokens(app) == before  # the variable (re-encrypted first) was rolled back too


def _key(secret: str) -> bytes:
    from core import secrets

    return secrets.fernet_key(secret)


def test_reencrypt_secrets_hook_counts_and_leaves_the_commit_to_the_caller(app, client, alice):
    from cryptography.fernet import MultiFernet

    from core import db

    _seed(client, alice)
    before = _tokens(app)
    cipher = MultiFernet([Fernet(_key(NEW)), Fernet(_key(OLD))])
    with app.app_context():
        from service_variables import hookspecs

        counts = state(app).host.hooks.each(hookspecs.reencrypt_secrets, cipher=cipher)
        db.session().rollback()  # the caller decides: here nothing is kept
    assert sum(c or 0 for c in counts) == 3  # two MCP servers' secrets, one OAuth client secret
    assert _tokens(app) == before
