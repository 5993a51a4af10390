"""Fixtures of the extension tests: a temporary site directory on sys.path for fixture bundles."""

from __future__ import annotations

import sys

import pytest

PLUGINS = ["accounts", "flows", "run", "catalog", "extensions", "standard"]
PACKAGE_PREFIX = "svc_ext_"


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    for key in [k for k in sys.modules if k.startswith(PACKAGE_PREFIX)]:
        del sys.modules[key]


@pytest.fixture
def app(make_app, site):
    return make_app(plugins=PLUGINS, enable_extension_reload=True)
