"""The hooks between the SSO and accounts plugins, called directly (no provider needed)."""

from __future__ import annotations

from core import appstate, db
from core.contracts import SsoIdentity
from tests.sso.conftest import SECRET, STRONG


def _app(make_app, **extra):
    return make_app(
        auto_login=False,
        superuser="admin",
        superuser_password=STRONG,
        secret_key=SECRET,
        sso_enabled=True,
        sso_discovery_url="https://idp.example.invalid",
        sso_client_id="c",
        sso_client_secret="s",
        **extra,
    )


def test_sso_sign_in_creates_then_updates_and_sso_sign_out_clears(make_app):
    from service_sso import hookspecs

    app = _app(make_app)
    identity = SsoIdentity(provider="oidc", subject="s-1", username="frank", email="f@example.com", is_superuser=False)
    with app.test_request_context():
        hooks = appstate.hooks()
        with db.transaction():
            first = hooks.first(hookspecs.sso_sign_in, identity=identity)
        assert first is not None and first.created and first.username == "frank" and not first.is_superuser
        names = {c.name for c in first.cookies}
        assert {"access_token_svc", "refresh_token_svc"} <= names
        promoted = SsoIdentity(
            provider="oidc", subject="s-1", username="frank2", is_superuser=True, user_id=first.user_id
        )
        with db.transaction():
            again = hooks.first(hookspecs.sso_sign_in, identity=promoted)
        assert again is not None and not again.created and again.user_id == first.user_id
        assert again.username == "frank2" and again.is_superuser
    with app.test_request_context(headers={"Authorization": f"Bearer {again.access_token}"}):
        cleared = appstate.hooks().first(hookspecs.sso_sign_out, request=__import__("flask").request)
        assert cleared is not None and all(c.value == "" and c.max_age == 0 for c in cleared)
    refused = app.test_client().get("/api/v1/users/whoami", headers={"Authorization": f"Bearer {again.access_token}"})
    assert refused.status_code == 401


def test_password_login_allowed_in_sso_only_mode(make_app):
    from service_accounts import hookspecs

    app = _app(make_app, sso_only=True, sso_break_glass_user="admin")
    with app.app_context():
        each = appstate.hooks().each
        assert each(hookspecs.password_login_allowed, username="admin", is_superuser=True) == [True]
        assert each(hookspecs.password_login_allowed, username="root", is_superuser=True) == [False]
        assert each(hookspecs.password_login_allowed, username="dave", is_superuser=False) == [False]
    open_app = _app(make_app)
    with open_app.app_context():
        assert appstate.hooks().each(hookspecs.password_login_allowed, username="dave", is_superuser=False) == []
