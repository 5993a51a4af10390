"""The editor during a bundle reload: the palette refreshes and the open flow shows the nodes a reload touched.

The real service in a subprocess (the fixture bundle in a temporary site directory), driven by
Debian's chromium through Playwright, as tests/editor/test_e2e.py does; skipped without chromium.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editor.test_e2e import ADMIN, CHROMIUM, PASSWORD, api, cookie_header, sign_in
from tests.extensions.extkit import component, flow_of, write_bundle
from tests.serverkit import free_port, wait_healthy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is absent: apt-get install -y chromium"),
]

try:
    from playwright import sync_api
    from playwright.sync_api import expect
except ImportError:
    sync_api = None
    expect = None

REPO = Path(__file__).resolve().parents[2]
DIST, PACKAGE = "svc-ext-editor", "svc_ext_editor"


@pytest.fixture
def served(tmp_path):
    if sync_api is None:
        pytest.fail("the playwright pip package is missing")
    site = tmp_path / "site"
    write_bundle(site, DIST, "edit", PACKAGE, [component("ExtKeepA"), component("ExtGoneB")])
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_CONFIG_DIR=str(tmp_path),
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_AUTO_LOGIN="false",
        SERVICE_SUPERUSER=ADMIN,
        SERVICE_SUPERUSER_PASSWORD=PASSWORD,
        SERVICE_RATE_LIMIT_PER_MINUTE="100",
        SERVICE_ENABLE_EXTENSION_RELOAD="true",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), str(REPO), env.get("PYTHONPATH")])),
    )
    log = open(tmp_path / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "run", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, proc, lambda: (tmp_path / "server.log").read_text()[-4000:])
    try:
        yield base, site
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def registry_of(site: Path):
    from service_bundle_standard.bundle import all_components

    from core.engine import Registry

    sys.path.insert(0, str(site))
    try:
        from svc_ext_editor.bundle import register_components

        return Registry.from_classes([*all_components(), *register_components()])
    finally:
        sys.path.remove(str(site))
        for name in [k for k in sys.modules if k.startswith(PACKAGE)]:
            del sys.modules[name]


def test_the_palette_refreshes_and_the_open_flow_shows_what_a_reload_changed(served, browser):
    base, site = served
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        sign_in(page)
        cookies = cookie_header(page)
        status, flow = api(
            base,
            "POST",
            "/api/v1/flows/",
            body={"name": "uses B", "data": flow_of("ExtGoneB", registry_of(site), "ExtGoneB-1")},
            cookies=cookies,
        )
        assert status == 201, flow
        page.goto(f"/flow/{flow['id']}")
        expect(page.locator("[data-testid=component-ExtGoneB]")).to_have_count(1)
        expect(page.locator("[data-testid=component-ExtNewC]")).to_have_count(0)

        write_bundle(site, DIST, "edit", PACKAGE, [component("ExtKeepA"), component("ExtNewC")])
        status, result = api(base, "POST", f"/api/v1/extensions/{DIST}/bundles/edit/reload", cookies=cookies)
        assert status == 200, result
        assert result["components_removed"] == ["ExtGoneB"]
        assert [n["id"] for f in result["flows_affected"] for n in f["nodes"]] == ["ExtGoneB-1"], result

        banner = page.get_by_test_id("reload-affected")
        # the editor polls every 5 s; on a loaded machine give it a few rounds
        expect(banner).to_contain_text("ExtGoneB-1 (ExtGoneB, removed)", timeout=45_000)
        expect(page.locator("[data-testid=component-ExtNewC]")).to_have_count(1)  # the palette refreshed
        expect(page.locator("[data-testid=component-ExtGoneB]")).to_have_count(0)
        banner.get_by_role("button", name="Dismiss").click()
        expect(banner).to_have_count(0)
    finally:
        context.close()
