"""The example third-party plugin (docs/examples/hello-plugin): pip installed while serving, then enabled."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from werkzeug.test import Client

from core.app import state
from core.db import Base
from core.holder import AppHolder

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "hello-plugin"


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))  # an empty site-packages directory the service already searches
    yield site
    for key in [k for k in sys.modules if k.startswith("service_hello")]:
        del sys.modules[key]
    if "hello_greeting" in Base.metadata.tables:
        Base.metadata.remove(Base.metadata.tables["hello_greeting"])


def test_a_plugin_pip_installed_while_serving_is_there_once_enabled(make_app, site):
    holder = AppHolder(make_app)  # every installed plugin, as `service run` loads them
    client = Client(holder)
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/hello/", headers=bearer).status_code == 404

    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    assert (site / "service_hello" / "plugin.py").exists()

    listing = client.get("/api/v1/extensions/plugins", headers=bearer).get_json()
    hello = next(p for p in listing["plugins"] if p["name"] == "hello")
    assert hello["distribution"] == "example-service-hello" and hello["loaded"] is False

    enabled = client.post("/api/v1/extensions/plugins/hello/enable", headers=bearer)
    assert enabled.status_code == 200, enabled.get_json()
    engine = state(holder.app).engine
    assert "hello_greeting" in sa.inspect(engine).get_table_names()  # its migrations ran first
    time.sleep(holder.check_interval + 0.05)
    greeted = client.get("/api/v1/hello/", headers=bearer)
    assert greeted.status_code == 200, greeted.get_json()
    assert greeted.get_json()["count"] == 1
    assert "/api/v1/hello/" in client.get("/openapi.json").get_json()["paths"]

    assert client.post("/api/v1/extensions/plugins/hello/disable", headers=bearer).status_code == 200
    time.sleep(holder.check_interval + 0.05)
    assert client.get("/api/v1/hello/", headers=bearer).status_code == 404
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count FROM hello_greeting")).scalar() == 1  # its data stays
