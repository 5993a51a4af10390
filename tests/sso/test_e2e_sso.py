"""In a browser: the sign-in page's provider button, the provider's sign-in, the editor signed in, sign-out at
the provider. The real service (``service run``) and the real provider (oidc-provider under Node), driven
by Debian's chromium through Playwright (nothing downloads a browser)."""

from __future__ import annotations

import pytest

from tests.editor.test_e2e import expect, running_service
from tests.sso.conftest import CLIENT_ID, CLIENT_SECRET, free_port, start_provider

pytestmark = [pytest.mark.slow]


def test_sign_in_and_out_through_the_provider(tmp_path, browser):
    issuer = f"http://127.0.0.1:{free_port()}"
    config = tmp_path / "config"
    config.mkdir()
    sso = {
        "SERVICE_SSO_ENABLED": "true",
        "SERVICE_SSO_DISCOVERY_URL": issuer,
        "SERVICE_SSO_CLIENT_ID": CLIENT_ID,
        "SERVICE_SSO_CLIENT_SECRET": CLIENT_SECRET,
        "SERVICE_SSO_SCOPES": "openid email profile groups",
        "SERVICE_SSO_DISPLAY_NAME": "Example ID",
    }
    with running_service(config, **sso) as base:
        client = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
        client["redirect_uris"] = [f"{base}/api/v1/sso/oidc/callback"]  # type: ignore[assignment]
        with start_provider(client, tmp_path, port=int(issuer.rsplit(":", 1)[1])):
            context = browser.new_context(base_url=base)
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.goto("/")
            expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
            page.get_by_role("link", name="Sign in with Example ID").click()
            page.locator("input[name=login]").fill("bob")  # the provider's own sign-in form
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("button", name="New flow")).to_be_visible()
            me = page.request.get(f"{base}/api/v1/users/whoami").json()
            assert me["username"] == "bob"
            page.get_by_role("button", name="Sign out").click()
            page.wait_for_url(f"{issuer}/session/end**")
            assert page.request.get(f"{base}/api/v1/users/whoami").status == 403
            # a refused sign-in lands on the sign-in page with the reason
            page.goto("/api/v1/sso/oidc/callback?state=forged&code=x")
            expect(page.get_by_role("alert")).to_contain_text("did not start here")
            context.close()
